package fio

import (
	"slices"
	"time"

	"iolab/bench"
)

// An import's steps. fio runs a job file as one program: its stonewalls
// separate what iolab runs as steps, its reporting groups what a step
// reports.

// isClone reports whether j is one more of numjobs copies of prev, the
// last job of a group holding jobs. As in fio, only the first copy
// starts a group (stonewall, new_group).
func isClone(prev, j *bench.Job, jobs []bench.Job) bool {
	placing := func(o bench.Option) bool {
		return o.Name == "stonewall" || o.Name == "wait_for_previous" || o.Name == "new_group"
	}
	if j.NumJobs < 2 || prev.Name != j.Name ||
		!slices.Equal(slices.DeleteFunc(slices.Clone(prev.Options), placing), slices.DeleteFunc(slices.Clone(j.Options), placing)) {
		return false
	}
	n := 0
	for k := range jobs {
		if jobs[k].Name == j.Name {
			n++
		}
	}
	return n%j.NumJobs != 0
}

// setStarts gives every job without a start time (fio before 3.34 prints
// none) one, and returns the run's start. fio prints the time the report
// was made, so the steps are laid back to back before it: a step (groups
// started beside each other, see Steps) lasts its longest job's ramp and
// runtime.
func setStarts(res *bench.Result, groups []bench.Group, timestampMS int64) time.Time {
	var start time.Time
	for _, g := range res.Groups {
		for _, j := range g.Jobs {
			if !j.Start.IsZero() && (start.IsZero() || j.Start.Before(start)) {
				start = j.Start
			}
		}
	}
	if !start.IsZero() || timestampMS <= 0 {
		for gi := range res.Groups {
			for j := range res.Groups[gi].Jobs {
				if res.Groups[gi].Jobs[j].Start.IsZero() {
					res.Groups[gi].Jobs[j].Start = start
				}
			}
		}
		return start
	}
	spans := stepSpans(groups)
	end := time.UnixMilli(timestampMS)
	for s := len(spans) - 1; s >= 0; s-- {
		var longest time.Duration
		for gi := spans[s][0]; gi < spans[s][1]; gi++ {
			for _, j := range res.Groups[gi].Jobs {
				longest = max(longest, j.Runtime+j.Job.RampTime)
			}
		}
		begin := end.Add(-longest)
		for gi := spans[s][0]; gi < spans[s][1]; gi++ {
			for j := range res.Groups[gi].Jobs {
				res.Groups[gi].Jobs[j].Start = begin
			}
		}
		end = begin
	}
	return end
}

// runSpan is how long the steps of res took back to back: each its
// longest job's ramp and runtime.
func runSpan(res *bench.Result, groups []bench.Group) time.Duration {
	var total time.Duration
	for _, span := range stepSpans(groups) {
		var longest time.Duration
		for gi := span[0]; gi < span[1]; gi++ {
			for _, j := range res.Groups[gi].Jobs {
				longest = max(longest, j.Runtime+j.Job.RampTime)
			}
		}
		total += longest
	}
	return total
}

// stepSpans splits groups into steps: a group that waits (stonewall)
// starts one; the others ran beside the group before them. Each span is
// [first, last+1) of groups.
func stepSpans(groups []bench.Group) [][2]int {
	var spans [][2]int
	for gi, g := range groups {
		if gi == 0 || g.Wait {
			spans = append(spans, [2]int{gi, gi})
		}
		spans[len(spans)-1][1] = gi + 1
	}
	return spans
}

// ImportedStep is one step of an import: a reporting group that waited
// for the ones before it (stonewall), with any groups started beside it
// (new_group). Its groups and jobs are renumbered from 0, as a step's are.
type ImportedStep struct {
	Config bench.Config
	Result *bench.Result
}

// Steps splits the import into the steps it ran as. fio's disk_util covers
// the whole fio run: it stays only when there is one step.
func (imp *FioImport) Steps() []ImportedStep {
	spans := stepSpans(imp.Config.Groups)
	steps := make([]ImportedStep, len(spans))
	for s, span := range spans {
		st := &steps[s]
		st.Config = bench.Config{OutputFormat: imp.Config.OutputFormat, Output: imp.Config.Output,
			GlobalOptions: slices.Clone(imp.Config.GlobalOptions)}
		st.Result = &bench.Result{Host: imp.Result.Host}
		for gi := span[0]; gi < span[1]; gi++ {
			id := gi - span[0]
			g := imp.Config.Groups[gi]
			g.ID, g.Wait = id, false
			g.Jobs = cloneJobs(g.Jobs)
			for k := range g.Jobs {
				if k == 0 || !isClone(&g.Jobs[k-1], &g.Jobs[k], g.Jobs[:k]) {
					st.Config.Jobs = append(st.Config.Jobs, g.Jobs[k].Clone())
				}
			}
			st.Config.Groups = append(st.Config.Groups, g)

			rg := imp.Result.Groups[gi]
			rg.ID = id
			rg.Jobs = slices.Clone(rg.Jobs)
			for k := range rg.Jobs {
				rg.Jobs[k].GroupID = id
				if j := &rg.Jobs[k]; !j.Start.IsZero() && (st.Result.Start.IsZero() || j.Start.Before(st.Result.Start)) {
					st.Result.Start = j.Start
				}
			}
			if len(spans) > 1 {
				rg.Disks = nil
			}
			st.Result.Groups = append(st.Result.Groups, rg)
		}
	}
	return steps
}

func cloneJobs(jobs []bench.Job) []bench.Job {
	out := make([]bench.Job, len(jobs))
	for i := range jobs {
		out[i] = jobs[i].Clone()
	}
	return out
}
