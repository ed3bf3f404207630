package launch

import (
	"context"

	"iolab/bench/record"
	"iolab/bench/sweep"
)

// Recorder is where the launcher records its runs: the run, its status as
// it goes, each step as it ends, and the schedulers it switched. The store
// (db.Store) is one; the launcher declares what it needs here so that it
// never imports the store (it sits below it, with the engine).
type Recorder interface {
	CreateRun(ctx context.Context, r *record.Run) (int64, error)
	GetRun(ctx context.Context, id int64) (*record.Run, error)
	SetRunStatus(ctx context.Context, id int64, status, msg string) error
	SaveStep(ctx context.Context, runID int64, res *sweep.StepResult) error
	AddSchedulerRestore(ctx context.Context, runID int64, disk, original string) (int64, error)
	ClearSchedulerRestore(ctx context.Context, id int64) error
	// Path names the record in the device locks' holder ("run 3 in
	// /var/lib/iolab/iolab.db").
	Path() string
}

// Recovery is what a front door's start reads and clears of runs a killed
// process left behind: the runs to mark interrupted and the schedulers to
// put back (RestoreSchedulers, KeepRecovering). db.Store is one.
type Recovery interface {
	MarkInterrupted(ctx context.Context) ([]int64, error)
	SchedulerRestores(ctx context.Context) ([]record.SchedulerRestore, error)
	ClearSchedulerRestore(ctx context.Context, id int64) error
}
