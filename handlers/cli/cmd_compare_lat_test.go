package cli

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
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
	store, run := engineLatStore(t, ctx, filepath.Join(t.TempDir(), "iolab.db"))
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

// iolab show of the same run heads its per-step table with lat by
// default (the run compares engines) and with the kind --lat picks, and
// libaio's first repeat's p50 is that kind's: 4.19 µs of lat, 201 ns of
// clat; a kind it does not know is refused by name.
func TestShowLatKind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "iolab.db")
	store, run := engineLatStore(t, context.Background(), path)
	store.Close()
	id := strconv.FormatInt(run.ID, 10)
	for _, tc := range []struct {
		args        []string
		title, head string
		p50         string
	}{
		{nil, "latency from submission (lat) percentiles", "lat p50", "4.19µs"},
		{[]string{"--lat", "clat"}, "completion latency (clat) percentiles", "clat p50", "201ns"},
		{[]string{"--lat", "slat"}, "submission latency (slat) percentiles", "slat p50", "4.02µs"},
	} {
		code, out, stderr := runOut(t, append(append([]string{"show", "--db", path}, tc.args...), id)...)
		if code != 0 {
			t.Fatalf("show %v: exit %d: %s", tc.args, code, stderr)
		}
		if !strings.Contains(out, tc.title) || !strings.Contains(out, tc.head) {
			t.Errorf("show %v: no %q nor %q in\n%s", tc.args, tc.title, tc.head, out)
		}
		var row string
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "libaio") && strings.Contains(l, " 1 ") || strings.HasPrefix(strings.TrimSpace(l), "1 ") {
				row = l
				break
			}
		}
		if !strings.Contains(row, tc.p50) {
			t.Errorf("show %v: step 1's row %q has no p50 of %s", tc.args, row, tc.p50)
		}
	}
	if code, _, stderr := runOut(t, "show", "--db", path, "--lat", "qlat", id); code != 2 || !strings.Contains(stderr, `"qlat" is not a latency`) {
		t.Errorf("--lat qlat: exit %d, %q", code, stderr)
	}
}

// engineLatStore is a store at path holding one finished run of libaio
// against io_uring, five repeats, whose lat, clat and slat differ
// (sweeptest.SubmitJob).
func engineLatStore(t *testing.T, ctx context.Context, path string) (*db.Store, *db.Run) {
	t.Helper()
	store := openTestStore(t, path)
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
	return store, run
}
