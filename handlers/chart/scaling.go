package chart

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/bench/units"
)

// Scaling is aggregate IOPS vs numjobs: whiskers over repeats, growth %
// and efficiency against linear scaling.
const Scaling Kind = "scaling"

// scalingAvailable: every run sweeps numjobs.
func scalingAvailable(runs []*runView) bool {
	return every(runs, func(r *runView) bool { return r.sweeps(sweep.AxisNumJobs) })
}

// growthLabel is a bar's growth label: +85%, +3.2%.
func growthLabel(g float64) string {
	digits := 0
	if math.Abs(g) < 10 {
		digits = 1
	}
	s := strconv.FormatFloat(g, 'f', digits, 64)
	if g >= 0 {
		s = "+" + s
	}
	return s + "%"
}

// buildScaling draws the median aggregate IOPS at each numjobs value,
// labelled with its growth from the previous one, from
// summary.SummarizeScaling.
func buildScaling(q Query, runs []*runView) (*Chart, error) {
	for _, r := range runs {
		if !r.sweeps(q.X) {
			return nil, queryError("kind", "the scaling chart needs a %s sweep, and %s does not sweep %s", q.X, r.label, q.X)
		}
	}
	l := newLayout(q, runs, q.X)
	col, dirTitle := dirPrefix(q)
	c := &Chart{Title: dirTitle + "Aggregate IOPS vs " + string(l.x)}
	c.Columns = append(l.columns(true), "repeats", "failed", col+"iops_min", col+"iops_median", col+"iops_max", col+"iops_cv", "noisy", "growth_pct", "efficiency_pct")

	// The x values and series in the order gridOf gives them; the numbers
	// from SummarizeScaling, keyed the same way.
	g := gridOf(l, runs)
	points := scalingPoints(q, l, g, runs)
	g.pick(q, l, runs, maxSeries/2)
	c.Pickers, c.Hidden = g.pickers, g.hiddenNote(2, "")
	c.Format = Format{Tooltip: "bars", Y: "iops", XName: string(l.x)}
	bar := echarts.NewBar()
	bar.SetGlobalOptions(plotOptions(c.Title, subtitle(runs, g, "median, whiskers min–max over repeats; label: growth from the previous "+string(l.x)+", efficiency against linear scaling (dashed)"),
		"item", xAxisOpts(string(l.x), "category"), opts.YAxis{Name: dirTitle + "IOPS", Type: "value", SplitLine: splitLine()})...)
	bar.SetXAxis(g.xs)
	var extra []map[string]any
	for si, s := range g.series {
		data, ideal, whiskers := scalingBars(c, l, g, si, points[s])
		name := cmp.Or(s.name, s.run.job, s.run.label)
		linear := name + " linear"
		if len(g.series) == 1 {
			linear = "linear scaling"
		}
		bar.AddSeries(name, nil, echarts.WithBarChartOpts(opts.BarChart{BarGap: barGap, BarCategoryGap: barCategoryGap}),
			echarts.WithItemStyleOpts(opts.ItemStyle{Color: s.color}))
		setData(bar.MultiSeries, data)
		extra = append(extra, errorBars(name, whiskers), map[string]any{
			"type": "line", "name": linear, "data": ideal, "symbol": "none", "z": 3,
			"lineStyle": map[string]any{"type": "dashed", "width": 1.2, "color": s.color}, "itemStyle": map[string]any{"color": s.color},
			"tooltip": map[string]any{"show": false},
		})
	}
	raw, err := optionJSON(bar)
	if err != nil {
		return nil, err
	}
	c.Option, err = addSeries(raw, extra)
	return c, err
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

// scalingBars are series si's bars at each x value of g, labelled with
// their growth and efficiency, the linear scaling they are measured
// against (ideal) and their whiskers; it adds their rows to c.
func scalingBars(c *Chart, l *layout, g *grid, si int, points map[string]scalingPoint) (data, ideal []item, whiskers [][]any) {
	s := g.series[si]
	data = make([]item, len(g.xs))
	ideal = make([]item, len(g.xs))
	// Linear scaling from the first point with a median: n times the
	// IOPS of its numjobs, per job.
	var base, baseN float64
	for i, x := range g.xs {
		data[i], ideal[i] = item{Value: missing}, item{Value: missing}
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
		n, _ := strconv.ParseFloat(x, 64)
		if base == 0 && n > 0 {
			base, baseN = sp.Median, n
		}
		eff := math.NaN()
		if base > 0 && n > 0 {
			want := base * n / baseN
			eff = 100 * sp.Median / want
			ideal[i] = item{Value: want, Name: x}
		}
		row = append(row, num(sp.Min), num(sp.Median), num(sp.Max), num(sp.CV), strconv.FormatBool(sp.Noisy()), "", "")
		data[i] = item{Value: sp.Median, Name: x, N: p.step.Repeats,
			Extra: [][3]any{{"min", sp.Min, "iops"}, {"max", sp.Max, "iops"}}}
		var label []string
		if p.step.Growth != nil {
			row[len(row)-2] = num(*p.step.Growth)
			label = append(label, growthLabel(*p.step.Growth))
			data[i].Extra = append(data[i].Extra, [3]any{"growth", *p.step.Growth, "pct"})
		}
		if !math.IsNaN(eff) {
			row[len(row)-1] = num(eff)
			if n != baseN {
				label = append(label, units.Significant(eff, 3)+"% eff.")
			}
			data[i].Extra = append(data[i].Extra, [3]any{"efficiency", eff, "pct"})
		}
		if sp.Noisy() {
			data[i].Note = "noisy: CV " + units.Percent(100*sp.CV, false)
		}
		if len(label) > 0 {
			data[i].Label = &opts.Label{Show: opts.Bool(true), Position: "top", Formatter: strings.Join(label, "\n"), Color: "#333"}
		}
		whiskers = append(whiskers, []any{i, sp.Min, sp.Max, si, len(g.series)})
		c.Rows = append(c.Rows, row)
	}
	return data, ideal, whiskers
}
