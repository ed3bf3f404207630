package handlers

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
	"iolab/bench/system"
	"iolab/db"
	"iolab/handlers/chart"
	"iolab/handlers/report"
)

// seedFullRun stores a finished run with everything a step can hold —
// slat, clat and lat histograms in both directions, several samples
// (each with its interval's latency), disks, CPU — over a sweep that
// every chart applies to (schedulers with
// two jobs for fairness, numjobs for scaling). The steps in firstFailed
// come first and failed; step 5 was cancelled.
func seedFullRun(t *testing.T, store *db.Store, name string, firstFailed int) *db.Run {
	t.Helper()
	ctx := context.Background()
	args := []string{"--ioengine=null", "--size=1m", "--bs=4k", "--name=reader", "--rw=randread", "--name=writer", "--rw=randwrite"}
	cfg, err := fio.ParseArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	plan := &sweep.Plan{Name: name, Args: args, Base: *cfg, Repeat: 2, Sweeps: []sweep.Sweep{
		{Axis: sweep.AxisScheduler, Values: []string{"none", "mq-deadline"}},
		{Axis: sweep.AxisNumJobs, Values: []string{"1", "2"}},
		{Axis: sweep.AxisIODepth, Values: []string{"1", "4"}}}}
	steps, err := plan.Steps()
	if err != nil {
		t.Fatal(err)
	}
	run := &db.Run{Name: name, Status: db.StatusRunning, Plan: *plan, Host: system.HostInfo{Hostname: "testhost", KernelRelease: "6.1.0-test"}}
	if _, err := store.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Hour).Truncate(time.Second)
	for i, st := range steps {
		res := sweep.StepResult{Step: st, Status: sweep.StepDone, Start: start, End: start.Add(time.Second),
			Schedulers: map[string]string{"vda": st.Scheduler},
			CPU:        system.CPUBreakdown{User: 10 + float64(i), System: 5, IRQ: 1, SoftIRQ: 2, IOWait: 3, Idle: 79 - float64(i), Steal: 0.5},
			Proc:       system.ProcCPU{User: 3 * time.Millisecond, System: 7 * time.Millisecond}}
		switch {
		case i < firstFailed:
			res.Status, res.Error = sweep.StepFailed, "io_uring_setup: EOPNOTSUPP"
			if err := store.SaveStep(ctx, run.ID, &res); err != nil {
				t.Fatal(err)
			}
			continue
		case i == 5:
			res.Status = sweep.StepCancelled
		}
		res.Result = &bench.Result{Start: start}
		for gi, g := range st.Config.Groups {
			gr := bench.GroupResult{ID: gi, Disks: []system.DiskUtilization{{Name: "vda", ReadsPerSec: float64(100 * i), WriteAwait: 0.5, Util: 40}}}
			for ji, job := range g.Jobs {
				jr := bench.JobResult{Name: job.Name, Job: job, Start: start, Runtime: time.Second, Jobs: 1, Interval: 250 * time.Millisecond}
				d := bench.Read
				if job.RW == "randwrite" {
					d = bench.Write
				}
				dr := &jr.Dirs[d]
				n := uint64(200 * (i + ji + 1))
				for k := range n {
					slat := 500 + (k*7)%300
					clat := 10_000*uint64(job.IODepth) + (k*37)%(5_000*uint64(i+1))
					dr.Slat.Add(slat)
					dr.Clat.Add(clat)
					dr.Lat.Add(slat + clat)
				}
				dr.IOs, dr.Bytes = n, n*4096
				// Traced (--trace-block), for the time split and the
				// block-layer parts of the tables.
				sweeptest.Traced(&jr, d, [4]float64{0.05, 0.25, 0.65, 0.05}, 0.9+0.01*float64(ji))
				for s := range uint64(4) {
					var sm bench.Sample
					sm.At = time.Duration(s+1) * 250 * time.Millisecond
					sm.IOs[d], sm.Bytes[d] = n*(s+1)/4-s*uint64(ji), (n*(s+1)/4-s*uint64(ji))*4096
					base := 10_000 * uint64(job.IODepth)
					sm.Lat = &bench.IntervalLat{N: n / 4, P50: base + 100*s, P99: base + 4_000 + 100*s, Max: base + 5_000*uint64(i+1)}
					jr.Samples = append(jr.Samples, sm)
				}
				gr.Jobs = append(gr.Jobs, jr)
			}
			gr.Trace = &bench.BlockTrace{Devices: []string{"253:0"}, Foreign: uint64(i % 3)}
			res.Result.Groups = append(res.Result.Groups, gr)
		}
		if err := store.SaveStep(ctx, run.ID, &res); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.SetRunStatus(ctx, run.ID, db.StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	r, err := store.GetRun(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The pages read only part of a run's steps (the store's summaries,
// chart.Load); what they show must be what the whole steps show.
func TestPagesShowWhatTheWholeStepsShow(t *testing.T) {
	ctx := context.Background()
	ts := newTestServer(t, Config{})
	r1 := seedFullRun(t, ts.store, "load-one", 3)
	r2 := seedFullRun(t, ts.store, "load-two", 0)
	whole := func(runs ...*db.Run) []chart.LoadedRun {
		var out []chart.LoadedRun
		for _, r := range runs {
			steps, err := ts.store.Steps(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, chart.LoadedRun{Run: *r, Steps: steps})
		}
		return out
	}
	ids := func(runs []chart.LoadedRun) []int64 {
		var out []int64
		for _, r := range runs {
			out = append(out, r.Run.ID)
		}
		return out
	}

	// The run page: its table, and every chart in its default view. The
	// compare page: the same charts of both runs, in either order (the
	// timeline draws every step).
	for _, runs := range [][]chart.LoadedRun{whole(r1), whole(r2), whole(r1, r2), whole(r2, r1)} {
		page, err := ts.srv.loadSummaries(ctx, ids(runs))
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range slices.Concat(summary.LatKinds, summary.BlockKinds) {
			if got, want := report.SummaryRows(page[0].Summary, k), report.StepRows(runs[0].Steps, k); !reflect.DeepEqual(got, want) {
				t.Errorf("runs %v %s: step table differs:\n got %+v\nwant %+v", ids(runs), k, got, want)
			}
		}
		want := chartViews(runs, chart.Query{})
		if len(want) != len(notPTS(chart.On(chart.RunPage))) {
			t.Fatalf("runs %v: %d charts, want every kind", ids(runs), len(want))
		}
		for _, v := range want {
			if v.Error != "" || v.Option == "" {
				t.Fatalf("runs %v: %s chart: %q", ids(runs), v.Kind, v.Error)
			}
		}
		for i, got := range chartViews(page, chart.Query{}) {
			if !reflect.DeepEqual(got, want[i]) {
				t.Errorf("runs %v: %s chart differs:\n got %+v\nwant %+v", ids(runs), got.Kind, got, want[i])
			}
		}
	}

	// The chart pages, their CSV and the API: one chart, in other views.
	for _, runs := range [][]chart.LoadedRun{whole(r1), whole(r1, r2)} {
		for _, kind := range notPTS(chart.Kinds()) {
			for _, q := range []chart.Query{
				{Kind: kind.Name, Runs: ids(runs), Step: 7},
				{Kind: kind.Name, Runs: ids(runs), Step: 2, Dir: "write", X: sweep.AxisNumJobs, Percentiles: []float64{1, 99.99}, IODepths: []int{4}},
			} {
				want, wantErr := chart.Build(q, runs)
				loaded, err := ts.srv.loadSummaries(ctx, q.Runs)
				if err != nil {
					t.Fatal(err)
				}
				got, err := chart.Build(q, loaded)
				if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(err, wantErr) {
					t.Errorf("%s: chart differs:\n got %+v, %v\nwant %+v, %v", q.Values().Encode(), got, err, want, wantErr)
				}
			}
		}
	}

	// The compare page reads what its kinds need: its charts, tables and
	// warnings are those of the whole steps.
	for _, runs := range [][]chart.LoadedRun{whole(r1, r2), whole(r2, r1)} {
		page, err := ts.srv.loadRuns(ctx, ids(runs), chart.Load(0, chart.On(chart.ComparePage)...))
		if err != nil {
			t.Fatal(err)
		}
		kinds := chart.Available(runs, chart.ComparePage)
		if len(kinds) != len(chart.On(chart.ComparePage)) {
			t.Fatalf("runs %v: the compare page draws %d kinds, want every one", ids(runs), len(kinds))
		}
		for _, k := range kinds {
			q := chart.Query{Kind: k.Name, Runs: ids(runs)}
			want, wantErr := chart.Build(q, runs)
			got, err := chart.Build(q, page)
			if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(err, wantErr) {
				t.Errorf("compare %v: %s chart differs:\n got %+v, %v\nwant %+v, %v", ids(runs), k.Name, got, err, want, wantErr)
			}
		}
		if got, want := report.SchedulerTables(page, true), report.SchedulerTables(runs, true); !reflect.DeepEqual(got, want) {
			t.Errorf("compare %v: scheduler tables differ:\n got %+v\nwant %+v", ids(runs), got, want)
		}
		if got, want := report.CompareWarnings(page), report.CompareWarnings(runs); !reflect.DeepEqual(got, want) {
			t.Errorf("compare %v: warnings differ:\n got %+v\nwant %+v", ids(runs), got, want)
		}
	}

	// The per-step CSV.
	runs := whole(r1)
	steps, err := ts.store.Summaries(ctx, r1.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != len(runs[0].Steps) {
		t.Fatalf("steps.csv: %d steps, want %d", len(steps), len(runs[0].Steps))
	}
	for i := range steps {
		if got, want := report.SummaryTableRows(&steps[i], summary.LatClat, false), report.StepsTableRows(&runs[0].Steps[i], summary.LatClat, false); !reflect.DeepEqual(got, want) {
			t.Errorf("steps.csv: step %d: %+v, want %+v", i+1, got, want)
		}
	}
}

// notPTS are the kinds a run of no PTS test draws: every one but a PTS
// test's plots (handlers/chart's pts*.go), which refuse other runs.
func notPTS(kinds []chart.KindSpec) []chart.KindSpec {
	return slices.DeleteFunc(kinds, func(k chart.KindSpec) bool { return strings.HasPrefix(string(k.Name), "pts-") })
}
