package launch

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"iolab/bench/record"
	"iolab/bench/summary"
	"iolab/bench/sweep"
)

// FailedSteps is the error of a run some of whose steps failed (or that
// ran none): each distinct error once, with the steps it failed.
func FailedSteps(results []sweep.StepResult) error {
	if len(results) == 0 {
		return errors.New("no step ran")
	}
	groups := summary.GroupErrors(results)
	if len(groups) == 0 {
		return nil
	}
	if len(results) == 1 {
		return errors.New(groups[0].Error)
	}
	failed := 0
	parts := make([]string, len(groups))
	for i, g := range groups {
		failed += len(g.Steps)
		parts[i] = g.StepList() + ": " + g.Error
	}
	return fmt.Errorf("%d of %d steps failed; %s", failed, len(results), strings.Join(parts, "; "))
}

// RunStatus is the stored run's final status: cancelled when ctx ended;
// failed when no step succeeded; partial when some did but not all the
// planned steps (some failed, or the plan stopped early: the store filled
// up, say); else done.
func RunStatus(ctx context.Context, planned int, results []sweep.StepResult, err error) string {
	if ctx.Err() != nil {
		return record.StatusCancelled
	}
	ok := 0
	for _, r := range results {
		if r.Status == sweep.StepDone {
			ok++
		}
	}
	switch {
	case ok == 0:
		return record.StatusFailed
	case ok < planned || err != nil:
		return record.StatusPartial
	}
	return record.StatusDone
}
