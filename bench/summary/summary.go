package summary

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"iolab/bench/stats"
	"iolab/bench/sweep"
)

// SummaryCell is one job of one combination of a plan's axis values,
// over its repeats. Results are per job: a background writer and a
// foreground reader in one step are two cells, never one sum.
type SummaryCell struct {
	// Axes are the combination, in the order of the plan's axes
	// (Plan.Swept); the repeat index is not an axis.
	Axes []sweep.AxisValue `json:"axes"`
	// Job names the job: its clones (numjobs) added up under its name, or
	// with group_reporting its group's merged result. It is "" in a Total
	// cell.
	Job string `json:"job,omitempty"`
	// Total cells add up the step's jobs, reads and writes. Summarize
	// makes one only when the jobs are alike: several, of one rw and bs,
	// running at the same time.
	Total bool `json:"total,omitempty"`
	// IOPS and BW (bytes/s) are over each done repeat, reads and writes
	// added; LatMean is the mean total latency (fio's lat, ns) over the
	// I/Os of both directions. Each Spread's CV says whether its median
	// can stand alone (Spread.Noisy).
	IOPS    stats.Spread `json:"iops"`
	BW      stats.Spread `json:"bw"`
	LatMean stats.Spread `json:"lat_mean_ns"`
	// Repeats counts the done repeats the figures summarise; failed and
	// cancelled ones are counted apart and left out of them.
	Repeats   int `json:"repeats"`
	Failed    int `json:"failed,omitempty"`
	Cancelled int `json:"cancelled,omitempty"`
	// Disturbed counts the done repeats during which another process did
	// I/O on the device (sweep.StepResult.Disturbed).
	Disturbed int `json:"disturbed,omitempty"`
	// Errors are the failed repeats' distinct errors, in step order.
	Errors []string `json:"errors,omitempty"`
}

// Name is the cell's label in tables: the job's name, or TotalName.
func (c *SummaryCell) Name() string {
	if c.Total {
		return TotalName
	}
	return c.Job
}

// ScalingStep is a SummaryCell of a plan that sweeps numjobs, with the
// growth the scaling write-up reports at each step.
type ScalingStep struct {
	SummaryCell
	// Growth is the change of the median IOPS from the previous numjobs
	// value (the job and the other axes alike), in percent; nil for the
	// first value or when either has no done repeat.
	Growth *float64 `json:"growth"`
}

// Summarize groups a run's step results by their axis values and
// summarises each job's repeats, in the order of the plan's sweep values
// and then of the jobs; after a combination's jobs comes their Total
// when they are alike. A failed or cancelled step counts against each
// job it was to run.
func Summarize(plan *sweep.Plan, results []sweep.StepResult) []SummaryCell {
	return SummarizeSteps(plan, StepViews(results))
}

// SummarizeSteps is Summarize of StepViews.
func SummarizeSteps(plan *sweep.Plan, results []StepView) []SummaryCell {
	// A step that says nothing of its jobs (it failed before it had a
	// config or a result) counts against the run's.
	var runJobs []stepJob
	for i := range results {
		for _, j := range stepJobs(plan, &results[i]) {
			if !slices.ContainsFunc(runJobs, func(r stepJob) bool { return r.name == j.name }) {
				runJobs = append(runJobs, stepJob{name: j.name, job: j.job, group: j.group})
			}
		}
	}
	if len(runJobs) == 0 {
		runJobs = []stepJob{{}}
	}
	var cells []SummaryCell
	for _, g := range groupSteps(plan.Swept(), results) {
		type repeats struct {
			iops, bw, lat     []float64
			failed, cancelled int
			disturbed         int
			errors            []string
		}
		var names []string
		jobs := map[string]*repeats{}
		var total *repeats
		for _, r := range g.steps {
			status, err := stepOutcome(r)
			sj := stepJobs(plan, r)
			if len(sj) == 0 {
				sj = runJobs
			}
			accs := make([]*repeats, 0, len(sj)+1)
			for _, j := range sj {
				if jobs[j.name] == nil {
					jobs[j.name] = &repeats{}
					names = append(names, j.name)
				}
				accs = append(accs, jobs[j.name])
			}
			alike := alikeJobs(sj)
			if alike && total == nil {
				total = &repeats{}
			}
			if alike {
				accs = append(accs, total)
			}
			disturbed := status == sweep.StepDone && r.Disturbed() != ""
			for i, a := range accs {
				switch status {
				case sweep.StepDone:
					var n jobNumbers
					if i < len(sj) {
						if len(sj[i].results) == 0 {
							continue // the step has nothing of this job to count
						}
						n = numbersOf(sj[i].results)
					} else {
						n = numbersOf(allResults(sj))
					}
					a.iops, a.bw, a.lat = append(a.iops, n.iops), append(a.bw, n.bw), append(a.lat, n.lat)
					if disturbed {
						a.disturbed++
					}
				case sweep.StepFailed:
					a.failed++
					a.errors = appendUnique(a.errors, err)
				default:
					a.cancelled++
				}
			}
		}
		cell := func(a *repeats) SummaryCell {
			return SummaryCell{Axes: g.axes,
				IOPS: stats.SpreadOf(a.iops), BW: stats.SpreadOf(a.bw), LatMean: stats.SpreadOf(a.lat),
				Repeats: len(a.iops), Failed: a.failed, Cancelled: a.cancelled, Disturbed: a.disturbed, Errors: a.errors}
		}
		for _, name := range names {
			c := cell(jobs[name])
			c.Job = name
			cells = append(cells, c)
		}
		if total != nil {
			c := cell(total)
			c.Total = true
			cells = append(cells, c)
		}
	}
	return cells
}

// SummarizeScaling is Summarize for a plan that sweeps numjobs, ordered by
// the other axes, then the job, then numjobs, with the growth from one
// numjobs value to the next of the same job. It returns nil when the plan
// does not sweep numjobs over more than one value.
func SummarizeScaling(plan *sweep.Plan, results []sweep.StepResult) []ScalingStep {
	return SummarizeScalingSteps(plan, StepViews(results))
}

// SummarizeScalingSteps is SummarizeScaling of StepViews.
func SummarizeScalingSteps(plan *sweep.Plan, results []StepView) []ScalingStep {
	sweeps := plan.Swept()
	nj := slices.IndexFunc(sweeps, func(s sweep.Sweep) bool { return s.Axis == sweep.AxisNumJobs })
	if nj < 0 {
		return nil
	}
	cells := SummarizeSteps(plan, results)
	// Summarize sorted by the sweep order; numjobs must vary fastest,
	// after the job.
	order := sweepRanks(sweeps, results)
	var names []string
	for _, c := range cells {
		if n := c.Name(); !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	key := func(c *SummaryCell) []int {
		r := order.ranks(c.Axes)
		n := r[nj]
		return append(slices.Delete(r, nj, nj+1), slices.Index(names, c.Name()), n)
	}
	slices.SortStableFunc(cells, func(a, b SummaryCell) int { return slices.Compare(key(&a), key(&b)) })
	steps := make([]ScalingStep, len(cells))
	for i, c := range cells {
		steps[i].SummaryCell = c
		if i == 0 {
			continue
		}
		prev := cells[i-1]
		if prev.Name() != c.Name() || !sameExcept(prev.Axes, c.Axes, sweep.AxisNumJobs) || prev.Repeats == 0 || c.Repeats == 0 || prev.IOPS.Median == 0 {
			continue
		}
		g := 100 * (c.IOPS.Median - prev.IOPS.Median) / prev.IOPS.Median
		steps[i].Growth = &g
	}
	return steps
}

// rowAxis is the axis a summary's rows follow: the first swept of the
// ones with an order to them (iodepth, numjobs, bs, rw), else the first
// swept, else none.
func rowAxis(sweeps []sweep.Sweep) sweep.Axis {
	for _, a := range []sweep.Axis{sweep.AxisIODepth, sweep.AxisNumJobs, sweep.AxisBS, sweep.AxisRW} {
		if slices.ContainsFunc(sweeps, func(s sweep.Sweep) bool { return s.Axis == a }) {
			return a
		}
	}
	if len(sweeps) > 0 {
		return sweeps[0].Axis
	}
	return ""
}

// stepGroup is the steps of one combination of axis values: its repeats.
type stepGroup struct {
	axes  []sweep.AxisValue
	steps []*StepView // in Seq order
}

// groupSteps groups results by their values on the sweeps' axes, ordered
// by each axis's value order in its sweep (values a sweep does not list
// come after, in the order they appear).
func groupSteps(sweeps []sweep.Sweep, results []StepView) []stepGroup {
	idx := make([]int, len(results))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(results[a].Step.Seq, results[b].Step.Seq) })
	var groups []stepGroup
	byKey := map[string]int{}
	for _, i := range idx {
		r := &results[i]
		axes := make([]sweep.AxisValue, len(sweeps))
		vals := make([]string, len(sweeps))
		for k, s := range sweeps {
			axes[k] = sweep.AxisValue{Axis: s.Axis, Value: r.Step.Value(s.Axis)}
			vals[k] = axes[k].Value
		}
		key := strings.Join(vals, "\x00")
		g, ok := byKey[key]
		if !ok {
			g = len(groups)
			byKey[key] = g
			groups = append(groups, stepGroup{axes: axes})
		}
		groups[g].steps = append(groups[g].steps, r)
	}
	order := sweepRanks(sweeps, results)
	slices.SortStableFunc(groups, func(a, b stepGroup) int {
		return slices.Compare(order.ranks(a.axes), order.ranks(b.axes))
	})
	return groups
}

// valueRanks orders each axis's values: as its sweep lists them, then
// the others in the order results show them.
type valueRanks map[sweep.Axis]map[string]int

func sweepRanksOf(sweeps []sweep.Sweep) valueRanks {
	r := valueRanks{}
	for _, s := range sweeps {
		r[s.Axis] = map[string]int{}
		for i, v := range s.Values {
			if _, dup := r[s.Axis][v]; !dup {
				r[s.Axis][v] = i
			}
		}
	}
	return r
}

func sweepRanks(sweeps []sweep.Sweep, results []StepView) valueRanks {
	r := sweepRanksOf(sweeps)
	for _, s := range sweeps {
		m := r[s.Axis]
		for i := range results {
			v := results[i].Step.Value(s.Axis)
			if _, ok := m[v]; !ok {
				m[v] = len(s.Values) + len(m)
			}
		}
	}
	return r
}

func (r valueRanks) ranks(axes []sweep.AxisValue) []int {
	out := make([]int, len(axes))
	for i, a := range axes {
		out[i] = r.rank(a.Axis, a.Value)
	}
	return out
}

func (r valueRanks) ranksOf(axes []sweep.Axis, vals []string) []int {
	out := make([]int, len(axes))
	for i, a := range axes {
		out[i] = r.rank(a, vals[i])
	}
	return out
}

func (r valueRanks) rank(a sweep.Axis, v string) int {
	if i, ok := r[a][v]; ok {
		return i
	}
	return math.MaxInt
}

func axisValueOf(axes []sweep.AxisValue, a sweep.Axis) string {
	for _, v := range axes {
		if v.Axis == a {
			return v.Value
		}
	}
	return ""
}

// sameExcept reports whether x and y agree on every axis but skip.
func sameExcept(x, y []sweep.AxisValue, skip sweep.Axis) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i].Axis != skip && x[i] != y[i] {
			return false
		}
	}
	return true
}

// StepStatus is a step's outcome as the summaries count it: sweep.StepDone,
// StepFailed (whatever its status says, when a job in it failed or it left
// no result) or StepCancelled. Charts and tables that leave failed steps
// out of their numbers ask it, so that they count what the summaries count.
func StepStatus(r *sweep.StepResult) string {
	if r.Result == nil || r.Status == sweep.StepCancelled || r.Status == sweep.StepFailed {
		status, _ := stepOutcome(&StepView{Status: r.Status, Error: r.Error})
		return status
	}
	for _, g := range r.Result.Groups {
		for i := range g.Jobs { // by index: a JobResult holds 136 kB of histograms
			if g.Jobs[i].Error != "" {
				return sweep.StepFailed
			}
		}
	}
	return sweep.StepDone
}

// StatusOf is StepStatus of a StepView.
func StatusOf(r *StepView) string {
	status, _ := stepOutcome(r)
	return status
}

// stepOutcome is a step's status for the summary and, when it failed, why. A
// step counts as failed when a job in it failed or it left no result,
// whatever its status says.
func stepOutcome(r *StepView) (status, err string) {
	switch r.Status {
	case sweep.StepCancelled:
		return sweep.StepCancelled, ""
	case sweep.StepFailed:
		if r.Error == "" {
			return sweep.StepFailed, "step failed without an error message"
		}
		return sweep.StepFailed, r.Error
	}
	if r.Result == nil {
		return sweep.StepFailed, "step left no result"
	}
	for _, g := range r.Result.Groups {
		for i := range g.Jobs {
			if j := &g.Jobs[i]; j.Error != "" {
				return sweep.StepFailed, j.Name + ": " + j.Error
			}
		}
	}
	return sweep.StepDone, ""
}

// appendUnique appends s to list unless it is there already.
func appendUnique(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
