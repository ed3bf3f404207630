package chart

import (
	"slices"
	"strings"
	"testing"

	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

// engineSweep is a run of engines × iodepths × 3 repeats in which failing
// engines fail every step (no poll queues for hipri).
func engineSweep(engines []string, failing ...string) LoadedRun {
	plan := testPlan(3, sweepOf(sweep.AxisIODepth, "1", "4", "16"), sweepOf(sweep.AxisEngine, engines...))
	return testRun(9, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		if slices.Contains(failing, s.Value(sweep.AxisEngine)) {
			return sweeptest.Failed("io_uring_setup: EOPNOTSUPP")
		}
		return sweeptest.Done(testWrites(uint64(1000 * (s.Seq + 1))))
	}))
}

// Too many series: the first ones, and pickers that reach every value;
// a query's show= draws those it names; a series with no step done is
// left out and said in the subtitle.
func TestChartSeriesPicked(t *testing.T) {
	engines := []string{"io_uring", "libaio", "psync", "sync", "pvsync", "pvsync2", "posixaio", "mmap", "null", "io_uring+sqpoll"}
	run := engineSweep(engines, "io_uring+sqpoll")

	c := mustBuild(t, Query{Kind: IOPS}, run)
	doc := checkOption(t, c)
	if got := seriesNames(doc); !slices.Equal(got, engines[:maxSeries]) {
		t.Errorf("default series %q, want the first %d", got, maxSeries)
	}
	if len(c.Pickers) != 1 || c.Pickers[0].Param != "show" || len(c.Pickers[0].Options) != len(engines)-1 {
		t.Fatalf("pickers %+v", c.Pickers)
	}
	// Each picker option in its series' colour, ten engines in ten.
	colour := seriesColours(t, c.Option)
	seen := map[string]string{}
	for i, o := range c.Pickers[0].Options {
		if o.On != (i < maxSeries) || o.On && o.Color != colour[o.Value] {
			t.Errorf("picker option %+v, its series in %s", o, colour[o.Value])
		}
		if w, ok := seen[o.Color]; ok {
			t.Errorf("%s and %s both in %s", w, o.Value, o.Color)
		}
		seen[o.Color] = o.Value
	}
	if !strings.Contains(doc.Title.Subtext, "no step done: io_uring+sqpoll") {
		t.Errorf("subtitle %q does not name the series with no step done", doc.Title.Subtext)
	}

	// Latency: p50 and p99 of 4 series, or p99 alone; show= picks.
	c = mustBuild(t, Query{Kind: Latency, Show: []string{"libaio", "mmap"}}, run)
	if got := seriesNames(checkOption(t, c)); !slices.Equal(got, []string{"libaio p50", "libaio p99", "mmap p50", "mmap p99"}) {
		t.Errorf("show=libaio&show=mmap: %q", got)
	}
	c = mustBuild(t, Query{Kind: Latency}, run)
	if got := seriesNames(checkOption(t, c)); len(got) != maxSeries || got[0] != "io_uring p99" {
		t.Errorf("latency of 9 engines: %q, want p99 of the first %d", got, maxSeries)
	}
	// The distribution: as many iodepths as fit.
	c = mustBuild(t, Query{Kind: Distribution, Show: []string{"libaio", "psync", "sync"}}, run)
	if got := seriesNames(checkOption(t, c)); !slices.Equal(got, []string{"libaio iodepth=1", "libaio iodepth=16", "psync iodepth=1", "psync iodepth=16", "sync iodepth=1", "sync iodepth=16"}) {
		t.Errorf("distribution of 3 engines: %q", got)
	}
}

// Legends name what tells series apart; what they share is said once.
func TestChartLegendsDropShared(t *testing.T) {
	run := engineSweep([]string{"io_uring", "libaio"})
	run.Run.Hostname, run.Run.Kernel = "lab", "6.18.44-fc-v657"
	c := mustBuild(t, Query{Kind: Latency}, run)
	doc := checkOption(t, c)
	if got := seriesNames(doc); !slices.Equal(got, []string{"io_uring p50", "io_uring p99", "libaio p50", "libaio p99"}) {
		t.Errorf("series %q", got)
	}
	// Compared runs on other kernels: named by kernel, not "run N".
	other := engineSweep([]string{"io_uring", "libaio"})
	other.Run.ID, other.Run.Hostname, other.Run.Kernel = 10, "lab", "6.1.0"
	c = mustBuild(t, Query{Kind: IOPS}, run, other)
	if got := seriesNames(checkOption(t, c)); !slices.Equal(got, []string{"6.18.44-fc-v657 io_uring", "6.18.44-fc-v657 libaio", "6.1.0 io_uring", "6.1.0 libaio"}) {
		t.Errorf("compared series %q", got)
	}
	if !strings.Contains(checkOption(t, c).Title.Subtext, "lab") {
		t.Errorf("subtitle %q lacks the host every series shares", checkOption(t, c).Title.Subtext)
	}
}
