package chart

import (
	"slices"

	"iolab/bench/sweep"
)

// sweptFirst puts first the kinds that answer what the runs sweep
// (KindSpec.answers: scaling a numjobs sweep, fairness a scheduler
// sweep, QoS a rate_iops sweep, IOPS an iodepth sweep), in the order the
// first run's plan sweeps their axes; the rest keep the table's order.
// A reader opens a numjobs sweep on its scaling chart, not on IOPS by an
// iodepth that never changed. A kind that leads (a PTS test's plots)
// comes before them all.
func sweptFirst(kinds []KindSpec, runs []*runView) []KindSpec {
	if len(runs) == 0 {
		return kinds
	}
	rank := func(k KindSpec) int {
		if k.leads {
			return -1
		}
		if k.answers == "" || !every(runs, func(r *runView) bool { return r.sweeps(k.answers) }) {
			return len(runs[0].plan.Sweeps) // after every swept axis
		}
		return slices.IndexFunc(runs[0].plan.Sweeps, func(s sweep.Sweep) bool { return s.Axis == k.answers })
	}
	out := slices.Clone(kinds)
	slices.SortStableFunc(out, func(a, b KindSpec) int { return rank(a) - rank(b) })
	return out
}

// loadX is the x axis of a chart whose query may choose it and did not,
// when the runs do not sweep the kind's default (iodepth): the first
// Numeric or Load axis every run sweeps (numjobs, rate_iops). By iodepth such
// runs have one x value, every swept value a series of its own with one
// point. A run that sweeps no Numeric axis keeps iodepth, and its
// builders draw the one x value as bars of its series (oneX).
func loadX(spec KindSpec, x sweep.Axis, runs []*runView) sweep.Axis {
	if spec.xParam != xChosen || len(runs) == 0 || slices.ContainsFunc(runs, func(r *runView) bool { return r.sweeps(x) }) {
		return x
	}
	for _, s := range runs[0].plan.Swept() {
		if a, ok := sweep.LookupAxis(s.Axis); ok && (a.Numeric || a.Load) && every(runs, func(r *runView) bool { return r.sweeps(s.Axis) }) {
			return s.Axis
		}
	}
	return x
}
