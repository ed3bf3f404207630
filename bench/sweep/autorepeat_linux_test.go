package sweep

import (
	"context"
	"testing"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/system"
)

func TestParseRepeat(t *testing.T) {
	for _, tc := range []struct {
		in     string
		n      int
		within float64
		max    int
		err    bool
	}{
		{in: "3", n: 3},
		{in: "auto", within: 0.05, max: 10},
		{in: "auto:2%", within: 0.02, max: 10},
		{in: "auto:2.5%:20", within: 0.025, max: 20},
		{in: "auto:2", err: true},
		{in: "auto:5%:3", err: true}, // below MinAutoRepeat
		{in: "autox", err: true},
		{in: "0", err: true},
		{in: "100000", err: true},
	} {
		n, a, err := ParseRepeat(tc.in)
		switch {
		case tc.err != (err != nil):
			t.Errorf("%q: err %v", tc.in, err)
		case err != nil:
		case a == nil && (n != tc.n || tc.max != 0):
			t.Errorf("%q: %d, auto %v", tc.in, n, a)
		case a != nil && (a.Within != tc.within || a.Max != tc.max):
			t.Errorf("%q: auto %+v", tc.in, *a)
		}
	}
}

// TestAutoRepeatStopsWhenSettled: the null engine's IOPS are steady, so
// auto repeats stop at MinAutoRepeat when the precision asked is loose and
// run to the cap when it is tighter than the noise allows.
func TestAutoRepeatStopsWhenSettled(t *testing.T) {
	cfg, err := fio.ParseArgs([]string{"--name=n", "--ioengine=null", "--size=1g", "--runtime=50ms", "--time_based"})
	if err != nil {
		t.Fatal(err)
	}
	rn := &bench.Runner{Sys: system.FS{}}
	for _, tc := range []struct {
		within float64
		max    int
		want   int
	}{
		{within: 10, max: 9, want: MinAutoRepeat}, // any median is known within ±1000 %
		{within: 1e-9, max: 8, want: 8},           // nothing is within a billionth
	} {
		plan := &Plan{Name: "n", Base: *cfg, Repeat: 1, AutoRepeat: &AutoRepeat{Within: tc.within, Max: tc.max},
			Sweeps: []Sweep{{Axis: AxisIODepth, Values: []string{"1", "2"}}}}
		results, err := Run(context.Background(), rn, plan, PlanHooks{})
		if err != nil {
			t.Fatal(err)
		}
		if len(results) != 2*tc.want {
			t.Errorf("within %v, max %d: %d steps, want %d", tc.within, tc.max, len(results), 2*tc.want)
		}
		for i, r := range results {
			if r.Step.Seq != i {
				t.Errorf("step %d has seq %d", i, r.Step.Seq)
			}
		}
	}
}
