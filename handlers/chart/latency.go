package chart

import (
	"fmt"
	"strconv"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"iolab/bench/hist"
	"iolab/bench/summary"
	"iolab/bench/sweep"
)

// Latency is clat percentiles vs iodepth (or the query's x), log y axis,
// one line per series × percentile.
const Latency Kind = "latency"

// clatOf merges the clat histograms of the done steps' jobs in direction
// d (both when d < 0), the way fio's group_reporting merges a group.
func clatOf(steps []sweep.StepResult, d int) (h *hist.Histogram, done, failed int) {
	h = new(hist.Histogram)
	for i := range steps {
		switch summary.StepStatus(&steps[i]) {
		case sweep.StepFailed:
			failed++
			continue
		case sweep.StepCancelled:
			continue
		}
		done++
		for _, g := range steps[i].Result.Groups {
			for k := range g.Jobs {
				for dd := range 2 {
					if d < 0 || d == dd {
						h.Merge(&g.Jobs[k].Dirs[dd].Clat.Hist)
					}
				}
			}
		}
	}
	return h, done, failed
}

func percentileName(p float64) string { return "p" + num(p) }

// buildLatency draws each percentile from the histograms of a point's
// done repeats merged: a percentile of all their I/Os, not a median of
// per-repeat percentiles.
func buildLatency(q Query, runs []*runView) (*Chart, error) {
	l := newLayout(q, runs, q.X)
	g := gridOf(l, runs)
	ps := q.Percentiles
	if len(ps) == 0 {
		ps = defaultPercentiles
	}
	col, dirTitle := dirPrefix(q)
	c := &Chart{Title: fmt.Sprintf("%sCompletion latency percentiles vs %s", dirTitle, l.x)}
	c.Columns = append(l.columns(true), "repeats", "failed", "ios")
	for _, p := range ps {
		c.Columns = append(c.Columns, col+"clat_"+percentileName(p)+"_us", col+"clat_"+percentileName(p)+"_reliable")
	}

	// The tooltip is per point, so that it can say when one is not worth
	// reading.
	line := echarts.NewLine()
	line.SetGlobalOptions(plotOptions(c.Title, describeRuns(runs)+" · clat histograms of all repeats merged; hollow: too few I/Os for the percentile",
		fileName(q.Kind, runs), "item",
		xAxisOpts(string(l.x), "category"), opts.YAxis{Name: dirTitle + "clat (µs)", Type: "log"})...)
	line.SetXAxis(g.xs)
	for si, s := range g.series {
		data := make([][]opts.LineData, len(ps))
		for k := range data {
			data[k] = make([]opts.LineData, len(g.xs))
		}
		for i, x := range g.xs {
			for k := range ps {
				data[k][i] = opts.LineData{Value: missing}
			}
			cell := s.cells[x]
			if cell == nil {
				continue
			}
			h, done, failed := clatOf(cell.steps, q.dirIndex())
			n := h.N()
			row := append(l.row(s.run, x, s.group, true), strconv.Itoa(done), strconv.Itoa(failed), strconv.FormatUint(n, 10))
			for k, ns := range h.Percentiles(ps) {
				if n == 0 {
					row = append(row, "", "")
					continue
				}
				us := float64(ns) / 1000
				data[k][i] = opts.LineData{Name: string(l.x) + " " + x, Value: us}
				reliable := hist.Reliable(ps[k], n)
				if !reliable {
					// Fewer than ten I/Os lie above it: drawn hollow, and
					// the tooltip says why.
					data[k][i].Name += fmt.Sprintf(" · unreliable: %d I/Os, %s needs %d", n, percentileName(ps[k]), hist.ReliableN(ps[k]))
					data[k][i].Symbol = "empty" + pointSymbol(k)
				}
				row = append(row, num(us), strconv.FormatBool(reliable))
			}
			c.Rows = append(c.Rows, row)
		}
		for k, p := range ps {
			name := percentileName(p)
			if s.name != "" {
				name = s.name + " " + name
			}
			line.AddSeries(name, data[k], lineStyle(si, k, true)...)
		}
	}
	var err error
	c.Option, err = optionJSON(line)
	return c, err
}
