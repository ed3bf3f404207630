package summary

import (
	"fmt"
	"strconv"
	"strings"

	"iolab/bench"
	"iolab/bench/sweep"
)

// ErrorGroup is one distinct error of a run's failed steps, with the
// steps (1-based) that failed with it: a run whose 16 steps fail the same
// way says so once.
type ErrorGroup struct {
	Error string `json:"error"`
	Steps []int  `json:"steps"`
}

// GroupErrors groups the failed steps of results by their error, in the
// order each error first appears.
func GroupErrors(results []sweep.StepResult) []ErrorGroup {
	return groupErrors(len(results), func(i int) (int, string, string) {
		return results[i].Step.Seq, results[i].Status, results[i].Error
	})
}

// GroupErrorsOf is GroupErrors of StepViews.
func GroupErrorsOf(results []StepView) []ErrorGroup {
	return groupErrors(len(results), func(i int) (int, string, string) {
		return results[i].Step.Seq, results[i].Status, results[i].Error
	})
}

// groupErrors is GroupErrors of n steps, each's seq, status and error
// from step.
func groupErrors(n int, step func(i int) (seq int, status, err string)) []ErrorGroup {
	var groups []ErrorGroup
	index := map[string]int{}
	for i := range n {
		seq, status, msg := step(i)
		if status != sweep.StepFailed {
			continue
		}
		if msg == "" {
			msg = "failed without an error message"
		}
		k, ok := index[msg]
		if !ok {
			k = len(groups)
			index[msg] = k
			groups = append(groups, ErrorGroup{Error: msg})
		}
		groups[k].Steps = append(groups[k].Steps, seq+1)
	}
	return groups
}

// StepList writes step numbers for people: "3", "1, 4 and 7", "16 steps: 1, 2, 3 … 40".
func (g ErrorGroup) StepList() string {
	n := len(g.Steps)
	nums := make([]string, 0, min(n, 6))
	for i, s := range g.Steps {
		if i == 5 && n > 6 {
			nums = append(nums, "…", strconv.Itoa(g.Steps[n-1]))
			break
		}
		nums = append(nums, strconv.Itoa(s))
	}
	if n == 1 {
		return "step " + nums[0]
	}
	return fmt.Sprintf("%d steps (%s)", n, strings.Join(nums, ", "))
}

// Note is something a step's numbers must be read with: it was disturbed
// by another process's I/O, say.
type Note struct {
	Step int    `json:"step"` // 1-based
	Text string `json:"text"`
}

// Notes lists what each done step must be read with.
func Notes(results []sweep.StepResult) []Note {
	var notes []Note
	for i := range results {
		if r := &results[i]; r.Status == sweep.StepDone {
			notes = appendNote(notes, r.Step.Seq, r.Disturbed())
			if r.Result != nil {
				var traces []*bench.BlockTrace
				for _, g := range r.Result.Groups {
					traces = append(traces, g.Trace)
				}
				notes = appendTraceNote(notes, r.Step.Seq, traces)
			}
		}
	}
	return notes
}

// NotesOf is Notes of StepViews.
func NotesOf(results []StepView) []Note {
	var notes []Note
	for i := range results {
		if r := &results[i]; r.Status == sweep.StepDone {
			notes = appendNote(notes, r.Step.Seq, r.Disturbed())
			if r.Result != nil {
				var traces []*bench.BlockTrace
				for _, g := range r.Result.Groups {
					traces = append(traces, g.Trace)
				}
				notes = appendTraceNote(notes, r.Step.Seq, traces)
			}
		}
	}
	return notes
}

// appendTraceNote adds what the step seq's block-layer traces (nil for a
// group not traced) lost or saw beside its jobs' I/Os, if anything: its
// time split may lack I/Os, or its queue hold other processes'.
func appendTraceNote(notes []Note, seq int, traces []*bench.BlockTrace) []Note {
	var lost, dropped, missed, foreign uint64
	for _, t := range traces {
		if t != nil {
			dropped, missed, foreign = dropped+t.Dropped, missed+t.Missed, foreign+t.Foreign
		}
	}
	if lost = dropped + missed; lost > 0 {
		notes = append(notes, Note{Step: seq + 1, Text: fmt.Sprintf("the block-layer trace lost %d events (%d dropped, %d missed): its time split may lack I/Os", lost, dropped, missed)})
	}
	if foreign > 0 {
		notes = append(notes, Note{Step: seq + 1, Text: fmt.Sprintf("the block-layer trace saw %d bios of other processes on the traced devices: they shared its queues", foreign)})
	}
	return notes
}

// appendNote adds what the step seq's disturbed says, if anything.
func appendNote(notes []Note, seq int, disturbed string) []Note {
	if disturbed == "" {
		return notes
	}
	return append(notes, Note{Step: seq + 1, Text: "disturbed: " + disturbed})
}
