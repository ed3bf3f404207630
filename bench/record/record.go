// Package record is a run as it is recorded: the run's row (what was
// asked, where it ran, how it went), the vocabulary of its status and
// source, and a scheduler switch to undo. The store (package db) keeps
// these in SQLite and the launcher (bench/launch) writes them through its
// Recorder; both import this package, so the launcher needs no store and
// the store no launcher. The strings are the ones stored in SQLite and
// sent as JSON: changing one changes every database.
package record

import (
	"time"

	"iolab/bench/sweep"
	"iolab/bench/system"
)

// Run is one recorded run: what was asked (the plan), where it ran, and
// how it went. The store reads its steps apart (db.Store.Steps).
type Run struct {
	ID int64 `json:"id"`
	// UID is the run's stable unique id (32 hex digits), the same on every
	// host the run is exported or pushed to; CreateRun sets it when empty.
	UID      string    `json:"uid,omitempty"`
	Name     string    `json:"name"`
	Status   string    `json:"status"` // one of Statuses()
	Source   string    `json:"source"` // one of the Source constants (db adds SourceAgent)
	Created  time.Time `json:"created_at"`
	Started  time.Time `json:"started_at,omitzero"`
	Finished time.Time `json:"finished_at,omitzero"`

	// Hostname, Kernel and Target default to Host.Hostname,
	// Host.KernelRelease and the first target's path (else the first job's
	// filename).
	Hostname string `json:"hostname"`
	Kernel   string `json:"kernel"`
	Target   string `json:"target"`
	// Engines (engine variants: io_uring+sqpoll, libaio, …) and Schedulers
	// are what the run list filters on. CreateRun starts them from the
	// plan's sweeps; SaveStep adds each step's engine and the schedulers
	// active during it.
	Engines    []string `json:"engines"`
	Schedulers []string `json:"schedulers"`
	Tags       []string `json:"tags"`

	Plan    sweep.Plan      `json:"plan"`
	Host    system.HostInfo `json:"host"`
	Targets []system.Target `json:"targets"`
	Error   string          `json:"error,omitempty"`

	// Steps is how many steps are stored; set when reading, ignored when
	// writing.
	Steps int `json:"steps"`
}

// Run statuses.
const (
	StatusQueued      = "queued"
	StatusRunning     = "running"
	StatusDone        = "done"
	StatusFailed      = "failed"
	StatusPartial     = "partial" // some steps failed, or the plan stopped before its end
	StatusCancelled   = "cancelled"
	StatusInterrupted = "interrupted" // its process ended while it was queued or running
)

// Statuses lists every run status.
func Statuses() []string {
	return []string{StatusQueued, StatusRunning, StatusDone, StatusPartial, StatusFailed, StatusCancelled, StatusInterrupted}
}

// Run sources.
const (
	SourceLocal  = "local"  // run on this machine
	SourcePush   = "push"   // sent by `iolab run --push` from another host
	SourceImport = "import" // read from an export file
	SourceFio    = "fio"    // imported from fio's JSON output
)

// SchedulerRestore is a disk whose I/O scheduler a run switched, with the
// scheduler to put back. It is recorded before the switch and cleared after
// the restore, so one left behind means the process died in between.
type SchedulerRestore struct {
	ID       int64     `json:"id"`
	RunID    int64     `json:"run_id"`
	Disk     string    `json:"disk"`     // as /sys/block names it: "nvme0n1", "loop3"
	Original string    `json:"original"` // the scheduler the disk had before the run
	Created  time.Time `json:"created_at"`
}
