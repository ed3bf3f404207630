// Package sweeptest builds the step results of synthetic runs, for the
// tests of what reads them: the summaries, the charts; and holds the
// sweeps' value syntaxes (ParseCases) that the tests of the CLI, the form
// and the API share.
package sweeptest

import (
	"slices"

	"iolab/bench"
	"iolab/bench/sweep"
)

// Steps builds the step results of every combination of the plan's
// sweeps (the first outermost) and each repeat, in Seq order, as
// Plan.Steps orders them; result gives each step's outcome, and Steps
// sets its Step.
func Steps(plan *sweep.Plan, result func(s sweep.Step) sweep.StepResult) []sweep.StepResult {
	var out []sweep.StepResult
	var walk func(i int, axes []sweep.AxisValue)
	walk = func(i int, axes []sweep.AxisValue) {
		if i == len(plan.Sweeps) {
			for rep := range plan.Repeat {
				s := sweep.Step{Seq: len(out), Repeat: rep, Axes: slices.Clone(axes)}
				r := result(s)
				r.Step = s
				out = append(out, r)
			}
			return
		}
		for _, v := range plan.Sweeps[i].Values {
			walk(i+1, append(axes, sweep.AxisValue{Axis: plan.Sweeps[i].Axis, Value: v}))
		}
	}
	walk(0, nil)
	return out
}

// Done is a step that ran jobs to the end, in one group.
func Done(jobs ...bench.JobResult) sweep.StepResult {
	return sweep.StepResult{Status: sweep.StepDone, Result: &bench.Result{Groups: []bench.GroupResult{{Jobs: jobs}}}}
}

// Failed is a step that failed before any I/O, with err.
func Failed(err string) sweep.StepResult {
	return sweep.StepResult{Status: sweep.StepFailed, Error: err}
}
