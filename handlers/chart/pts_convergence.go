package chart

import (
	"slices"
	"strconv"

	"iolab/bench/pts"
	"iolab/bench/summary"
)

// PTSConvergence is the steady-state convergence plot: the tracked
// figure of the elements beside the tracking variable, every round.
const PTSConvergence Kind = "pts-convergence"

// ptsConvergenceElements are the elements the plot draws: those with
// the tracking variable's values on every axis but the one they differ
// by — the block size where the matrix has one, else its last axis
// (IOPS and latency: every block size at the tracked mix; throughput:
// each block size's writes; DIRTH: every depth at the most jobs).
func ptsConvergenceElements(p *summary.PTSReport) (elements []int, free string) {
	if len(p.Matrix) == 0 || len(p.Tracking) == 0 {
		return []int{0}, ""
	}
	free = p.Matrix[len(p.Matrix)-1].Option
	if slices.ContainsFunc(p.Matrix, func(a pts.Axis) bool { return a.Option == "bs" }) {
		free = "bs"
	}
	for e, el := range p.Elements {
		keep := false
		for _, tr := range p.Tracking {
			ok := true
			for k, v := range tr.Element {
				ok = ok && (k == free || el.Values[k] == v)
			}
			keep = keep || ok
		}
		if keep {
			elements = append(elements, e)
		}
	}
	return elements, free
}

// buildPTSConvergence draws a line per element against the round, on a
// log axis where the elements' figures span a decade or more.
func buildPTSConvergence(q Query, runs []*runView) (*Chart, error) {
	p, err := ptsOf(q, runs)
	if err != nil {
		return nil, err
	}
	value, unit, yName := ptsMetric(p)
	elements, free := ptsConvergenceElements(p)
	c := &Chart{Title: ptsTitle(p, "steady-state convergence"), Columns: []string{"round", "element", "value"},
		Format: Format{Tooltip: "lines", Y: unit, XName: "round"}}
	var rounds []string
	for _, round := range p.Rounds {
		rounds = append(rounds, strconv.Itoa(round.Round+1))
	}
	var series []map[string]any
	var all []float64
	hidden := 0
	for i, e := range elements {
		if i >= maxSeries {
			hidden++
			continue
		}
		data := make([]any, len(p.Rounds))
		for ri, round := range p.Rounds {
			data[ri] = missing
			if round.Done[e] {
				v := value(&round.Figures[e])
				data[ri] = v
				all = append(all, v)
				c.Rows = append(c.Rows, []string{rounds[ri], p.Elements[e].Label, num(v)})
			}
		}
		// A line is named by the value it differs by; the subtitle says
		// what they share.
		name := p.Elements[e].Label
		if free != "" {
			name = free + "=" + p.Elements[e].Values[free]
		}
		series = append(series, map[string]any{"type": "line", "name": name, "data": data,
			"symbolSize": 6, "lineStyle": map[string]any{"width": 2}})
	}
	if hidden > 0 {
		c.Hidden = strconv.Itoa(hidden) + " more elements not drawn (8 lines at most)"
	}
	sub := describeRuns(runs[:1]) + " · each element's " + yName + " per round, beside the tracked " + ptsTracked(p)
	c.Option, err = rawOption(c.Title, sub, map[string]any{
		"xAxis":  map[string]any{"type": "category", "name": "round", "nameLocation": "middle", "nameGap": 30, "data": rounds},
		"yAxis":  valueAxis(yName, logAxis(all), nil),
		"series": series,
	})
	return c, err
}

// ptsTracked names the tracking variables.
func ptsTracked(p *summary.PTSReport) string {
	s := ""
	for i, tr := range p.Tracking {
		if i > 0 {
			s += "; "
		}
		s += tr.String()
	}
	return s
}
