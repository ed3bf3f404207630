package chart

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/stats"
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
	// clat p50 = p99: each repeat completes every I/O alike.
	wl := csvNum(usBucket(20 * time.Millisecond))
	bwChange := func(sched string) string {
		n, b := spread3(float64(writer["none"][0]), float64(writer["none"][1]), float64(writer["none"][2])), spread3(float64(writer[sched][0]), float64(writer[sched][1]), float64(writer[sched][2]))
		return csvNum(100 * (b[1] - n[1]) / n[1])
	}
	rw := func(sched string) []string {
		w := writer[sched]
		bw := spread3(float64(w[0]), float64(w[1]), float64(w[2]))
		return []string{sched, "bg-writer", "3", "0", wl, wl, wl, wl, wl, wl, "20000", "20000", "20000", csvNum(bw[0]), csvNum(bw[1]), csvNum(bw[2]), "0", bwChange(sched)}
	}
	readerP := func(sched string) [3]float64 {
		l := reader[sched]
		return spread3(usBucket(l[0]*time.Microsecond), usBucket(l[1]*time.Microsecond), usBucket(l[2]*time.Microsecond))
	}
	rr := func(sched string) []string {
		l := reader[sched]
		lat := spread3(float64(l[0]), float64(l[1]), float64(l[2]))
		p := readerP(sched)
		bw := 1000 * 4096 / 2.0 / (1 << 20)
		change := csvNum(100 * (p[1] - readerP("none")[1]) / readerP("none")[1])
		return []string{sched, "fg-reader", "3", "0", csvNum(p[0]), csvNum(p[1]), csvNum(p[2]), csvNum(p[0]), csvNum(p[1]), csvNum(p[2]),
			csvNum(lat[0]), csvNum(lat[1]), csvNum(lat[2]), csvNum(bw), csvNum(bw), csvNum(bw), change, "0"}
	}
	checkTable(t, c, []string{"scheduler", "job", "repeats", "failed",
		"clat_p50_min_us", "clat_p50_median_us", "clat_p50_max_us", "clat_p99_min_us", "clat_p99_median_us", "clat_p99_max_us",
		"lat_mean_min_us", "lat_mean_median_us", "lat_mean_max_us", "bw_min_mib_s", "bw_median_mib_s", "bw_max_mib_s",
		"clat_p99_change_pct", "bw_change_pct"},
		[][]string{rw("none"), rr("none"), rw("bfq"), rr("bfq")})

	doc := checkOption(t, c)
	// Per job: p50, p99 and bandwidth bars, then each one's whiskers.
	if got := seriesNames(doc); !slices.Equal(got[:6], []string{"bg-writer", "bg-writer", "bg-writer", "fg-reader", "fg-reader", "fg-reader"}) || len(got) != 12 {
		t.Errorf("series = %q", got)
	}
	if len(doc.XAxis) != 2 || len(doc.YAxis) != 2 || !slices.Equal(doc.XAxis[0].Data, []string{"none", "bfq"}) || !slices.Equal(doc.XAxis[1].Data, []string{"none", "bfq"}) {
		t.Fatalf("axes = %+v %+v", doc.XAxis, doc.YAxis)
	}
	// Both logarithmic: a 4 KiB reader's bandwidth shows beside a 1 MiB
	// writer's.
	if !strings.Contains(doc.YAxis[0].Name, "p99 (µs)") || !strings.Contains(doc.YAxis[1].Name, "MiB/s") || doc.YAxis[0].Type != "log" || doc.YAxis[1].Type != "log" {
		t.Errorf("y axes = %+v", doc.YAxis)
	}
	// The reader's p99 on the first grid, labelled with its change from
	// none; the writer's bandwidth on the second.
	p := readerP("bfq")
	if s := doc.Series[4]; s.XAxisIndex != 0 || s.YAxisIndex != 0 || !reflect.DeepEqual(seriesValues(doc, 4), []any{readerP("none")[1], p[1]}) ||
		!strings.Contains(s.Data[1].Label.Formatter, "−") {
		t.Errorf("reader p99 series = %+v", s)
	}
	// The label and the tooltip give the change as the statistical diff
	// does: the ratio of the medians over the repeats, named, with n.
	want := stats.PercentText(p[1]/readerP("none")[1] - 1)
	if f := doc.Series[4].Data[1].Label.Formatter; f != "p99\n"+want {
		t.Errorf("reader p99 label under bfq %q, want %q", f, "p99\n"+want)
	}
	if tip := `["vs none (median ratio, n=3 vs 3)","` + want + `",""]`; !strings.Contains(string(c.Option), tip) {
		t.Errorf("no tooltip %s", tip)
	}
	if !strings.Contains(string(c.Option), "labels: change from none (median ratio)") {
		t.Error("the subtitle does not name the change's statistic")
	}
	if s := doc.Series[2]; s.XAxisIndex != 1 || s.YAxisIndex != 1 || !reflect.DeepEqual(seriesValues(doc, 2), []any{500.0, 400.0}) {
		t.Errorf("writer bandwidth series = %+v", s)
	}
}
