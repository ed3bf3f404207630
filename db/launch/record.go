package launch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"iolab/bench"
	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/bench/system"
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
	host.Clock = bench.ClockSource()
	rec := &db.Run{Name: plan.Name, Status: db.StatusRunning, Source: db.SourceLocal, Hostname: host.Hostname, Kernel: host.KernelRelease,
		Plan: *plan, Host: host, Tags: tags}
	// Files yet to be made in one directory are described alike (from
	// the directory): once, not once a file (a job of 1000 files read
	// sysfs and mountinfo 1000 times).
	missing := map[string]system.Target{}
	for _, path := range bench.ConfigPaths(&plan.Base) {
		dir := filepath.Dir(path)
		_, err := os.Lstat(path)
		gone := errors.Is(err, fs.ErrNotExist)
		if t, ok := missing[dir]; ok && gone {
			t.Path, t.Resolved = path, filepath.Join(filepath.Dir(t.Resolved), filepath.Base(path))
			rec.Targets = append(rec.Targets, t)
		} else if t, err := runner.Sys.ResolveTarget(path); err == nil {
			rec.Targets = append(rec.Targets, t)
			if gone && !t.IsBlock {
				missing[dir] = t
			}
		}
		if rec.Target == "" {
			rec.Target = path
		}
	}
	rec.Engines, rec.Schedulers = plan.EnginesAndSchedulers(rec.Targets)
	return rec, nil
}

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
		return db.StatusCancelled
	}
	ok := 0
	for _, r := range results {
		if r.Status == sweep.StepDone {
			ok++
		}
	}
	switch {
	case ok == 0:
		return db.StatusFailed
	case ok < planned || err != nil:
		return db.StatusPartial
	}
	return db.StatusDone
}
