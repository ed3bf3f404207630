package fio

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseBufferPattern: fio's examples (lib/pattern.c) and its edges.
func TestParseBufferPattern(t *testing.T) {
	file := filepath.Join(t.TempDir(), "p")
	if err := os.WriteFile(file, []byte("from a file"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   string
		want []byte
		err  string
	}{
		{in: `"abcd"`, want: []byte("abcd")},
		{in: `-1024`, want: []byte{0x00, 0xfc, 0xff, 0xff}},
		{in: `66`, want: []byte{0x42}},
		{in: `0xFF0X1`, want: []byte{0xff, 0x01}},
		{in: `"123"0xFFeeCC`, want: []byte{'1', '2', '3', 0xff, 0xee, 0xcc}},
		{in: `-100xab"1"`, want: []byte{0xf6, 0xff, 0xff, 0xff, 0xab, '1'}},
		{in: `0xfefefefefefefefefefefefefefefefefefefefefe`, want: bytes.Repeat([]byte{0xfe}, 21)},
		{in: `0xabc`, want: []byte{0x0a, 0xbc}},
		{in: `0xdeadbeef`, want: []byte{0xde, 0xad, 0xbe, 0xef}},
		{in: `0`, want: []byte{0}},
		{in: `256`, want: []byte{0x00, 0x01}},
		{in: `2147483647`, want: []byte{0xff, 0xff, 0xff, 0x7f}},
		{in: `'` + file + `'`, want: []byte("from a file")},
		{in: `'` + file + `'0x00`, want: []byte("from a file\x00")},
		{in: `%o`, err: "verify_pattern format"},
		{in: `"abc"%o`, err: "verify_pattern format"},
		{in: `abc`, err: "is not a number"},
		{in: `"abc`, err: "not closed"},
		{in: `""`, err: "empty"},
		{in: `2147483648`, err: "beyond a C int"},
		{in: `0x0x12`, err: "no hexadecimal digits"},
		{in: `1 2`, want: []byte{1, 2}}, // strtol skips white space
		{in: `'/nonexistent/p'`, err: "pattern file"},
		{in: `0x` + strings.Repeat("ab", 513), err: "512 bytes"},
		{in: `"` + strings.Repeat("a", 513) + `"`, err: "512 bytes"},
		{in: ``, err: "empty"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseBufferPattern(tc.in)
			checkErr(t, err, tc.err)
			if tc.err == "" && !bytes.Equal(got, tc.want) {
				t.Errorf("% x, want % x", got, tc.want)
			}
		})
	}
}

// TestBufferPatternLikeFio: buffer_pattern is refused where fio refuses it,
// and what both accept writes the same bytes.
func TestBufferPatternLikeFio(t *testing.T) {
	fio := lookFio(t)
	for _, p := range []string{`0x1`, `"ab"12`, `-7`, `0xff0x00"z"`, `1 2`, `%o`, `abc`, `"x`, `0x0x1`} {
		t.Run(p, func(t *testing.T) {
			a, b := scratch(t, 64<<10, 0xa5), scratch(t, 64<<10, 0xa5)
			args := []string{"--name=w", "--rw=write", "--bs=4k", "--ioengine=psync", "--buffer_pattern=" + p}
			out, fioErr := exec.Command(fio, append(args, "--thread", "--filename="+a)...).CombinedOutput()
			_, err := ParseArgs(append(args, "--filename="+b))
			if (fioErr != nil) != (err != nil) {
				t.Fatalf("fio: %v %s; iolab: %v", fioErr, out, err)
			}
			if err != nil {
				return
			}
			run(t, append(args, "--filename="+b)...)
			da, _ := os.ReadFile(a)
			db, _ := os.ReadFile(b)
			if !bytes.Equal(da, db) {
				t.Errorf("fio wrote % x…, iolab % x…", da[:16], db[:16])
			}
		})
	}
}
