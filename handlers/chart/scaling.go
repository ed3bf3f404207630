package chart

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"iolab/bench/summary"
	"iolab/bench/sweep"
)

// Scaling is aggregate IOPS vs numjobs with growth % labels.
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
	c.Columns = append(l.columns(true), "repeats", "failed", col+"iops_min", col+"iops_median", col+"iops_max", col+"iops_cv", "noisy", "growth_pct")

	// The x values and series in the order gridOf gives them; the numbers
	// from SummarizeScaling, keyed the same way.
	g := gridOf(l, runs)
	type point struct {
		step summary.ScalingStep
		ok   bool
	}
	points := map[*series]map[string]point{}
	for _, r := range runs {
		for _, st := range summary.SummarizeScaling(r.plan, dirSteps(r.steps, q.dirIndex())) {
			if st.Total || (r.job != "" && st.Job != r.job) {
				continue
			}
			x, group := l.key(r, st.Axes)
			k := slices.IndexFunc(g.series, func(s *series) bool { return s.run == r && slices.Equal(s.group, group) })
			if k < 0 {
				continue // cannot happen: both come from the same steps
			}
			if points[g.series[k]] == nil {
				points[g.series[k]] = map[string]point{}
			}
			points[g.series[k]][x] = point{st, true}
		}
	}

	bar := echarts.NewBar()
	bar.SetGlobalOptions(plotOptions(c.Title, describeRuns(runs)+" · median over repeats, growth from the previous "+string(l.x),
		fileName(q.Kind, runs), "axis",
		xAxisOpts(string(l.x), "category"), opts.YAxis{Name: dirTitle + "IOPS", Type: "value"})...)
	bar.SetXAxis(g.xs)
	for _, s := range g.series {
		data := make([]opts.BarData, len(g.xs))
		for i, x := range g.xs {
			data[i] = opts.BarData{Value: missing}
			p, ok := points[s][x]
			if !ok {
				continue
			}
			row := append(l.row(s.run, x, s.group, true), strconv.Itoa(p.step.Repeats), strconv.Itoa(p.step.Failed))
			if p.step.Repeats == 0 {
				c.Rows = append(c.Rows, append(row, "", "", "", "", "", ""))
				continue
			}
			sp := p.step.IOPS
			row = append(row, num(sp.Min), num(sp.Median), num(sp.Max), num(sp.CV), strconv.FormatBool(sp.Noisy()), "")
			data[i] = opts.BarData{Value: sp.Median}
			if p.step.Growth != nil {
				row[len(row)-1] = num(*p.step.Growth)
				data[i].Label = &opts.Label{Show: opts.Bool(true), Position: "top", Formatter: growthLabel(*p.step.Growth)}
			}
			c.Rows = append(c.Rows, row)
		}
		bar.AddSeries(cmp.Or(s.name, s.run.label), data)
	}
	var err error
	c.Option, err = optionJSON(bar)
	return c, err
}
