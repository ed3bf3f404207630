package chart

import (
	"strconv"

	"iolab/bench/pts"
	"iolab/bench/summary"
)

// PTSWindow is the steady-state window plot: the tracking variable over
// the window's rounds with its average, the ±10 % and ±20 % bands
// around it and the least-squares fit line, as the specification's
// report draws it.
const PTSWindow Kind = "pts-window"

// ptsWindowAvailable: the test has a steady-state window (WSAT has
// none), and a round of it is measured (a run in its first round, or
// whose tracking element failed there, has none yet).
func ptsWindowAvailable(p *summary.PTSReport) bool {
	return len(p.Outcome.Windows) > 0 && len(p.Outcome.Windows[0].Values) > 0
}

// buildPTSWindow draws the first tracking variable's window (the
// throughput test's second, 128 KiB, is in the report's table).
func buildPTSWindow(q Query, runs []*runView) (*Chart, error) {
	p, err := ptsOf(q, runs)
	if err != nil {
		return nil, err
	}
	if len(p.Outcome.Windows) == 0 {
		return nil, queryError("kind", "the %s chart draws a steady-state window, and a %s test has none", q.Kind, p.Test.Name)
	}
	if len(p.Outcome.Windows[0].Values) == 0 {
		return nil, queryError("kind", "the %s chart draws a steady-state window, and %s has no round of its tracking variable measured yet", q.Kind, runs[0].label)
	}
	w := p.Outcome.Windows[0]
	scale := ptsScale(p)
	_, unit, yName := ptsMetric(p)
	c := &Chart{Title: ptsTitle(p, "steady-state window"), Columns: []string{"round", "value", "average", "fit"},
		Format: Format{Tooltip: "lines", Y: unit, XName: "round"}}
	var rounds []string
	values, avg, fit := make([]any, len(w.Values)), make([]any, len(w.Values)), make([]any, len(w.Values))
	band := func(f float64) []any {
		out := make([]any, len(w.Values))
		for i := range out {
			out[i] = w.Average * scale * f
		}
		return out
	}
	for i, v := range w.Values {
		round := w.First + i
		rounds = append(rounds, strconv.Itoa(round+1))
		values[i], avg[i], fit[i] = v*scale, w.Average*scale, w.Fit(round)*scale
		c.Rows = append(c.Rows, []string{rounds[i], num(v * scale), num(w.Average * scale), num(w.Fit(round) * scale)})
	}
	line := func(name string, data []any, color, dash string, width int, symbol bool) map[string]any {
		s := map[string]any{"type": "line", "name": name, "data": data, "color": color,
			"lineStyle": map[string]any{"type": dash, "width": width, "color": color}, "itemStyle": map[string]any{"color": color}}
		if !symbol {
			s["symbol"] = "none"
		} else {
			s["symbolSize"] = 8
		}
		return s
	}
	verdict := "steady state reached"
	if !w.Steady() {
		verdict = "not steady"
	}
	series := []map[string]any{
		line(p.Tracking[0].String(), values, palette[0], "solid", 3, true),
		line("average", avg, palette[6], "solid", 1, false),
		line("fit", fit, palette[1], "dashed", 2, false),
		line("+10 %", band(1+pts.SlopeLimit), palette[2], "dotted", 1, false),
		line("−10 %", band(1-pts.SlopeLimit), palette[2], "dotted", 1, false),
		line("+20 %", band(1+pts.RangeLimit), palette[4], "dashed", 1, false),
		line("−20 %", band(1-pts.RangeLimit), palette[4], "dashed", 1, false),
	}
	sub := describeRuns(runs[:1]) + " · rounds " + rounds[0] + "–" + rounds[len(rounds)-1] + ": " + verdict +
		" (range " + strconv.FormatFloat(100*w.RangePct(), 'f', 1, 64) + " % of the average, fit excursion " +
		strconv.FormatFloat(100*w.ExcursionPct(), 'f', 1, 64) + " %)"
	// The axis starts below the lowest of the values, the −20 % band and
	// the fit's ends: everything drawn stays in view.
	last := w.First + len(w.Values) - 1
	lo := min(w.Average*(1-pts.RangeLimit)*0.9, w.Min, w.Fit(w.First), w.Fit(last)) * scale
	c.Option, err = rawOption(c.Title, sub, map[string]any{
		"xAxis":  map[string]any{"type": "category", "name": "round", "nameLocation": "middle", "nameGap": 30, "data": rounds},
		"yAxis":  valueAxis(yName, false, map[string]any{"min": floorNice(lo)}),
		"series": series,
	})
	return c, err
}

// floorNice is v rounded down to two significant digits: an axis's
// start that leaves the bands in view.
func floorNice(v float64) float64 {
	if v <= 0 {
		return 0
	}
	p := 1.0
	for v/p >= 100 {
		p *= 10
	}
	for v/p < 10 {
		p /= 10
	}
	return float64(int(v/p)) * p
}
