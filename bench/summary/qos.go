package summary

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/stats"
	"iolab/bench/sweep"
	"iolab/bench/units"
)

// QoSCurve is one job's latency against the IOPS it achieved, under one
// combination of the plan's other axes (engine, scheduler, …): a point
// per value of the load axis — rate_iops (the QoS curve) or iodepth (one
// point per iodepth). The knee is the highest achieved IOPS whose latency
// at the SLO's percentile stays under its limit.
type QoSCurve struct {
	Job      string            `json:"job"`
	Axes     []sweep.AxisValue `json:"axes"` // the other axes
	LoadAxis sweep.Axis        `json:"load_axis"`
	SLO      sweep.SLO         `json:"slo"`
	Points   []QoSPoint        `json:"points"` // by achieved IOPS
	// Knee indexes Points: the point that is the knee; -1 when no point
	// meets the SLO (with enough I/Os to tell).
	Knee int `json:"knee"`
}

// QoSPoint is one load value of a curve, over its done repeats.
type QoSPoint struct {
	Load string `json:"load"` // the load axis's value: max, 10%, 16
	// IOPS is the achieved IOPS (reads and writes) over the repeats;
	// Asked is the rate the step asked for (rate_iops, both directions;
	// 0 without a rate).
	IOPS  stats.Spread `json:"iops"`
	Asked float64      `json:"asked_iops,omitempty"`
	// Latency says which latency the percentiles are of: bench.LatIntended
	// (paced), else the kind QoSCurvesAs was given: fio's "clat", "lat"
	// or "slat" (unpaced, closed loop). From the histogram of every
	// repeat's I/Os, both directions.
	Latency string `json:"latency"`
	IOs     uint64 `json:"ios"`
	P50     uint64 `json:"p50_ns"`
	P99     uint64 `json:"p99_ns"`
	P999    uint64 `json:"p99_9_ns"`
	PSLO    uint64 `json:"p_slo_ns"` // at the SLO's percentile
	// Meets says the point's PSLO is under the SLO and backed by enough
	// I/Os (hist.Reliable).
	Meets bool `json:"meets_slo"`
	// Held says the step achieved the rate it asked for within
	// RateHeld (always true without a rate): a step that fell behind
	// never issued the I/Os it owed, and their latency is missing from
	// its figures, so it cannot be the knee.
	Held    bool `json:"held_rate"`
	Repeats int  `json:"repeats"`
	// LatencyDepth is the queue depth a latency_target search ended at,
	// over the repeats whose job used one (min and max; 0: none did).
	LatencyDepth    int `json:"latency_depth,omitempty"`
	LatencyDepthMax int `json:"latency_depth_max,omitempty"`
	// LatencyBound says a search ended below the job's iodepth: the
	// target, not the queue, limited the load.
	LatencyBound bool `json:"latency_bound,omitempty"`
}

// RateHeld is how far below its asked rate a step may achieve and still
// count as holding it: 1 %.
const RateHeld = 0.01

// kneeCandidate reports whether the point may be the knee: it meets the SLO and
// held its rate, and on a rate_iops curve it was paced (the probe's
// closed-loop latency hides the stalls a paced point shows).
func (p *QoSPoint) kneeCandidate(load sweep.Axis) bool {
	return p.Meets && p.Held && (load != sweep.AxisRateIOPS || p.Latency == bench.LatIntended)
}

// KneePoint is the curve's knee, or nil.
func (c *QoSCurve) KneePoint() *QoSPoint {
	if c.Knee < 0 {
		return nil
	}
	return &c.Points[c.Knee]
}

// Name labels the curve in legends: the job, then the other axes.
func (c *QoSCurve) Name(withJob bool) string {
	var parts []string
	if withJob {
		parts = append(parts, c.Job)
	}
	for _, av := range c.Axes {
		if spec, ok := sweep.LookupAxis(av.Axis); ok {
			parts = append(parts, spec.Label(av.Value))
		}
	}
	if len(parts) == 0 {
		return c.Job
	}
	return strings.Join(parts, " ")
}

// QoSLoadAxis is the axis a plan's QoS view puts load on: rate_iops when
// it sweeps it, else iodepth; "" when it sweeps neither.
func QoSLoadAxis(plan *sweep.Plan) sweep.Axis {
	for _, a := range []sweep.Axis{sweep.AxisRateIOPS, sweep.AxisIODepth} {
		if plan.SweepsAxis(a) {
			return a
		}
	}
	return ""
}

// PlanSLO is the plan's objective, or sweep.DefaultSLO.
func PlanSLO(plan *sweep.Plan) sweep.SLO {
	if plan != nil && plan.SLO != nil {
		return *plan.SLO
	}
	return sweep.DefaultSLO
}

// QoSCurves builds a run's curves, in the order of the plan's other
// axes' values and then of the jobs; nil when the plan sweeps no load
// axis. Failed steps have no figures and add no point.
func QoSCurves(plan *sweep.Plan, results []sweep.StepResult) []QoSCurve {
	return QoSCurvesOf(plan, StepViews(results))
}

// QoSCurvesOf is QoSCurves of StepViews.
func QoSCurvesOf(plan *sweep.Plan, results []StepView) []QoSCurve {
	return QoSCurvesAs(plan, results, LatClat)
}

// QoSCurvesAs is QoSCurvesOf with the unpaced points' latency of kind k
// (lat when engines are compared): a paced point's latency is from each
// I/O's intended start whatever k is, since that is what pacing measures.
func QoSCurvesAs(plan *sweep.Plan, results []StepView, k LatKind) []QoSCurve {
	load := QoSLoadAxis(plan)
	if load == "" {
		return nil
	}
	slo := PlanSLO(plan)
	var others []sweep.Sweep
	for _, s := range plan.Swept() {
		if s.Axis != load {
			others = append(others, s)
		}
	}
	var curves []QoSCurve
	for _, g := range groupSteps(others, results) {
		type acc struct {
			iops  []float64
			asked float64
			h     hist.Lat
			lat   string
			depth [2]int // latency_target's found depths: min, max
			bound bool   // and one was below the job's iodepth
		}
		byJob := map[string]map[string]*acc{}
		var jobs []string
		for _, st := range g.steps {
			if st.Status != sweep.StepDone || st.Result == nil {
				continue
			}
			v := st.Step.Value(load)
			for _, sj := range stepJobs(plan, st) {
				if len(sj.results) == 0 {
					continue
				}
				if byJob[sj.name] == nil {
					byJob[sj.name] = map[string]*acc{}
					jobs = append(jobs, sj.name)
				}
				a := byJob[sj.name][v]
				if a == nil {
					a = &acc{}
					byJob[sj.name][v] = a
				}
				var iops float64
				for _, r := range sj.results {
					var bound bool
					a.depth, bound = latencyDepths(a.depth, sj.job, r)
					a.bound = a.bound || bound
					for d := range 2 {
						iops += r.IOPS(d)
						if r.Dirs[d].IOs == 0 {
							continue
						}
						l, name := loadLat(r, d, k)
						l.AddTo(&a.h)
						if a.lat == "" || a.lat == name {
							a.lat = name
						} else {
							a.lat = "mixed"
						}
					}
				}
				a.iops = append(a.iops, iops)
				if sj.job != nil {
					a.asked = float64(sj.job.RateIOPS[bench.Read]+sj.job.RateIOPS[bench.Write]) * float64(max(len(sj.results), 1))
				}
			}
		}
		for _, job := range jobs {
			c := QoSCurve{Job: job, Axes: g.axes, LoadAxis: load, SLO: slo, Knee: -1}
			for v, a := range byJob[job] {
				p := QoSPoint{Load: v, IOPS: stats.SpreadOf(a.iops), Asked: a.asked, Latency: a.lat, IOs: a.h.Stat.N, Repeats: len(a.iops),
					LatencyDepth: a.depth[0], LatencyDepthMax: a.depth[1], LatencyBound: a.bound}
				if p.IOs > 0 {
					pc := a.h.Percentiles([]float64{50, 99, 99.9, slo.Percentile})
					p.P50, p.P99, p.P999, p.PSLO = pc[0], pc[1], pc[2], pc[3]
					p.Meets = p.PSLO < uint64(slo.Max) && hist.Reliable(slo.Percentile, p.IOs)
				}
				p.Held = p.Asked == 0 || p.IOPS.Median >= p.Asked*(1-RateHeld)
				c.Points = append(c.Points, p)
			}
			slices.SortFunc(c.Points, func(a, b QoSPoint) int {
				return cmp.Or(cmp.Compare(a.IOPS.Median, b.IOPS.Median), strings.Compare(a.Load, b.Load))
			})
			for i, p := range c.Points {
				if p.kneeCandidate(load) && (c.Knee < 0 || p.IOPS.Median > c.Points[c.Knee].IOPS.Median) {
					c.Knee = i
				}
			}
			curves = append(curves, c)
		}
	}
	return curves
}

// loadLat is the latency a QoS point is drawn with for direction d: from
// the intended start when the direction was paced, else of kind k (fio's
// clat, as fio's percentiles, unless engines are compared).
func loadLat(r *JobView, d int, k LatKind) (*LatView, string) {
	if r.Paced(d) || k == "" {
		return r.HeadlineLat(d)
	}
	return k.Of(&r.Dirs[d]), k.Name()
}

// writeQoSTables prints each curve: a row per point by achieved IOPS,
// what its marks mean, and its knee under the SLO. An iodepth sweep gets
// them only when the plan names an SLO (--slo); a rate_iops sweep always.
func writeQoSTables(b *strings.Builder, plan *sweep.Plan, results []sweep.StepResult) {
	if !plan.SweepsAxis(sweep.AxisRateIOPS) && plan.SLO == nil {
		return
	}
	curves := QoSCurves(plan, results)
	if len(curves) == 0 {
		return
	}
	many := len(curves) > 1
	for _, c := range curves {
		b.WriteString("\n")
		title := "Latency vs achieved IOPS"
		if many || c.Job != "" {
			title += " — " + c.Name(true)
		}
		fmt.Fprintf(b, "%s, a point per %s\n", title, c.LoadAxis)
		tw := newSummaryTable(b)
		t := NewQoSTable(&c)
		tw.row(t.Head...)
		for _, r := range t.Rows {
			tw.row(r...)
		}
		tw.flush()
		for _, m := range t.Legend {
			fmt.Fprintf(b, "%s   %s\n", m.Mark, m.Text)
		}
		b.WriteString(KneeText(&c) + "\n")
	}
}

// The marks of a QoS table's cells. Not the summary tables' ! (a
// disturbed repeat), which the same output may show above.
const (
	markShort    = "<"
	markFewAbove = "?"
)

// QoSTable is a curve's points as the summary tables and the reports
// write them: a header, then a row per point by achieved IOPS — the load,
// the rate asked and achieved, which latency, its p50, p99 and p99.9, and
// whether the point meets the SLO — and what the marks its cells carry
// mean.
type QoSTable struct {
	Head   []string
	Rows   [][]string
	Legend []QoSMark // for the marks used
}

// QoSMark is a mark a QoS table's cells may carry, and what it means.
type QoSMark struct{ Mark, Text string }

// NewQoSTable writes c's table.
func NewQoSTable(c *QoSCurve) QoSTable {
	t := QoSTable{Head: []string{string(c.LoadAxis), "asked", "achieved IOPS", "latency", "p50", "p99", "p99.9", c.SLO.String()}}
	var short, few bool
	for _, p := range c.Points {
		asked := "-"
		if p.Asked > 0 {
			asked = units.Count(p.Asked)
		}
		lat := func(v uint64, pct float64) string {
			if p.IOs == 0 {
				return "-"
			}
			s := units.Nanos(float64(v))
			if !hist.Reliable(pct, p.IOs) {
				s += markFewAbove
				few = true
			}
			return s
		}
		meets := "no"
		if p.Meets {
			meets = "yes"
		}
		achieved := units.Count(p.IOPS.Median)
		if !p.Held {
			achieved += markShort
			short = true
		}
		t.Rows = append(t.Rows, []string{p.Load, asked, achieved, latencyName(p.Latency), lat(p.P50, 50), lat(p.P99, 99), lat(p.P999, 99.9), meets})
	}
	if short {
		t.Legend = append(t.Legend, QoSMark{markShort, fmt.Sprintf("rate not held: more than %g %% short of the rate asked; its latency lacks the I/Os it owed, so it is no knee", 100*RateHeld)})
	}
	if few {
		t.Legend = append(t.Legend, QoSMark{markFewAbove, "fewer than ten I/Os above the percentile: too few to read it"})
	}
	return t
}

// KneeText says where the curve's knee is, or that there is none.
func KneeText(c *QoSCurve) string {
	k := c.KneePoint()
	if k == nil {
		return fmt.Sprintf("Knee at %s: none — no point meets it with enough I/Os at a rate it held", c.SLO)
	}
	return fmt.Sprintf("Knee at %s: %s IOPS (%s=%s, p%s %s, %s)", c.SLO, units.Count(k.IOPS.Median), c.LoadAxis, k.Load,
		strconv.FormatFloat(c.SLO.Percentile, 'f', -1, 64), units.Nanos(float64(k.PSLO)), latencyName(k.Latency))
}

// latencyName is a point's latency as tables name it.
func latencyName(l string) string {
	if l == bench.LatIntended {
		return "from intended start"
	}
	return l
}
