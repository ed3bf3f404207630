package bench

import (
	"io"
	"log/slog"
	"sync"
	"time"

	"iolab/bench/guard"
	"iolab/bench/system"
)

// Runner runs a Config's groups of jobs and measures them.
type Runner struct {
	Sys system.FS
	// Interval is the per-interval sampling period (default 1 s).
	Interval time.Duration
	Log      *slog.Logger
	// Guard looks up, opens, lays out and removes every target of the
	// runner's jobs (guard.New: the dashboard's or an agent's allow-list,
	// pinned at its start); nil is guard.Unrestricted, the CLI's. It is
	// asked as each step prepares its targets and again as each job opens
	// them, which must be what was checked.
	Guard *guard.Guard
	// Notice, when set, is told what the user should see before a job
	// runs, in fio's words ("job: Laying out IO file (1 file / 64MiB)"):
	// the CLI prints it on stderr, the dashboard shows it as the run's
	// status.
	Notice func(msg string)
	// LogFiles lets jobs write their log files (write_bw_log, …) where
	// fio would, relative to the working directory: the CLI's runs. The
	// dashboard's runs keep them with the result only.
	LogFiles bool
	// StateDir is where jobs keep the other files fio writes in its
	// working directory: the verify state (local-NAME-N-verify.state,
	// which verify_state_load reads back) and verify_dump's blocks. ""
	// is the working directory, as fio (the CLI); the dashboard and
	// agents keep them in their data directory, not wherever the server
	// was started.
	StateDir string

	// live counts the I/Os the running phase's jobs complete, job by job,
	// for progress (live.go).
	live liveJobs
	// status is the run under way as --status-interval reports it
	// (status.go).
	status runStatus
	// laidOut holds the files this runner laid out shorter than their
	// jobs' regions — a job that only writes gets its file allocated, not
	// written, and with fallocate=none or keep not even that (fio's
	// extend_file) — so that the check before a run, the run and its
	// steps do not lay them out again, each saying so: path → laidOutFile.
	laidOut sync.Map
}

// guard is the runner's Guard, or the CLI's.
func (rn *Runner) guard() *guard.Guard {
	if rn.Guard != nil {
		return rn.Guard
	}
	return guard.Unrestricted()
}

func (rn *Runner) log() *slog.Logger {
	if rn.Log != nil {
		return rn.Log
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
