package summary

import (
	"slices"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/sweep"
)

// TotalName labels the row that adds up a step's jobs, in tables and
// CSV: there is one only when the jobs are alike (alikeJobs).
const TotalName = "total"

// stepJob is one job of a step as the summaries report it: the job's
// clones (numjobs) added up under its name, or, with group_reporting, its
// group's one merged result.
type stepJob struct {
	name  string
	job   *bench.Job // the options it ran with; nil when the step does not say
	group int        // its reporting group: jobs in different groups do not run together
	// results are the job's results in the step (its clones'); none when
	// the step did not run or did not finish.
	results []*JobView
}

// stepJobs lists the jobs of a step, in order: the jobs its config (else
// the plan's base) was to run, each with its results, then any result
// that names a job the config does not (its options unknown).
func stepJobs(plan *sweep.Plan, r *StepView) []stepJob {
	var out []stepJob
	add := func(name string, job *bench.Job, group int) *stepJob {
		k := slices.IndexFunc(out, func(s stepJob) bool { return s.name == name })
		if k < 0 {
			out = append(out, stepJob{name: name, job: job, group: group})
			k = len(out) - 1
		}
		if out[k].job == nil {
			out[k].job = job
		}
		return &out[k]
	}
	cfg := &r.Step.Config
	if len(cfg.Jobs) == 0 && len(cfg.Groups) == 0 && plan != nil {
		cfg = &plan.Base
	}
	for _, g := range cfg.Groups {
		for i := range g.Jobs {
			if !g.JoinsEntry(i) { // an entry reports as its first job (bench.ReportEntries)
				add(g.Jobs[i].Name, &g.Jobs[i], g.ID)
			}
		}
	}
	if len(cfg.Groups) == 0 {
		for i := range cfg.Jobs {
			add(cfg.Jobs[i].Name, &cfg.Jobs[i], 0)
		}
	}
	if r.Result != nil {
		for _, g := range r.Result.Groups {
			for i := range g.Jobs {
				// Not the result's own Job: pages do not read it
				// (db.StepLoad), and what they show must not depend on it.
				res := &g.Jobs[i]
				j := add(res.Name, nil, g.ID)
				j.results = append(j.results, res)
			}
		}
	}
	return out
}

// alikeJobs reports whether a step's jobs may be added up: there are
// several, and they all do the same kind of I/O (one rw and bs) at the
// same time (in one group). Adding a 1 MiB writer to a 4 KiB reader gives
// a number that describes neither.
func alikeJobs(jobs []stepJob) bool {
	if len(jobs) < 2 {
		return false
	}
	first := jobs[0]
	for _, j := range jobs {
		if j.job == nil || first.job == nil || j.job.RW == "" ||
			j.job.RW != first.job.RW || j.job.BS != first.job.BS || j.group != first.group {
			return false
		}
	}
	return true
}

// jobNumbers are what a job (or the total of alike jobs) did in one
// step, over both directions.
type jobNumbers struct {
	iops, bw float64
	lat      float64 // mean total latency (fio's lat), ns, over the I/Os of both directions
	ios      uint64
}

// numbersOf adds up results.
func numbersOf(results []*JobView) jobNumbers {
	var n jobNumbers
	var lat hist.LatStat
	for _, r := range results {
		for d := range r.Dirs {
			n.iops += r.IOPS(d)
			n.bw += r.BW(d)
			n.ios += r.Dirs[d].IOs
			lat.Merge(&r.Dirs[d].Lat.Stat)
		}
	}
	n.lat = lat.Mean
	return n
}

// allResults are the results of every job of a step.
func allResults(jobs []stepJob) []*JobView {
	var out []*JobView
	for _, j := range jobs {
		out = append(out, j.results...)
	}
	return out
}
