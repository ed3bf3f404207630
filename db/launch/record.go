package launch

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/db"
)

// NewRecord describes a plan for the store: the plan, the host and its
// targets. Its status is running, as `iolab run` stores it; the launcher
// sets queued before storing a run from the web.
func NewRecord(plan *sweep.Plan, runner *bench.Runner, tags []string) (*db.Run, error) {
	host, err := runner.Sys.Host()
	if err != nil {
		return nil, fmt.Errorf("read the host's description: %w", err)
	}
	rec := &db.Run{Name: plan.Name, Status: db.StatusRunning, Source: db.SourceLocal, Hostname: host.Hostname, Kernel: host.KernelRelease,
		Plan: *plan, Host: host, Tags: tags}
	seen := map[string]bool{}
	for _, j := range plan.Base.Jobs {
		if !j.Diskless() && !seen[j.Filename] {
			seen[j.Filename] = true
			if t, err := runner.Sys.ResolveTarget(j.Filename); err == nil {
				rec.Targets = append(rec.Targets, t)
			}
			if rec.Target == "" {
				rec.Target = j.Filename
			}
		}
		if !slices.Contains(rec.Engines, j.IOEngine) {
			rec.Engines = append(rec.Engines, j.IOEngine)
		}
	}
	for _, sw := range plan.Sweeps {
		switch sw.Axis {
		case sweep.AxisEngine:
			rec.Engines = slices.Clone(sw.Values)
		case sweep.AxisScheduler:
			rec.Schedulers = slices.Clone(sw.Values)
		}
	}
	for _, t := range rec.Targets {
		if t.Scheduler != "" && len(rec.Schedulers) == 0 {
			rec.Schedulers = []string{t.Scheduler}
		}
	}
	return rec, nil
}

// FailedSteps is the error of a run none of whose steps succeeded: the one
// step's own, or the first one's.
func FailedSteps(results []sweep.StepResult) error {
	switch {
	case len(results) == 0:
		return errors.New("no step ran")
	case len(results) == 1:
		return errors.New(results[0].Error)
	}
	return fmt.Errorf("every step failed; step 1: %s", results[0].Error)
}

// RunStatus is the stored run's final status: cancelled when ctx ended,
// failed when no step succeeded (or the plan stopped early), else done.
func RunStatus(ctx context.Context, results []sweep.StepResult, err error) string {
	if ctx.Err() != nil {
		return db.StatusCancelled
	}
	ok := 0
	for _, r := range results {
		if r.Status == sweep.StepDone {
			ok++
		}
	}
	if ok == 0 || (err != nil && ok < len(results)) {
		return db.StatusFailed
	}
	return db.StatusDone
}
