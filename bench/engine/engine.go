// Package engine holds iolab's ioengines and their table, the way fio's
// struct ioengine_ops describes each: a name, the flags the job loop must
// know (SyncIO, Diskless, …), the engine's own fio options, its sweep
// modes and the opener that sets it up on a job thread. Each engine is one
// file (NAME_linux.go) that declares its Engine, and one row of engineTable
// (engines_linux.go).
//
// The package knows nothing of jobs: an engine's options are declared
// against Params, the engine-only fields of a job, and its opener is handed
// a Setup (the job's files, the buffers to do I/O on, the depth, the few
// job values it reads). bench, which imports engine and never the reverse,
// adapts the options to its own OptionSpec in one place (bench/engine.go)
// and calls each engine through the IO interface, once per I/O.
package engine

import (
	"slices"
)

// Engine is one ioengine, the way fio's struct ioengine_ops describes one:
// its name, what the job loop must know of it, its own options and its
// constructor. Each engine is one file that declares its Engine; the table
// (engineTable, in engines_linux.go) lists them, and everything else asks
// the table instead of comparing names.
type Engine struct {
	Name string
	Help string // one line, for help and the web form
	// Flags are what the job loop and the checks before a run must know.
	Flags Flags
	// MaxDepth is the largest iodepth the engine can set up (io_uring's
	// IORING_MAX_ENTRIES); 0: iodepth's own limit.
	MaxDepth int
	// Options are the fio options only this engine takes: fio knows them
	// only once the engine is loaded, and refuses them on other engines.
	// Engines with CmdPrio take bench's cmdprio options after these.
	Options []Option
	// Modes are the engine's sweep variants (io_uring+sqpoll+hipri): each
	// turns one of Options on.
	Modes []Mode
	open  opener
}

// Flags are fio's ioengine flags that iolab needs.
type Flags uint

const (
	// SyncIO engines do the I/O inside submit: clat spans the call, there is
	// no slat, and jobs run them at depth 1 (fio's FIO_SYNCIO).
	SyncIO Flags = 1 << iota
	// Diskless engines open no file; their jobs need a size and no
	// filename (fio's FIO_DISKLESSIO).
	Diskless
	// PowerOfTwoDepth engines run iodepth rounded up to a power of two, as
	// fio's io_uring engine does (its ring has that many entries).
	PowerOfTwoDepth
	// SyncInline engines take no fsync or fdatasync: the job thread makes
	// the call itself, once nothing waits to be submitted (fio 3.33's
	// libaio, which does not trust Linux AIO's fsync).
	SyncInline
	// PollQueues engines fail every hipri I/O on a device without poll
	// queues (io_uring's IOPOLL); others fall back to interrupts (RWF_HIPRI).
	PollQueues
	// CmdPrio engines carry a priority on each I/O of their own (they
	// implement Prioritized) and take fio's cmdprio options
	// (engines/cmdprio.h, in fio's io_uring and libaio option tables).
	CmdPrio
	// NoOffload engines refuse io_submit_mode=offload (fio's
	// FIO_NO_OFFLOAD, which fio 3.33 sets on io_uring alone): their
	// rings belong to one thread and are not trusted to submit workers.
	NoOffload
	// NoTrim engines cannot trim: fio 3.33's vsync hands a trim to its
	// readv/writev batch (engines/sync.c fio_vsyncio_queue), which fails
	// with EFAULT. Their jobs' trimming rw modes are refused.
	NoTrim
)

// Depth is how many I/Os the engine keeps in flight for iodepth: 1 for a
// sync engine, iodepth rounded up to a power of two where the engine does
// that, else iodepth.
func (e *Engine) Depth(iodepth int) int {
	switch {
	case e.Has(SyncIO):
		return 1
	case e.Has(PowerOfTwoDepth):
		d := 1
		for d < iodepth {
			d <<= 1
		}
		return d
	}
	return iodepth
}

// Has reports whether the engine has all of flags.
func (e *Engine) Has(flags Flags) bool { return e.Flags&flags == flags }

// Op is what an I/O does.
type Op uint8

// The operations a job issues.
const (
	OpRead      Op = iota // = bench.Read
	OpWrite               // = bench.Write
	OpTrim                // = bench.Trim: a discard (fio's DDIR_TRIM); the job loop does it
	OpFsync               // fsync(2) of the file (fio's fsync=N, end_fsync)
	OpFdatasync           // fdatasync(2) (fio's fdatasync=N)
)

// Mode is one sweep variant of an engine: Name after a '+' in a sweep
// value (io_uring+sqpoll) sets Option (sqthread_poll) to 1.
type Mode struct {
	Name   string
	Option string
}

// Option is one of an engine's own fio options, with bench.OptionSpec's
// fields but set on and read from Params, not a whole job.
type Option struct {
	Name    string
	Aliases []string
	Flag    bool   // may be given without a value, which means 1
	Example string // a valid value, for error messages and help
	Unit    string // how the value is read, for help: "int", "bool", …
	Default string // fio's default, as fio would write it
	Help    string // one line: what the option does
	Set     func(p *Params, value string) error
	Get     func(p *Params) string
}

// Params are the job's fields that only engines read: their own options.
// bench.Job keeps them where its JSON has always had them and hands the
// engine a copy (bench's Job.EngineParams), so a job's JSON, job file and
// recorded options are what they were before the engines moved here.
type Params struct {
	Hipri           bool // io_uring: IOPOLL; pvsync2: RWF_HIPRI
	SQThreadPoll    bool
	SQThreadPollCPU int // -1: not set
	FixedBufs       bool
	RegisterFiles   bool
	UserspaceReap   bool // libaio: reap from the user ring when not waiting
	HipriPercentage int  // pvsync2: the share of I/Os flagged RWF_HIPRI
	NoWait          bool // pvsync2: RWF_NOWAIT
}

// MaxCPU is Linux's largest CONFIG_NR_CPUS (bench.MaxCPU).
const MaxCPU = 8192

// Lookup returns the engine called name.
func Lookup(name string) (*Engine, bool) {
	for _, e := range engineTable {
		if e.Name == name {
			return e, true
		}
	}
	return nil, false
}

// Engines lists the engines iolab has on this platform, in the table's
// order.
func Engines() []*Engine { return slices.Clone(engineTable) }

// Names lists the engines' names, in the table's order.
func Names() []string {
	names := make([]string, len(engineTable))
	for i, e := range engineTable {
		names[i] = e.Name
	}
	return names
}
