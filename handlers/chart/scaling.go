package chart

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/bench/units"
)

// Scaling is aggregate IOPS and per-job efficiency vs numjobs, on a
// log2 x axis: whiskers over repeats, and the line of linear scaling as
// a toggle.
const Scaling Kind = "scaling"

// scalingAvailable: every run sweeps numjobs.
func scalingAvailable(runs []*runView) bool {
	return every(runs, func(r *runView) bool { return r.sweeps(sweep.AxisNumJobs) })
}

// buildScaling draws, from summary.SummarizeScaling, two lines per
// series against numjobs on a log2 axis (1, 2, 4 … 32 evenly spaced):
// the median aggregate IOPS with whiskers (left axis, from the measured
// data alone), and the efficiency, what each job does against one job
// alone: IOPS(n) / (n × IOPS(1)) (right axis, 0 to 100 % or more).
// Linear scaling, n × IOPS(1), grows 32-fold over the sweep and would
// squash the measured line into the bottom of the axis: it is drawn on
// the IOPS axis but off until its legend entry is clicked.
func buildScaling(q Query, runs []*runView) (*Chart, error) {
	for _, r := range runs {
		if !r.sweeps(q.X) {
			return nil, queryError("kind", "the scaling chart needs a %s sweep, and %s does not sweep %s", q.X, r.label, q.X)
		}
	}
	l := newLayout(q, runs, q.X)
	col, dirTitle := dirPrefix(q)
	c := &Chart{Title: dirTitle + "Aggregate IOPS and efficiency vs " + string(l.x)}
	c.Columns = append(l.columns(true), "repeats", "failed", col+"iops_min", col+"iops_median", col+"iops_max", col+"iops_cv", "noisy", "growth_pct", "efficiency_pct")

	// The x values and series in the order gridOf gives them; the numbers
	// from SummarizeScaling, keyed the same way.
	g := gridOf(l, runs)
	points := scalingPoints(q, l, g, runs)
	scalingColours(q, l, g, runs)
	g.pick(q, l, runs, maxSeries/2)
	c.Pickers, c.Hidden = g.pickers, g.hiddenNote(2, "")
	c.Format = Format{Tooltip: "bars", Y: "iops", XName: string(l.x)}

	var series []map[string]any
	var hidden []string
	effMax, base := 100.0, ""
	for si, s := range g.series {
		sl := scalingLines(c, l, g, si, points[s])
		name := cmp.Or(s.name, s.run.job, s.run.label)
		linear := name + " linear"
		if len(g.series) == 1 {
			linear = "linear scaling"
		}
		hidden = append(hidden, linear)
		effMax = max(effMax, sl.effMax)
		base = cmp.Or(base, sl.base)
		// A dash per line of a series (IOPS solid, efficiency dashed,
		// linear dotted), a symbol per series of one colour (compared
		// runs of one host, an iodepth each).
		symbol := symbols[ofColour(g.series[:si], s)%len(symbols)]
		line := func(name string, axis int, data []item, dash string, size int) map[string]any {
			return map[string]any{"type": "line", "name": name, "yAxisIndex": axis, "data": data, "symbol": symbol, "symbolSize": size,
				"lineStyle": map[string]any{"type": dash, "width": 2, "color": s.color}, "itemStyle": map[string]any{"color": s.color}}
		}
		ideal := line(linear, 0, sl.ideal, "dotted", 4)
		ideal["tooltip"] = map[string]any{"show": false}
		series = append(series, line(name, 0, sl.iops, "solid", 7), whiskers(name, s.color, sl.whiskers),
			line(name+" efficiency", 1, sl.eff, "dashed", 7), ideal)
	}
	how := "median, whiskers min–max over repeats (solid, left); efficiency (dashed, right) = IOPS(n) ÷ (n × IOPS(" + cmp.Or(base, "1") +
		")), each job's IOPS against one job alone; linear scaling (dotted) starts off: its legend entry draws it"
	line := echarts.NewLine()
	line.SetGlobalOptions(plotOptions(c.Title, subtitle(runs, g, how), "item",
		xAxisOpts(string(l.x), "log"), opts.YAxis{Name: dirTitle + "IOPS", Type: "value", SplitLine: splitLine()})...)
	raw, err := optionJSON(line)
	if err != nil {
		return nil, err
	}
	c.Option, err = scalingOption(raw, series, hidden, effMax)
	return c, err
}

// scalingOption adds to raw what go-echarts cannot say: the x axis' base
// 2, the efficiency axis on the right (0 to effMax rounded up to 20 %),
// the series, and the lines the legend starts with off.
func scalingOption(raw json.RawMessage, series []map[string]any, hidden []string, effMax float64) (json.RawMessage, error) {
	var opt map[string]any
	if err := json.Unmarshal(raw, &opt); err != nil {
		return nil, fmt.Errorf("chart: option: %w", err)
	}
	if xs, ok := opt["xAxis"].([]any); ok && len(xs) > 0 {
		x := xs[0].(map[string]any)
		x["logBase"] = 2
		delete(x, "data")
	}
	ys, _ := opt["yAxis"].([]any)
	opt["yAxis"] = append(ys, map[string]any{"name": "efficiency, % of linear", "type": "value", "position": "right",
		"nameTextStyle": map[string]any{"align": "right"}, // inside the chart, under its right edge
		"min":           0, "max": 20 * math.Ceil(effMax/20), "interval": 20, "splitLine": map[string]any{"show": false}})
	selected := map[string]bool{}
	for _, h := range hidden {
		selected[h] = false
	}
	legend, _ := opt["legend"].(map[string]any)
	if legend == nil {
		legend = map[string]any{}
		opt["legend"] = legend
	}
	legend["selected"] = selected
	all := make([]any, len(series))
	for i, s := range series {
		all[i] = s
	}
	opt["series"] = all
	return json.Marshal(opt)
}

// whiskers is a series the page draws as a whisker at each point of the
// line called name (renderItem "whisker", chartprep.js): each datum is
// [x, low, high, the series' place, how many series], so that the
// whiskers of two series at one x sit side by side. Sharing the line's
// name, the legend toggles both.
func whiskers(name, color string, data [][]any) map[string]any {
	return map[string]any{"type": "custom", "name": name, "renderItem": "whisker", "data": data, "z": 5, "yAxisIndex": 0,
		"encode": map[string]any{"x": 0, "y": []int{1, 2}}, "itemStyle": map[string]any{"color": color}, "tooltip": map[string]any{"show": false}}
}

// grey is the palette's grey.
const grey = "#7f7f7f"

// scalingColours colours the scaling chart's series so that no colour
// means two things on one page. Where the page's other charts (x
// iodepth) draw a series per numjobs value, numjobs has the page's
// colours, and this chart, whose x is numjobs, draws another axis'
// values (iodepth) or a single line: those take the colours after
// numjobs' own, not its blue for numjobs=1. Elsewhere (engines, hosts)
// the series are what the other charts' are, in their colours.
func scalingColours(q Query, l *layout, g *grid, runs []*runView) {
	other := newLayout(Query{Series: q.Series}, runs, sweep.AxisIODepth)
	if !other.byValue() || len(other.group) == 0 || other.group[0] != sweep.AxisNumJobs {
		return
	}
	var taken []string
	for _, c := range axisColours(runs, sweep.AxisNumJobs) {
		taken = append(taken, c)
	}
	// The palette's colours numjobs leaves, grey last: a grey line beside
	// the legend's greyed-out entries reads as one turned off.
	var free []string
	for _, c := range palette {
		if !slices.Contains(taken, c) && c != grey {
			free = append(free, c)
		}
	}
	if !slices.Contains(taken, grey) {
		free = append(free, grey)
	}
	g.colours = colours{}
	var keys []string
	for _, s := range g.series {
		k := l.colorKey(s.run, s.group)
		i := slices.Index(keys, k)
		if i < 0 {
			keys = append(keys, k)
			i = len(keys) - 1
		}
		s.color = palette[i%len(palette)] // beyond what numjobs leaves: colours repeat
		if i < len(free) {
			s.color = free[i]
		}
		if len(s.group) > 0 {
			g.colours[s.group[0]] = s.color
		}
	}
}

// scalingPoint is one bar's figures, from SummarizeScaling.
type scalingPoint struct {
	step summary.ScalingStep
	ok   bool
}

// scalingPoints are each series' points by x value: the runs' steps
// summarised by SummarizeScaling, of the job drawn.
func scalingPoints(q Query, l *layout, g *grid, runs []*runView) map[*series]map[string]scalingPoint {
	points := map[*series]map[string]scalingPoint{}
	for _, r := range runs {
		for _, st := range summary.SummarizeScalingSteps(r.plan, dirSteps(r.steps, q.dirIndex())) {
			if st.Total || (r.job != "" && st.Job != r.job) {
				continue
			}
			x, group := l.key(r, st.Axes)
			k := slices.IndexFunc(g.series, func(s *series) bool { return s.run == r && slices.Equal(s.group, group) })
			if k < 0 {
				continue // cannot happen: both come from the same steps
			}
			if points[g.series[k]] == nil {
				points[g.series[k]] = map[string]scalingPoint{}
			}
			points[g.series[k]][x] = scalingPoint{st, true}
		}
	}
	return points
}

// scalingLine is one series' lines: its IOPS, efficiency and linear
// scaling points, its whiskers, its largest efficiency and the numjobs
// its efficiency is measured from.
type scalingLine struct {
	iops, eff, ideal []item
	whiskers         [][]any
	effMax           float64
	base             string
}

// scalingLines are series si's points at each x value of g that has a
// median: its IOPS with their growth, its efficiency against linear
// scaling from its first point, that scaling (ideal) and its whiskers;
// it adds their rows to c.
func scalingLines(c *Chart, l *layout, g *grid, si int, points map[string]scalingPoint) scalingLine {
	s := g.series[si]
	var out scalingLine
	// Linear scaling from the first point with a median: n times the
	// IOPS of its numjobs, per job.
	var base, baseN float64
	for _, x := range g.xs {
		p, ok := points[x]
		if !ok {
			continue
		}
		row := append(l.row(s.run, x, s.group, true), strconv.Itoa(p.step.Repeats), strconv.Itoa(p.step.Failed))
		if p.step.Repeats == 0 {
			c.Rows = append(c.Rows, append(row, "", "", "", "", "", "", ""))
			continue
		}
		sp := p.step.IOPS
		n, err := strconv.ParseFloat(x, 64)
		if err != nil || n <= 0 {
			continue // numjobs is a whole number above 0
		}
		if base == 0 {
			base, baseN, out.base = sp.Median, n, x
		}
		row = append(row, num(sp.Min), num(sp.Median), num(sp.Max), num(sp.CV), strconv.FormatBool(sp.Noisy()), "", "")
		d := item{Value: []float64{n, sp.Median}, Name: x, N: p.step.Repeats,
			Extra: [][3]any{{"min", sp.Min, "iops"}, {"max", sp.Max, "iops"}}}
		if p.step.Growth != nil {
			row[len(row)-2] = num(*p.step.Growth)
			d.Extra = append(d.Extra, [3]any{"growth", *p.step.Growth, "pct"})
		}
		if base > 0 {
			want := base * n / baseN
			eff := 100 * sp.Median / want
			row[len(row)-1] = num(eff)
			d.Extra = append(d.Extra, [3]any{"efficiency", eff, "pct"})
			out.effMax = max(out.effMax, eff)
			out.ideal = append(out.ideal, item{Value: []float64{n, want}, Name: x})
			out.eff = append(out.eff, item{Value: []float64{n, eff}, Name: x, N: p.step.Repeats, Unit: "pct",
				Extra: [][3]any{{"IOPS", sp.Median, "iops"}, {"linear", want, "iops"}}})
		}
		if sp.Noisy() {
			d.Note = "noisy: CV " + units.Percent(100*sp.CV, false)
		}
		out.iops = append(out.iops, d)
		out.whiskers = append(out.whiskers, []any{n, sp.Min, sp.Max, si, len(g.series)})
		c.Rows = append(c.Rows, row)
	}
	return out
}
