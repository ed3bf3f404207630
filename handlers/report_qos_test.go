package handlers

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"

	"iolab/handlers/report"
)

// seedQoSLab is an iodepth sweep (1…128) of a 4 KiB io_uring reader under
// p99<1ms, 2 repeats, on a device that saturates at ~80k IOPS: the median
// latency grows with the queue past it (400µs at iodepth 32, 800µs at
// 64), so the knee is at iodepth 32. Every interval has its latency
// (lattime), and every step searched with latency_target=500us, which
// held iodepth 64 and 128 at depth 40.
func seedQoSLab(t testing.TB, store *db.Store, host system.HostInfo) *db.Run {
	plan := labPlan(t, "qos-curve", []string{"--name=reader", "--filename=/dev/nvme1n1", "--rw=randread", "--bs=4k", "--direct=1", "--ioengine=io_uring", "--latency_target=500us"}, 2,
		sweep.Sweep{Axis: sweep.AxisIODepth, Values: []string{"1", "2", "4", "8", "16", "32", "64", "128"}})
	slo, err := sweep.ParseSLO("p99<1ms")
	if err != nil {
		t.Fatal(err)
	}
	plan.SLO = &slo
	return seedLab(t, store, plan, host, func(st sweep.Step, _ int, rng *rand.Rand) labStep {
		qd, _ := strconv.ParseFloat(st.Value(sweep.AxisIODepth), 64)
		iops := 80e3 * (1 - math.Exp(-qd*14e3/80e3)) * (1 + 0.005*rng.NormFloat64())
		return labStep{iops: iops, median: time.Duration(qd / iops * 1e9), spread: 0.15, intervals: true,
			latencyTarget: 500 * time.Microsecond, latencyDepth: int(min(qd, 40))}
	})
}

// kneeText is how a report writes a knee: "knee: 78.4k IOPS at p99<1ms".
var kneeText = regexp.MustCompile(`knee: [0-9.]+k IOPS at p99<1ms`)

// The report of a QoS run writes its knee as a number with its SLO, in
// the HTML and the Markdown, and draws the QoS chart (the knee and the
// latency_target depth marked) and the latency-over-time chart; a run
// without an SLO or a rate sweep has no knee section.
func TestReportQoSKnee(t *testing.T) {
	ts := newTestServer(t, Config{})
	ha, _ := compareHosts()
	run := seedQoSLab(t, ts.store, ha)
	plain := seedEnginesLab(t, ts.store, "engines", ha, 1)
	rep, err := report.Build(context.Background(), ts.store, []int64{run.ID}, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Knees) != 1 || !rep.Knees[0].Found || !kneeText.MatchString(rep.Knees[0].Text) {
		t.Fatalf("knees %+v, want one matching %s", rep.Knees, kneeText)
	}
	if d := rep.Knees[0].Detail; !strings.HasPrefix(d, "iodepth=32, p99 ") || !strings.Contains(d, ", clat, latency_target: depth 32") {
		t.Errorf("knee detail %q, want it at iodepth=32 with its clat p99", d)
	}
	charts := map[string]report.Chart{}
	for _, c := range rep.Charts {
		charts[c.Kind] = c
	}
	for _, want := range []struct{ kind, text string }{
		{"qos", "knee "}, {"qos", "knee at p99&lt;1ms"}, {"qos", "latency_target: depth 40"}, {"lattime", "p99"},
	} {
		c, ok := charts[want.kind]
		if !ok || c.Error != "" || !strings.Contains(string(c.SVG), "<svg") {
			t.Errorf("%s chart not drawn: %+v", want.kind, c.Error)
			continue
		}
		if !strings.Contains(string(c.SVG), want.text) {
			t.Errorf("%s chart's SVG lacks %q", want.kind, want.text)
		}
	}
	if svg := string(charts["qos"].SVG); strings.Contains(svg, "depth 40–") || strings.Contains(svg, "depth 32") {
		t.Errorf("the qos chart labels a search that kept its queue, or a range of one depth")
	}
	var b bytes.Buffer
	if err := rep.WriteHTML(&b); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	if !strings.Contains(html, `<h2 id="qos">Latency under load</h2>`) || !regexp.MustCompile(`<strong>knee: [0-9.]+k IOPS at p99&lt;1ms</strong>`).MatchString(html) {
		t.Errorf("the HTML report does not write the knee")
	}
	// The points, as iolab show prints them: a row per iodepth, the knee's
	// marked.
	k := rep.Knees[0]
	if len(k.Table.Rows) != 8 || k.KneeRow < 0 || k.Table.Rows[k.KneeRow][0] != "32" || k.Table.Head[7] != "p99<1ms" {
		t.Fatalf("points table %q %q, knee row %d", k.Table.Head, k.Table.Rows, k.KneeRow)
	}
	if !strings.Contains(html, `<th>achieved IOPS</th><th>latency</th><th>p50</th><th>p99</th><th>p99.9</th><th>p99&lt;1ms</th>`) ||
		!regexp.MustCompile(`<tr class="knee-row"><td>32</td><td>-</td><td>[0-9.]+k</td><td>clat</td>`).MatchString(html) ||
		strings.Count(html, `<table class="grid qos"`) != 1 {
		t.Errorf("the HTML report lacks the points table, or its knee row")
	}
	names := make([]string, len(rep.Charts))
	for i, c := range rep.Charts {
		names[i] = c.Kind
	}
	md := rep.Markdown(names, false)
	if !strings.Contains(md, "## Latency under load") || !regexp.MustCompile(`\*\*knee: [0-9.]+k IOPS at p99&lt;1ms\*\* — iodepth=32`).MatchString(md) {
		t.Errorf("the Markdown lacks the knee:\n%s", md)
	}
	if !strings.Contains(md, "| iodepth | asked | achieved IOPS | latency | p50 | p99 | p99.9 | p99&lt;1ms |") ||
		!regexp.MustCompile(`\| 32 \| - \| \*\*[0-9.]+k\*\* \(knee\) \| clat \|`).MatchString(md) || strings.Count(md, "\n| 1 | - |") != 1 {
		t.Errorf("the Markdown lacks the points table:\n%s", md)
	}

	other, err := report.Build(context.Background(), ts.store, []int64{plain.ID}, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(other.Knees) != 0 {
		t.Errorf("an iodepth sweep without an SLO has knees %+v", other.Knees)
	}
}
