package bench

import (
	"math"
	"slices"
	"testing"
	"time"
)

func steadyJob(metric string, slope, pct bool, limit float64, dur int) *Job {
	j := NewJob()
	j.SSMetric, j.SSSlope, j.SSPct, j.SSLimit, j.SSDur = metric, slope, pct, limit, time.Duration(dur)*time.Second
	return &j
}

// TestSteadyWindow feeds fio's two tests sample by sample and checks when
// they hold, the criterion's value and the order fio prints the window in.
func TestSteadyWindow(t *testing.T) {
	tests := []struct {
		name     string
		job      *Job
		iops     []uint64
		attained int // the sample (1-based) at which it holds; 0: never
		crit     float64
		window   []uint64
	}{
		// Mean 100, largest deviation 5: 5 %, under 10 % at the third sample.
		{"deviation holds once the window is full", steadyJob(SteadyIOPS, false, true, 10, 3),
			[]uint64{95, 100, 105, 100}, 3, 5, []uint64{95, 100, 105}},
		{"deviation never holds on a zigzag", steadyJob(SteadyIOPS, false, true, 10, 3),
			[]uint64{50, 150, 50, 150, 50}, 0, 100 * (200.0 / 3) / (250.0 / 3), []uint64{50, 150, 50}},
		// A line rising by 10 a second around a mean of 110 (window
		// 100,110,120): slope 10, 9.09 % of the mean.
		{"slope of a steady rise", steadyJob(SteadyIOPS, true, true, 5, 3),
			[]uint64{100, 110, 120, 130, 140}, 0, 100 * 10 / 130.0, []uint64{120, 130, 140}},
		{"slope of a flat line holds", steadyJob(SteadyIOPS, true, false, 0.5, 4),
			[]uint64{70, 100, 100, 100, 100}, 5, 0, []uint64{100, 100, 100, 100}},
		{"absolute deviation", steadyJob(SteadyIOPS, false, false, 3, 2),
			[]uint64{10, 20, 24, 20}, 3, 2, []uint64{20, 24}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newSteadyWindow(tc.job)
			got := 0
			for i, v := range tc.iops {
				if w.add(v, v*4096) {
					got = i + 1
					break
				}
			}
			if got != tc.attained {
				t.Errorf("attained at sample %d, want %d", got, tc.attained)
			}
			r := w.result(time.Second)
			if math.Abs(r.Criterion-tc.crit) > 1e-9 {
				t.Errorf("criterion %v, want %v", r.Criterion, tc.crit)
			}
			if !slices.Equal(r.IOPS, tc.window) {
				t.Errorf("window %v, want %v (oldest first)", r.IOPS, tc.window)
			}
			if r.BW[0] != r.IOPS[0]*4096 || r.IOPSMean() != meanOf(tc.window) {
				t.Errorf("bw %v, iops mean %d", r.BW, r.IOPSMean())
			}
		})
	}
}

// TestSteadyWindowNotFull: a job that ends before its window fills
// reports the samples it has, then zeros, and attained=0.
func TestSteadyWindowNotFull(t *testing.T) {
	w := newSteadyWindow(steadyJob(SteadyBW, true, true, 1, 4))
	w.add(1, 100)
	w.add(1, 200)
	r := w.result(0)
	if r.Attained || r.Full || !slices.Equal(r.BW, []uint64{100, 200, 0, 0}) || r.BWMean() != 75 {
		t.Errorf("%+v", r)
	}
}
