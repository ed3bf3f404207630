package chart

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
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
	lk := latKind(q, runs)
	c := &Chart{Title: "Latency vs achieved IOPS", Format: Format{Tooltip: "lines", X: "iops", Y: "us"}}
	if len(runs) > 1 {
		c.Columns = append(c.Columns, "run")
	}
	c.Columns = append(c.Columns, "job", "curve", "load_axis", "load", "asked_iops", "achieved_iops", "held_rate", "latency",
		"ios", "p50_us", "p99_us", "p99_9_us", "slo", "p_slo_us", "meets_slo", "knee", "latency_depth")
	line := echarts.NewLine()
	var knees []qosKnee
	var groups []int
	latencies := map[string]bool{}
	var sloLines []sloLine
	all := qosCurves(runs, summary.LatKind(lk))
	v := qosViewOf(q, runs, all)
	colors := qosColors(runs, all)
	var data [][]item
	for curveN, rc := range all {
		if !v.curves[curveN] {
			continue
		}
		r, cv := rc.r, rc.cv
		name := v.names[curveN]
		color := colors[curveN]
		marked := v.markedOn(cv.SLO.Percentile)
		for k, pc := range qosPercentiles {
			if !v.ps[k] {
				continue
			}
			line.AddSeries(name+" "+pc.name, nil, lineStyle(color, k, curveN, true)...)
			data = append(data, qosPoints(&cv, pc, k == marked))
			setData(line.MultiSeries, data[len(data)-1])
			groups = append(groups, curveN)
			if k == marked && !slices.ContainsFunc(sloLines, func(l sloLine) bool { return l.name == cv.SLO.String() }) {
				sloLines = append(sloLines, sloLine{series: len(groups) - 1, at: float64(cv.SLO.Max) / 1e3, name: cv.SLO.String()})
			}
		}
		for i := range cv.Points {
			latencies[cv.Points[i].Latency] = true
		}
		c.Rows = append(c.Rows, qosRows(r, &cv, len(runs) > 1)...)
		knees = append(knees, qosKnee{name: name, slo: cv.SLO.String(), at: cv.KneePoint()})
	}
	c.Format.Groups = groups
	c.File = fileName(QoS, runs)
	c.Pickers = v.pickers(lk, runs, all, colors)
	lines := kneeLines(knees, len(runs) > 1 || len(all) > 1 || (len(all) > 0 && all[0].r.multiJob()))
	lines = append(lines, qosHow(latencies))
	if t := v.hiddenText(); t != "" {
		lines = append(lines, t)
	}
	top := qosTitleHeight + qosSubtitleLine*len(lines)
	e := placeQoSLabels(data, sloLines, top)
	sub := subtitle(runs, nil, strings.Join(lines, "\n"))
	y := opts.YAxis{Name: "latency (µs)", Type: "log", Min: e.yMin, Max: e.yMax, SplitLine: splitLine()}
	x := xAxisOpts("achieved IOPS", "value")
	x.Min, x.Max = 0, e.xMax
	line.SetGlobalOptions(plotOptions(c.Title, sub, "item", x, y)...)
	raw, err := optionJSON(line)
	if err != nil {
		return nil, err
	}
	c.Option, err = withSLOLines(raw, sloLines, top)
	return c, err
}

// qosKnee is a drawn curve's knee: at nil when it has none.
type qosKnee struct {
	name, slo string
	at        *summary.QoSPoint
}

// qosLineLen is how many characters a subtitle line holds at the
// narrowest width the chart is drawn at.
const qosLineLen = 80

// kneeLines say where each drawn curve's knee is, the objective once:
// "knee at p99<1ms: 41.2k IOPS" for one curve, else "knees at p99<1ms:
// libaio 225k, io_uring 228k IOPS; none for psync", wrapped to lines
// the chart's width holds. named: the curves are named.
func kneeLines(knees []qosKnee, named bool) []string {
	if !named && len(knees) == 1 {
		if k := knees[0].at; k != nil {
			return []string{"knee at " + knees[0].slo + ": " + units.Count(k.IOPS.Median) + " IOPS"}
		}
		return []string{"no knee at " + knees[0].slo}
	}
	var words []string
	var slos []string
	for _, k := range knees {
		if !slices.Contains(slos, k.slo) {
			slos = append(slos, k.slo)
		}
	}
	for _, slo := range slos {
		var at, none []string
		for _, k := range knees {
			switch {
			case k.slo != slo:
			case k.at == nil:
				none = append(none, k.name)
			default:
				at = append(at, k.name+" "+units.Count(k.at.IOPS.Median))
			}
		}
		lead := "knees at " + slo + ":"
		if len(at) == 1 {
			lead = "knee at " + slo + ":"
		}
		if len(at) > 0 {
			at[len(at)-1] += " IOPS"
			words = append(words, lead)
			for i, a := range at {
				if i < len(at)-1 {
					a += ","
				}
				words = append(words, a)
			}
		}
		if len(none) > 0 {
			if len(at) > 0 {
				words[len(words)-1] += ";"
			}
			words = append(words, "no knee at "+slo+" for "+strings.Join(none, ", "))
		}
		if slo != slos[len(slos)-1] {
			words[len(words)-1] += ";"
		}
	}
	var lines []string
	cur := ""
	for _, w := range words {
		switch {
		case cur == "":
			cur = w
		case len([]rune(cur))+1+len([]rune(w)) > qosLineLen:
			lines = append(lines, cur)
			cur = w
		default:
			cur += " " + w
		}
	}
	return append(lines, cur)
}

// qosCurves are the runs' curves, of the job drawn when a run draws one,
// their unpaced points of latency kind k.
func qosCurves(runs []*runView, k summary.LatKind) []runCurve {
	var all []runCurve
	for _, r := range runs {
		for _, cv := range summary.QoSCurvesAs(r.plan, r.steps, k) {
			if r.job == "" || cv.Job == r.job {
				all = append(all, runCurve{r, cv})
			}
		}
	}
	return all
}

// placeQoSLabels places the labels markQoSPoint gave the points of data
// (placeLabels: knees first, then latency_target depths) in a plot whose
// top is at top, takes off those that fit nowhere, writing them in the
// point's tooltip note instead, and returns the axes' extent the places
// were computed for.
func placeQoSLabels(data [][]item, lines []sloLine, top int) qosExtent {
	var points [][2]float64
	type at struct{ s, i int }
	var labels []qosLabel
	var where []at
	for _, knees := range []bool{true, false} {
		for s := range data {
			for i := range data[s] {
				it := &data[s][i]
				xy, ok := it.Value.([]float64)
				if !ok {
					continue
				}
				if knees {
					points = append(points, [2]float64{xy[0], xy[1]})
				}
				if it.Label == nil || (it.Symbol == "diamond") != knees {
					continue
				}
				sides := qosSides
				if !knees {
					sides = []string{"left", "right", "top", "bottom"}
				}
				labels = append(labels, qosLabel{x: xy[0], y: xy[1], text: it.Label.Formatter, sides: sides})
				where = append(where, at{s, i})
			}
		}
	}
	var limits []float64
	for _, l := range lines {
		limits = append(limits, l.at)
	}
	e := qosExtentOf(points, limits)
	e.top = float64(top)
	sides := placeLabels(labels, e, func(p qosPlot) []box {
		var out []box
		for _, l := range lines {
			out = append(out, sloLabelBox(p, l.at, l.name))
		}
		return out
	})
	for n, side := range sides {
		it := &data[where[n].s][where[n].i]
		if side == "" {
			it.Note = strings.TrimPrefix(it.Note+"; "+it.Label.Formatter, "; ")
			it.Label = nil
			continue
		}
		it.Label.Position = side
	}
	return e
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

// qosHow says which latency the y axis is: from each I/O's intended
// start for paced points, whatever the latency picker says (pacing is
// what measures it), and the picked kind for the unpaced ones.
func qosHow(latencies map[string]bool) string {
	var paced bool
	var unpaced []string
	for _, l := range slices.Sorted(maps.Keys(latencies)) {
		if l == bench.LatIntended {
			paced = true
			continue
		}
		k, err := summary.ParseLatKind(l)
		if err != nil {
			unpaced = append(unpaced, l) // "mixed"
			continue
		}
		unpaced = append(unpaced, LatKind(k).Title())
	}
	switch {
	case paced && len(unpaced) > 0:
		return "y: latency from each I/O's intended start (CO-corrected) for paced points, " + strings.Join(unpaced, ", ") + " for unpaced ones"
	case paced:
		return "y: latency from each I/O's intended start (CO-corrected)"
	}
	return "y: " + strings.Join(unpaced, ", ") + " (closed loop)"
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
// It moves the grid's top to top, below the subtitle's lines.
func withSLOLines(raw json.RawMessage, lines []sloLine, top int) (json.RawMessage, error) {
	var opt map[string]any
	if err := json.Unmarshal(raw, &opt); err != nil {
		return nil, fmt.Errorf("chart: qos slo line: %w", err)
	}
	if grids, ok := opt["grid"].([]any); ok && len(grids) > 0 {
		grids[0].(map[string]any)["top"] = strconv.Itoa(top)
	}
	// The subtitle's lines one under the other (echarts sets them on one
	// another without a line height).
	if title, ok := opt["title"].(map[string]any); ok {
		if st, ok := title["subtextStyle"].(map[string]any); ok {
			st["lineHeight"] = qosSubtitleLine
		}
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

// qosView is what a QoS chart draws of its candidate curves: at most
// maxSeries series by default, as every chart (issue 25). Each curve
// is up to three series (its percentiles), so with more curves it draws
// fewer percentiles — the median and the objective's, then the
// objective's alone — and past that the first curves; ?p= picks the
// percentiles and ?show= (a curve's values) the curves, beyond the cap.
type qosView struct {
	ps     []bool   // by qosPercentiles: drawn
	curves []bool   // by candidate curve: drawn
	names  []string // the candidate curves' names
	// hidden are the names of the candidate series not drawn ("io_uring
	// p50"), as the other charts' cap lists theirs; hiddenPs and
	// hiddenCurves say them shortly.
	hidden, hiddenPs, hiddenCurves []string
	slo                            int // the index in qosPercentiles of the first curve's objective
}

// qosKeys are the values a curve can be shown by (?show=): its other
// axes' values, and its job when the curves are of several.
func qosKeys(all []runCurve, rc runCurve) []string {
	var keys []string
	for _, a := range rc.cv.Axes {
		keys = append(keys, a.Value)
	}
	if slices.ContainsFunc(all, func(o runCurve) bool { return o.cv.Job != rc.cv.Job }) {
		keys = append(keys, rc.cv.Job)
	}
	return keys
}

func qosViewOf(q Query, runs []*runView, all []runCurve) qosView {
	v := qosView{ps: make([]bool, len(qosPercentiles)), curves: make([]bool, len(all)), slo: 1}
	if len(all) > 0 {
		v.slo = sloSeries(all[0].cv.SLO.Percentile)
	}
	for _, rc := range all {
		name := rc.cv.Name(rc.r.job == "" && rc.r.multiJob())
		if len(runs) > 1 {
			name = rc.r.name + " " + name
		}
		v.names = append(v.names, name)
	}
	// A curve is a candidate when the query names each of its values
	// (or none of that place's values) and its run.
	var shown []int
	for i, rc := range all {
		if len(q.ShowRuns) > 0 && len(runs) > 1 && !slices.Contains(q.ShowRuns, rc.r.id) {
			continue
		}
		keys := qosKeys(all, rc)
		ok := true
		for k, key := range keys {
			named := slices.ContainsFunc(all, func(o runCurve) bool {
				ok := qosKeys(all, o)
				return k < len(ok) && slices.Contains(q.Show, ok[k])
			})
			if named && !slices.Contains(q.Show, key) {
				ok = false
			}
		}
		if ok {
			shown = append(shown, i)
		}
	}
	for _, p := range q.Percentiles {
		if k := slices.IndexFunc(qosPercentiles, func(pc qosPercentile) bool { return pc.p == p }); k >= 0 {
			v.ps[k] = true
		}
	}
	nps := 0
	for _, on := range v.ps {
		if on {
			nps++
		}
	}
	if nps == 0 {
		switch n := len(shown); {
		case n*len(qosPercentiles) <= maxSeries:
			for k := range v.ps {
				v.ps[k] = true
			}
		case 2*n <= maxSeries:
			v.ps[0], v.ps[v.slo] = true, true
		default:
			v.ps[v.slo] = true
		}
		for _, on := range v.ps {
			if on {
				nps++
			}
		}
	}
	budget := len(shown)
	if len(q.Show) == 0 && len(q.ShowRuns) == 0 {
		budget = max(1, maxSeries/nps)
	}
	for n, i := range shown {
		v.curves[i] = n < budget
	}
	for i := range all {
		for k, pc := range qosPercentiles {
			if !v.curves[i] || !v.ps[k] {
				v.hidden = append(v.hidden, v.names[i]+" "+pc.name)
			}
		}
		if !v.curves[i] {
			v.hiddenCurves = append(v.hiddenCurves, v.names[i])
		}
	}
	for k, pc := range qosPercentiles {
		if !v.ps[k] {
			v.hiddenPs = append(v.hiddenPs, pc.name)
		}
	}
	return v
}

// markedOn is the percentile whose points carry a curve's knee: the
// objective's (p), or the first drawn when it is not.
func (v *qosView) markedOn(p float64) int {
	k := sloSeries(p)
	if v.ps[k] {
		return k
	}
	return slices.Index(v.ps, true)
}

// hiddenText says which series are not drawn and how to draw them, ""
// when every one is.
func (v *qosView) hiddenText() string {
	if len(v.hidden) == 0 {
		return ""
	}
	drawn := len(v.names)*len(qosPercentiles) - len(v.hidden)
	var parts []string
	if len(v.hiddenPs) > 0 {
		parts = append(parts, strings.Join(v.hiddenPs, ", ")+" (tick them under percentiles)")
	}
	if len(v.hiddenCurves) > 0 {
		parts = append(parts, "the curves "+strings.Join(v.hiddenCurves, ", ")+" (tick them above the chart)")
	}
	return fmt.Sprintf("%d of %d series drawn; hidden: %s", drawn, len(v.names)*len(qosPercentiles), strings.Join(parts, "; "))
}

// pickers are the QoS chart's: the latency kind (of the unpaced
// points), the percentiles, and a curve's values by place (its axes in
// order, then its job) when the curves differ there.
func (v *qosView) pickers(lk LatKind, runs []*runView, all []runCurve, colors []string) []Picker {
	out := []Picker{latPicker(lk, false)}
	p := Picker{Param: "p", Label: "percentiles"}
	for k, pc := range qosPercentiles {
		p.Options = append(p.Options, PickerOption{Value: num(pc.p), Label: pc.name, On: v.ps[k]})
	}
	out = append(out, p)
	if len(runs) > 1 {
		rp := Picker{Param: "showrun", Label: "runs"}
		for _, r := range runs {
			on := false
			for i, rc := range all {
				on = on || (rc.r == r && v.curves[i])
			}
			rp.Options = append(rp.Options, PickerOption{Value: strconv.FormatInt(r.id, 10), Label: r.name, On: on})
		}
		out = append(out, rp)
	}
	places := 0
	for _, rc := range all {
		places = max(places, len(qosKeys(all, rc)))
	}
	for k := range places {
		label := "job"
		if len(all) > 0 && k < len(all[0].cv.Axes) {
			label = string(all[0].cv.Axes[k].Axis)
		}
		sp := Picker{Param: "show", Label: label}
		for i, rc := range all {
			keys := qosKeys(all, rc)
			if k >= len(keys) {
				continue
			}
			if j := slices.IndexFunc(sp.Options, func(o PickerOption) bool { return o.Value == keys[k] }); j >= 0 {
				sp.Options[j].On = sp.Options[j].On || v.curves[i]
				continue
			}
			o := PickerOption{Value: keys[k], Label: keys[k], On: v.curves[i]}
			if k == 0 && len(rc.cv.Axes) > 0 {
				o.Color = colors[i]
			}
			sp.Options = append(sp.Options, o)
		}
		if len(sp.Options) > 1 {
			out = append(out, sp)
		}
	}
	return out
}
