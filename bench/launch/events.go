package launch

import (
	"fmt"
	"strings"
	"time"

	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/bench/units"
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
	ev := ProgressEvent{Step: tk.Step.Seq + 1, Total: tk.Total, Elapsed: tk.Elapsed.Seconds(), Phase: phase,
		IOPS: tk.IOPS, Summed: tk.Summed, Left: left, RunSince: tk.Run.Seconds(),
		ClatP99: float64(tk.ClatP99) / float64(time.Microsecond)}
	// As a finished step's: each job, then the total of alike jobs.
	if len(tk.Jobs) > 1 {
		for i, j := range tk.Jobs {
			if i == maxProgressJobs {
				ev.More = len(tk.Jobs) - i
				break
			}
			ev.Jobs = append(ev.Jobs, JobIOPS{Name: j.Name, IOPS: j.IOPS})
		}
		if tk.Summed {
			ev.Jobs = append(ev.Jobs, JobIOPS{Name: summary.TotalName, Total: true, IOPS: tk.IOPS})
		}
	}
	return ev
}

// maxProgressJobs bounds the jobs a progress event names, four times a
// second: an agent's events are relayed within agent.MaxEventData.
const maxProgressJobs = 16

// IOPSText is a progress event's rate for people: the step's IOPS, or
// each job's when they are not alike ("reader 48.3k IOPS, writer 1.2k
// IOPS", as a finished step's line).
func (ev ProgressEvent) IOPSText() string {
	if ev.Summed || len(ev.Jobs) == 0 {
		return units.Count(ev.IOPS) + " IOPS"
	}
	parts := make([]string, len(ev.Jobs))
	for i, j := range ev.Jobs {
		parts[i] = j.Name + " " + units.Count(j.IOPS) + " IOPS"
	}
	more := ""
	if ev.More > 0 {
		more = fmt.Sprintf(" (and %d more jobs)", ev.More)
	}
	return strings.Join(parts, ", ") + more
}

// LatText is a progress event's clat p99 so far for people ("clat p99
// 212µs so far"), or "" while it is not known.
func (ev ProgressEvent) LatText() string {
	if ev.ClatP99 <= 0 {
		return ""
	}
	return "clat p99 " + units.Duration(time.Duration(ev.ClatP99*float64(time.Microsecond))) + " so far"
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
