package fio

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"

	"iolab/bench"
)

// parseBufferPattern reads buffer_pattern the way fio 3.33 does
// (lib/pattern.c parse_and_fill_pattern, called without formats): a run of
// pieces, each one of
//
//   - "text": the bytes between double quotes (no escapes);
//   - 0x…: hexadecimal bytes, big-endian, an odd leading digit on its own
//     ("0xabc" is 0a bc); a "0x" inside starts a new piece ("0xff0x1" is
//     ff 01);
//   - a decimal number in C int range, little-endian in as few bytes as it
//     needs (0 is one zero byte, -1 is ff ff ff ff);
//   - 'path': up to the rest of the 512 bytes read from a file.
//
// fio's %o (the block's offset) is a verify_pattern format: fio 3.33
// refuses it in buffer_pattern, and so does iolab.
func parseBufferPattern(in string) ([]byte, error) {
	if in == "" {
		return nil, errors.New("an empty pattern")
	}
	var out []byte
	for rest := in; rest != ""; {
		room := bench.MaxPatternSize - len(out)
		if room <= 0 {
			return nil, fmt.Errorf("%q is longer than fio's %d bytes", in, bench.MaxPatternSize)
		}
		var piece []byte
		var err error
		switch rest[0] {
		case '"', '\'':
			q := rest[0]
			end := strings.IndexByte(rest[1:], q)
			if end < 0 {
				return nil, fmt.Errorf("%q: the %c at %d is not closed", in, q, len(in)-len(rest))
			}
			body := rest[1 : 1+end]
			rest = rest[2+end:]
			if q == '"' {
				piece = []byte(body)
				if len(piece) > room {
					return nil, fmt.Errorf("%q is longer than fio's %d bytes", in, bench.MaxPatternSize)
				}
			} else if piece, err = readPatternFile(body, room); err != nil {
				return nil, err
			}
		case '%':
			return nil, fmt.Errorf("%q: %s is a verify_pattern format; fio 3.33 refuses formats in buffer_pattern (write the bytes)", in, rest[:min(2, len(rest))])
		default:
			piece, rest, err = patternNumber(rest, room)
			if err != nil {
				return nil, fmt.Errorf("%q: %w", in, err)
			}
		}
		if len(piece) == 0 {
			return nil, fmt.Errorf("%q: a piece of the pattern is empty", in)
		}
		out = append(out, piece...)
	}
	return out, nil
}

func readPatternFile(path string, room int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("pattern file: %w", err)
	}
	defer f.Close()
	b := make([]byte, room)
	n, err := f.Read(b)
	if err != nil && n == 0 {
		return nil, fmt.Errorf("pattern file %s: %w", path, err)
	}
	return b[:n], nil
}

// patternNumber reads one number piece from the start of s: fio's
// parse_number.
func patternNumber(s string, room int) ([]byte, string, error) {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isHex(s[2]) {
		digits := 2
		for digits < len(s) && isHex(s[digits]) {
			digits++
		}
		// A 0 followed by x starts the next piece: 0xff0x14 is ff, 14.
		if digits < len(s) && (s[digits] == 'x' || s[digits] == 'X') && s[digits-1] == '0' {
			digits--
		}
		hex := s[2:digits]
		if hex == "" {
			return nil, "", fmt.Errorf("%s has no hexadecimal digits", s[:digits+1])
		}
		var out []byte
		if len(hex)%2 == 1 {
			out = append(out, unhex(hex[0]))
			hex = hex[1:]
		}
		for ; hex != ""; hex = hex[2:] {
			out = append(out, unhex(hex[0])<<4|unhex(hex[1]))
		}
		if len(out) > room {
			return nil, "", fmt.Errorf("longer than fio's %d bytes", bench.MaxPatternSize)
		}
		return out, s[digits:], nil
	}
	// Decimal, cut short where a 0x further on begins (fio looks ahead
	// for one).
	lim := len(s)
	if k := strings.Index(strings.ToLower(s), "0x"); k > 0 {
		lim = k
	}
	v, n, ok := cStrtol(s[:lim])
	if !ok {
		return nil, "", fmt.Errorf("%q is not a number, a \"string\" or a 'file'", s)
	}
	if v > math.MaxInt32 || v < math.MinInt32 {
		return nil, "", fmt.Errorf("%s is beyond a C int; write large values in hexadecimal", s[:n])
	}
	if v == 0 {
		return []byte{0}, s[n:], nil
	}
	var out []byte
	for u := uint32(v); u != 0; u >>= 8 {
		out = append(out, byte(u))
	}
	if len(out) > room {
		return nil, "", fmt.Errorf("longer than fio's %d bytes", bench.MaxPatternSize)
	}
	return out, s[n:], nil
}

// cStrtol is C's strtol in base 10: leading white space, a sign, digits.
// It returns the value, how many bytes it read and whether there were
// digits; values beyond 64 bits saturate, as strtol's do.
func cStrtol(s string) (int64, int, bool) {
	i := 0
	for i < len(s) && strings.IndexByte(" \t\n\v\f\r", s[i]) >= 0 {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	start := i
	var v uint64
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if v < 1<<63 {
			v = v*10 + uint64(s[i]-'0')
		}
	}
	if i == start {
		return 0, 0, false
	}
	if v > math.MaxInt64 {
		v = math.MaxInt64
	}
	if neg {
		return -int64(v), i, true
	}
	return int64(v), i, true
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}
