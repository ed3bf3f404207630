package report

import (
	"slices"
	"testing"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
	"iolab/db"
	"iolab/handlers/chart"
)

// The differences table names the engines a run ran, and those it left
// out (skipped as impossible, or failed at every step) as left out, not
// among them.
func TestEnvDiffsEngines(t *testing.T) {
	run := func(id int64, engines []string, skipped, failing string) chart.LoadedRun {
		plan := &sweep.Plan{Name: "engines", Repeat: 1, Sweeps: []sweep.Sweep{{Axis: sweep.AxisEngine, Values: engines}}}
		plan.Base.Jobs = []bench.Job{{Name: "w", IOEngine: "libaio", RW: "randwrite", BS: 4096}}
		if skipped != "" {
			plan.Skipped = []sweep.Skip{{Axes: []sweep.AxisValue{{Axis: sweep.AxisEngine, Value: skipped}}, Reason: "no poll queues"}}
		}
		var steps []sweep.StepResult
		for _, st := range sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
			if s.Value(sweep.AxisEngine) == failing {
				return sweeptest.Failed("io_uring_setup: EOPNOTSUPP")
			}
			return sweeptest.Done(bench.JobResult{Name: "w"})
		}) {
			eng := st.Step.Value(sweep.AxisEngine)
			if eng != skipped { // a skipped step never runs, nor is stored
				st.Step.Config.Jobs = []bench.Job{{Name: "w", IOEngine: eng, RW: "randwrite", BS: 4096}}
				steps = append(steps, st)
			}
		}
		return chart.LoadedRun{Run: db.Run{ID: id, Plan: *plan}, Steps: steps}
	}
	for _, tc := range []struct {
		name string
		runs []chart.LoadedRun
		want []string // the engines row, nil for none
	}{
		{"one skipped", []chart.LoadedRun{run(1, []string{"libaio", "io_uring", "io_uring+hipri"}, "io_uring+hipri", ""), run(2, []string{"libaio", "io_uring"}, "", "")},
			[]string{"libaio, io_uring; no step done: io_uring+hipri", "libaio, io_uring"}},
		{"one failed", []chart.LoadedRun{run(1, []string{"libaio", "io_uring"}, "", "io_uring"), run(2, []string{"libaio", "io_uring"}, "", "")},
			[]string{"libaio; no step done: io_uring", "libaio, io_uring"}},
		{"same engines ran", []chart.LoadedRun{run(1, []string{"libaio", "io_uring"}, "", ""), run(2, []string{"libaio", "io_uring"}, "", "")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, d := range EnvDiffs(tc.runs) {
				if d.Field == "engines" {
					got = d.Values
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("engines row %q, want %q", got, tc.want)
			}
		})
	}
}
