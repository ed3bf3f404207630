package chart

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/summary"
	"iolab/bench/units"
)

// QoS is latency against achieved IOPS (issue 13): p50, p99 and p99.9 of
// each point of a rate_iops sweep (from each I/O's intended start) or an
// iodepth sweep (fio's clat, closed loop), per job and combination of the
// other axes, with the knee under the run's SLO marked and written.
const QoS Kind = "qos"

// qosAvailable: every run sweeps rate_iops or iodepth.
func qosAvailable(runs []*runView) bool {
	return every(runs, func(r *runView) bool { return summary.QoSLoadAxis(r.plan) != "" })
}

// qosPercentile is a curve drawn of each point: the percentile's name,
// the percentile, and its latency at a point.
type qosPercentile struct {
	name string
	p    float64
	get  func(*summary.QoSPoint) uint64
}

// qosPercentiles are the curves drawn of each point.
var qosPercentiles = []qosPercentile{
	{"p50", 50, func(p *summary.QoSPoint) uint64 { return p.P50 }},
	{"p99", 99, func(p *summary.QoSPoint) uint64 { return p.P99 }},
	{"p99.9", 99.9, func(p *summary.QoSPoint) uint64 { return p.P999 }},
}

func buildQoS(q Query, runs []*runView) (*Chart, error) {
	c := &Chart{Title: "Latency vs achieved IOPS", Format: Format{Tooltip: "lines", X: "iops", Y: "us"}}
	if len(runs) > 1 {
		c.Columns = append(c.Columns, "run")
	}
	c.Columns = append(c.Columns, "job", "curve", "load_axis", "load", "asked_iops", "achieved_iops", "held_rate", "latency",
		"ios", "p50_us", "p99_us", "p99_9_us", "slo", "p_slo_us", "meets_slo", "knee", "latency_depth")
	line := echarts.NewLine()
	var kneeTexts []string
	var groups []int
	latencies := map[string]bool{}
	var sloLines []sloLine
	all := qosCurves(runs)
	colors := qosColors(runs, all)
	for curveN, rc := range all {
		r, cv := rc.r, rc.cv
		name := cv.Name(r.job == "" && r.multiJob())
		if len(runs) > 1 {
			name = r.name + " " + name
		}
		color := colors[curveN]
		for k, pc := range qosPercentiles {
			line.AddSeries(name+" "+pc.name, nil, lineStyle(color, k, curveN, true)...)
			setData(line.MultiSeries, qosPoints(&cv, pc, k == sloSeries(cv.SLO.Percentile)))
			groups = append(groups, curveN)
			if k == sloSeries(cv.SLO.Percentile) && !slices.ContainsFunc(sloLines, func(l sloLine) bool { return l.name == cv.SLO.String() }) {
				sloLines = append(sloLines, sloLine{series: len(groups) - 1, at: float64(cv.SLO.Max) / 1e3, name: cv.SLO.String()})
			}
		}
		for i := range cv.Points {
			latencies[cv.Points[i].Latency] = true
		}
		c.Rows = append(c.Rows, qosRows(r, &cv, len(runs) > 1)...)
		knee := "no knee at " + cv.SLO.String()
		if k := cv.KneePoint(); k != nil {
			knee = "knee at " + cv.SLO.String() + ": " + units.Count(k.IOPS.Median) + " IOPS"
		}
		if len(runs) > 1 || len(all) > 1 || r.multiJob() {
			knee = name + " " + knee
		}
		kneeTexts = append(kneeTexts, knee)
	}
	c.Format.Groups = groups
	c.File = fileName(QoS, runs)
	sub := subtitle(runs, nil, strings.Join(kneeTexts, "; ")+" · "+qosHow(latencies))
	y := opts.YAxis{Name: "latency (µs)", Type: "log", SplitLine: splitLine()}
	x := xAxisOpts("achieved IOPS", "value")
	line.SetGlobalOptions(plotOptions(c.Title, sub, "item", x, y)...)
	raw, err := optionJSON(line)
	if err != nil {
		return nil, err
	}
	c.Option, err = withSLOLines(raw, sloLines)
	return c, err
}

// qosCurves are the runs' curves, of the job drawn when a run draws one.
func qosCurves(runs []*runView) []runCurve {
	var all []runCurve
	for _, r := range runs {
		for _, cv := range summary.QoSCurvesOf(r.plan, r.steps) {
			if r.job == "" || cv.Job == r.job {
				all = append(all, runCurve{r, cv})
			}
		}
	}
	return all
}

// qosPoints are curve cv's points of percentile pc, each noted when
// unreliable or when its rate was not held; the points apart from the
// curve (qosApart) come last, each after a break in the line. slo: pc
// is the SLO's percentile, whose points mark the SLO and the knee.
func qosPoints(cv *summary.QoSCurve, pc qosPercentile, slo bool) []item {
	data := make([]item, 0, len(cv.Points))
	var apart []item
	for i := range cv.Points {
		p := &cv.Points[i]
		if p.IOs == 0 {
			continue
		}
		it := item{Value: []float64{p.IOPS.Median, float64(pc.get(p)) / 1e3}, Name: string(cv.LoadAxis) + "=" + p.Load, N: p.Repeats,
			Extra: [][3]any{{"asked", p.Asked, "iops"}}}
		if !hist.Reliable(pc.p, p.IOs) {
			it.Note = fmt.Sprintf("unreliable: %d I/Os, %s needs %d", p.IOs, pc.name, hist.ReliableN(pc.p))
			it.Symbol = "emptyCircle"
		}
		if !p.Held {
			it.Note = "rate not held: " + units.Count(p.IOPS.Median) + " of " + units.Count(p.Asked) + " IOPS asked"
		}
		if slo {
			markQoSPoint(&it, p, i == cv.Knee)
		}
		if qosApart(cv, p) {
			if p.Held && it.Note == "" {
				it.Note = "unpaced probe: " + latencyOf(p.Latency) + ", closed loop"
			}
			apart = append(apart, item{Value: missing}, it)
			continue
		}
		data = append(data, it)
	}
	return append(data, apart...)
}

// qosRows are the table's rows of curve cv of run r, a row a point;
// multi: several runs are drawn, and rows name theirs.
func qosRows(r *runView, cv *summary.QoSCurve, multi bool) [][]string {
	var rows [][]string
	for i := range cv.Points {
		p := &cv.Points[i]
		var row []string
		if multi {
			row = append(row, strconv.FormatInt(r.id, 10))
		}
		us := func(v uint64) string {
			if p.IOs == 0 {
				return ""
			}
			return num(float64(v) / 1e3)
		}
		asked := ""
		if p.Asked > 0 {
			asked = num(p.Asked)
		}
		row = append(row, cv.Job, cv.Name(true), string(cv.LoadAxis), p.Load, asked, num(p.IOPS.Median), strconv.FormatBool(p.Held),
			p.Latency, strconv.FormatUint(p.IOs, 10), us(p.P50), us(p.P99), us(p.P999), cv.SLO.String(), us(p.PSLO),
			strconv.FormatBool(p.Meets), strconv.FormatBool(i == cv.Knee), latencyDepthCell(p))
		rows = append(rows, row)
	}
	return rows
}

// qosHow says which latency the y axis is: the one latency every point
// has, else the intended start's for paced points and clat for the rest.
func qosHow(latencies map[string]bool) string {
	how := "y: latency from each I/O's intended start (CO-corrected) for paced points, clat for unpaced ones"
	if len(latencies) == 1 {
		for l := range latencies {
			if l == bench.LatIntended {
				how = "y: latency from each I/O's intended start (CO-corrected)"
			} else {
				how = "y: " + l + " (closed loop)"
			}
		}
	}
	return how
}

// runCurve is one curve of one run.
type runCurve struct {
	r  *runView
	cv summary.QoSCurve
}

// qosColors colours each curve as the other charts colour its series:
// by the value of its first other axis (libaio, bfq), from the same
// colour set (axisColours), so that an engine has its colour here too
// and a compared run's curve of it the same one (its points' symbol
// tells the runs apart). Curves without such a value take, comparing
// runs, their run's colour (a group's host, as layout.colours gives
// it), else the palette in order.
func qosColors(runs []*runView, curves []runCurve) []string {
	out := make([]string, len(curves))
	axes := len(curves) > 0 && !slices.ContainsFunc(curves, func(c runCurve) bool { return len(c.cv.Axes) == 0 })
	switch {
	case axes:
		set := axisColours(runs, curves[0].cv.Axes[0].Axis)
		for i, c := range curves {
			out[i] = set.of(c.cv.Axes[0].Value)
		}
	case len(runs) > 1 && len(curves) == len(runs):
		set := (&layout{compare: true}).colours(runs)
		for i, c := range curves {
			out[i] = set.of(cmp.Or(c.r.host, c.r.run.Kernel, c.r.label))
		}
	default:
		for i := range out {
			out[i] = palette[i%len(palette)]
		}
	}
	return out
}

// sloSeries is which of qosPercentiles the knee is marked on: the SLO's
// percentile, or p99 for one not drawn.
func sloSeries(p float64) int {
	for k, pc := range qosPercentiles {
		if pc.p == p {
			return k
		}
	}
	return 1
}

// sloLine is an objective's limit, drawn on series: at µs, named name.
type sloLine struct {
	series int
	at     float64
	name   string
}

// withSLOLines draws each objective's limit as a dashed horizontal line,
// on the first curve measured against it: compared runs may have
// different objectives, and each knee is its own run's.
func withSLOLines(raw json.RawMessage, lines []sloLine) (json.RawMessage, error) {
	if len(lines) == 0 {
		return raw, nil
	}
	var opt map[string]any
	if err := json.Unmarshal(raw, &opt); err != nil {
		return nil, fmt.Errorf("chart: qos slo line: %w", err)
	}
	series, _ := opt["series"].([]any)
	for _, l := range lines {
		if l.series >= len(series) {
			continue
		}
		series[l.series].(map[string]any)["markLine"] = map[string]any{"silent": true, "symbol": "none",
			"lineStyle": map[string]any{"type": "dashed", "color": "#d55e00"},
			"label":     map[string]any{"formatter": l.name, "position": "insideEndTop", "color": "#d55e00"},
			"data":      []any{map[string]any{"yAxis": l.at}}}
	}
	return json.Marshal(opt)
}
