package chart

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/stats"
	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

// qosRun is a rate_iops sweep of one reader: a probe at 10k IOPS, then
// 20 %…80 % of it, latency from intended starts rising with the rate:
// 100µs up to 40 %, 3 ms at 60 %, 20 ms at 80 %.
func qosRun(id int64) LoadedRun {
	plan := testPlan(1, sweepOf(sweep.AxisRateIOPS, "max", "20%", "40%", "60%", "80%"))
	slo := sweep.DefaultSLO
	plan.SLO = &slo
	lat := map[string]time.Duration{"max": 2 * time.Millisecond, "20%": 100 * time.Microsecond, "40%": 150 * time.Microsecond,
		"60%": 3 * time.Millisecond, "80%": 20 * time.Millisecond}
	return testRun(id, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		v := s.Value(sweep.AxisRateIOPS)
		iops := uint64(10000)
		if v != "max" {
			iops = uint64(100 * atoiPct(v))
		}
		jr := testJob("reader", time.Second, testLoad{ios: iops, bs: 4096, lat: 50 * time.Microsecond}, testLoad{})
		if v != "max" {
			for range iops {
				jr.Dirs[bench.Read].Intended.Add(uint64(lat[v]))
			}
		} else {
			jr.Dirs[bench.Read].Clat = jr.Dirs[bench.Read].Intended // empty
			for range iops {
				jr.Dirs[bench.Read].Clat.Add(uint64(lat[v]))
			}
		}
		r := sweeptest.Done(jr)
		if v != "max" {
			j := bench.Job{Name: "reader"}
			j.RateIOPS = [2]int64{int64(iops), 0}
			r.Step.Config.Groups = []bench.Group{{Jobs: []bench.Job{j}}}
		}
		return r
	}))
}

func atoiPct(v string) int {
	n := 0
	for _, c := range strings.TrimSuffix(v, "%") {
		n = n*10 + int(c-'0')
	}
	return n
}

func TestBuildQoS(t *testing.T) {
	ch := mustBuild(t, Query{Kind: QoS}, qosRun(1))
	if len(ch.Rows) != 5 {
		t.Fatalf("%d rows: %v", len(ch.Rows), ch.Rows)
	}
	col := func(name string) int {
		for i, c := range ch.Columns {
			if c == name {
				return i
			}
		}
		t.Fatalf("no column %s in %v", name, ch.Columns)
		return -1
	}
	var knees []string
	for _, r := range ch.Rows {
		if r[col("knee")] == "true" {
			knees = append(knees, r[col("load")])
		}
		if r[col("load")] == "max" && r[col("latency")] != "clat" {
			t.Errorf("the probe is drawn with %s, want clat", r[col("latency")])
		}
		if r[col("load")] == "40%" && r[col("latency")] != bench.LatIntended {
			t.Errorf("40%% is drawn with %s", r[col("latency")])
		}
	}
	// 60 % misses p99<1ms; the probe meets nothing (2 ms) and is not a
	// paced point anyway: the knee is 40 %.
	if len(knees) != 1 || knees[0] != "40%" {
		t.Errorf("knees %v, want [40%%]", knees)
	}
	doc := checkOption(t, ch)
	if got := seriesNames(doc); strings.Join(got, ",") != "reader p50,reader p99,reader p99.9" {
		t.Errorf("series %q", got)
	}
	if !strings.Contains(string(ch.Option), "knee 4k IOPS") || !strings.Contains(string(ch.Option), `knee at p99\u003c1ms: 4k IOPS`) {
		t.Errorf("the knee is not written on the chart: %s", ch.Option)
	}
	if !strings.Contains(string(ch.Option), `"markLine":{"data":[{"yAxis":1000}]`) {
		t.Errorf("no line at the objective's 1000µs")
	}
	if !strings.Contains(string(ch.Option), "intended start") {
		t.Errorf("the chart does not say which latency it shows")
	}
}

// Compared runs under different objectives: each one's limit is drawn,
// once, however many runs share it.
func TestQoSLines(t *testing.T) {
	other := qosRun(2)
	slo, err := sweep.ParseSLO("p99<5ms")
	if err != nil {
		t.Fatal(err)
	}
	other.Run.Plan.SLO = &slo
	for _, tc := range []struct {
		runs []LoadedRun
		want []string
	}{
		{[]LoadedRun{qosRun(1), other}, []string{`"yAxis":1000`, `"yAxis":5000`}},
		{[]LoadedRun{qosRun(1), qosRun(3)}, []string{`"yAxis":1000`}},
	} {
		ch := mustBuild(t, Query{Kind: QoS, Runs: []int64{tc.runs[0].Run.ID, tc.runs[1].Run.ID}}, tc.runs...)
		opt := string(ch.Option)
		if n := strings.Count(opt, `"markLine"`); n != len(tc.want) {
			t.Errorf("%d objective lines, want %d", n, len(tc.want))
		}
		for _, w := range tc.want {
			if !strings.Contains(opt, w) {
				t.Errorf("no line at %s", w)
			}
		}
	}
}

// A curve per engine takes the engine's colour, as on every other chart
// (one colour set: axisColours), the same in each compared run; two
// values pinned to one colour (none, io_uring) still differ; curves that
// have no such value take the palette in order.
func TestQoSColors(t *testing.T) {
	curve := func(vals ...string) runCurve {
		var c runCurve
		for _, v := range vals {
			c.cv.Axes = append(c.cv.Axes, sweep.AxisValue{Axis: sweep.AxisEngine, Value: v})
		}
		return c
	}
	runs := func(vals ...string) []*runView {
		plan := testPlan(1, sweepOf(sweep.AxisEngine, vals...))
		return []*runView{{plan: plan}}
	}
	for _, tc := range []struct {
		runs   []*runView
		curves []runCurve
		want   []string
	}{
		{runs("libaio", "io_uring"), []runCurve{curve("libaio"), curve("io_uring"), curve("libaio"), curve("io_uring")}, []string{colorOf("libaio"), colorOf("io_uring"), colorOf("libaio"), colorOf("io_uring")}},
		{runs("libaio", "io_uring"), []runCurve{curve(), curve()}, palette[:2]},
		{runs("none", "io_uring"), []runCurve{curve("none"), curve("io_uring")}, palette[:2]}, // both pinned to the first colour
	} {
		if got := qosColors(tc.runs, tc.curves); !slices.Equal(got, tc.want) {
			t.Errorf("colours %q, want %q", got, tc.want)
		}
	}
}

// With a curve per engine, the subtitle names each curve's knee, the
// first one's too, the objective once.
func TestQoSKneesNamed(t *testing.T) {
	plan := testPlan(1, sweepOf(sweep.AxisEngine, "libaio", "io_uring"), sweepOf(sweep.AxisRateIOPS, "max", "50%"))
	run := testRun(1, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		jr := testJob("reader", time.Second, testLoad{ios: 2000, bs: 4096, lat: 50 * time.Microsecond}, testLoad{})
		if s.Value(sweep.AxisRateIOPS) != "max" {
			for range 2000 {
				jr.Dirs[bench.Read].Intended.Add(uint64(100 * time.Microsecond))
			}
		}
		return sweeptest.Done(jr)
	}))
	doc := checkOption(t, mustBuild(t, Query{Kind: QoS}, run))
	if sub := doc.Title.Subtext; !strings.Contains(sub, "knees at p99<1ms: libaio 2k, io_uring 2k IOPS") {
		t.Errorf("subtitle %q: want each engine's knee named", sub)
	}
}

// An iodepth sweep's points are unpaced: drawn in the latency ?lat=
// picks, lat when engines are compared (libaio's synchronous submission
// counts), and the subtitle and CSV say which; paced points keep the
// latency from the intended start whatever is picked.
func TestQoSLatKind(t *testing.T) {
	plan := testPlan(1, sweepOf(sweep.AxisEngine, "libaio", "io_uring"), sweepOf(sweep.AxisIODepth, "1", "4"))
	run := testRun(1, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		return sweeptest.Done(sweeptest.SubmitJob("r", s.Value(sweep.AxisEngine), 0))
	}))
	for _, tc := range []struct {
		q    LatKind
		want LatKind
		how  string
	}{{"", LatTotal, "y: lat (from submission) (closed loop)"}, {LatClat, LatClat, "y: clat (closed loop)"}, {LatSlat, LatSlat, "y: slat (closed loop)"}} {
		c := mustBuild(t, Query{Kind: QoS, Lat: tc.q}, run)
		doc := checkOption(t, c)
		if !strings.Contains(doc.Title.Subtext, tc.how) {
			t.Errorf("lat=%q: subtitle %q, want %q", tc.q, doc.Title.Subtext, tc.how)
		}
		lat, p50 := slices.Index(c.Columns, "latency"), slices.Index(c.Columns, "p50_us")
		for _, r := range c.Rows {
			engine := strings.TrimPrefix(r[slices.Index(c.Columns, "curve")], "r ")
			ns := float64(sweeptest.SubmitLat(engine, summaryName(tc.want)))
			got, _ := strconv.ParseFloat(r[p50], 64)
			if r[lat] != summaryName(tc.want) || got*1e3 < 0.9*ns || got*1e3 > 1.1*ns {
				t.Errorf("lat=%q %s: %s p50 %vµs, want %s %vns", tc.q, engine, r[lat], got, summaryName(tc.want), ns)
			}
		}
		if !slices.ContainsFunc(c.Pickers, func(p Picker) bool { return p.Param == "lat" }) {
			t.Errorf("lat=%q: no latency picker", tc.q)
		}
	}
	// Paced: the intended start's, whatever the picker says.
	for _, k := range []LatKind{"", LatClat, LatTotal} {
		c := mustBuild(t, Query{Kind: QoS, Lat: k}, qosRun(1))
		for _, r := range c.Rows {
			if r[slices.Index(c.Columns, "load")] == "40%" && r[slices.Index(c.Columns, "latency")] != bench.LatIntended {
				t.Errorf("lat=%q: a paced point is drawn with %s", k, r[slices.Index(c.Columns, "latency")])
			}
		}
		if doc := checkOption(t, c); !strings.Contains(doc.Title.Subtext, "intended start (CO-corrected) for paced points, "+cmpOrKind(k, LatClat).Title()+" for unpaced ones") {
			t.Errorf("lat=%q: subtitle %q", k, doc.Title.Subtext)
		}
	}
}

// summaryName is a kind as fio's output and the QoS table name it.
func summaryName(k LatKind) string { return k.Name() }

func cmpOrKind(k, or LatKind) LatKind {
	if k == "" {
		return or
	}
	return k
}

// The knees of several curves: the objective once, wrapped to lines the
// narrowest chart holds, the curves without a knee named.
func TestKneeLines(t *testing.T) {
	at := func(iops float64) *summary.QoSPoint { return &summary.QoSPoint{IOPS: stats.Spread{Median: iops}} }
	var knees []qosKnee
	for i, e := range []string{"libaio none", "libaio bfq", "io_uring none", "io_uring bfq", "psync none", "psync bfq"} {
		knees = append(knees, qosKnee{name: e, slo: "p99<1ms", at: at(225000 + 3000*float64(i))})
	}
	knees = append(knees, qosKnee{name: "pvsync2 none", slo: "p99<1ms"})
	lines := kneeLines(knees, true)
	want := []string{
		"knees at p99<1ms: libaio none 225k, libaio bfq 228k, io_uring none 231k,",
		"io_uring bfq 234k, psync none 237k, psync bfq 240k IOPS;",
		"no knee at p99<1ms for pvsync2 none",
	}
	if !slices.Equal(lines, want) {
		t.Errorf("lines\n%q\nwant\n%q", lines, want)
	}
	for _, l := range lines {
		if len([]rune(l)) > qosLineLen {
			t.Errorf("%d characters: %q", len([]rune(l)), l)
		}
	}
	if got := kneeLines(knees[:1], false); !slices.Equal(got, []string{"knee at p99<1ms: 225k IOPS"}) {
		t.Errorf("one curve: %q", got)
	}
}
