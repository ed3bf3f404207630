package chart

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

// TestTimelineSteadyState: a step that ended on steady state shows its
// window shaded, its samples at one a second ending where the last was
// taken, and the criterion: the band of the allowed deviation around the
// window's mean, or the fitted line.
func TestTimelineSteadyState(t *testing.T) {
	plan := testPlan(1)
	build := func(s *bench.SteadyResult) *optionDoc {
		run := testRun(7, plan, sweeptest.Steps(plan, func(sweep.Step) sweep.StepResult {
			j := testJob("ss", 4*time.Second, testLoad{ios: 400, bs: 4096}, testLoad{})
			for i := range 4 {
				j.Samples = append(j.Samples, bench.Sample{At: time.Duration(i+1) * time.Second, IOs: bench.DirCounts{uint64(100 * (i + 1)), 0}})
			}
			j.Steady = s
			return sweeptest.Done(j)
		}))
		c := mustBuild(t, Query{Kind: Timeline, Step: 1}, run)
		return checkOption(t, c)
	}
	doc := build(&bench.SteadyResult{Metric: bench.SteadyIOPS, Pct: true, Limit: 10, Dur: 3, Attained: true, Full: true,
		Criterion: 2, IOPS: []uint64{98, 100, 102}, BW: []uint64{1, 1, 1}, Last: 4 * time.Second})
	if !slices.Equal(seriesNames(doc), []string{"read", "steady-state samples", "steady-state criterion"}) {
		t.Fatalf("series %q", seriesNames(doc))
	}
	if got := seriesValues(doc, 1); !reflect.DeepEqual(got[:3], []any{[]any{2.0, 98.0}, []any{3.0, 100.0}, []any{4.0, 102.0}}) {
		t.Errorf("samples %v", got)
	}
	// Mean 100, ±10 %: 90 to 110 over the window (1 s to 4 s).
	if got := seriesValues(doc, 2); !reflect.DeepEqual(got[:5], []any{[]any{1.0, 110.0}, []any{4.0, 110.0}, "-", []any{1.0, 90.0}, []any{4.0, 90.0}}) {
		t.Errorf("band %v", got)
	}
	if !strings.Contains(doc.Title.Subtext, "steady state attained: iops mean deviation 2%, within ±10%, over 3 s") {
		t.Errorf("subtitle %q", doc.Title.Subtext)
	}

	// A slope of +2 IOPS a second through the mean, not within ±1 %.
	doc = build(&bench.SteadyResult{Metric: bench.SteadyIOPS, Slope: true, Pct: true, Limit: 1, Dur: 3, Full: true,
		Criterion: 2, SlopeValue: 2, IOPS: []uint64{98, 100, 102}, BW: []uint64{1, 1, 1}, Last: 4 * time.Second})
	if got := seriesValues(doc, 2); !reflect.DeepEqual(got[:2], []any{[]any{2.0, 98.0}, []any{4.0, 102.0}}) {
		t.Errorf("fitted line %v", got)
	}
	if !strings.Contains(doc.Title.Subtext, "steady state not attained: iops slope 2%, outside ±1%") {
		t.Errorf("subtitle %q", doc.Title.Subtext)
	}
	// Judged in bytes/s at one block size (4 KiB an I/O): the band of
	// ±8 KiB/s is ±2 IOPS around the mean.
	doc = build(&bench.SteadyResult{Metric: bench.SteadyBW, Dur: 2, Full: true, Limit: 8192, Attained: true,
		IOPS: []uint64{99, 101}, BW: []uint64{99 * 4096, 101 * 4096}, Last: 4 * time.Second})
	if got := seriesValues(doc, 2); !reflect.DeepEqual(got[:5], []any{[]any{2.0, 102.0}, []any{4.0, 102.0}, "-", []any{2.0, 98.0}, []any{4.0, 98.0}}) {
		t.Errorf("bandwidth band %v", got)
	}
	if !strings.Contains(doc.Title.Subtext, "(bandwidth, drawn in IOPS of 4.00KiB)") {
		t.Errorf("subtitle %q", doc.Title.Subtext)
	}
	// Bytes per I/O that change through the window: the samples, no
	// criterion drawn over IOPS.
	doc = build(&bench.SteadyResult{Metric: bench.SteadyBW, Dur: 2, Full: true, IOPS: []uint64{1, 1}, BW: []uint64{5, 9}, Last: 2 * time.Second})
	if !slices.Equal(seriesNames(doc), []string{"read", "steady-state samples"}) {
		t.Errorf("series %q", seriesNames(doc))
	}
}
