package chart

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

func TestBuildChartTimeline(t *testing.T) {
	plan := testPlan(1, sweepOf(sweep.AxisIODepth, "1", "4"))
	samples := func(ios ...uint64) []bench.Sample {
		var out []bench.Sample
		for i, n := range ios {
			out = append(out, bench.Sample{At: time.Duration(i+1) * 500 * time.Millisecond, IOs: bench.DirCounts{n, 0}})
		}
		return out
	}
	run := testRun(4, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		if s.Seq == 1 {
			return sweeptest.Failed("boom")
		}
		// Job a runs as two clones; job b beside them.
		a := testJob("a", 1500*time.Millisecond, testLoad{ios: 600, bs: 4096}, testLoad{})
		a.Samples = samples(100, 300, 600)
		a2 := testJob("a", 1500*time.Millisecond, testLoad{ios: 150, bs: 4096}, testLoad{})
		a2.Samples = samples(50, 100, 150, 150) // one more interval than a: left out
		b := testJob("b", 1500*time.Millisecond, testLoad{ios: 9000, bs: 1 << 20}, testLoad{})
		b.Samples = samples(3000, 6000, 9000)
		return sweeptest.Done(a, a2, b)
	}))
	c := mustBuild(t, Query{Kind: Timeline, Step: 1}, run)
	// The first job, its clones added: per half second 100, 200, 300 I/Os
	// and 50 each; ×2 per second. Never b's.
	checkTable(t, c, []string{"job", "time_s", "read_iops"}, [][]string{
		{"a", "0.5", "300"}, {"a", "1", "500"}, {"a", "1.5", "700"},
	})
	checkTable(t, mustBuild(t, Query{Kind: Timeline, Step: 1, Job: "b"}, run), []string{"job", "time_s", "read_iops"}, [][]string{
		{"b", "0.5", "6000"}, {"b", "1", "6000"}, {"b", "1.5", "6000"},
	})
	doc := checkOption(t, c)
	if !slices.Equal(seriesNames(doc), []string{"read"}) || !reflect.DeepEqual(seriesValues(doc, 0)[1], []any{1.0, 500.0}) {
		t.Errorf("series %q, data %v", seriesNames(doc), seriesValues(doc, 0))
	}
	if !strings.HasPrefix(doc.XAxis[0].Name, "time since the measurement began") || doc.YAxis[0].Name != "IOPS" {
		t.Errorf("axes %+v %+v", doc.XAxis, doc.YAxis)
	}
	// Asked for, writes show even at zero.
	c = mustBuild(t, Query{Kind: Timeline, Step: 1, Dir: "write"}, run)
	checkTable(t, c, []string{"job", "time_s", "write_iops"}, [][]string{{"a", "0.5", "0"}, {"a", "1", "0"}, {"a", "1.5", "0"}})
	// A failed step plots nothing.
	c = mustBuild(t, Query{Kind: Timeline, Step: 2}, run)
	if len(c.Rows) != 0 {
		t.Errorf("failed step rows = %q", c.Rows)
	}
	checkOption(t, c)

	// Without a step: every step one after the other, on one time axis
	// (steps stored without times follow each other), the phases shaded.
	c = mustBuild(t, Query{Kind: Timeline}, run)
	checkTable(t, c, []string{"step", "job", "time_s", "run_time_s", "read_iops"}, [][]string{
		{"1", "a", "0.5", "0.5", "300"}, {"1", "a", "1", "1", "500"}, {"1", "a", "1.5", "1.5", "700"},
	})
	if !strings.Contains(string(c.Option), `"markArea"`) || len(c.Pickers) != 1 || c.Pickers[0].Param != "step" || len(c.Pickers[0].Options) != 3 {
		t.Errorf("whole-run timeline: pickers %+v, option %s", c.Pickers, c.Option)
	}

	for _, tc := range []struct {
		q    Query
		says string
	}{
		{Query{Kind: Timeline, Step: 3}, "run 4 has no step 3; its steps are 1 to 2"},
	} {
		_, err := Build(tc.q, []LoadedRun{run})
		var ve *QueryError
		if !errors.As(err, &ve) || ve.Field != "step" || !strings.Contains(ve.Msg, tc.says) {
			t.Errorf("Build(%+v) = %v, want a step error saying %q", tc.q, err, tc.says)
		}
	}
}
