package chart

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/db"
)

// runView is one run as the charts see it: its steps in order and the
// values of the axes it does not sweep; for a kind that draws one job,
// that job's results alone (selectJob).
type runView struct {
	id    int64
	label string // "run 3"
	host  string // the fleet host of a group's run
	name  string // what legends of several runs call it (Names)
	src   *LoadedRun
	run   *db.Run
	plan  *sweep.Plan
	steps []summary.StepView // by Seq
	fixed map[sweep.Axis]string
	job   string // the job drawn; "" when the kind draws every job
	// ptsReport is a PTS run's report (pts), once read.
	ptsReport *summary.PTSReport
}

func views(runs []LoadedRun) []*runView {
	out := make([]*runView, len(runs))
	names := Names(runs)
	for i := range runs {
		out[i] = newRunView(&runs[i])
		out[i].name = names[i]
	}
	return out
}

// Names is what a legend or a table of several runs calls each: a
// group's run its fleet host (a group's page compares hosts, and "run 7"
// sends its reader to look up which host that was), with its run number
// when another of runs ran on the same host; any other run "run N".
func Names(runs []LoadedRun) []string {
	hosts := map[string]int{}
	for i := range runs {
		hosts[runs[i].Host]++
	}
	out := make([]string, len(runs))
	for i := range runs {
		id := "run " + strconv.FormatInt(runs[i].Run.ID, 10)
		switch h := runs[i].Host; {
		case h == "":
			out[i] = id
		case hosts[h] > 1:
			out[i] = h + " (" + id + ")"
		default:
			out[i] = h
		}
	}
	return out
}

func newRunView(rd *LoadedRun) *runView {
	r := &runView{
		id:    rd.Run.ID,
		label: "run " + strconv.FormatInt(rd.Run.ID, 10),
		host:  rd.Host,
		src:   rd,
		run:   &rd.Run,
		plan:  &rd.Run.Plan,
		steps: slices.Clone(rd.summaries()),
		fixed: map[sweep.Axis]string{},
	}
	slices.SortStableFunc(r.steps, func(a, b summary.StepView) int { return cmp.Compare(a.Step.Seq, b.Step.Seq) })

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

// selectJob makes the view draw one job of the run: name, or the run's
// DefaultJob for "". Its steps keep that job's results alone, and the
// axes the run does not sweep take that job's values (the reader's
// iodepth 1, not the writer's 16).
func (r *runView) selectJob(name string) error {
	names := r.src.Jobs()
	if name == "" {
		name = r.src.DefaultJob()
	} else if len(names) > 0 && !slices.Contains(names, name) {
		return queryError("job", "%s has no job %q; its jobs are %s", r.label, name, strings.Join(names, ", "))
	}
	if name == "" {
		return nil
	}
	r.job = name
	r.steps = onlyJob(r.steps, slices.Index(names, name), name)
	job := r.src.job(name)
	for _, spec := range sweep.Axes() {
		if spec.Step {
			continue
		}
		if v := jobValue(job, spec.Name); v != "" {
			r.fixed[spec.Name] = v
		} else {
			delete(r.fixed, spec.Name)
		}
	}
	return nil
}

// multiJob reports whether the run has more than one job, so that what
// a chart draws of it must say which.
func (r *runView) multiJob() bool { return len(r.src.Jobs()) > 1 }

// jobNamed is the index of the first of jobs from index from on named
// name, or -1. Not slices.IndexFunc: its func takes each job result by
// value, a copy of its six fixed-size histograms (~90 kB), which made
// this the run page's most costly line on a long run.
func jobNamed(jobs []summary.JobView, from int, name string) int {
	for k := from; k < len(jobs); k++ {
		if jobs[k].Name == name {
			return k
		}
	}
	return -1
}

// onlyJob returns steps whose results hold one job's alone: its clones,
// or its reporting group's merged result. The job is the run's job at
// position pos (LoadedRun.Jobs), which in each step is the step's job at that
// position: steps of an iolab sweep name it alike, but steps imported
// from fio carry fio's names, one per section (qd1, qd4, qd16). name is
// the job when pos is unknown. Clones sit side by side in their group,
// so the copies share the results' memory where they can.
func onlyJob(steps []summary.StepView, pos int, name string) []summary.StepView {
	out := slices.Clone(steps)
	for i := range out {
		src := out[i].Result
		if src == nil {
			continue
		}
		name := name
		if roles := configJobs(&out[i].Step.Config); pos >= 0 && pos < len(roles) {
			name = roles[pos]
		}
		res := &summary.ResultView{Start: src.Start, Groups: make([]summary.GroupView, 0, len(src.Groups))}
		for _, g := range src.Groups {
			first := jobNamed(g.Jobs, 0, name)
			if first < 0 {
				continue
			}
			last := first
			for last < len(g.Jobs) && g.Jobs[last].Name == name {
				last++
			}
			jobs := g.Jobs[first:last:last]
			if jobNamed(g.Jobs, last, name) >= 0 {
				jobs = nil
				for k := range g.Jobs {
					if g.Jobs[k].Name == name {
						jobs = append(jobs, g.Jobs[k])
					}
				}
			}
			g.Jobs = jobs
			res.Groups = append(res.Groups, g)
		}
		out[i].Result = res
	}
	return out
}

func (r *runView) sweeps(a sweep.Axis) bool { return r.plan.SweepsAxis(a) }

// value is a's value among axes (a step's or a summary cell's), or the
// run's fixed value when the run does not sweep a.
func (r *runView) value(axes []sweep.AxisValue, a sweep.Axis) string {
	for _, v := range axes {
		if v.Axis == a {
			return v.Value
		}
	}
	if v, ok := r.fixed[a]; ok {
		return v
	}
	// An option axis (sweep.OptionAxis) that another run sweeps: this
	// run's job has its value.
	return jobValue(r.src.job(r.job), a)
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

// describeRuns is a subtitle naming the runs, and the job drawn of those
// that have several.
func describeRuns(runs []*runView) string {
	var jobs []string
	for _, r := range runs {
		if r.job != "" && r.multiJob() && !slices.Contains(jobs, r.job) {
			jobs = append(jobs, r.job)
		}
	}
	text := describeRunsOnly(runs)
	switch len(jobs) {
	case 0:
	case 1:
		text += " · job " + jobs[0]
	default:
		text += " · jobs " + strings.Join(jobs, ", ")
	}
	return text
}

func describeRunsOnly(runs []*runView) string {
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

// jobCell is the drawn job's cell among the cells of steps the view has
// narrowed to that one job (selectJob): the cell, not a total, that counts
// any repeat (the plan's other jobs have cells with none). The job's name
// may differ from step to step (fio's sections), so the cell is not found
// by name.
func jobCell(cells []summary.SummaryCell) (summary.SummaryCell, bool) {
	var first *summary.SummaryCell
	for i := range cells {
		c := &cells[i]
		if c.Total {
			continue
		}
		if c.Repeats+c.Failed+c.Cancelled > 0 {
			return *c, true
		}
		if first == nil {
			first = c
		}
	}
	if first != nil {
		return *first, true
	}
	return summary.SummaryCell{}, false
}

// done reports whether a step counts in the numbers, by the summaries'
// rule (summary.StepStatus).
func done(st *summary.StepView) bool { return summary.StatusOf(st) == sweep.StepDone }

// dirSteps returns steps with every job's other direction emptied, so
// that bench's summaries, which add reads and writes, count direction d
// alone; d < 0 returns steps as they are. The copies leave the histograms
// out: the summaries do not read them.
func dirSteps(steps []summary.StepView, d int) []summary.StepView {
	if d < 0 {
		return steps
	}
	out := slices.Clone(steps)
	for i := range out {
		src := out[i].Result
		if src == nil {
			continue
		}
		res := &summary.ResultView{Start: src.Start, Groups: make([]summary.GroupView, len(src.Groups))}
		for g := range src.Groups {
			sg := &src.Groups[g]
			res.Groups[g] = summary.GroupView{ID: sg.ID, Reporting: sg.Reporting, Jobs: make([]summary.JobView, len(sg.Jobs))}
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
