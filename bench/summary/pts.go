package summary

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/pts"
	"iolab/bench/sweep"
)

// PTSPercentiles are the response-time percentiles the PTS report gives
// of each element (PTS-E 1.1 §9: "five nines"), from fio's lat histogram.
var PTSPercentiles = []float64{99.99, 99.999}

// PTSFigures are one element's figures in one round, its jobs (a
// numjobs's clones) together: pts.Figures (what the tracking variables
// read), plus what the report's tables give.
type PTSFigures struct {
	pts.Figures
	// MaxLat is the largest lat (submission to completion) of either
	// direction, ns; P9999 and P99999 the lat histogram's 99.99th and
	// 99.999th percentiles over both directions, ns (0: no I/O).
	MaxLat        uint64
	P9999, P99999 uint64
	// Written is the bytes the element wrote; Start and End its step's.
	Written    uint64
	Start, End time.Time
	// Lat is the lat histogram over both directions (DIRTH's
	// response-time histogram).
	Lat Bins
}

// TotalIOPS and TotalBW are reads and writes together.
func (f *PTSFigures) TotalIOPS() float64 { return f.IOPS[bench.Read] + f.IOPS[bench.Write] }
func (f *PTSFigures) TotalBW() float64   { return f.BW[bench.Read] + f.BW[bench.Write] }

// MeanLat is the lat mean over both directions, ns (0: no I/O).
func (f *PTSFigures) MeanLat() float64 {
	v, _ := f.Metric(pts.MetricMeanLat)
	return v
}

// PTSElementFigures are a step's figures as a PTS element: its jobs'
// rates added, their lat statistics and histograms merged.
func PTSElementFigures(s *StepView) PTSFigures {
	f := PTSFigures{Start: s.Start, End: s.End}
	if s.Result == nil {
		return f
	}
	var lat hist.Lat
	for _, g := range s.Result.Groups {
		for k := range g.Jobs {
			j := &g.Jobs[k]
			var jf pts.Figures
			for d := range 2 {
				jf.IOPS[d], jf.BW[d] = j.IOPS(d), j.BW(d)
				jf.LatN[d], jf.LatMean[d] = j.Dirs[d].Lat.Stat.N, j.Dirs[d].Lat.Stat.Mean
				j.Dirs[d].Lat.AddTo(&lat)
			}
			f.Figures.Add(jf)
			f.Written += j.Dirs[bench.Write].Bytes
		}
	}
	if lat.Stat.N > 0 {
		f.MaxLat = lat.Stat.Max
		p := lat.Hist.Percentiles(PTSPercentiles)
		f.P9999, f.P99999 = p[0], p[1]
		f.Lat = BinsOf(&lat.Hist)
	}
	return f
}

// PTSElement is one element of a PTS test's matrix: its axis values.
type PTSElement struct {
	// Values are the element's value of each axis, by option name.
	Values map[string]string
	// Label names it: "rwmixread=65 bs=4k" ("base" for a test without
	// a matrix).
	Label string
}

// PTSRound is one round: each element's figures, in the matrix's order
// (Figures[i] is PTSReport.Elements[i]'s; Done[i] false when its step
// did not finish).
type PTSRound struct {
	Round   int // 0-based
	Figures []PTSFigures
	Done    []bool
}

// PTSWindowFigures are one element's measurement: its figures over the
// steady-state window's rounds — rates, mean and percentiles averaged
// over the rounds, MaxLat the largest.
type PTSWindowFigures struct {
	IOPS, BW      [2]float64
	MeanLat       float64
	MaxLat        uint64
	P9999, P99999 float64
	Rounds        int // the window's rounds the element finished
}

// WSATPoint is one round of write saturation: its IOPS, when it ended
// (since the first round's start) and the bytes written by then.
type WSATPoint struct {
	Round   int
	IOPS    float64
	Elapsed time.Duration
	Written uint64
}

// DIRTHPoint is one point of demand intensity: its jobs × depth and its
// window's figures, with the lat histogram merged over the window's
// rounds.
type DIRTHPoint struct {
	NumJobs, IODepth int
	Window           PTSWindowFigures
	Lat              Bins
}

// OIO is the point's outstanding I/O, jobs × depth.
func (p *DIRTHPoint) OIO() int { return p.NumJobs * p.IODepth }

// PTSReport is a PTS run as its report reads it: the test, what was
// scaled down, the purge and preconditioning, every round's elements,
// the steady-state rule on the tracking variables, and each element's
// measurement over the window.
type PTSReport struct {
	Spec     pts.Spec
	Test     *pts.Test
	Matrix   []pts.Axis
	Tracking []pts.Tracking
	// NumJobs and IODepth are the outstanding I/O the test ran at.
	NumJobs, IODepth int
	// Prep is the purge and preconditioning, as the first step recorded
	// it; nil when it was not recorded.
	Prep *sweep.Prep
	// Scaled is what the run set below the specification (Spec.Scaled).
	Scaled   []string
	Elements []PTSElement
	Rounds   []PTSRound
	// Series are the tracking variables per round, Outcome the rule on
	// them (the zero Outcome for WSAT): as sweep.Plan.PTSOutcome judges
	// the same steps.
	Series  [][]float64
	Outcome pts.Outcome
	// Window is each element's measurement over the window's rounds
	// (Window[i] is Elements[i]'s); WindowFirst and WindowLast the rounds
	// (0-based). None for WSAT.
	Window                  []PTSWindowFigures
	WindowFirst, WindowLast int
	// WSAT are write saturation's rounds; DIRTH demand intensity's
	// points, in the matrix's order.
	WSAT  []WSATPoint
	DIRTH []DIRTHPoint
}

// PTSReportOf reads a PTS run's steps; nil when the plan is not a PTS
// test.
func PTSReportOf(plan *sweep.Plan, steps []StepView) *PTSReport {
	if plan.PTS == nil {
		return nil
	}
	t, err := pts.Lookup(plan.PTS.Test)
	if err != nil {
		return nil
	}
	r := &PTSReport{Spec: *plan.PTS, Test: t, Matrix: plan.PTS.Matrix(t), Tracking: plan.PTS.Tracking(t)}
	r.NumJobs, r.IODepth = plan.PTS.OIO(t)
	for i := range steps {
		if steps[i].Prep != nil {
			r.Prep = steps[i].Prep
			break
		}
	}
	var capacity int64
	if r.Prep != nil {
		capacity = r.Prep.Capacity
	}
	r.Scaled = plan.PTS.Scaled(t, capacity)
	r.Elements = ptsElements(r.Matrix)
	for i := range steps {
		s := &steps[i]
		e := r.element(s.Step.Axes)
		if e < 0 {
			continue
		}
		for len(r.Rounds) <= s.Step.Repeat {
			n := len(r.Rounds)
			r.Rounds = append(r.Rounds, PTSRound{Round: n, Figures: make([]PTSFigures, len(r.Elements)), Done: make([]bool, len(r.Elements))})
		}
		round := &r.Rounds[s.Step.Repeat]
		round.Figures[e] = PTSElementFigures(s)
		round.Done[e] = s.Status == sweep.StepDone && s.Result != nil
	}
	if t.Saturate {
		r.WSAT = r.wsat()
		return r
	}
	r.Series = r.series()
	r.Outcome = pts.Assess(r.Series)
	if len(r.Outcome.Windows) > 0 && len(r.Outcome.Windows[0].Values) > 0 {
		w := r.Outcome.Windows[0]
		r.WindowFirst, r.WindowLast = w.First, w.First+len(w.Values)-1
		r.Window = make([]PTSWindowFigures, len(r.Elements))
		for e := range r.Elements {
			r.Window[e] = r.windowFigures(e)
		}
	}
	if slices.ContainsFunc(r.Matrix, func(a pts.Axis) bool { return a.Option == "numjobs" }) {
		r.DIRTH = r.dirth()
	}
	return r
}

// ptsElements are the matrix's elements, the first axis's values
// outermost, as the plan's steps come.
func ptsElements(matrix []pts.Axis) []PTSElement {
	out := []PTSElement{{Values: map[string]string{}}}
	for _, a := range matrix {
		var next []PTSElement
		for _, e := range out {
			for _, v := range a.Values {
				m := maps.Clone(e.Values)
				m[a.Option] = v
				next = append(next, PTSElement{Values: m})
			}
		}
		out = next
	}
	for i := range out {
		var parts []string
		for _, a := range matrix {
			parts = append(parts, a.Option+"="+out[i].Values[a.Option])
		}
		out[i].Label = strings.Join(parts, " ")
		if out[i].Label == "" {
			out[i].Label = "base"
		}
	}
	return out
}

// element is the index of the element a step's axes name; -1 for none.
func (r *PTSReport) element(axes []sweep.AxisValue) int {
	vals := make(map[string]string, len(axes))
	for _, av := range axes {
		vals[string(av.Axis)] = av.Value
	}
	return slices.IndexFunc(r.Elements, func(e PTSElement) bool { return maps.Equal(e.Values, vals) })
}

// Element is the index of the element with the given axis values; -1
// for none.
func (r *PTSReport) Element(values map[string]string) int {
	return slices.IndexFunc(r.Elements, func(e PTSElement) bool { return maps.Equal(e.Values, values) })
}

// series is each tracking variable per round, up to the first round
// missing one: sweep.Plan.PTSSeries's rule, on the views.
func (r *PTSReport) series() [][]float64 {
	out := make([][]float64, len(r.Tracking))
	for _, round := range r.Rounds {
		row := make([]float64, len(r.Tracking))
		for k, tr := range r.Tracking {
			for e, el := range r.Elements {
				if !tr.Matches(el.Values) || !round.Done[e] {
					continue
				}
				if v, ok := round.Figures[e].Metric(tr.Metric); ok {
					row[k] = v
				}
			}
			if row[k] <= 0 {
				return out
			}
		}
		for k, v := range row {
			out[k] = append(out[k], v)
		}
	}
	return out
}

// windowFigures is element e's measurement over the window's rounds.
func (r *PTSReport) windowFigures(e int) PTSWindowFigures {
	var w PTSWindowFigures
	for round := r.WindowFirst; round <= r.WindowLast && round < len(r.Rounds); round++ {
		if !r.Rounds[round].Done[e] {
			continue
		}
		f := &r.Rounds[round].Figures[e]
		w.Rounds++
		for d := range 2 {
			w.IOPS[d] += f.IOPS[d]
			w.BW[d] += f.BW[d]
		}
		w.MeanLat += f.MeanLat()
		w.P9999 += float64(f.P9999)
		w.P99999 += float64(f.P99999)
		w.MaxLat = max(w.MaxLat, f.MaxLat)
	}
	if w.Rounds == 0 {
		return w
	}
	n := float64(w.Rounds)
	for d := range 2 {
		w.IOPS[d] /= n
		w.BW[d] /= n
	}
	w.MeanLat /= n
	w.P9999 /= n
	w.P99999 /= n
	return w
}

// TotalIOPS and TotalBW are the window's reads and writes together.
func (w *PTSWindowFigures) TotalIOPS() float64 { return w.IOPS[0] + w.IOPS[1] }
func (w *PTSWindowFigures) TotalBW() float64   { return w.BW[0] + w.BW[1] }

// wsat is each round's IOPS against time and bytes written, the rounds
// in order until the first that did not finish.
func (r *PTSReport) wsat() []WSATPoint {
	var out []WSATPoint
	var written uint64
	var start time.Time
	for _, round := range r.Rounds {
		if len(round.Done) == 0 || !round.Done[0] {
			break
		}
		f := &round.Figures[0]
		if start.IsZero() {
			start = f.Start
		}
		written += f.Written
		out = append(out, WSATPoint{Round: round.Round, IOPS: f.TotalIOPS(), Elapsed: f.End.Sub(start), Written: written})
	}
	return out
}

// dirth is each point's window figures and its lat histogram over the
// window's rounds.
func (r *PTSReport) dirth() []DIRTHPoint {
	out := make([]DIRTHPoint, len(r.Elements))
	for e, el := range r.Elements {
		p := DIRTHPoint{Window: r.Window[e]}
		p.NumJobs, _ = strconv.Atoi(el.Values["numjobs"])
		p.IODepth, _ = strconv.Atoi(el.Values["iodepth"])
		if p.NumJobs == 0 {
			p.NumJobs = r.NumJobs
		}
		if p.IODepth == 0 {
			p.IODepth = r.IODepth
		}
		var h hist.Histogram
		for round := r.WindowFirst; round <= r.WindowLast && round < len(r.Rounds); round++ {
			if r.Rounds[round].Done[e] {
				r.Rounds[round].Figures[e].Lat.AddTo(&h)
			}
		}
		p.Lat = BinsOf(&h)
		out[e] = p
	}
	return out
}
