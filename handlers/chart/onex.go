package chart

import (
	"cmp"
)

// oneXAxis is how a chart whose x axis has one value draws it: its
// series side by side on a category axis of their names, as bars (with
// whiskers, on the IOPS chart), not a lone dot or box each in a wide
// empty plot. A fairness run sweeps the scheduler at one iodepth: its
// IOPS chart reads IOPS by scheduler, at iodepth 1.
type oneXAxis struct {
	// name is what the categories are: the series axis ("scheduler"),
	// "run" comparing runs, "" for a lone series.
	name string
	// categories are the series' names, one each, in the series' order.
	categories []string
	// at is the one x value, as the title and legend write it:
	// "iodepth 1"; "" when no run has one.
	at string
	// color is the legend's swatch: the lone series' colour, else a
	// grey (the bars take each their series' colour; no one of them
	// speaks for all).
	color string
}

// oneX is how the grid draws its one x value, nil when it has several
// (or none).
func (g *grid) oneX(l *layout) *oneXAxis {
	if len(g.xs) != 1 || len(g.series) == 0 {
		return nil
	}
	one := &oneXAxis{color: g.series[0].color}
	if len(g.series) > 1 {
		one.color = "#777777"
	}
	if g.xs[0] != "" { // "": no run sets it (a job without iodepth, built by hand)
		one.at = string(l.x) + " " + g.xs[0]
	}
	if len(g.series) > 1 {
		switch {
		case len(l.group) > 0:
			one.name = string(l.group[0]) // the series axis, when there is one
		case l.compare:
			one.name = "run"
		}
	}
	for _, s := range g.series {
		one.categories = append(one.categories, cmp.Or(s.name, s.run.label, one.at))
	}
	return one
}

// title is a one-x chart's title: what it draws (IOPS), at the x value,
// else by what its categories are.
func (one *oneXAxis) title(what string) string {
	switch {
	case one.at != "":
		return what + " at " + one.at
	case one.name != "":
		return what + " by " + one.name
	}
	return what
}
