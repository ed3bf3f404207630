package cli

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
	"iolab/db"
)

// iolab compare of a run of libaio against io_uring (lat ≠ clat:
// sweeptest.SubmitJob) compares lat by default, and --lat picks another;
// the stored lat and slat histograms are read, not clat's alone.
func TestCompareLatKind(t *testing.T) {
	ctx := context.Background()
	store := openTestStore(t, filepath.Join(t.TempDir(), "iolab.db"))
	plan := &sweep.Plan{Name: "engines", Repeat: 5, Base: bench.Config{Jobs: []bench.Job{{Name: "r", RW: "randread", BS: 4096, IODepth: 1}}},
		Sweeps: []sweep.Sweep{{Axis: sweep.AxisEngine, Values: []string{"libaio", "io_uring"}}}}
	run := &db.Run{Name: plan.Name, Status: db.StatusRunning, Plan: *plan}
	if _, err := store.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, st := range sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		return sweeptest.Done(sweeptest.SubmitJob("r", s.Value(sweep.AxisEngine), s.Repeat))
	}) {
		st.Start, st.End = start, start.Add(time.Second)
		if err := store.SaveStep(ctx, run.ID, &st); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		lat  summary.LatKind
		want string
		us   float64 // libaio's median p50
	}{{"", "lat p50", 4.2}, {summary.LatClat, "clat p50", 0.2}, {summary.LatSlat, "slat p50", 4}} {
		diffs, err := compareRuns(ctx, store, []int64{run.ID}, "", "", tc.lat)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range diffs[0].Rows {
			if r.Metric.Name != tc.want {
				continue
			}
			found = true
			// Repeat r is r % slower: the median repeat is 2 % above.
			if m := r.A.Median(); len(r.A.Values) != 5 || m < 0.9*tc.us*1.02 || m > 1.1*tc.us*1.02 {
				t.Errorf("--lat %q: libaio's %s over %d repeats: %g µs, want %g", tc.lat, tc.want, len(r.A.Values), m, tc.us*1.02)
			}
		}
		if !found {
			t.Errorf("--lat %q: no %s row", tc.lat, tc.want)
		}
	}
}
