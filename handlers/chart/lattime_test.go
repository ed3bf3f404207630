package chart

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/joblog"
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
			{At: time.Second, IOs: bench.DirCounts{1000, 0}, Lat: &bench.IntervalLat{N: 1000, P50: 100000, P99: 150000, Max: 300000}},
			{At: 2 * time.Second, IOs: bench.DirCounts{2000, 0}}, // nothing recorded
			{At: 3 * time.Second, IOs: bench.DirCounts{3000, 0}, Lat: &bench.IntervalLat{N: 1000, P50: 120000, P99: 40000000, Max: 52000000}},
		}
		return sweeptest.Done(r)
	}))
	c := mustBuild(t, Query{Kind: LatencyTimeline, Step: 2}, run)
	checkTable(t, c, []string{"step", "job", "time_s", "run_time_s", "latency", "ios", "p50_us", "p99_us", "max_us"}, [][]string{
		{"2", "reader", "1", "1", bench.LatIntended, "1000", "100", "150", "300"},
		{"2", "reader", "3", "3", bench.LatIntended, "1000", "120", "40000", "52000"},
	})
	doc := checkOption(t, c)
	// The legend lists p50, p99 and max; echarts draws the series in
	// order, so max goes first and p99 last, over it: an interval's p99
	// is often its max (here, the first interval's of 1000 I/Os is close)
	// and would hide under it. max is dashed and thinner.
	if got := seriesNames(doc); !slices.Equal(got, []string{"max", "p50", "p99"}) {
		t.Errorf("series %q", got)
	}
	var style struct {
		Legend struct {
			Data []string `json:"data"`
		} `json:"legend"`
		Series []struct {
			LineStyle struct {
				Type  string  `json:"type"`
				Width float64 `json:"width"`
			} `json:"lineStyle"`
		} `json:"series"`
	}
	if err := json.Unmarshal(c.Option, &style); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(style.Legend.Data, []string{"p50", "p99", "max"}) {
		t.Errorf("legend %+v", style.Legend)
	}
	if mx, p99 := style.Series[0].LineStyle, style.Series[2].LineStyle; mx.Type != "dashed" || p99.Type == "dashed" || p99.Width <= mx.Width {
		t.Errorf("max drawn %+v, p99 %+v: want max dashed and thinner", mx, p99)
	}
	if !strings.Contains(string(c.Option), "intended start") {
		t.Errorf("the chart does not say which latency it shows")
	}
}

// The latency timeline draws the latency each interval keeps (clat, or
// from the intended start for a paced job) and nothing under another
// name: its picker offers lat and slat disabled, saying they are not kept
// per interval, and lat= naming one is refused.
func TestLatencyTimelineKinds(t *testing.T) {
	steps := func(paced bool) LoadedRun {
		plan := testPlan(1, sweepOf(sweep.AxisIODepth, "1", "4"))
		return testRun(3, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
			r := testJob("reader", time.Second, testLoad{ios: 1000, bs: 4096, slat: 3 * time.Microsecond, lat: 100 * time.Microsecond}, testLoad{})
			if paced {
				r.Dirs[bench.Read].Intended.Add(100000)
			}
			r.Samples = []bench.Sample{{At: time.Second, IOs: bench.DirCounts{1000, 0}, Lat: &bench.IntervalLat{N: 1000, P50: 100000, P99: 150000, Max: 300000}}}
			return sweeptest.Done(r)
		}))
	}
	type option struct {
		value, label string
		on, disabled bool
	}
	options := func(c *Chart) []option {
		if len(c.Pickers) != 1 || c.Pickers[0].Param != "lat" || !c.Pickers[0].Single {
			t.Fatalf("pickers %+v", c.Pickers)
		}
		var out []option
		for _, o := range c.Pickers[0].Options {
			out = append(out, option{o.Value, o.Label, o.On, o.Disabled})
		}
		return out
	}
	unpaced := steps(false)
	want := []option{{"total", "lat (from submission) — not kept per interval", false, true}, {"clat", "clat", true, false},
		{"slat", "slat — not kept per interval", false, true}}
	def := mustBuild(t, Query{Kind: LatencyTimeline}, unpaced)
	if got := options(def); !reflect.DeepEqual(got, want) {
		t.Errorf("options %+v\nwant    %+v", got, want)
	}
	if c := mustBuild(t, Query{Kind: LatencyTimeline, Lat: LatClat}, unpaced); !reflect.DeepEqual(c.Rows, def.Rows) || len(c.Rows) != 2 {
		t.Errorf("lat=clat: rows %q, want the default's %q", c.Rows, def.Rows)
	}
	for _, k := range []LatKind{LatTotal, LatSlat} {
		_, err := Build(Query{Kind: LatencyTimeline, Lat: k}, []LoadedRun{unpaced})
		var qe *QueryError
		if !errors.As(err, &qe) || qe.Field != "lat" || !strings.Contains(qe.Msg, "keeps a histogram of clat alone") || !strings.Contains(qe.Msg, k.Title()) {
			t.Errorf("lat=%s: %v, want it refused", k, err)
		}
	}
	// Paced: what the intervals keep is no kind of fio's; clat is refused
	// too.
	paced := steps(true)
	got := options(mustBuild(t, Query{Kind: LatencyTimeline}, paced))
	if len(got) != 4 || got[0] != (option{"", "from the intended start (kept per interval)", true, false}) || !got[2].disabled || got[2].on {
		t.Errorf("paced: options %+v", got)
	}
	if _, err := Build(Query{Kind: LatencyTimeline, Lat: LatClat}, []LoadedRun{paced}); err == nil || !strings.Contains(err.Error(), "intended start") {
		t.Errorf("paced, lat=clat: %v, want it refused", err)
	}
	// lat= round-trips in the latency timeline's URL.
	if q, err := ParseQuery(Query{Kind: LatencyTimeline, Lat: LatClat}.Values()); err != nil || q.Lat != LatClat {
		t.Errorf("lat=clat does not round-trip: %+v %v", q, err)
	}
}

// lat=total draws each sample interval's I/Os of the job's per-I/O lat
// log: their count, p50 and p99 (of their histogram) and max; a log
// averaged over log_avg_msec windows is refused, naming the option.
func TestLatencyTimelineFromLog(t *testing.T) {
	build := func(avgMsec int) (*Chart, error) {
		plan := testPlan(1, sweepOf(sweep.AxisIODepth, "1"))
		steps := sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
			r := testJob("reader", 2*time.Second, testLoad{ios: 5, bs: 4096, lat: 100 * time.Microsecond}, testLoad{})
			r.Samples = []bench.Sample{{At: time.Second, IOs: bench.DirCounts{3, 0}}, {At: 2 * time.Second, IOs: bench.DirCounts{5, 0}}}
			// time ms, lat ns, direction, bs, priority; a write outside
			// any interval.
			data := "100, 5000, 0, 4096, 0\n500, 5000, 0, 4096, 0\n1000, 9000, 0, 4096, 0\n1500, 80000, 0, 4096, 0\n2000, 80000, 0, 4096, 0\n2500, 1, 1, 4096, 0\n"
			r.Logs = []joblog.Log{{Kind: joblog.Lat, File: "reader_lat.1.log", Data: []byte(data), Lines: 6}}
			return sweeptest.Done(r)
		})
		steps[0].Step.Config.Groups = []bench.Group{{Jobs: []bench.Job{{Name: "reader", LogOptions: bench.LogOptions{WriteLatLog: true, LogAvgMsec: avgMsec}}}}}
		return Build(Query{Kind: LatencyTimeline, Lat: LatTotal}, []LoadedRun{testRun(6, plan, steps)})
	}
	c, err := build(0)
	if err != nil {
		t.Fatal(err)
	}
	us := func(ns int) string { return csvNum(usBucket(time.Duration(ns))) }
	checkTable(t, c, []string{"step", "job", "time_s", "run_time_s", "latency", "ios", "p50_us", "p99_us", "max_us"}, [][]string{
		{"1", "reader", "1", "1", "lat", "3", us(5000), us(9000), "9"},
		{"1", "reader", "2", "2", "lat", "2", us(80000), us(80000), "80"},
	})
	if doc := checkOption(t, c); !strings.Contains(doc.Title.Subtext, "lat (from submission) of each interval's I/Os, from the job's lat log") {
		t.Errorf("subtitle %q", doc.Title.Subtext)
	}
	_, err = build(500)
	var qe *QueryError
	if !errors.As(err, &qe) || qe.Field != "lat" || !strings.Contains(qe.Msg, "log_avg_msec") {
		t.Errorf("averaged log: %v, want it refused", err)
	}
}

// A run none of whose intervals kept a latency (stored before iolab kept
// it, or imported from fio) has no latency timeline to draw: the chart
// says why instead of an empty frame of shading, and names the charts
// that have its latency.
func TestLatencyTimelineNothingKept(t *testing.T) {
	plan := testPlan(1, sweepOf(sweep.AxisIODepth, "1", "8"))
	run := testRun(1, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		r := testJob("reader", 2*time.Second, testLoad{ios: 2000, bs: 4096, lat: 100 * time.Microsecond}, testLoad{})
		r.Samples = []bench.Sample{{At: time.Second, IOs: bench.DirCounts{1000, 0}}, {At: 2 * time.Second, IOs: bench.DirCounts{2000, 0}}}
		return sweeptest.Done(r)
	}))
	_, err := Build(Query{Kind: LatencyTimeline}, []LoadedRun{run})
	if !errors.Is(err, errNoIntervalLatency) || !strings.Contains(err.Error(), "latency percentiles and distribution charts") {
		t.Fatalf("latency timeline of a run that kept no interval latency: %v", err)
	}
	// The IOPS timeline of the same run draws.
	mustBuild(t, Query{Kind: Timeline}, run)
}
