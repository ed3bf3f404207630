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

func TestBuildChartFairness(t *testing.T) {
	plan := testPlan(3, sweepOf(sweep.AxisScheduler, "none", "bfq"))
	plan.Base.Jobs = []bench.Job{{Name: "bg-writer"}, {Name: "fg-reader"}}
	// Per scheduler and repeat: the writer's MiB/s and the reader's mean
	// latency in µs.
	writer := map[string][3]uint64{"none": {500, 520, 480}, "bfq": {400, 410, 390}}
	reader := map[string][3]time.Duration{"none": {4000, 4400, 3600}, "bfq": {1000, 900, 1100}}
	run := testRun(8, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		sched := s.Value(sweep.AxisScheduler)
		w := testJob("bg-writer", time.Second, testLoad{}, testLoad{ios: writer[sched][s.Repeat], bs: 1 << 20, lat: 20 * time.Millisecond})
		r := testJob("fg-reader", 2*time.Second, testLoad{ios: 1000, bs: 4096, lat: reader[sched][s.Repeat] * time.Microsecond}, testLoad{})
		return sweeptest.Done(w, r)
	}))
	c := mustBuild(t, Query{Kind: Fairness}, run)
	rw := func(sched string) []string {
		w := writer[sched]
		bw := spread3(float64(w[0]), float64(w[1]), float64(w[2]))
		return []string{sched, "bg-writer", "3", "0", "20000", "20000", "20000", csvNum(bw[0]), csvNum(bw[1]), csvNum(bw[2])}
	}
	rr := func(sched string) []string {
		l := reader[sched]
		lat := spread3(float64(l[0]), float64(l[1]), float64(l[2]))
		bw := 1000 * 4096 / 2.0 / (1 << 20)
		return []string{sched, "fg-reader", "3", "0", csvNum(lat[0]), csvNum(lat[1]), csvNum(lat[2]), csvNum(bw), csvNum(bw), csvNum(bw)}
	}
	checkTable(t, c, []string{"scheduler", "job", "repeats", "failed",
		"lat_mean_min_us", "lat_mean_median_us", "lat_mean_max_us", "bw_min_mib_s", "bw_median_mib_s", "bw_max_mib_s"},
		[][]string{rw("none"), rr("none"), rw("bfq"), rr("bfq")})

	doc := checkOption(t, c)
	if got := seriesNames(doc); !slices.Equal(got, []string{"bg-writer", "bg-writer", "fg-reader", "fg-reader"}) {
		t.Errorf("series = %q", got)
	}
	if len(doc.XAxis) != 2 || len(doc.YAxis) != 2 || !slices.Equal(doc.XAxis[0].Data, []string{"none", "bfq"}) || !slices.Equal(doc.XAxis[1].Data, []string{"none", "bfq"}) {
		t.Fatalf("axes = %+v %+v", doc.XAxis, doc.YAxis)
	}
	if !strings.Contains(doc.YAxis[0].Name, "latency (µs)") || !strings.Contains(doc.YAxis[1].Name, "MiB/s") {
		t.Errorf("y axes = %+v", doc.YAxis)
	}
	// The reader's latency on the first grid, its bandwidth on the second.
	if s := doc.Series[2]; s.XAxisIndex != 0 || s.YAxisIndex != 0 || !reflect.DeepEqual(seriesValues(doc, 2), []any{4000.0, 1000.0}) {
		t.Errorf("reader latency series = %+v", s)
	}
	if s := doc.Series[1]; s.XAxisIndex != 1 || s.YAxisIndex != 1 || !reflect.DeepEqual(seriesValues(doc, 1), []any{500.0, 400.0}) {
		t.Errorf("writer bandwidth series = %+v", s)
	}
}
