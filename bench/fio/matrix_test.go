package fio

import (
	"strings"
	"testing"
)

// TestMatrixVerdict: the line under the matrix counts the rows that meet
// issue 14's bar (median IOPS ratio ≥ 1, median CPU ratio ≤ 1), names
// those short of it with both ratios, and the rows whose IOPS interval
// lies wholly below 1.
func TestMatrixVerdict(t *testing.T) {
	rows := []MatrixRow{
		{Target: "zram", Engine: "io_uring", Depth: 8, Ratio: 1.10, RatioLo: 1.02, RatioHi: 1.2, CPURatio: 0.97},
		{Target: "zram", Engine: "io_uring", Depth: 32, Ratio: 1.00, RatioLo: 0.95, RatioHi: 1.1, CPURatio: 1.02},
		{Target: "loop", Engine: "libaio", Depth: 1, Ratio: 0.93, RatioLo: 0.90, RatioHi: 0.97, CPURatio: 0.99},
	}
	got := matrixVerdict(rows)
	for _, want := range []string{
		"on 1 of 3 rows",
		"short: zram io_uring 32 (1.000, CPU 1.020), loop libaio 1 (0.930, CPU 0.990)",
		"IOPS interval wholly below 1: loop libaio 1.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("verdict %q lacks %q", got, want)
		}
	}
	if got := matrixVerdict(rows[:1]); !strings.Contains(got, "on 1 of 1 rows") || strings.Contains(got, "short") ||
		!strings.Contains(got, "No row's IOPS interval lies wholly below 1.") {
		t.Errorf("all rows meeting the bar: %q", got)
	}
}
