package launch

import (
	"iolab/bench/summary"
	"iolab/bench/sweep"
)

// ProgressEventOf is a Progress tick as the run's page shows it; discard
// says the plan discards before each step (its preparation is a discard).
func ProgressEventOf(tk Tick, discard bool) ProgressEvent {
	left := -1.0
	if tk.LeftKnown {
		left = tk.Left.Seconds()
	}
	phase := tk.Phase
	if phase == PhasePrepare && discard {
		phase = "discard"
	}
	return ProgressEvent{Step: tk.Step.Seq + 1, Total: tk.Total, Elapsed: tk.Elapsed.Seconds(), Phase: phase,
		IOPS: tk.IOPS, Left: left, RunSince: tk.Run.Seconds()}
}

// StepStartEvent is a step's start as the run's page shows it.
func StepStartEvent(st *sweep.Step, total int) StepEvent {
	return StepEvent{Step: st.Seq + 1, Total: total, Axes: st.Axes, Repeat: st.Repeat + 1, Label: st.String()}
}

// StepEndEvent is a step's end as the run's page shows it, with each
// job's IOPS (summary.FiguresOf: never a writer's added to a reader's).
func StepEndEvent(res *sweep.StepResult, total int) StepEvent {
	var jobs []JobIOPS
	for _, j := range summary.FiguresOf(res).Jobs {
		jobs = append(jobs, JobIOPS{Name: j.Name, Total: j.Total, IOPS: j.IOPS})
	}
	ev := StepStartEvent(&res.Step, total)
	ev.Status, ev.Error, ev.Jobs = res.Status, res.Error, jobs
	return ev
}
