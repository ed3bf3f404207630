package summary

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/stats"
	"iolab/bench/sweep"
	"iolab/bench/units"
)

// DiffMetric is one figure the statistical diff compares, per point and
// job, over the repeats.
type DiffMetric struct {
	Name string // "IOPS", "bandwidth", "clat p50", "lat p99"
	// Unit is what CSV columns of the figure are in: "IOPS", "MiB/s", "µs".
	Unit string
	// Lower: a lower value is better (latency).
	Lower bool
	// P is the percentile for a latency metric, 0 for a rate.
	P float64
	// Lat is the latency kind of a latency metric: the diff's, or
	// LatIntended on the rows of paced steps.
	Lat LatKind
	// value is the figure of one job in one repeat (JobFigures, as Lat),
	// in Unit.
	value func(*JobFigures) float64
}

// DiffMetrics are the figures the diff compares: each repeat's IOPS and
// bandwidth, and its p50 and p99 of latency kind k (clat for "") from
// that repeat's own histogram (so a percentile's spread over repeats is
// the spread of the repeats, not of one merged histogram).
func DiffMetrics(k LatKind) []DiffMetric {
	k = cmp.Or(k, LatClat)
	name := k.Name()
	us := func(p float64) func(*JobFigures) float64 {
		return func(j *JobFigures) float64 {
			if p == 50 {
				return float64(j.P50) / 1e3
			}
			return float64(j.P99) / 1e3
		}
	}
	return []DiffMetric{
		{Name: "IOPS", Unit: "IOPS", value: func(j *JobFigures) float64 { return j.IOPS }},
		{Name: "bandwidth", Unit: "MiB/s", value: func(j *JobFigures) float64 { return j.BWMiB }},
		{Name: name + " p50", Unit: "µs", Lower: true, P: 50, Lat: k, value: us(50)},
		{Name: name + " p99", Unit: "µs", Lower: true, P: 99, Lat: k, value: us(99)},
	}
}

// intendedMetrics are DiffMetrics' latency rows from the intended start,
// which the rows of paced steps compare in place of the diff's kind.
func intendedMetrics() []DiffMetric { return DiffMetrics(LatIntended)[2:] }

// DiffConf is the confidence level of the diff's intervals and tests.
const DiffConf = 0.95

// DiffSide is one side of a comparison: a run's steps, or the steps of
// one value of a swept axis.
type DiffSide struct {
	Label string // "run 3", "scheduler=bfq"
	Plan  *sweep.Plan
	Steps []sweep.StepResult
	// Summary are the steps as summaries, in place of Steps (a long
	// run's steps whole are hundreds of MB).
	Summary []StepView
	// Host is the machine the side ran on ("" when it does not matter):
	// sides of different hosts are compared on lat.
	Host string
	// Lat is the latency the diff compares (the first side's counts); ""
	// leaves it to LatKindOf — lat when the sides compare engines or
	// hosts, clat otherwise — except at the points whose steps were all
	// paced, which compare the latency from the intended start, as the
	// QoS curve plots them (Diff.Intended).
	Lat LatKind
}

// summaries are the side's steps as summaries.
func (s *DiffSide) summaries() []StepView {
	if s.Summary != nil || s.Steps == nil {
		return s.Summary
	}
	return StepViews(s.Steps)
}

// Repeats are one side's repeats of a figure at one point, for one job.
type Repeats struct {
	Values []float64 // one per done repeat that did I/O
	// Failed and Cancelled count the repeats that carry no figures.
	Failed, Cancelled int
	// Disturbed counts the done repeats another process's I/O disturbed.
	Disturbed int
	// Unreliable counts the repeats whose percentile rests on too few
	// I/Os (hist.Reliable); Saturated those whose job's thread was busy
	// enough that iolab may have been the bottleneck.
	Unreliable, Saturated int
}

// Median is the median of the values; NaN for none.
func (r *Repeats) Median() float64 {
	if len(r.Values) == 0 {
		return math.NaN()
	}
	return stats.Median(r.Values)
}

// Noisy reports whether the repeats disagree by more than stats.NoisyCV.
func (r *Repeats) Noisy() bool { return stats.CV(r.Values) > stats.NoisyCV }

// DiffRow is one figure of one job at one point, on both sides.
type DiffRow struct {
	// Point is the value of each of the diff's axes (Diff.Axes).
	Point []sweep.AxisValue
	Job   string
	// ALabel and BLabel name the sides, for the flags.
	ALabel, BLabel string
	Metric         DiffMetric
	A, B           Repeats
	// Cmp is B against A: the change of the figure, its interval and
	// the verdict (stats.Compare).
	Cmp stats.Comparison
	// Holds: the difference is still significant when every row of the
	// diff is taken together (stats.Holm): unlikely to be one of the
	// one-in-twenty a table of points shows by chance.
	Holds bool
}

// Verdict is what the row lets one say, for people: "significant",
// "no significant difference", "too few repeats to tell", or why there
// is nothing to compare.
func (r *DiffRow) Verdict() string {
	// A block-layer part has values only where the step was traced.
	none := "no done repeat"
	if r.Metric.Lat.Block() {
		none = "no traced repeat"
	}
	switch {
	case len(r.A.Values) == 0 && len(r.B.Values) == 0:
		return none + " on either side"
	case len(r.A.Values) == 0:
		return none + " in the base"
	case len(r.B.Values) == 0:
		return none
	}
	return string(r.Cmp.Verdict)
}

// Better reports whether a significant change is for the better: more
// IOPS, or less latency. Meaningless unless the row is significant.
func (r *DiffRow) Better() bool { return (r.Cmp.Rel > 0) != r.Metric.Lower }

// TooFewText says why a row cannot tell and what would. The exact test
// can give no p below 2/C(m+n, m) (0.1 for 3 vs 3), reached only when no
// repeat of one side reaches the other, so when the sides are apart it
// says how many repeats a side would make a difference this clear
// significant: "n=3 vs 3 cannot reach 95 %; the sides do not overlap:
// with 4 a side (or 5 against 3) a difference this clear would be
// significant"; when they overlap, that this is the least and more are
// needed. "" when the row can tell.
func (r *DiffRow) TooFewText() string {
	na, nb := len(r.A.Values), len(r.B.Values)
	if r.Cmp.Verdict != stats.TooFew || na == 0 || nb == 0 {
		return ""
	}
	each := stats.RepeatsEach(r.Cmp.Conf)
	need := fmt.Sprintf("%d a side", each)
	if small := min(na, nb); small < each {
		if n := stats.RepeatsNeeded(small, r.Cmp.Conf); n > 0 {
			need += fmt.Sprintf(" (or %d against %d)", n, small)
		}
	}
	text := fmt.Sprintf("n=%d vs %d cannot reach %g %%", na, nb, 100*r.Cmp.Conf)
	if apart(r.A.Values, r.B.Values) {
		return text + "; the sides do not overlap: with " + need + " a difference this clear would be significant"
	}
	return text + "; the sides overlap: " + need + " at the least, more the more they overlap"
}

// apart reports whether every value of one set lies below every value of
// the other.
func apart(a, b []float64) bool {
	return slices.Max(a) < slices.Min(b) || slices.Max(b) < slices.Min(a)
}

// Flags are what the row must be read with: noisy repeats, percentiles
// from too few I/Os, disturbed, failed or saturated repeats.
func (r *DiffRow) Flags() []string {
	var out []string
	for _, s := range []struct {
		side string
		rep  *Repeats
	}{{r.ALabel, &r.A}, {r.BLabel, &r.B}} {
		prefix := units.Printable(s.side) + ": "
		rep := s.rep
		if rep.Noisy() {
			out = append(out, fmt.Sprintf("%snoisy (CV %.0f %%)", prefix, 100*stats.CV(rep.Values)))
		}
		if rep.Unreliable > 0 {
			out = append(out, fmt.Sprintf("%s%s from too few I/Os in %d of %d repeats (needs %d)", prefix, r.Metric.Name, rep.Unreliable,
				len(rep.Values), hist.ReliableN(r.Metric.P)))
		}
		if rep.Disturbed > 0 {
			out = append(out, fmt.Sprintf("%s%d disturbed", prefix, rep.Disturbed))
		}
		if rep.Failed > 0 {
			out = append(out, fmt.Sprintf("%s%d failed", prefix, rep.Failed))
		}
		if rep.Cancelled > 0 {
			out = append(out, fmt.Sprintf("%s%d cancelled", prefix, rep.Cancelled))
		}
		if rep.Saturated > 0 {
			out = append(out, fmt.Sprintf("%s%d saturated", prefix, rep.Saturated))
		}
	}
	return out
}

// Diff is the statistical comparison of two sides, point by point and
// job by job: each figure's change from A (the base) to B with its
// confidence interval from the repeats, and whether it is more than
// noise.
type Diff struct {
	A, B string // the sides' labels
	// Axes are the axes that say which point a row is: those either side
	// sweeps, less the one compared within a run.
	Axes []sweep.Axis
	Conf float64
	// Lat is the latency kind of the latency rows, but for the Intended
	// points'.
	Lat LatKind
	// Intended counts the points (and jobs) whose latency rows compare
	// the latency from the intended start: with no kind asked for, those
	// whose repeats were all paced (rate, rate_iops) on both sides.
	// Mixed are those where some were and some were not, compared on Lat.
	Intended int
	Mixed    []string
	Rows     []DiffRow
	// OnlyA and OnlyB are the points (and jobs) one side has and the
	// other does not, as "iodepth=4 job=reader".
	OnlyA, OnlyB []string
}

// Significant counts the rows significant at the diff's level, and
// those that hold when every row is taken together (DiffRow.Holds).
func (d *Diff) Significant() (points, holding int) {
	for i := range d.Rows {
		if d.Rows[i].Cmp.Verdict == stats.Significant {
			points++
			if d.Rows[i].Holds {
				holding++
			}
		}
	}
	return points, holding
}

// Tested counts the rows that could tell (DiffRow.tested).
func (d *Diff) Tested() int {
	n := 0
	for i := range d.Rows {
		if d.Rows[i].tested() {
			n++
		}
	}
	return n
}

// tested reports whether the row could tell: neither side without
// values, nor too few repeats.
func (r *DiffRow) tested() bool {
	return len(r.A.Values) > 0 && len(r.B.Values) > 0 && r.Cmp.Verdict != stats.TooFew
}

// Summary says in one sentence what the diff found and how much of it
// chance alone would give.
func (d *Diff) Summary() string {
	tested := d.Tested()
	if tested == 0 {
		if len(d.Rows) == 0 {
			return "nothing to compare: the two sides have no point in common"
		}
		return "too few repeats to tell anything apart"
	}
	points, holding := d.Significant()
	chance := float64(tested) * (1 - d.Conf)
	s := fmt.Sprintf("%d of %d comparisons differ at %g %% (chance alone would make about %.1g of them seem to)", points, tested, 100*d.Conf, chance)
	switch {
	case points == 0:
		s = fmt.Sprintf("no significant difference in any of %d comparisons at %g %%", tested, 100*d.Conf)
	case holding == points:
		s += fmt.Sprintf("; all %d still do when the %d are taken together (Holm)", holding, tested)
	case holding > 0:
		s += fmt.Sprintf("; %d still do when the %d are taken together (Holm)", holding, tested)
	default:
		s += fmt.Sprintf("; none does when the %d are taken together (Holm): more repeats would tell whether they are chance", tested)
	}
	return s
}

// DiffRuns compares run b against run a (the base): points are matched
// by the values of the axes either run sweeps (an axis a run does not
// sweep has its job's value there), jobs by name — or, when every step
// of both runs has one job, as that one job.
func DiffRuns(a, b DiffSide, conf float64) *Diff {
	var axes []sweep.Axis
	for _, p := range []*sweep.Plan{a.Plan, b.Plan} {
		for _, s := range p.Swept() {
			if !slices.Contains(axes, s.Axis) {
				axes = append(axes, s.Axis)
			}
		}
	}
	return diffSides(a, b, axes, conf)
}

// DiffAxis compares, within one run, each value of a swept axis against
// base: one Diff per other value, in the sweep's order. Points are
// matched by the run's other swept axes.
func DiffAxis(plan *sweep.Plan, steps []sweep.StepResult, axis sweep.Axis, base string, conf float64) ([]*Diff, error) {
	return DiffAxisOf(plan, StepViews(steps), axis, base, conf)
}

// DiffAxisOf is DiffAxis of summaries.
func DiffAxisOf(plan *sweep.Plan, steps []StepView, axis sweep.Axis, base string, conf float64) ([]*Diff, error) {
	return diffAxisOf(DiffSide{Plan: plan, Summary: steps}, axis, base, conf)
}

// diffAxisOf is DiffAxisOf of one side's steps, compared on the side's
// latency kind.
func diffAxisOf(one DiffSide, axis sweep.Axis, base string, conf float64) ([]*Diff, error) {
	plan, steps := one.Plan, one.summaries()
	i := slices.IndexFunc(plan.Swept(), func(s sweep.Sweep) bool { return s.Axis == axis })
	if i < 0 {
		return nil, fmt.Errorf("the run does not sweep %s", axis)
	}
	values := plan.Swept()[i].Values
	if !slices.Contains(values, base) {
		return nil, fmt.Errorf("%s=%s is not among the run's values (%s)", axis, base, strings.Join(values, ", "))
	}
	var axes []sweep.Axis
	for _, s := range plan.Swept() {
		if s.Axis != axis {
			axes = append(axes, s.Axis)
		}
	}
	side := func(v string) DiffSide {
		s := DiffSide{Label: axisLabel(axis, v), Plan: plan, Host: one.Host, Lat: one.Lat}
		for k := range steps {
			if steps[k].Step.Value(axis) == v {
				s.Summary = append(s.Summary, steps[k])
			}
		}
		return s
	}
	a := side(base)
	var out []*Diff
	var seen []string
	for _, v := range values {
		if v == base || slices.Contains(seen, v) {
			continue
		}
		seen = append(seen, v)
		out = append(out, diffSides(a, side(v), axes, conf))
	}
	return out, nil
}

// axisLabel names a value of an axis: "bfq" for the axes whose values
// name themselves (sweep.AxisSpec.Bare), else "bs=4k".
func axisLabel(a sweep.Axis, v string) string {
	if spec, ok := sweep.LookupAxis(a); ok {
		return spec.Label(v)
	}
	return string(a) + "=" + v
}

// diffPoint is one point and job on both sides.
type diffPoint struct {
	point []sweep.AxisValue
	job   string
	ranks []int
	order int
	side  [2][]*Repeats // by metric
	seen  [2]bool
}

func diffSides(a, b DiffSide, axes []sweep.Axis, conf float64) *Diff {
	steps := [2][]StepView{a.summaries(), b.summaries()}
	lat := LatKindOf(a.Lat, []*sweep.Plan{a.Plan, b.Plan}, steps[:], a.Host, b.Host)
	d := &Diff{A: a.Label, B: b.Label, Axes: axes, Conf: conf, Lat: lat}
	metrics := DiffMetrics(lat)
	if a.Lat == "" {
		metrics = append(metrics, intendedMetrics()...)
	}
	c := &diffPoints{
		axes:    axes,
		lat:     lat,
		metrics: metrics,
		ranks:   sweepRanks(diffSweeps(a.Plan, b.Plan, axes), slices.Concat(steps[0], steps[1])),
		single:  oneJobPerStep(a.Plan, steps[0]) && oneJobPerStep(b.Plan, steps[1]),
		points:  map[string]*diffPoint{},
	}
	for si, side := range []DiffSide{a, b} {
		for k := range steps[si] {
			c.addStep(si, side.Plan, &steps[si][k])
		}
	}
	for _, p := range c.sorted() {
		if !p.seen[0] || !p.seen[1] {
			name := pointName(p.point, p.job)
			if p.seen[0] {
				d.OnlyA = append(d.OnlyA, name)
			} else {
				d.OnlyB = append(d.OnlyB, name)
			}
			continue
		}
		ms := pointMetrics(p, len(c.metrics) > len(DiffMetrics(lat)))
		switch {
		case ms[2] >= 4:
			d.Intended++
		case p.somePaced():
			d.Mixed = append(d.Mixed, pointName(p.point, p.job))
		}
		for _, m := range ms {
			metric := c.metrics[m]
			row := DiffRow{Point: p.point, Job: p.job, ALabel: a.Label, BLabel: b.Label, Metric: metric, A: *p.side[0][m], B: *p.side[1][m]}
			row.Cmp = stats.Compare(row.A.Values, row.B.Values, conf)
			d.Rows = append(d.Rows, row)
		}
	}
	d.holm()
	return d
}

// pointMetrics are the indexes in diffPoints.metrics of the rows point p
// shows: IOPS, bandwidth, then the latency from the intended start when
// intended was gathered and every repeat of both sides has it (each was
// paced), else the diff's kind.
func pointMetrics(p *diffPoint, intended bool) []int {
	if intended && p.allPaced() {
		return []int{0, 1, 4, 5}
	}
	return []int{0, 1, 2, 3}
}

// allPaced reports whether every repeat with latency figures, on both
// sides, has them from the intended start too.
func (p *diffPoint) allPaced() bool {
	for s := range p.side {
		if len(p.side[s]) < 6 || len(p.side[s][4].Values) == 0 || len(p.side[s][4].Values) != len(p.side[s][2].Values) {
			return false
		}
	}
	return true
}

// somePaced reports whether some repeat of either side was paced.
func (p *diffPoint) somePaced() bool {
	for s := range p.side {
		if len(p.side[s]) >= 6 && len(p.side[s][4].Values) > 0 {
			return true
		}
	}
	return false
}

// LatText says which latency the latency rows compare: "clat"; with
// paced steps, "lat from intended start (the steps were paced: …)", or
// where only some points were paced, which and the kind of the others.
func (d *Diff) LatText() string {
	text := d.Lat.Title()
	if d.Intended > 0 {
		text = LatIntended.Title() + " (the steps were paced: as the QoS curve plots them)"
		if rest := d.points() - d.Intended; rest > 0 {
			text = fmt.Sprintf("%s where both sides' steps were paced, as the QoS curve plots them (%d of %d points and jobs), %s elsewhere", LatIntended.Title(), d.Intended, d.Intended+rest, d.Lat.Title())
		}
	}
	if len(d.Mixed) > 0 {
		text += fmt.Sprintf("; %s paced only some of their repeats, so compared on %s", strings.Join(d.Mixed, ", "), d.Lat.Title())
	}
	return text
}

// Kind is the latency kind of every latency row: LatIntended when each
// point compared the latency from the intended start, else Lat (which
// the rows of unpaced points compare).
func (d *Diff) Kind() LatKind {
	if d.Intended > 0 && d.Intended == d.points() {
		return LatIntended
	}
	return d.Lat
}

// points counts the points (and jobs) of the rows.
func (d *Diff) points() int {
	n := 0
	for i := range d.Rows {
		if i == 0 || d.Rows[i].Job != d.Rows[i-1].Job || !slices.Equal(d.Rows[i].Point, d.Rows[i-1].Point) {
			n++
		}
	}
	return n
}

// diffSweeps are the sweeps of either plan over axes, each axis once
// (a's first): what orders the points.
func diffSweeps(a, b *sweep.Plan, axes []sweep.Axis) []sweep.Sweep {
	var sweeps []sweep.Sweep
	for _, p := range []*sweep.Plan{a, b} {
		for _, s := range p.Swept() {
			if slices.Contains(axes, s.Axis) && !slices.ContainsFunc(sweeps, func(x sweep.Sweep) bool { return x.Axis == s.Axis }) {
				sweeps = append(sweeps, s)
			}
		}
	}
	return sweeps
}

// diffPoints gathers the repeats of both sides by point (the values of
// axes) and job: with one job a step on both sides (single), the jobs
// are one, whatever their names.
type diffPoints struct {
	axes     []sweep.Axis
	lat      LatKind
	metrics  []DiffMetric
	ranks    valueRanks
	single   bool
	points   map[string]*diffPoint
	jobOrder []string
}

// addStep adds step st of side si (run by plan) to each of its jobs'
// points: a repeat of each metric, or a failed or cancelled one.
func (c *diffPoints) addStep(si int, plan *sweep.Plan, st *StepView) {
	status, _ := stepOutcome(st)
	disturbed := status == sweep.StepDone && st.Disturbed() != ""
	var figs map[string]*JobFigures
	if status == sweep.StepDone {
		f := FiguresOfStep(st).As(c.lat)
		figs = map[string]*JobFigures{}
		for i := range f.Jobs {
			if !f.Jobs[i].Total {
				figs[f.Jobs[i].Name] = &f.Jobs[i]
			}
		}
	}
	for _, sj := range stepJobs(plan, st) {
		p := c.point(st, sj)
		p.seen[si] = true
		for m, metric := range c.metrics {
			rep := p.side[si][m]
			switch status {
			case sweep.StepFailed:
				rep.Failed++
				continue
			case sweep.StepCancelled:
				rep.Cancelled++
				continue
			}
			j := figs[sj.name]
			if j != nil && metric.Lat != c.lat && metric.P > 0 {
				as := j.As(metric.Lat)
				j = &as
			}
			if j == nil || (metric.P > 0 && j.IOs == 0) {
				continue // the step has no figures of this job (or of this latency)
			}
			rep.Values = append(rep.Values, metric.value(j))
			if disturbed {
				rep.Disturbed++
			}
			if metric.P > 0 && !j.Reliable(metric.P) {
				rep.Unreliable++
			}
			if j.Saturated {
				rep.Saturated++
			}
		}
	}
}

// point is the point of job sj of step st, made the first time it is
// seen.
func (c *diffPoints) point(st *StepView, sj stepJob) *diffPoint {
	job := sj.name
	if c.single {
		job = ""
	}
	if !slices.Contains(c.jobOrder, job) {
		c.jobOrder = append(c.jobOrder, job)
	}
	point := make([]sweep.AxisValue, len(c.axes))
	vals := make([]string, len(c.axes))
	for i, ax := range c.axes {
		point[i] = sweep.AxisValue{Axis: ax, Value: stepValue(st, sj.job, ax)}
		vals[i] = point[i].Value
	}
	key := strings.Join(vals, "\x00") + "\x01" + job
	p := c.points[key]
	if p == nil {
		p = &diffPoint{point: point, job: job, ranks: c.ranks.ranks(point), order: len(c.points)}
		if c.single {
			p.job = sj.name
		}
		for s := range p.side {
			p.side[s] = make([]*Repeats, len(c.metrics))
			for m := range c.metrics {
				p.side[s][m] = &Repeats{}
			}
		}
		c.points[key] = p
	}
	return p
}

// sorted are the points in the sweeps' order, then the jobs' as first
// seen, then as the points were first seen.
func (c *diffPoints) sorted() []*diffPoint {
	list := slices.Collect(maps.Values(c.points))
	slices.SortFunc(list, func(x, y *diffPoint) int {
		if o := slices.Compare(x.ranks, y.ranks); o != 0 {
			return o
		}
		if o := cmp.Compare(slices.Index(c.jobOrder, x.job), slices.Index(c.jobOrder, y.job)); o != 0 {
			return o
		}
		return cmp.Compare(x.order, y.order)
	})
	return list
}

// holm marks the rows whose difference holds when the rows that could
// tell are taken together (stats.Holm). A job's bandwidth at one block
// size is its IOPS times that size: the same test, counted once.
func (d *Diff) holm() {
	var ps []float64
	var idx [][]int
	for i := range d.Rows {
		r := &d.Rows[i]
		if !r.tested() {
			continue
		}
		if k := len(idx) - 1; k >= 0 && sameTest(&d.Rows[idx[k][0]], r) {
			idx[k] = append(idx[k], i)
			continue
		}
		ps = append(ps, r.Cmp.P)
		idx = append(idx, []int{i})
	}
	for k, holds := range stats.Holm(ps, 1-d.Conf) {
		for _, i := range idx[k] {
			d.Rows[i].Holds = holds && d.Rows[i].Cmp.Verdict == stats.Significant
		}
	}
}

// sameTest reports whether y repeats x's test: the same point and job,
// and values proportional repeat by repeat (bandwidth and IOPS at one
// block size).
func sameTest(x, y *DiffRow) bool {
	if x.Job != y.Job || !slices.Equal(x.Point, y.Point) || len(x.A.Values) != len(y.A.Values) || len(x.B.Values) != len(y.B.Values) {
		return false
	}
	if x.Metric.P > 0 || y.Metric.P > 0 || x.A.Values[0] == 0 {
		return false
	}
	f := y.A.Values[0] / x.A.Values[0]
	prop := func(a, b []float64) bool {
		for i := range a {
			if math.Abs(b[i]-f*a[i]) > 1e-9*math.Abs(b[i]) {
				return false
			}
		}
		return true
	}
	return prop(x.A.Values, y.A.Values) && prop(x.B.Values, y.B.Values)
}

// oneJobPerStep reports whether every step of the side runs (or was to
// run) at most one job.
func oneJobPerStep(plan *sweep.Plan, steps []StepView) bool {
	for i := range steps {
		if len(stepJobs(plan, &steps[i])) > 1 {
			return false
		}
	}
	return true
}

// stepValue is axis a's value in a step for one of its jobs: the step's
// own when the run sweeps a; else, for the scheduler, what the step ran
// under; else the job's option (the writer's iodepth 16, the reader's 1).
func stepValue(st *StepView, job *bench.Job, a sweep.Axis) string {
	if v := st.Step.Value(a); v != "" {
		return v
	}
	spec, ok := sweep.LookupAxis(a)
	if !ok {
		return ""
	}
	if spec.Step {
		if st.Step.Scheduler != "" {
			return st.Step.Scheduler
		}
		var scheds []string
		for _, disk := range slices.Sorted(maps.Keys(st.Schedulers)) {
			if v := st.Schedulers[disk]; v != "" && !slices.Contains(scheds, v) {
				scheds = append(scheds, v)
			}
		}
		return strings.Join(scheds, "+")
	}
	if job == nil {
		return ""
	}
	if v := spec.Value(job); v != "0" {
		return v
	}
	return ""
}

// pointName writes a point and job for people: "iodepth=4 job reader".
func pointName(point []sweep.AxisValue, job string) string {
	var parts []string
	for _, v := range point {
		parts = append(parts, string(v.Axis)+"="+v.Value)
	}
	if job != "" {
		parts = append(parts, "job "+job)
	}
	if len(parts) == 0 {
		return "the run"
	}
	return strings.Join(parts, " ")
}

// DiffAxes are the axes of a run whose values can be compared with each
// other (DiffAxis): those it sweeps that are not drawn along an x axis
// (engine, scheduler, rw, option axes) nor the load of a QoS curve
// (rate_iops: 50 % of the maximum against the maximum tells nothing the
// curve does not), in its sweep order.
func DiffAxes(plan *sweep.Plan) []sweep.Axis {
	var out []sweep.Axis
	for _, s := range plan.Swept() {
		if spec, ok := sweep.LookupAxis(s.Axis); ok && !spec.Numeric && !spec.Load {
			out = append(out, s.Axis)
		}
	}
	return out
}

// CompareSides is what `iolab compare`, the compare page and the reports
// show: with two or more sides, each after the first against the first
// (DiffRuns); with one, the values of its swept axis (default: the first
// of DiffAxes) against base (default: the axis's first value).
func CompareSides(sides []DiffSide, axis sweep.Axis, base string, conf float64) ([]*Diff, error) {
	switch {
	case len(sides) == 0:
		return nil, fmt.Errorf("nothing to compare")
	case len(sides) > 1:
		if axis != "" || base != "" {
			return nil, fmt.Errorf("an axis and its base value compare the values within one run; give one run")
		}
		out := make([]*Diff, 0, len(sides)-1)
		for _, s := range sides[1:] {
			out = append(out, DiffRuns(sides[0], s, conf))
		}
		return out, nil
	}
	one := sides[0]
	if axis == "" {
		axes := DiffAxes(one.Plan)
		if len(axes) == 0 {
			if load := QoSLoadAxis(one.Plan); load == sweep.AxisRateIOPS {
				return nil, fmt.Errorf("%s sweeps no engine, scheduler or other axis whose values could be compared (its %s values are the load of its QoS curve, which the curve shows); give two runs", one.Label, load)
			}
			return nil, fmt.Errorf("%s sweeps no engine, scheduler or other axis whose values could be compared; give two runs", one.Label)
		}
		axis = axes[0]
	}
	if base == "" {
		for _, s := range one.Plan.Swept() {
			if s.Axis == axis && len(s.Values) > 0 {
				base = s.Values[0]
			}
		}
	}
	diffs, err := diffAxisOf(one, axis, base, conf)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", one.Label, err)
	}
	return diffs, nil
}
