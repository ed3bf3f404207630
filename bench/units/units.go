// Package units reads and writes values the way fio does: sizes with k, m,
// g suffixes in powers of 1024, times in seconds unless a unit follows,
// whole numbers in decimal or 0x hexadecimal, and 0/1 booleans. The option
// parser, the sweep axes, the web form and the tables all go through it, so
// a value written by one is read back the same by the others.
package units

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseFlag parses a flag's value: none means set; fio's check_int takes a
// number, and iolab takes 0 or 1 — fio accepts neither true nor false.
func ParseFlag(v string) (bool, error) {
	switch v {
	case "", "1":
		return true, nil
	case "0":
		return false, nil
	}
	return false, fmt.Errorf("%q is not 0 or 1 (fio's booleans are 0 and 1)", v)
}

// ParseInt parses a whole number, decimal or 0x hexadecimal like fio, and
// checks it lies in [lo, hi].
func ParseInt(v string, lo, hi int) (int, error) {
	if strings.ContainsAny(v, "$(") {
		return 0, fmt.Errorf("%q: iolab does not expand fio's $keywords or (expressions); write the number", v)
	}
	n, err := parseWhole(v, 64)
	if errors.Is(err, strconv.ErrRange) || (err == nil && (n < int64(lo) || n > int64(hi))) {
		return 0, fmt.Errorf("%s is out of range (%d to %d)", v, lo, hi)
	}
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number", v)
	}
	return int(n), nil
}

// parseWhole parses decimal or 0x hexadecimal, as fio's check_int does;
// not octal, nor Go's underscores, which strconv's base 0 would allow.
func parseWhole(v string, bits int) (int64, error) {
	if len(v) > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X') {
		return strconv.ParseInt(v[2:], 16, bits)
	}
	return strconv.ParseInt(v, 10, bits)
}

// ParseSize parses a byte count the way fio does with its default
// kb_base=1024: a whole number, optionally 0x hexadecimal, with an optional
// suffix k, m, g, t or p (powers of 1024, any case, optionally followed by
// b). fio's own parser takes almost anything (4q is 4 bytes, 1.5m is 1);
// iolab refuses what fio would misread.
func ParseSize(v string) (int64, error) {
	bad := fmt.Errorf("%q is not a size (use e.g. 4k, 1m)", v)
	if strings.HasSuffix(v, "%") {
		return 0, fmt.Errorf("%q: iolab does not take percentages; give bytes (e.g. 10g)", v)
	}
	if strings.ContainsAny(v, "$(") {
		return 0, fmt.Errorf("%q: iolab does not expand fio's $keywords or (expressions); write the size", v)
	}
	if len(v) > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X') {
		n, err := strconv.ParseUint(v[2:], 16, 63)
		if err != nil || strings.Contains(v, "_") {
			return 0, bad
		}
		return int64(n), nil
	}
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, bad
	}
	n, err := strconv.ParseInt(v[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is too large", v)
	}
	suffix := strings.ToLower(v[i:])
	var shift uint
	switch strings.TrimSuffix(suffix, "b") {
	case "":
	case "k":
		shift = 10
	case "m":
		shift = 20
	case "g":
		shift = 30
	case "t":
		shift = 40
	case "p":
		shift = 50
	case "ki", "mi", "gi", "ti", "pi":
		// With kb_base=1024 fio reads 1KiB as 1000 bytes (HOWTO, "int");
		// fio 3.33 even reads 1ki as 1024 but 1kib as 1000.
		return 0, fmt.Errorf("%q: fio does not read the %s suffix as a power of 1024 (with kb_base=1024, 1KiB is 1000 bytes); write %s%s for powers of 1024, or the bytes",
			v, v[i:], v[:i], suffix[:1])
	default:
		return 0, bad
	}
	if n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("%q is too large", v)
	}
	return n << shift, nil
}

// ParseDuration parses a time the way fio does (get_mult_time in parse.c):
// a whole number, in seconds unless a unit follows: us or usec, ms or msec,
// s, m, h, d, in any case.
func ParseDuration(v string) (time.Duration, error) {
	bad := fmt.Errorf("%q is not a duration (use e.g. 10, 10s, 500ms, 2m)", v)
	if strings.ContainsAny(v, "$(") {
		return 0, fmt.Errorf("%q: iolab does not expand fio's $keywords or (expressions); write the time", v)
	}
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, bad
	}
	if i < len(v) && v[i] == '.' {
		// fio drops the fraction: runtime=1.5 runs for 1 s.
		return 0, fmt.Errorf("%q: fio ignores fractions of a unit; use a smaller unit (e.g. 1500ms)", v)
	}
	n, err := strconv.ParseInt(v[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is too long", v)
	}
	var unit time.Duration
	switch u := strings.ToLower(v[i:]); u {
	case "", "s":
		unit = time.Second
	case "us", "usec":
		unit = time.Microsecond
	case "ms", "msec":
		unit = time.Millisecond
	case "m":
		unit = time.Minute
	case "h":
		unit = time.Hour
	case "d":
		unit = 24 * time.Hour
	case "sec", "secs", "min", "mins":
		// fio 3.33 matches none of these and reads them as microseconds.
		return 0, fmt.Errorf("%q: fio reads the unit %q as microseconds; write %d%s", v, v[i:], n, u[:1])
	default:
		return 0, bad
	}
	if n > int64(math.MaxInt64/unit) {
		return 0, fmt.Errorf("%q is too long", v)
	}
	return time.Duration(n) * unit, nil
}

// FormatSize writes a byte count as an option value that ParseSize reads
// back: the largest of g, m and k that divides it, else bytes ("4k", "1m",
// "2g", "1536").
func FormatSize(b int64) string {
	switch {
	case b > 0 && b%(1<<30) == 0:
		return strconv.FormatInt(b>>30, 10) + "g"
	case b > 0 && b%(1<<20) == 0:
		return strconv.FormatInt(b>>20, 10) + "m"
	case b > 0 && b%(1<<10) == 0:
		return strconv.FormatInt(b>>10, 10) + "k"
	}
	return strconv.FormatInt(b, 10)
}

// FormatDuration writes a time as an option value that ParseDuration reads
// back: whole seconds without a unit, else milliseconds; "" for zero.
func FormatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return ""
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10)
	case d%time.Millisecond == 0:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	}
	return strconv.FormatInt(d.Microseconds(), 10) + "us"
}

// Bytes writes a byte count for people, in powers of 1024 with three
// significant digits: "512B", "4.00KiB", "1.50GiB".
func Bytes(v float64) string {
	return Scaled(v, 1024, []string{"B", "KiB", "MiB", "GiB", "TiB"})
}

// Rate writes bytes per second as Bytes does: "1.50GiB/s".
func Rate(v float64) string { return Bytes(v) + "/s" }

// Count writes a count the way fio's num2str does, with three significant
// digits and k, M, G, T in powers of 1000: "999", "57.2k", "1.5M".
func Count(v float64) string {
	suffixes := []string{"", "k", "M", "G", "T"}
	i := 0
	for v >= 1000 && i < len(suffixes)-1 {
		v /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f", v)
	}
	s := fmt.Sprintf("%.*f", max(0, 2-int(math.Log10(math.Max(v, 1)))), v)
	if strings.Contains(s, ".") {
		s = strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
	}
	return s + suffixes[i]
}

// Scaled divides v by base until it is below base (or the units run out)
// and writes it with three significant digits and the unit it reached.
func Scaled(v float64, base float64, units []string) string {
	i := 0
	for v >= base && i < len(units)-1 {
		v /= base
		i++
	}
	if v >= 100 || i == 0 {
		return fmt.Sprintf("%.0f%s", v, units[i])
	}
	if v >= 10 {
		return fmt.Sprintf("%.1f%s", v, units[i])
	}
	return fmt.Sprintf("%.2f%s", v, units[i])
}

// Nanos writes a latency given in nanoseconds with three significant digits
// in the largest unit that keeps it at least 1: "812ns", "812µs", "12.3ms".
// A value that rounds up to 1000 of a unit is written in the next one
// (999.7µs is "1.00ms", not "1000µs").
func Nanos(ns float64) string {
	v, unit := ns, "ns"
	for _, u := range []string{"µs", "ms", "s"} {
		if v < 999.5 {
			break
		}
		v, unit = v/1000, u
	}
	if unit == "ns" {
		return fmt.Sprintf("%.0fns", v)
	}
	return strconv.FormatFloat(v, 'f', decimals3(v), 64) + unit
}

// decimals3 is how many decimals write v (at least 1, below 1000) with
// three significant digits, after rounding: 9.996 is "10.0", not "10.00".
func decimals3(v float64) int {
	switch {
	case v >= 99.95:
		return 0
	case v >= 9.995:
		return 1
	}
	return 2
}

// Closest returns the candidate nearest to s by edit distance, ignoring
// case (fio's names are lower case, and case-sensitive), or "" when none is
// near enough: fio's string_distance_ok allows up to half of the length of
// what was typed. It suggests option names, values and commands.
func Closest(s string, candidates []string) string {
	best, bestDist := "", (len(s)+1)/2+1
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(s), c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, sub)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Significant writes v with n significant digits (at least 1) for people:
// never an exponent, trailing zeros kept so that the digits shown are the
// digits meant ("0.0123", "12.3", "1.00", "123457" → "123000" for n = 3);
// "0" for zero, "NaN" and "±Inf" as strconv writes them.
func Significant(v float64, n int) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	n = max(n, 1)
	// Round first: 999.7 to three digits is 1000, which has one more
	// integer digit than 999.7.
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'e', n-1, 64), 64)
	exp := int(math.Floor(math.Log10(math.Abs(r))))
	return strconv.FormatFloat(r, 'f', max(0, n-1-exp), 64)
}

// Percent writes a share given in percent with three significant digits
// and a sign for changes when signed: "12.3%", "0.512%", "+85.0%", "−3.20%".
func Percent(v float64, signed bool) string {
	s := Significant(v, 3)
	switch {
	case signed && v > 0:
		s = "+" + s
	case signed && v < 0:
		s = "−" + s[1:] // a minus sign, not a hyphen
	}
	return s + "%"
}
