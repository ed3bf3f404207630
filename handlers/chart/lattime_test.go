package chart

import (
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

// TestBuildLatencyTimeline: each interval's p50, p99 and max, in µs, at
// its time; the chart says which latency it shows and skips intervals
// without one.
func TestBuildLatencyTimeline(t *testing.T) {
	plan := testPlan(1, sweepOf(sweep.AxisRateIOPS, "1000", "2000"))
	run := testRun(1, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		r := testJob("reader", 3*time.Second, testLoad{ios: 3000, bs: 4096, lat: 100 * time.Microsecond}, testLoad{})
		r.Dirs[bench.Read].Intended.Add(100000)
		r.Samples = []bench.Sample{
			{At: time.Second, IOs: [2]uint64{1000, 0}, Lat: &bench.IntervalLat{N: 1000, P50: 100000, P99: 150000, Max: 300000}},
			{At: 2 * time.Second, IOs: [2]uint64{2000, 0}}, // nothing recorded
			{At: 3 * time.Second, IOs: [2]uint64{3000, 0}, Lat: &bench.IntervalLat{N: 1000, P50: 120000, P99: 40000000, Max: 52000000}},
		}
		return sweeptest.Done(r)
	}))
	c := mustBuild(t, Query{Kind: LatencyTimeline, Step: 2}, run)
	checkTable(t, c, []string{"step", "job", "time_s", "run_time_s", "latency", "ios", "p50_us", "p99_us", "max_us"}, [][]string{
		{"2", "reader", "1", "1", bench.LatIntended, "1000", "100", "150", "300"},
		{"2", "reader", "3", "3", bench.LatIntended, "1000", "120", "40000", "52000"},
	})
	doc := checkOption(t, c)
	if got := seriesNames(doc); !slices.Equal(got, []string{"p50", "p99", "max"}) {
		t.Errorf("series %q", got)
	}
	if !strings.Contains(string(c.Option), "intended start") {
		t.Errorf("the chart does not say which latency it shows")
	}
}
