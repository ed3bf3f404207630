package summary

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/golden"
	"iolab/bench/stats"
	"iolab/bench/sweep"
)

// spreadJob is a one-second job doing ios I/Os of bs bytes in direction
// d, their completion latencies spread evenly over lat ± 20 %.
func spreadJob(name string, d int, ios uint64, bs uint64, lat time.Duration) bench.JobResult {
	r := bench.JobResult{Name: name, Runtime: time.Second, Jobs: 1}
	r.Dirs[d].IOs, r.Dirs[d].Bytes = ios, ios*bs
	for i := range ios {
		ns := uint64(float64(lat) * (0.8 + 0.4*float64(i)/float64(ios)))
		r.Dirs[d].Clat.Add(ns)
		r.Dirs[d].Lat.Add(ns)
	}
	return r
}

// fairnessPlan sweeps the scheduler over values with repeat repeats of a
// writer and a reader; its steps' configs name the two jobs.
func fairnessPlan(repeat int, values ...string) *sweep.Plan {
	p := synthPlan(repeat, sweep.Sweep{Axis: sweep.AxisScheduler, Values: values})
	p.Base = bench.Config{Jobs: []bench.Job{
		{Name: "bg-writer", RW: "write", BS: 1 << 20, IODepth: 16},
		{Name: "fg-reader", RW: "randread", BS: 4096, IODepth: 1},
	}}
	return p
}

// The reader of each repeat: its IOPS by scheduler and repeat, latency
// the inverse; the writer does the same under every scheduler.
func fairnessSteps(plan *sweep.Plan, readerIOPS map[string][]uint64, writerIOPS []uint64) []sweep.StepResult {
	return synthSteps(plan, func(s sweep.Step) sweep.StepResult {
		r := readerIOPS[s.Value(sweep.AxisScheduler)][s.Repeat]
		w := writerIOPS[s.Repeat]
		st := doneStep(
			spreadJob("bg-writer", bench.Write, w, 1<<20, time.Duration(16e9/float64(w))),
			spreadJob("fg-reader", bench.Read, r, 4096, time.Duration(1e9/float64(r))))
		st.Step.Config = plan.Base
		return st
	})
}

func rowOf(t *testing.T, d *Diff, job, metric string) *DiffRow {
	t.Helper()
	for i := range d.Rows {
		if d.Rows[i].Job == job && d.Rows[i].Metric.Name == metric {
			return &d.Rows[i]
		}
	}
	t.Fatalf("no row %s %s in %+v", job, metric, d.Rows)
	return nil
}

// Within a run: bfq triples the reader's IOPS in every repeat, the
// writer's repeats are the same draws under both: the reader's change is
// significant and holds over the table, the writer's is not.
func TestDiffAxisScheduler(t *testing.T) {
	plan := fairnessPlan(6, "none", "bfq", "kyber")
	steps := fairnessSteps(plan, map[string][]uint64{
		"none":  {1000, 1040, 980, 1010, 1060, 990},
		"bfq":   {3000, 3100, 2950, 3050, 2990, 3080},
		"kyber": {1005, 1030, 985, 1015, 1050, 995},
	}, []uint64{500, 520, 480, 510, 490, 505})
	diffs, err := DiffAxis(plan, steps, sweep.AxisScheduler, "none", DiffConf)
	if err != nil {
		t.Fatal(err)
	}
	if len(diffs) != 2 || diffs[0].A != "none" || diffs[0].B != "bfq" || diffs[1].B != "kyber" {
		t.Fatalf("diffs %q against %q, %q", diffs[0].A, diffs[0].B, diffs[1].B)
	}
	bfq := diffs[0]
	if len(bfq.Axes) != 0 || len(bfq.Rows) != 8 {
		t.Fatalf("axes %v, %d rows; want none and 2 jobs × 4 figures", bfq.Axes, len(bfq.Rows))
	}
	r := rowOf(t, bfq, "fg-reader", "IOPS")
	if r.Cmp.Verdict != stats.Significant || !r.Holds || !r.Better() || r.Cmp.Rel < 1.8 || r.Cmp.Rel > 2.2 {
		t.Errorf("reader IOPS under bfq: %+v", r.Cmp)
	}
	if l := rowOf(t, bfq, "fg-reader", "clat p50"); l.Cmp.Verdict != stats.Significant || l.Better() != true || l.Cmp.Rel > -0.6 {
		t.Errorf("reader p50 under bfq: %+v, better %v", l.Cmp, l.Better())
	}
	for _, m := range []string{"IOPS", "bandwidth", "clat p50"} {
		if w := rowOf(t, bfq, "bg-writer", m); w.Cmp.Verdict != stats.NotSignificant || w.Holds {
			t.Errorf("writer %s: %+v", m, w.Cmp)
		}
	}
	// p99 of 500 I/Os a repeat is flagged: it needs 1000.
	if f := rowOf(t, bfq, "bg-writer", "clat p99").Flags(); !slices.ContainsFunc(f, func(s string) bool { return strings.Contains(s, "too few I/Os in 6 of 6 repeats (needs 1000)") }) {
		t.Errorf("writer p99 flags %q", f)
	}
	// kyber's reader is none's, give or take: nothing to report.
	if k := rowOf(t, diffs[1], "fg-reader", "IOPS"); k.Cmp.Verdict != stats.NotSignificant {
		t.Errorf("reader IOPS under kyber: %+v", k.Cmp)
	}
	if s := diffs[1].Summary(); !strings.HasPrefix(s, "no significant difference in any of") {
		t.Errorf("kyber summary %q", s)
	}
	if _, err := DiffAxis(plan, steps, sweep.AxisScheduler, "cfq", DiffConf); err == nil || !strings.Contains(err.Error(), "none, bfq, kyber") {
		t.Errorf("unknown base: %v", err)
	}
	if _, err := DiffAxis(plan, steps, sweep.AxisEngine, "libaio", DiffConf); err == nil {
		t.Error("an axis the run does not sweep")
	}
}

// Three repeats against three cannot tell, whatever the values: the row
// says so and how many would.
func TestDiffTooFew(t *testing.T) {
	plan := fairnessPlan(3, "none", "bfq")
	steps := fairnessSteps(plan, map[string][]uint64{"none": {1000, 1010, 990}, "bfq": {3000, 3010, 2990}}, []uint64{500, 500, 500})
	diffs, err := DiffAxis(plan, steps, sweep.AxisScheduler, "none", DiffConf)
	if err != nil {
		t.Fatal(err)
	}
	r := rowOf(t, diffs[0], "fg-reader", "IOPS")
	if r.Verdict() != "too few repeats to tell" {
		t.Fatalf("verdict %q", r.Verdict())
	}
	if got := r.TooFewText(); got != "n=3 vs 3 cannot reach 95 %; the sides do not overlap: with 4 a side (or 5 against 3) a difference this clear would be significant" {
		t.Errorf("TooFewText %q", got)
	}
	// What it promises holds: 4 a side, still apart, are significant.
	if c := stats.Compare([]float64{1000, 1010, 990, 1005}, []float64{3000, 3010, 2990, 3005}, DiffConf); c.Verdict != stats.Significant {
		t.Errorf("4 a side apart: %s", c)
	}
	// Overlapping sides: 4 a side is the least, not a promise.
	steps = fairnessSteps(plan, map[string][]uint64{"none": {1000, 1010, 990}, "bfq": {1005, 1020, 995}}, []uint64{500, 500, 500})
	diffs, err = DiffAxis(plan, steps, sweep.AxisScheduler, "none", DiffConf)
	if err != nil {
		t.Fatal(err)
	}
	r = rowOf(t, diffs[0], "fg-reader", "IOPS")
	if got := r.TooFewText(); got != "n=3 vs 3 cannot reach 95 %; the sides overlap: 4 a side (or 5 against 3) at the least, more the more they overlap" {
		t.Errorf("TooFewText, overlapping %q", got)
	}
	if s := diffs[0].Summary(); s != "too few repeats to tell anything apart" {
		t.Errorf("summary %q", s)
	}
}

// Two runs: points matched by the axes either sweeps, a failed repeat
// counted and left out, a point one run lacks listed apart; one job a
// step on each side is one job whatever its name.
func TestDiffRuns(t *testing.T) {
	depths := func(values ...string) *sweep.Plan {
		p := synthPlan(4, sweep.Sweep{Axis: sweep.AxisIODepth, Values: values})
		p.Base = bench.Config{Jobs: []bench.Job{{Name: "w", RW: "randwrite", BS: 4096, IODepth: 1, IOEngine: "io_uring"}}}
		return p
	}
	a, b := depths("1", "4"), depths("1", "4", "16")
	b.Base.Jobs[0].Name = "randwrite"
	iops := func(plan *sweep.Plan, scale float64, fail int) []sweep.StepResult {
		return synthSteps(plan, func(s sweep.Step) sweep.StepResult {
			if s.Seq == fail {
				return failedStep("io_uring_setup: ENOMEM")
			}
			n := uint64(scale * (1000 + 20*float64(s.Repeat)))
			st := doneStep(spreadJob(plan.Base.Jobs[0].Name, bench.Write, n, 4096, time.Duration(1e9/float64(n))))
			st.Step.Config = plan.Base
			return st
		})
	}
	d := DiffRuns(DiffSide{Label: "run 1", Plan: a, Steps: iops(a, 1, 5)}, DiffSide{Label: "run 2", Plan: b, Steps: iops(b, 1.3, -1)}, DiffConf)
	if !slices.Equal(d.Axes, []sweep.Axis{sweep.AxisIODepth}) {
		t.Fatalf("axes %v", d.Axes)
	}
	if len(d.Rows) != 8 || d.Rows[0].Point[0].Value != "1" || d.Rows[4].Point[0].Value != "4" || d.Rows[0].Job != "w" {
		t.Fatalf("rows: %d, first %+v", len(d.Rows), d.Rows[0])
	}
	if !slices.Equal(d.OnlyB, []string{"iodepth=16 job randwrite"}) || len(d.OnlyA) != 0 {
		t.Errorf("only in one: %q %q", d.OnlyA, d.OnlyB)
	}
	at4 := d.Rows[4] // iodepth 4, IOPS: step 5 (the second repeat there) failed
	if at4.A.Failed != 1 || len(at4.A.Values) != 3 || at4.Cmp.Verdict != stats.TooFew {
		t.Errorf("iodepth 4: %+v", at4)
	}
	if at1 := d.Rows[0]; at1.Cmp.Verdict != stats.Significant || at1.Cmp.Rel < 0.29 || at1.Cmp.Rel > 0.31 {
		t.Errorf("iodepth 1: %+v", at1.Cmp)
	}

	// A run that does not sweep iodepth matches the other's points by its
	// job's iodepth.
	one := synthPlan(4)
	one.Base = bench.Config{Jobs: []bench.Job{{Name: "w", RW: "randwrite", BS: 4096, IODepth: 4}}}
	d = DiffRuns(DiffSide{Label: "run 1", Plan: a, Steps: iops(a, 1, -1)}, DiffSide{Label: "run 3", Plan: one, Steps: iops(one, 1, -1)}, DiffConf)
	if len(d.Rows) != 4 || d.Rows[0].Point[0].Value != "4" || !slices.Equal(d.OnlyA, []string{"iodepth=1 job w"}) {
		t.Errorf("against a run at iodepth 4: %d rows %+v, only in A %q", len(d.Rows), d.Rows[0].Point, d.OnlyA)
	}
	if d.Rows[0].Cmp.Verdict != stats.NotSignificant {
		t.Errorf("same numbers: %+v", d.Rows[0].Cmp)
	}
}

// What `iolab compare` prints, and the CSV, are pinned.
func TestDiffGolden(t *testing.T) {
	plan := fairnessPlan(5, "none", "bfq")
	steps := fairnessSteps(plan, map[string][]uint64{
		"none": {1000, 1040, 980, 1010, 1060},
		"bfq":  {3000, 3100, 2950, 3050, 2990},
	}, []uint64{500, 520, 480, 510, 490})
	steps[7] = failedStep("bfq: EIO")
	steps[7].Step = sweep.Step{Seq: 7, Repeat: 2, Axes: []sweep.AxisValue{{Axis: sweep.AxisScheduler, Value: "bfq"}}}
	diffs, err := DiffAxis(plan, steps, sweep.AxisScheduler, "none", DiffConf)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteDiff(&b, diffs[0]); err != nil {
		t.Fatal(err)
	}
	axes := DiffCSVAxes(diffs...)
	b.WriteString("\n--- CSV\n" + strings.Join(DiffCSVColumns(axes), ",") + "\n")
	for _, r := range DiffCSV(diffs[0], axes) {
		b.WriteString(strings.Join(r, ",") + "\n")
	}
	golden.Check(t, *update, filepath.Join("testdata", "golden", "diff-scheduler.txt"), []byte(b.String()))
}

// The axes one run's values are compared along: not iodepth (drawn along
// x) nor rate_iops (the QoS curve's load); with neither left, a run's
// diff needs a second run.
func TestDiffAxes(t *testing.T) {
	rates := sweep.Sweep{Axis: sweep.AxisRateIOPS, Values: []string{"max", "50%"}}
	for _, tc := range []struct {
		sweeps []sweep.Sweep
		want   []sweep.Axis
	}{
		{[]sweep.Sweep{{Axis: sweep.AxisIODepth, Values: []string{"1", "4"}}, {Axis: sweep.AxisEngine, Values: []string{"libaio", "io_uring"}}}, []sweep.Axis{sweep.AxisEngine}},
		{[]sweep.Sweep{rates, {Axis: sweep.AxisScheduler, Values: []string{"none", "bfq"}}}, []sweep.Axis{sweep.AxisScheduler}},
		{[]sweep.Sweep{rates}, nil},
	} {
		plan := synthPlan(1, tc.sweeps...)
		if got := DiffAxes(plan); !slices.Equal(got, tc.want) {
			t.Errorf("%v: diff axes %v, want %v", tc.sweeps, got, tc.want)
		}
		if tc.want == nil {
			if _, err := CompareSides([]DiffSide{{Label: "run 1", Plan: plan}}, "", "", DiffConf); err == nil || !strings.Contains(err.Error(), "give two runs") || !strings.Contains(err.Error(), "load of its QoS curve") {
				t.Errorf("%v: err %v, want one asking for two runs, saying why not rate_iops", tc.sweeps, err)
			}
		}
	}
}
