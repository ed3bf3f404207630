package units

import (
	"math"
	"strconv"
	"time"
)

// Duration writes a latency as Nanos does: "3.78ms", "142µs", "812ns".
// In a right-aligned column the units line up, which Go's
// time.Duration.String ("3.784704ms" beside "142.336µs") does not.
func Duration(d time.Duration) string { return Nanos(float64(d)) }

// Number writes a measured figure for people with three significant
// digits, and k, M, G, T in powers of 1000 from 1000 on: "0.67", "8.04",
// "12.3", "123", "1.23k", "45.6M". Unlike Count (fio's num2str) it keeps
// the decimals of small values and the zeros, so figures of one column
// read alike.
func Number(v float64) string {
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	}
	suffixes := []string{"", "k", "M", "G", "T"}
	i := 0
	for v >= 999.5 && i < len(suffixes)-1 {
		v /= 1000
		i++
	}
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return sign + strconv.FormatFloat(v, 'f', 0, 64) + suffixes[i]
	}
	d := decimals3(v)
	if v < 0.9995 {
		// 0.0123 keeps three digits too.
		d = 2 - int(math.Floor(math.Log10(v)))
	}
	return sign + strconv.FormatFloat(v, 'f', d, 64) + suffixes[i]
}
