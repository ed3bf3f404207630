package chart

import (
	"cmp"
	"strings"

	"iolab/bench/hist"
	"iolab/bench/summary"
	"iolab/bench/sweep"
)

// LatKind is the latency a latency chart draws: ?lat= in a chart's URL,
// the kinds the tables show (summary.LatKind: fio's lat, clat, slat).
type LatKind = summary.LatKind

// The latency kinds.
const (
	LatTotal = summary.LatTotal
	LatClat  = summary.LatClat
	LatSlat  = summary.LatSlat
)

// latKind is the latency kind q draws runs with: the query's, else lat
// when the runs compare engines or hosts — an engine's submission is part
// of what is compared — and clat otherwise, as fio's percentiles are;
// clat too when no step kept lat's histogram (summary.DefaultLat).
func latKind(q Query, runs []*runView) LatKind {
	if q.Lat != "" {
		return q.Lat
	}
	steps := make([][]summary.StepView, len(runs))
	for i, r := range runs {
		steps[i] = r.steps
	}
	return summary.DefaultLat(runsLatKind(runs), steps...)
}

// runsLatKind is lat when runs compare engines or hosts, else clat.
func runsLatKind(runs []*runView) LatKind {
	hosts := map[string]bool{}
	engines := map[string]bool{}
	for _, r := range runs {
		if r.sweeps(sweep.AxisEngine) {
			return LatTotal
		}
		hosts[cmp.Or(r.host, r.run.Hostname)] = true
		engines[r.value(nil, sweep.AxisEngine)] = true
	}
	if len(hosts) > 1 || len(engines) > 1 {
		return LatTotal
	}
	return LatClat
}

// latPicker offers the latency kinds, k chosen, and the block layer's
// parts when block (a run drawn was traced, or k is one).
func latPicker(k LatKind, block bool) Picker {
	p := Picker{Param: "lat", Label: "latency", Single: true}
	kinds := summary.LatKinds
	if block || k.Block() {
		kinds = append(kinds[:len(kinds):len(kinds)], summary.BlockKinds...)
	}
	for _, o := range kinds {
		p.Options = append(p.Options, PickerOption{Value: string(o), Label: o.Title(), On: o == k})
	}
	return p
}

// blockNote is what a chart of a block-layer part k says of runs: that
// the part is of the one-to-one I/Os, and which runs were not traced
// (drawn without it); "" for another kind.
func blockNote(k LatKind, runs []*runView) string {
	if !k.Block() {
		return ""
	}
	note := "timed I/Os (--trace-block)"
	var untraced []string
	for _, r := range runs {
		if !timeSplitAvailable([]*runView{r}) {
			untraced = append(untraced, r.name)
		}
	}
	if len(untraced) > 0 {
		note += "; not traced: " + strings.Join(untraced, ", ")
	}
	return note
}

// latOf merges the kind k histograms of the done steps' jobs in direction
// d (both when d < 0), the way fio's group_reporting merges a group.
func latOf(steps []summary.StepView, d int, k LatKind) (h *hist.Histogram, done, failed int) {
	h = new(hist.Histogram)
	for i := range steps {
		switch summary.StatusOf(&steps[i]) {
		case sweep.StepFailed:
			failed++
			continue
		case sweep.StepCancelled:
			continue
		}
		done++
		for _, g := range steps[i].Result.Groups {
			for j := range g.Jobs {
				for dd := range g.Jobs[j].Dirs {
					if d < 0 || d == dd {
						k.Of(&g.Jobs[j].Dirs[dd]).Hist.AddTo(h)
					}
				}
			}
		}
	}
	return h, done, failed
}
