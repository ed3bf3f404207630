package chart

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"iolab/bench"
	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/db"
)

// runView is one run as the charts see it: its steps in order and the
// values of the axes it does not sweep.
type runView struct {
	id    int64
	label string // "run 3"
	run   *db.Run
	plan  *sweep.Plan
	steps []sweep.StepResult // by Seq
	fixed map[sweep.Axis]string
}

func views(runs []Run) []*runView {
	out := make([]*runView, len(runs))
	for i := range runs {
		out[i] = newRunView(&runs[i])
	}
	return out
}

func newRunView(rd *Run) *runView {
	r := &runView{
		id:    rd.Run.ID,
		label: "run " + strconv.FormatInt(rd.Run.ID, 10),
		run:   &rd.Run,
		plan:  &rd.Run.Plan,
		steps: slices.Clone(rd.Steps),
		fixed: map[sweep.Axis]string{},
	}
	slices.SortStableFunc(r.steps, func(a, b sweep.StepResult) int { return cmp.Compare(a.Step.Seq, b.Step.Seq) })

	// An axis the plan does not sweep has the base job's value in every
	// step.
	for _, spec := range sweep.Axes() {
		if v := rd.JobValue(spec.Name); v != "" {
			r.fixed[spec.Name] = v
		}
	}
	if len(r.steps) > 0 {
		// Without a scheduler sweep the disks keep theirs: what the first
		// step read back.
		s := &r.steps[0]
		scheds := []string{}
		if s.Step.Scheduler != "" {
			scheds = append(scheds, s.Step.Scheduler)
		}
		for _, disk := range slices.Sorted(maps.Keys(s.Schedulers)) {
			if v := s.Schedulers[disk]; v != "" && !slices.Contains(scheds, v) {
				scheds = append(scheds, v)
			}
		}
		r.fixed[sweep.AxisScheduler] = strings.Join(scheds, "+")
	}
	return r
}

func (r *runView) sweeps(a sweep.Axis) bool {
	return slices.ContainsFunc(r.plan.Sweeps, func(s sweep.Sweep) bool { return s.Axis == a })
}

// value is a's value among axes (a step's or a summary cell's), or the
// run's fixed value when the run does not sweep a.
func (r *runView) value(axes []sweep.AxisValue, a sweep.Axis) string {
	for _, v := range axes {
		if v.Axis == a {
			return v.Value
		}
	}
	return r.fixed[a]
}

// rank orders a's values as the run's sweep lists them; values it does not
// list come last.
func (r *runView) rank(a sweep.Axis, v string) int {
	for _, s := range r.plan.Sweeps {
		if s.Axis == a {
			if i := slices.Index(s.Values, v); i >= 0 {
				return i
			}
		}
	}
	return math.MaxInt
}

// jobNames are the distinct job names of a step: from the plan's base
// jobs, else from the first step's configuration or result.
func (r *runView) jobNames() []string {
	var names []string
	add := func(n string) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, j := range r.plan.Base.Jobs {
		add(j.Name)
	}
	for i := 0; len(names) == 0 && i < len(r.steps); i++ {
		for _, j := range r.steps[i].Step.Config.Jobs {
			add(j.Name)
		}
		if res := r.steps[i].Result; len(names) == 0 && res != nil {
			for _, g := range res.Groups {
				for k := range g.Jobs {
					add(g.Jobs[k].Name)
				}
			}
		}
	}
	return names
}

// describeRuns is a subtitle naming the runs.
func describeRuns(runs []*runView) string {
	if len(runs) == 1 {
		r := runs[0]
		parts := []string{r.label}
		if r.run.Name != "" {
			parts = append(parts, strconv.Quote(r.run.Name))
		}
		if r.run.Hostname != "" {
			host := "on " + r.run.Hostname
			if r.run.Kernel != "" {
				host += " (" + r.run.Kernel + ")"
			}
			parts = append(parts, host)
		}
		return strings.Join(parts, " ")
	}
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = strconv.FormatInt(r.id, 10)
	}
	return "runs " + strings.Join(ids, ", ")
}

// axesText writes a step's axis values as a sweep does: iodepth=4
// ioengine=libaio.
func axesText(axes []sweep.AxisValue) string {
	parts := make([]string, len(axes))
	for i, a := range axes {
		parts[i] = string(a.Axis) + "=" + a.Value
	}
	return strings.Join(parts, " ")
}

// done reports whether a step counts in the numbers, by the summaries'
// rule (summary.StepStatus).
func done(st *sweep.StepResult) bool { return summary.StepStatus(st) == sweep.StepDone }

// dirSteps returns steps with every job's other direction emptied, so
// that bench's summaries, which add reads and writes, count direction d
// alone; d < 0 returns steps as they are. The copies leave the histograms
// out: the summaries do not read them.
func dirSteps(steps []sweep.StepResult, d int) []sweep.StepResult {
	if d < 0 {
		return steps
	}
	out := slices.Clone(steps)
	for i := range out {
		src := out[i].Result
		if src == nil {
			continue
		}
		res := &bench.Result{Start: src.Start, Groups: make([]bench.GroupResult, len(src.Groups))}
		for g := range src.Groups {
			sg := &src.Groups[g]
			res.Groups[g] = bench.GroupResult{ID: sg.ID, Reporting: sg.Reporting, Jobs: make([]bench.JobResult, len(sg.Jobs))}
			for k := range sg.Jobs {
				j, c := &sg.Jobs[k], &res.Groups[g].Jobs[k]
				c.Name, c.GroupID, c.Error, c.Runtime, c.Jobs = j.Name, j.GroupID, j.Error, j.Runtime, j.Jobs
				c.Dirs[d].IOs, c.Dirs[d].Bytes = j.Dirs[d].IOs, j.Dirs[d].Bytes
				c.Dirs[d].Lat.Stat = j.Dirs[d].Lat.Stat
			}
		}
		out[i].Result = res
	}
	return out
}
