package chart

import (
	"cmp"

	"iolab/bench/hist"
	"iolab/bench/summary"
	"iolab/bench/sweep"
)

// LatKind is the latency a latency chart draws: ?lat= in a chart's URL.
// The names are fio's: lat is from submission to completion, slat the
// submission alone, clat from submission's end to completion. An engine
// that submits synchronously (libaio's io_submit, psync) spends the
// I/O's time in slat, so clat alone compares engines unfairly.
type LatKind string

// The latency kinds.
const (
	LatTotal LatKind = "total" // fio's lat: from submission to completion
	LatClat  LatKind = "clat"  // fio's clat: completion latency
	LatSlat  LatKind = "slat"  // fio's slat: submission latency
)

// latKinds are the kinds in the order pickers offer them.
var latKinds = []LatKind{LatTotal, LatClat, LatSlat}

// Title is how subtitles and axes name the kind: "lat (from submission)".
func (k LatKind) Title() string {
	if k == LatTotal {
		return "lat (from submission)"
	}
	return string(k)
}

// column is the kind in a CSV's column names: lat, clat, slat, as fio's
// JSON names them.
func (k LatKind) column() string {
	if k == LatTotal {
		return "lat"
	}
	return string(k)
}

// of is the kind's latency among a direction's.
func (k LatKind) of(d *summary.DirView) *summary.LatView {
	switch k {
	case LatTotal:
		return &d.Lat
	case LatSlat:
		return &d.Slat
	}
	return &d.Clat
}

// latKind is the latency kind q draws runs with: the query's, else lat
// when the runs compare engines or hosts — an engine's submission is part
// of what is compared — and clat otherwise, as fio's percentiles are.
func latKind(q Query, runs []*runView) LatKind {
	if q.Lat != "" {
		return q.Lat
	}
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

// latPicker offers the latency kinds, k chosen.
func latPicker(k LatKind) Picker {
	p := Picker{Param: "lat", Label: "latency", Single: true}
	for _, o := range latKinds {
		p.Options = append(p.Options, PickerOption{Value: string(o), Label: o.Title(), On: o == k})
	}
	return p
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
				for dd := range 2 {
					if d < 0 || d == dd {
						k.of(&g.Jobs[j].Dirs[dd]).Hist.AddTo(h)
					}
				}
			}
		}
	}
	return h, done, failed
}
