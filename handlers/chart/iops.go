package chart

import (
	"cmp"
	"fmt"
	"strconv"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"iolab/bench/summary"
)

// IOPS is IOPS vs iodepth (or the query's x), whiskers (min/median/max
// over repeats) per series.
const IOPS Kind = "iops"

// buildIOPS draws per (x, series) one box of [min, median, median,
// median, max] of the done repeats' IOPS, from summary.Summarize.
func buildIOPS(q Query, runs []*runView) (*Chart, error) {
	l := newLayout(q, runs, q.X)
	g := gridOf(l, runs)
	col, dirTitle := dirPrefix(q)
	c := &Chart{Title: fmt.Sprintf("%sIOPS vs %s", dirTitle, l.x)}
	c.Columns = append(l.columns(true), "repeats", "failed", col+"iops_min", col+"iops_median", col+"iops_max", col+"iops_cv", "noisy")

	box := echarts.NewBoxPlot()
	box.SetGlobalOptions(plotOptions(c.Title, describeRuns(runs)+" · median, whiskers min–max over repeats; bold: noisy repeats",
		fileName(q.Kind, runs), "item",
		xAxisOpts(string(l.x), "category"), opts.YAxis{Name: dirTitle + "IOPS", Type: "value"})...)
	box.SetXAxis(g.xs)
	for _, s := range g.series {
		data := make([]opts.BoxPlotData, len(g.xs))
		for i, x := range g.xs {
			data[i] = opts.BoxPlotData{Value: []any{missing, missing, missing, missing, missing}}
			cell := s.cells[x]
			if cell == nil {
				continue
			}
			sum, ok := jobCell(summary.Summarize(s.run.plan, dirSteps(cell.steps, q.dirIndex())))
			if !ok {
				continue
			}
			row := append(l.row(s.run, x, s.group, true), strconv.Itoa(sum.Repeats), strconv.Itoa(sum.Failed))
			if sum.Repeats == 0 {
				c.Rows = append(c.Rows, append(row, "", "", "", "", ""))
				continue
			}
			sp := sum.IOPS
			data[i] = opts.BoxPlotData{Name: x, Value: []float64{sp.Min, sp.Median, sp.Median, sp.Median, sp.Max}}
			if sp.Noisy() {
				// The tooltip names the box; a bold outline marks it.
				data[i].Name = fmt.Sprintf("%s · noisy: CV %.0f %% over %d repeats", x, 100*sp.CV, sum.Repeats)
				data[i].ItemStyle = &opts.ItemStyle{BorderWidth: 3}
			}
			c.Rows = append(c.Rows, append(row, num(sp.Min), num(sp.Median), num(sp.Max), num(sp.CV), strconv.FormatBool(sp.Noisy())))
		}
		box.AddSeries(cmp.Or(s.name, s.run.label), data)
	}
	var err error
	c.Option, err = optionJSON(box)
	return c, err
}
