package db

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
)

// TestImportNumbers: an export whose figures are negative, not finite or
// absurd, or whose steps are not its plan's, is refused with the field
// and the value named, and nothing is stored; the same export with sane
// figures is stored.
func TestImportNumbers(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	plan := sweep.Plan{Name: "p", Repeat: 2, Sweeps: []sweep.Sweep{{Axis: sweep.AxisIODepth, Values: []string{"1", "8"}}}}
	step := func(seq int, edit func(*sweep.StepResult, *bench.JobResult)) sweep.StepResult {
		j := bench.JobResult{Name: "r", Runtime: time.Second, Jobs: 1}
		j.Dirs[bench.Read].IOs, j.Dirs[bench.Read].Bytes = 100_000, 100_000*4096
		st := sweep.StepResult{Step: sweep.Step{Seq: seq, Repeat: seq / 2, Axes: []sweep.AxisValue{{Axis: sweep.AxisIODepth, Value: []string{"1", "8"}[seq%2]}}},
			Status: sweep.StepDone, Start: at(seq), End: at(seq + 1),
			Result: &bench.Result{Start: at(seq), Groups: []bench.GroupResult{{Jobs: []bench.JobResult{j}}}}}
		edit(&st, &st.Result.Groups[0].Jobs[0])
		return st
	}
	none := func(*sweep.StepResult, *bench.JobResult) {}
	tests := []struct {
		name  string
		steps func() []sweep.StepResult
		want  string // "" stores
	}{
		{"four sane steps", func() []sweep.StepResult {
			return []sweep.StepResult{step(0, none), step(1, none), step(2, none), step(3, none)}
		}, ""},
		{"2,000 steps for a plan of 4", func() []sweep.StepResult {
			var out []sweep.StepResult
			for i := range 2000 {
				out = append(out, step(i%4, none))
			}
			return out
		}, "2000 steps for a plan of 4"},
		{"seq beyond the plan", func() []sweep.StepResult { return []sweep.StepResult{step(4, none)} }, "step seq 4: the plan has steps 0 to 3"},
		{"repeat beyond the plan", func() []sweep.StepResult {
			return []sweep.StepResult{step(0, func(st *sweep.StepResult, _ *bench.JobResult) { st.Step.Repeat = 7 })}
		}, "repeat 7: the plan repeats 2 times"},
		{"a value the plan does not take", func() []sweep.StepResult {
			return []sweep.StepResult{step(0, func(st *sweep.StepResult, _ *bench.JobResult) { st.Step.Axes[0].Value = "4096" })}
		}, `iodepth="4096" is none of the plan's values (1, 8)`},
		{"NaN mean", func() []sweep.StepResult {
			return []sweep.StepResult{step(0, func(_ *sweep.StepResult, j *bench.JobResult) { j.Dirs[bench.Write].Lat.Stat.Mean = math.NaN() })}
		}, "write lat mean is NaN: not a number"},
		{"infinite CPU share", func() []sweep.StepResult {
			return []sweep.StepResult{step(0, func(st *sweep.StepResult, _ *bench.JobResult) { st.CPU.User = math.Inf(1) })}
		}, "cpu.user is +Inf"},
		{"negative latency", func() []sweep.StepResult {
			return []sweep.StepResult{step(0, func(_ *sweep.StepResult, j *bench.JobResult) { j.Dirs[bench.Read].Clat.Stat.Mean = -5 })}
		}, "read clat mean is -5: negative"},
		{"a latency of two days", func() []sweep.StepResult {
			return []sweep.StepResult{step(0, func(_ *sweep.StepResult, j *bench.JobResult) {
				j.Dirs[bench.Read].Clat.Stat.Max = uint64(48 * time.Hour)
			})}
		}, "read clat max is 1.728e+14"},
		{"200 million IOPS", func() []sweep.StepResult {
			return []sweep.StepResult{step(0, func(_ *sweep.StepResult, j *bench.JobResult) { j.Dirs[bench.Read].IOs = 200e6 })}
		}, "read IOPS 2e+08"},
		{"bytes above 2^60", func() []sweep.StepResult {
			return []sweep.StepResult{step(0, func(_ *sweep.StepResult, j *bench.JobResult) {
				j.Runtime = 300 * 24 * time.Hour
				j.Dirs[bench.Write].Bytes = 1<<60 + 1
			})}
		}, "write bytes is 1152921504606846977"},
		{"8 GiB an I/O", func() []sweep.StepResult {
			return []sweep.StepResult{step(0, func(_ *sweep.StepResult, j *bench.JobResult) { j.Dirs[bench.Read].Bytes = 100_000 << 33 })}
		}, "read bytes 858993459200000 for 100000 I/Os: more than 4 GiB an I/O"},
		{"group id 2^40", func() []sweep.StepResult {
			return []sweep.StepResult{step(0, func(st *sweep.StepResult, _ *bench.JobResult) { st.Result.Groups[0].ID = 1 << 40 })}
		}, "id 1099511627776 is not a group fio can have (0 to 4095)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := s.ListRuns(ctx, RunFilter{})
			e := &Export{Format: ExportFormat, Version: ExportVersion,
				Run: Run{Name: "n", Status: StatusDone, Created: at(0), Plan: plan}, Steps: tt.steps()}
			_, _, err := s.ImportRun(ctx, e, SourceImport)
			after, _ := s.ListRuns(ctx, RunFilter{})
			if tt.want == "" {
				if err != nil || len(after) != len(before)+1 {
					t.Fatalf("sane steps: %v, %d runs then %d", err, len(before), len(after))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
			if len(after) != len(before) {
				t.Fatalf("a refused import stored a run")
			}
		})
	}
}
