package sweep_test

import (
	"slices"
	"strings"
	"testing"

	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

// The CLI's sweeps (--sweep AXIS=v1,v2,…), from the case table the form's
// test shares (sweeptest.ParseCases).
func TestParseSweep(t *testing.T) {
	for _, tc := range sweeptest.ParseCases() {
		t.Run(tc.In, func(t *testing.T) {
			got, err := sweep.ParseSweep(tc.In)
			if tc.Err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.Err) {
					t.Fatalf("error %v, want one containing %q", err, tc.Err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Axis != tc.Axis || !slices.Equal(got.Values, tc.Values) {
				t.Fatalf("got %s %q, want %s %q", got.Axis, got.Values, tc.Axis, tc.Values)
			}
		})
	}
}

// A mistyped axis is told the nearest one, a table axis before a fio
// option as near; a name near none is told the list alone.
func TestSweepDidYouMean(t *testing.T) {
	for _, tc := range []struct{ axis, want string }{
		{"iodeph", `did you mean "iodepth"?`},
		{"IODepth", `did you mean "iodepth"?`},
		{"numjob", `did you mean "numjobs"?`},
		{"schedulr", `did you mean "scheduler"?`},
		{"ioengin", `did you mean "ioengine"?`},
		{"rate_iop", `did you mean "rate_iops"?`},
		{"iodepth_batch_submt", `did you mean "iodepth_batch_submit"?`},
		{"xyzzyplugh", ""},
	} {
		_, err := sweep.NewSweep(sweep.Axis(tc.axis), []string{"1", "2"})
		if err == nil {
			t.Fatalf("%s: taken", tc.axis)
		}
		msg := err.Error()
		if !strings.Contains(msg, "is not an axis") || !strings.Contains(msg, "iodepth, ioengine") {
			t.Errorf("%s: %q does not say it is not an axis and list the axes", tc.axis, msg)
		}
		if tc.want == "" && strings.Contains(msg, "did you mean") {
			t.Errorf("%s: %q suggests a name far from what was typed", tc.axis, msg)
		}
		if tc.want != "" && !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %q, want %s", tc.axis, msg, tc.want)
		}
	}
}
