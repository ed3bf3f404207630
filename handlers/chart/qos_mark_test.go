package chart

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

// qosDepthRun is an iodepth sweep (1, 4, 16, 64) under p99<1ms, two
// repeats, whose iodepth=64 steps searched with latency_target=500us and
// ended at depth 10 and 12; the iodepth=4 steps searched too and kept
// their 4.
func qosDepthRun(id int64) LoadedRun {
	plan := testPlan(2, sweepOf(sweep.AxisIODepth, "1", "4", "16", "64"))
	slo := sweep.DefaultSLO
	plan.SLO = &slo
	return testRun(id, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		qd, _ := strconv.Atoi(s.Value(sweep.AxisIODepth))
		jr := testJob("reader", time.Second, testLoad{ios: uint64(5000 * min(qd, 16)), bs: 4096, lat: time.Duration(qd) * 60 * time.Microsecond}, testLoad{})
		jr.Job.IODepth = qd
		switch qd {
		case 4: // a search that kept the whole queue
			jr.Job.LatencyTarget, jr.LatencyDepth = 500*time.Microsecond, 4
		case 64:
			jr.Job.LatencyTarget, jr.LatencyDepth = 500*time.Microsecond, 10+2*s.Repeat
		}
		return sweeptest.Done(jr)
	}))
}

// The QoS chart of an iodepth sweep marks the depth a latency_target
// search found (over the repeats: 10–12) on the point of the step whose
// search held the queue below its iodepth, says it in the tooltip and the
// CSV; a search that kept the whole queue is in the tooltip and the CSV
// only.
func TestQoSLatencyDepth(t *testing.T) {
	ch := mustBuild(t, Query{Kind: QoS}, qosDepthRun(1))
	checkOption(t, ch)
	opt := string(ch.Option)
	if n := strings.Count(opt, "latency_target: depth 10–12"); n != 1 {
		t.Errorf("the found depth is labelled %d times, want once on the p99 curve: %s", n, opt)
	}
	if strings.Contains(opt, "latency_target: depth 4") || !strings.Contains(opt, `["latency_target depth","4",""]`) {
		t.Errorf("the search that kept iodepth=4 is labelled or not in the tooltip: %s", opt)
	}
	if !strings.Contains(opt, `["latency_target depth","10-12",""]`) {
		t.Errorf("the tooltip lacks the found depth: %s", opt)
	}
	if !strings.Contains(opt, `"symbol":"triangle"`) {
		t.Errorf("the searched point is not marked")
	}
	col := -1
	for i, c := range ch.Columns {
		if c == "latency_depth" {
			col = i
		}
	}
	if col < 0 {
		t.Fatalf("no latency_depth column in %v", ch.Columns)
	}
	var got []string
	for _, r := range ch.Rows {
		if r[col] != "" {
			got = append(got, r[2]+"="+r[3]+":"+r[col])
		}
	}
	if strings.Join(got, ",") != "iodepth=4:4,iodepth=64:10-12" {
		t.Errorf("latency_depth cells %v, want [iodepth=4:4 iodepth=64:10-12]", got)
	}
	// A run without latency_target marks no depth.
	if plain := mustBuild(t, Query{Kind: QoS}, qosRun(2)); strings.Contains(string(plain.Option), "latency_target") {
		t.Errorf("a run without latency_target is marked")
	}
}

// The probe of a rate sweep (closed-loop clat) and a rate not held are
// drawn on their own, after a break in the curve, not folded into it; a
// rate sweep's run lists the QoS chart first, an iodepth sweep's where it
// stands.
func TestQoSApartAndFirst(t *testing.T) {
	run := qosRun(1)
	// 80 % fell behind: 7.2k achieved of 8k asked.
	for i := range run.Steps {
		if run.Steps[i].Step.Value(sweep.AxisRateIOPS) == "80%" {
			jr := &run.Steps[i].Result.Groups[0].Jobs[0]
			jr.Dirs[bench.Read].IOs = 7200
			j := bench.Job{Name: "reader"}
			j.RateIOPS = [2]int64{8000, 0}
			run.Steps[i].Step.Config.Groups = []bench.Group{{Jobs: []bench.Job{j}}}
		}
	}
	doc := checkOption(t, mustBuild(t, Query{Kind: QoS}, run))
	for s := range doc.Series {
		vals := seriesValues(doc, s)
		var xs []string
		for _, v := range vals {
			if p, ok := v.([]any); ok {
				xs = append(xs, strconv.FormatFloat(p[0].(float64), 'f', -1, 64))
			} else {
				xs = append(xs, "-")
			}
		}
		// 20 %…60 % joined by achieved IOPS, then 80 % (7.2k) and the
		// probe (10k), each after a break.
		if got := strings.Join(xs, " "); got != "2000 4000 6000 - 7200 - 10000" {
			t.Errorf("series %s: x %s, want 2000 4000 6000 - 7200 - 10000", doc.Series[s].Name, got)
		}
	}
	first := func(r LoadedRun) Kind { return Available([]LoadedRun{r}, RunPage)[0].Name }
	if k := first(run); k != QoS {
		t.Errorf("a rate sweep's first chart is %s, want qos", k)
	}
	if k := first(qosDepthRun(2)); k == QoS {
		t.Errorf("an iodepth sweep's first chart is qos")
	}
}

// The charts whose x axis a query may choose draw a rate sweep along
// rate_iops when it does not choose: by iodepth, every rate is a series
// of one point. A run that sweeps iodepth too keeps it, as does a query
// that names its x axis.
func TestLoadX(t *testing.T) {
	for _, tc := range []struct {
		q     Query
		run   LoadedRun
		title string
		xs    []string
	}{
		{Query{Kind: IOPS}, qosRun(1), "IOPS vs rate_iops", []string{"max", "20%", "40%", "60%", "80%"}},
		{Query{Kind: Latency}, qosRun(1), "Latency percentiles vs rate_iops", []string{"max", "20%", "40%", "60%", "80%"}},
		// x=bs kept: one bs (none set), so the rates side by side (oneX).
		{Query{Kind: IOPS, X: sweep.AxisBS}, qosRun(1), "IOPS by rate_iops", []string{"rate_iops=max", "rate_iops=20%", "rate_iops=40%", "rate_iops=60%", "rate_iops=80%"}},
		{Query{Kind: IOPS}, testRun(2, testPlan(1, sweepOf(sweep.AxisRateIOPS, "max", "50%"), sweepOf(sweep.AxisIODepth, "1", "4")), nil), "IOPS vs iodepth", nil},
	} {
		ch := mustBuild(t, tc.q, tc.run)
		doc := checkOption(t, ch)
		if ch.Title != tc.title {
			t.Errorf("%v: title %q, want %q", tc.q, ch.Title, tc.title)
		}
		if tc.xs != nil && (len(doc.XAxis) == 0 || !slices.Equal(doc.XAxis[0].Data, tc.xs)) {
			t.Errorf("%v: x axis %+v, want %q", tc.q, doc.XAxis, tc.xs)
		}
	}
}
