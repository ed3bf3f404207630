package launch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"iolab/bench"
	"iolab/bench/record"
	"iolab/bench/sweep"
	"iolab/bench/system"
)

// Execute runs a prepared plan as the stored run id (store may be nil:
// nothing is saved). It marks the run running, saves each step as it
// ends, records every scheduler it switches so a crash can be undone at
// the next start (RestoreSchedulers), and sets the final status from
// RunStatus with the plan's error and the failed steps' errors, grouped.
// hooks.StepStarted and hooks.StepDone are called too (StepDone after the
// step is saved); their scheduler hooks are ignored.
// It returns the results, the final status and the plan's error joined
// with any store error; a failed status with no error is left to the
// caller (FailedSteps).
//
// Before anything runs it takes the lock of every device the plan uses
// (Prepared.Devices), waiting while another iolab process holds one and
// telling hooks.Waiting who: two runs never measure one device at once.
func Execute(ctx context.Context, store Recorder, runner *bench.Runner, id int64, prep *Prepared, hooks Hooks) ([]sweep.StepResult, string, error) {
	plan := prep.Plan
	// Saving must outlive a cancelled run: its last step is still stored.
	keep := context.WithoutCancel(ctx)
	holder := fmt.Sprintf("pid %d: %s", os.Getpid(), plan.Name)
	if store != nil {
		holder = fmt.Sprintf("pid %d: run %d %q in %s", os.Getpid(), id, plan.Name, store.Path())
	}
	release, err := LockDevices(ctx, prep.Devices, holder, hooks.Waiting)
	if err == nil && hooks.Quota != nil {
		if err = hooks.Quota.Check(plan); err != nil {
			release()
			err = fmt.Errorf("not started: %w", err)
		}
	}
	if err != nil {
		status := record.StatusFailed
		if ctx.Err() != nil {
			status = record.StatusCancelled
		}
		if store != nil {
			err = errors.Join(err, store.SetRunStatus(keep, id, status, err.Error()))
		}
		return nil, status, err
	}
	defer release()
	h := sweep.PlanHooks{
		StepStarted: hooks.StepStarted,
		StepDone: func(res *sweep.StepResult) error {
			if store != nil {
				if err := store.SaveStep(keep, id, res); err != nil {
					return err
				}
			}
			if hooks.StepDone != nil {
				return hooks.StepDone(res)
			}
			return nil
		},
	}
	if store != nil {
		if err := store.SetRunStatus(keep, id, record.StatusRunning, ""); err != nil {
			return nil, record.StatusFailed, err
		}
		h.SchedulerSwitched = func(disk, original string) (int64, error) {
			return store.AddSchedulerRestore(keep, id, disk, original)
		}
		h.SchedulerRestored = func(token int64) {
			if err := store.ClearSchedulerRestore(keep, token); err != nil && runner.Log != nil {
				runner.Log.Warn("clear scheduler restore", "run", id, "err", err)
			}
		}
	}
	skipped := len(plan.Skipped)
	results, runErr := sweep.Run(ctx, runner, plan, h)
	planned := len(prep.Steps)
	if len(plan.Skipped) != skipped {
		// The run's own check left out more steps than Prepare's (a
		// target that was not there yet): they were never planned.
		planned = 0
		if steps, err := expand(plan); err == nil {
			planned = len(steps)
		}
	}
	status := RunStatus(ctx, planned, results, runErr)
	if store != nil {
		var msgs []string
		if runErr != nil {
			msgs = append(msgs, runErr.Error())
		}
		if status == record.StatusFailed || status == record.StatusPartial {
			if ferr := FailedSteps(results); ferr != nil {
				msgs = append(msgs, ferr.Error())
			}
			if len(msgs) == 0 {
				msgs = append(msgs, fmt.Sprintf("%d of %d steps ran", len(results), planned))
			}
		}
		msg := strings.Join(msgs, "; ")
		if err := store.SetRunStatus(keep, id, status, msg); err != nil {
			runErr = errors.Join(runErr, err)
		}
	}
	return results, status, runErr
}

// RestoreSchedulers puts back every I/O scheduler that a run killed halfway
// left switched, as recorded in the store; a disk that cannot be restored
// is logged and kept for the next start.
func RestoreSchedulers(ctx context.Context, store Recovery, sys system.FS, log *slog.Logger) error {
	restores, err := store.SchedulerRestores(ctx)
	if err != nil {
		return err
	}
	for _, r := range restores {
		if err := sys.SetScheduler(r.Disk, r.Original); err != nil {
			log.Warn("a killed run left a disk's scheduler switched; restoring it failed", "run", r.RunID, "disk", r.Disk, "scheduler", r.Original, "err", err)
			continue
		}
		log.Info("restored a disk's I/O scheduler left switched by a killed run", "run", r.RunID, "disk", r.Disk, "scheduler", r.Original)
		if err := store.ClearSchedulerRestore(ctx, r.ID); err != nil {
			return err
		}
	}
	return nil
}

// KeepRecovering marks interrupted, every interval until ctx ends, the runs
// whose process died, and puts back the schedulers they left switched. A
// dashboard started right after another was killed may find the dead one
// still exiting; it catches up here instead of at its next restart.
func KeepRecovering(ctx context.Context, store Recovery, sys system.FS, log *slog.Logger, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ids, err := store.MarkInterrupted(ctx)
		if err != nil {
			log.Warn("mark interrupted runs", "err", err)
			continue
		}
		for _, id := range ids {
			log.Info("a run's process is gone: marked interrupted", "run", id)
		}
		if err := RestoreSchedulers(ctx, store, sys, log); err != nil {
			log.Warn("restore schedulers", "err", err)
		}
	}
}
