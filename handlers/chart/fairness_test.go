package chart

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/stats"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
	"iolab/bench/units"
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
		"clat_mean_min_us", "clat_mean_median_us", "clat_mean_max_us", "bw_min_mib_s", "bw_median_mib_s", "bw_max_mib_s",
		"clat_p99_change_pct", "bw_change_pct"},
		[][]string{rw("none"), rr("none"), rw("bfq"), rr("bfq")})

	doc := checkOption(t, c)
	// Per job: p50, mean, p99 and bandwidth bars; then each one's
	// whiskers.
	picks := []string{"p50", "mean", "p99", "bandwidth"}
	if got := seriesNames(doc); !slices.Equal(got[:8], slices.Concat(picks, picks)) || len(got) != 16 {
		t.Errorf("series = %q", got)
	}
	// A column of two grids per job, each with its own linear axes.
	if len(doc.XAxis) != 4 || len(doc.YAxis) != 4 {
		t.Fatalf("axes = %+v %+v", doc.XAxis, doc.YAxis)
	}
	for i, y := range doc.YAxis {
		job := []string{"bg-writer", "fg-reader"}[i/2]
		unit := []string{"clat (µs)", "bandwidth (MiB/s)"}[i%2]
		if y.Type != "value" || y.Name != job+" · "+unit || len(doc.XAxis[i].Data) != 2 || doc.XAxis[i].Data[0] != "none" ||
			!strings.HasPrefix(doc.XAxis[i].Data[1], "bfq\n") {
			t.Errorf("axes %d: %+v %+v, want %s · %s on a linear axis", i, y, doc.XAxis[i], job, unit)
		}
	}
	for i, s := range doc.Series[:8] {
		if grid := 2*(i/4) + i%4/3; s.XAxisIndex != grid || s.YAxisIndex != grid {
			t.Errorf("series %d (%s) on axes %d, %d, want %d", i, s.Name, s.XAxisIndex, s.YAxisIndex, grid)
		}
	}
	// The reader's p99: labelled with its value; its change from none,
	// as the statistical diff gives it (the ratio of the medians over the
	// repeats, named, with n), under bfq and in the tooltip.
	p := readerP("bfq")
	want := stats.PercentText(p[1]/readerP("none")[1] - 1)
	if got := seriesValues(doc, 6); !reflect.DeepEqual(got, []any{readerP("none")[1], p[1]}) {
		t.Errorf("reader p99 = %v", got)
	}
	for k, sched := range []string{"none", "bfq"} {
		if f := doc.Series[6].Data[k].Label.Formatter; f != units.Nanos(readerP(sched)[1]*1000) {
			t.Errorf("reader p99 label under %s %q, want its value", sched, f)
		}
	}
	if got := doc.XAxis[2].Data[1]; got != "bfq\np99 "+want {
		t.Errorf("reader's latency plot: bfq reads %q, want bfq, p99 %s", got, want)
	}
	if got, ch := doc.XAxis[1].Data[1], bwChange("bfq"); got != "bfq\n"+stats.PercentText(mustFloat(t, ch)/100) {
		t.Errorf("writer's bandwidth plot: bfq reads %q, want its change %s %%", got, ch)
	}
	if tip := `["vs none (median ratio, n=3 vs 3)","` + want + `",""]`; !strings.Contains(string(c.Option), tip) {
		t.Errorf("no tooltip %s", tip)
	}
	if !strings.Contains(string(c.Option), "under each scheduler, p99's and bandwidth's change from none (median ratio)") {
		t.Error("the subtitle does not name the change's statistic")
	}
	// The reader's mean, the mean clat of each repeat.
	if got, l := seriesValues(doc, 5), spread3(4000, 4400, 3600); !reflect.DeepEqual(got, []any{l[1], spread3(1000, 900, 1100)[1]}) {
		t.Errorf("reader mean = %v", got)
	}
	// The writer's bandwidth on the second grid, labelled with its value.
	if got := seriesValues(doc, 3); !reflect.DeepEqual(got, []any{500.0, 400.0}) {
		t.Errorf("writer bandwidth = %v", got)
	}
	if f := doc.Series[3].Data[0].Label.Formatter; f != "500MiB/s" {
		t.Errorf("writer bandwidth label under none %q", f)
	}
}

// A 4 KiB reader's 1 MiB/s beside a 1 MiB writer's 500 MiB/s: each job
// has its own axes, so on every axis the lowest bar is at least a fifth
// of the highest figure drawn there (on one shared linear axis, the
// reader's would be 0.2 % of it), and each bar is labelled with its
// value.
func TestFairnessEveryBarReadable(t *testing.T) {
	plan := testPlan(1, sweepOf(sweep.AxisScheduler, "none", "bfq"))
	plan.Base.Jobs = []bench.Job{{Name: "bg-writer"}, {Name: "fg-reader"}}
	run := testRun(9, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		w := testJob("bg-writer", time.Second, testLoad{}, testLoad{ios: 500, bs: 1 << 20, lat: 30 * time.Millisecond})
		r := testJob("fg-reader", time.Second, testLoad{ios: 256, bs: 4096, lat: 90 * time.Microsecond}, testLoad{})
		return sweeptest.Done(w, r)
	}))
	c := mustBuild(t, Query{Kind: Fairness}, run)
	var doc struct {
		YAxis []struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"yAxis"`
		Series []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			YAxisIndex int    `json:"yAxisIndex"`
			Data       []json.RawMessage
		} `json:"series"`
	}
	if err := json.Unmarshal(c.Option, &doc); err != nil {
		t.Fatal(err)
	}
	lowest, highest := map[int]float64{}, map[int]float64{}
	jobsOn := map[int]map[string]bool{}
	labels := map[string][]string{}
	for _, s := range doc.Series {
		if doc.YAxis[s.YAxisIndex].Type != "value" {
			t.Errorf("%s on a %s axis, want linear", s.Name, doc.YAxis[s.YAxisIndex].Type)
		}
		for _, raw := range s.Data {
			if s.Type == "custom" { // whiskers: [category, low, high, …]
				var w []float64
				json.Unmarshal(raw, &w)
				highest[s.YAxisIndex] = max(highest[s.YAxisIndex], w[2])
				continue
			}
			var d struct {
				Name  string  `json:"name"`
				Value float64 `json:"value"`
				Label struct {
					Formatter string `json:"formatter"`
				} `json:"label"`
			}
			if err := json.Unmarshal(raw, &d); err != nil {
				t.Fatalf("%s: %s: %v", s.Name, raw, err)
			}
			if _, ok := lowest[s.YAxisIndex]; !ok || d.Value < lowest[s.YAxisIndex] {
				lowest[s.YAxisIndex] = d.Value
			}
			job, _, _ := strings.Cut(d.Name, " ")
			if jobsOn[s.YAxisIndex] == nil {
				jobsOn[s.YAxisIndex] = map[string]bool{}
			}
			jobsOn[s.YAxisIndex][job] = true
			labels[d.Name] = append(labels[d.Name], d.Label.Formatter)
		}
	}
	for axis, low := range lowest {
		if len(jobsOn[axis]) != 1 {
			t.Errorf("axis %d (%s) draws jobs %v, want one", axis, doc.YAxis[axis].Name, jobsOn[axis])
		}
		if !(low > 0) || low < highest[axis]/5 {
			t.Errorf("axis %d (%s): lowest bar %v beside %v", axis, doc.YAxis[axis].Name, low, highest[axis])
		}
	}
	for name, want := range map[string]string{"fg-reader bandwidth": "1.00MiB/s", "bg-writer bandwidth": "500MiB/s",
		"fg-reader p50": units.Nanos(usBucket(90*time.Microsecond) * 1000), "bg-writer p99": units.Nanos(usBucket(30*time.Millisecond) * 1000),
		"fg-reader mean": "90.0µs"} {
		if got := labels[name]; len(got) != 2 || !strings.HasPrefix(got[0], want) || !strings.HasPrefix(got[1], want) {
			t.Errorf("%s labelled %q, want %s", name, got, want)
		}
	}
}

func mustFloat(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
