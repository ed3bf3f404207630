package report

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestFileName(t *testing.T) {
	for _, tc := range []struct {
		ids       []int64
		ext, want string
	}{
		{[]int64{3}, ".html", "iolab-run-3.html"},
		{[]int64{3, 5}, ".html", "iolab-compare-3-5.html"},
		{[]int64{12, 4, 7}, ".md", "iolab-compare-12-4-7.md"},
	} {
		if got := FileName(tc.ids, tc.ext); got != tc.want {
			t.Errorf("FileName(%v, %q) = %q, want %q", tc.ids, tc.ext, got, tc.want)
		}
	}
}

func TestTableCell(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"16", "16"},           // an iodepth, as it is
		{"9999", "9999"},       // a small whole number
		{"41234.5", "41.2k"},   // a figure, three digits
		{"123456", "123k"},     // a large whole number
		{"0.00123", "0.00123"}, // three significant digits already
		{"4k", "4k"},           // not a number
		{"0x10", "0x10"},       // hex stays text
		{"", ""},
	} {
		if got := TableCell(tc.in); got != tc.want {
			t.Errorf("TableCell(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Build refuses, before reading anything, a report of no run or of more
// than MaxRuns.
func TestBuildRunCount(t *testing.T) {
	many := make([]int64, MaxRuns+1)
	for i := range many {
		many[i] = int64(i + 1)
	}
	for _, tc := range []struct {
		name string
		ids  []int64
		want string
	}{
		{"none", nil, "run: name at least one run"},
		{"too many", many, fmt.Sprintf("run: a report covers at most %d runs", MaxRuns)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(context.Background(), nil, tc.ids, Options{})
			var ie *InputError
			if !errors.As(err, &ie) || err.Error() != tc.want {
				t.Fatalf("error %v, want an InputError %q", err, tc.want)
			}
		})
	}
}
