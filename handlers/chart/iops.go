package chart

import (
	"cmp"
	"fmt"
	"strconv"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"iolab/bench/summary"
	"iolab/bench/units"
)

// IOPS is IOPS vs iodepth (or the query's x), whiskers (min/median/max
// over repeats) per series.
const IOPS Kind = "iops"

// buildIOPS draws per (x, series) one box of [min, median, median,
// median, max] of the done repeats' IOPS, from summary.Summarize.
func buildIOPS(q Query, runs []*runView) (*Chart, error) {
	l := newLayout(q, runs, q.X)
	g := gridOf(l, runs)
	g.pick(q, l, runs, maxSeries)
	col, dirTitle := dirPrefix(q)
	c := &Chart{Title: fmt.Sprintf("%sIOPS vs %s", dirTitle, l.x), Pickers: g.pickers, Hidden: g.hiddenNote(1, ""),
		Format: Format{Tooltip: "box", Y: "iops", XName: string(l.x)}}
	c.Columns = append(l.columns(true), "repeats", "failed", col+"iops_min", col+"iops_median", col+"iops_max", col+"iops_cv", "noisy")

	// One x value: the series side by side on a category axis of their
	// names (oneX), each a bar to its median with whiskers min–max, not a
	// box per series squeezed into one category.
	one := g.oneX(l)
	xName, xs := string(l.x), g.xs
	if one != nil {
		c.Title = one.title(dirTitle + "IOPS")
		c.Format.Tooltip, c.Format.XName, xName, xs = "bars", one.name, one.name, one.categories
	}
	box := echarts.NewBoxPlot()
	box.SetGlobalOptions(plotOptions(c.Title, subtitle(runs, g, "median, whiskers min–max over repeats; thick outline: noisy (CV > 10%)"+dirsNote(q, runs)),
		"item", xAxisOpts(xName, "category"), opts.YAxis{Name: dirTitle + "IOPS", Type: "value", SplitLine: splitLine()})...)
	box.SetXAxis(xs)
	var boxes []item // one x: each series' box
	for _, s := range g.series {
		data := make([]item, len(g.xs))
		for i, x := range g.xs {
			data[i] = item{Value: []any{missing, missing, missing, missing, missing}}
			cell := s.cells[x]
			if cell == nil {
				continue
			}
			sum, ok := jobCell(summary.SummarizeSteps(s.run.plan, dirSteps(cell.steps, q.dirIndex())))
			if !ok {
				continue
			}
			row := append(l.row(s.run, x, s.group, true), strconv.Itoa(sum.Repeats), strconv.Itoa(sum.Failed))
			if sum.Repeats == 0 {
				c.Rows = append(c.Rows, append(row, "", "", "", "", ""))
				continue
			}
			sp := sum.IOPS
			data[i] = item{Name: x, Value: []float64{sp.Min, sp.Median, sp.Median, sp.Median, sp.Max}, N: sum.Repeats,
				Extra: [][3]any{{"CV", 100 * sp.CV, "pct"}}, ItemStyle: boxStyle(s)}
			if sum.Failed > 0 {
				data[i].Extra = append(data[i].Extra, [3]any{"failed", sum.Failed, ""})
			}
			if sp.Noisy() {
				// The tooltip says so; a thick outline marks it.
				data[i].Note = "noisy: CV " + units.Percent(100*sp.CV, false) + " over " + strconv.Itoa(sum.Repeats) + " repeats"
				data[i].ItemStyle.BorderWidth = 3
			}
			c.Rows = append(c.Rows, append(row, num(sp.Min), num(sp.Median), num(sp.Max), num(sp.CV), strconv.FormatBool(sp.Noisy())))
		}
		if one != nil {
			// Unnamed, the bar's tooltip heads with its series (the x
			// value) and category: "iodepth 1 · scheduler none".
			data[0].Name = ""
			if data[0].ItemStyle == nil {
				data[0].ItemStyle = boxStyle(s)
			}
			boxes = append(boxes, data[0])
			continue
		}
		box.AddSeries(cmp.Or(s.name, s.run.label), nil, echarts.WithItemStyleOpts(opts.ItemStyle{Color: s.color, BorderColor: s.color}))
		setData(box.MultiSeries, data)
	}
	var whiskers [][]any
	if one != nil {
		name := cmp.Or(one.at, dirTitle+"IOPS")
		for i := range boxes {
			v, ok := boxes[i].Value.([]float64)
			if !ok {
				boxes[i].Value = missing
				continue
			}
			boxes[i].Value = v[2]
			boxes[i].Extra = append([][3]any{{"min", v[0], "iops"}, {"max", v[4], "iops"}}, boxes[i].Extra...)
			whiskers = append(whiskers, []any{i, v[0], v[4], 0, 1})
		}
		box.AddSeries(name, nil, echarts.WithItemStyleOpts(opts.ItemStyle{Color: one.color, BorderColor: one.color}))
		s := &box.MultiSeries[len(box.MultiSeries)-1]
		s.Type, s.BarGap, s.BarCategoryGap = "bar", barGap, barCategoryGap
		setData(box.MultiSeries, boxes)
	}
	opt, err := optionJSON(box)
	if err != nil {
		return nil, err
	}
	if one != nil {
		opt, err = addSeries(opt, []map[string]any{errorBars(cmp.Or(one.at, dirTitle+"IOPS"), whiskers)})
	}
	c.Option = opt
	return c, err
}

// boxStyle draws a box in its series' colour; a compared run after the
// first is drawn dashed and darker, so runs of one engine stay apart.
func boxStyle(s *series) *itemStyle {
	st := &itemStyle{Color: s.color + "33", BorderColor: s.color, BorderWidth: 1.5}
	if s.runAt%2 == 1 {
		st.Color, st.BorderType = s.color+"88", "dashed"
	}
	return st
}
