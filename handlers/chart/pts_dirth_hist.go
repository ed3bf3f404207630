package chart

import (
	"maps"
	"math"
	"slices"
	"strconv"

	"iolab/bench/hist"
	"iolab/bench/summary"
)

// PTSDIRTHHist is demand intensity's response-time histograms: the share
// of I/Os at each response time (log x) at the points the
// specification's report shows — the most outstanding I/O, the point of
// most IOPS and the least outstanding — over the steady-state window.
const PTSDIRTHHist Kind = "pts-dirth-hist"

// dirthBinsPerDoubling is how finely the histograms are drawn: fio's
// buckets (64 a doubling) gathered 4 a doubling.
const dirthBinsPerDoubling = 4

func buildPTSDIRTHHist(q Query, runs []*runView) (*Chart, error) {
	p, err := ptsOf(q, runs)
	if err != nil {
		return nil, err
	}
	if !ptsDIRTHAvailable(p) {
		return nil, queryError("kind", "the %s chart draws a demand intensity run, and %s is a %s test", q.Kind, runs[0].label, p.Test.Name)
	}
	c := &Chart{Title: ptsTitle(p, "response-time histograms"), Columns: []string{"point", "lat_us", "pct"},
		Format: Format{Tooltip: "dist", X: "us", Y: "pct", XName: "OIO"}}
	var series []map[string]any
	for i, pt := range dirthHistPoints(p.DIRTH) {
		d := &p.DIRTH[pt]
		var h hist.Histogram
		d.Lat.AddTo(&h)
		n := h.N()
		if n == 0 {
			continue
		}
		shares := map[int]uint64{}
		for _, b := range d.Lat {
			us := float64(hist.BucketValue(b.Index)) / 1e3
			shares[int(math.Floor(math.Log2(max(us, 0.001))*dirthBinsPerDoubling))] += b.Count
		}
		name := strconv.Itoa(d.NumJobs) + " jobs × iodepth " + strconv.Itoa(d.IODepth) + " (OIO " + strconv.Itoa(d.OIO()) + ")"
		var data [][]float64
		for _, k := range slices.Sorted(maps.Keys(shares)) {
			us := math.Exp2(float64(k) / dirthBinsPerDoubling)
			pct := 100 * float64(shares[k]) / float64(n)
			data = append(data, []float64{us, pct})
			c.Rows = append(c.Rows, []string{name, num(us), num(pct)})
		}
		color := palette[i%len(palette)]
		series = append(series, map[string]any{"type": "line", "name": name, "data": data, "color": color, "symbolSize": 4,
			"lineStyle": map[string]any{"width": 2, "color": color}})
	}
	sub := describeRuns(runs[:1]) + " · fio's lat over the steady-state window's rounds, % of each point's I/Os, " +
		strconv.Itoa(dirthBinsPerDoubling) + " bins per doubling"
	c.Option, err = rawOption(c.Title, sub, map[string]any{
		"xAxis":  valueAxis("response time (µs)", true, map[string]any{"nameLocation": "middle"}),
		"yAxis":  valueAxis("% of I/Os", false, nil),
		"series": series,
	})
	return c, err
}

// dirthHistPoints are the points whose histograms are drawn: the most
// outstanding I/O, the most IOPS and the least outstanding, each once.
func dirthHistPoints(points []summary.DIRTHPoint) []int {
	most, least, best := 0, 0, 0
	for i, d := range points {
		if d.OIO() > points[most].OIO() {
			most = i
		}
		if d.OIO() < points[least].OIO() {
			least = i
		}
		if d.Window.TotalIOPS() > points[best].Window.TotalIOPS() {
			best = i
		}
	}
	var out []int
	for _, i := range []int{most, best, least} {
		if !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	return out
}
