package engine

import "errors"

// Completion is one finished I/O as an engine reports it: the slot it was
// queued on and the kernel's result (bytes done, or a negative errno).
type Completion struct {
	Slot int32
	Res  int32
}

// The engines make their I/O system calls with unix.RawSyscall6, not
// Syscall6: Syscall6's entersyscall/exitsyscall lets the runtime hand the
// thread's P to another thread while the call blocks, and taking it back
// costs microseconds per I/O (io_uring at depth 1 on zram ran ~15% slower
// than fio that way). A raw call keeps the P, so the runner raises
// GOMAXPROCS by the number of job threads for the run: the rest of the
// program keeps as many Ps as before.

// IO is the per-job I/O backend, fio's ioengine_ops ->queue, ->commit
// and ->getevents. One goroutine, locked to its OS thread, owns an engine
// for its whole life: no method is safe for concurrent use, and none
// allocates, so the job loop stays allocation-free.
type IO interface {
	// Queue prepares an I/O of n bytes on slot's buffer, on the job's
	// file number file, without a system call.
	Queue(slot int, op Op, file int, off int64, n uint32)
	// Commit hands the queued I/Os to the kernel in order — one
	// io_uring_enter or io_submit; a sync engine does each one's read or
	// write — and returns how many it handed over: fewer when the kernel
	// took only some (libaio's EAGAIN), the rest staying queued.
	Commit() (int, error)
	// GetEvents stores at least min and at most max completions in c
	// (len(c) >= max). With block it waits in the kernel for what is
	// missing; without (fio's iodepth_batch_complete_min=0) it asks the
	// kernel without waiting, over and over, until min are there.
	GetEvents(min, max int, block bool, c []Completion) (int, error)
	Close() error
}

// Info says how a job must time an engine's I/Os.
type Info struct {
	// Sync engines do the I/O inside submit: clat spans the call and there
	// is no slat (fio's FIO_SYNCIO).
	Sync bool
	// Published engines (SQPOLL) start an I/O when it is published to the
	// ring, not in a system call: time it from there, with no slat.
	Published bool
	// Setup is how the engine was set up, when there are choices the
	// kernel may refuse (io_uring's flags): bench.JobResult.EngineSetup.
	Setup string
}

// Setup is what an engine is set up on: the job's engine options, its
// files' descriptors, one buffer per slot of Depth, and the few job values
// an opener reads.
type Setup struct {
	Params
	Files []int // the job's files' descriptors, by the job's file number
	Bufs  *Buffers
	Depth int // slots: Engine.Depth of the job's iodepth
	// IODepth is the job's iodepth as given, BS its bs: for errors.
	IODepth int
	BS      int64
	// IOPrio is the priority every I/O carries unless cmdprio gives it
	// another (the job's prio and prioclass).
	IOPrio uint16
	// RandSeed is the job's randseed, for engines that draw (pvsync2's
	// hipri_percentage).
	RandSeed uint64
}

// opener sets up an engine on s.
type opener func(s *Setup) (IO, Info, error)

// Open sets the engine up on s, for one job thread.
func (e *Engine) Open(s *Setup) (IO, Info, error) {
	io, info, err := e.open(s)
	info.Sync = e.Has(SyncIO)
	return io, info, err
}

// completions is a fixed ring of finished requests, for engines that
// complete inside submit.
type completions struct {
	ring []Completion
	head int
	n    int
}

func newCompletions(depth int) completions { return completions{ring: make([]Completion, depth)} }

func (q *completions) push(c Completion) {
	q.ring[(q.head+q.n)%len(q.ring)] = c
	q.n++
}

func (q *completions) pop(c []Completion) int {
	k := 0
	for q.n > 0 && k < len(c) {
		c[k] = q.ring[q.head]
		q.head = (q.head + 1) % len(q.ring)
		q.n--
		k++
	}
	return k
}

// errNothingInFlight would otherwise be an endless wait: a synchronous
// engine has nothing pending once submit returns.
var errNothingInFlight = errors.New("wait with no I/O in flight")

func (q *completions) popWait(want int, c []Completion) (int, error) {
	if want > q.n {
		return q.pop(c), errNothingInFlight
	}
	return q.pop(c), nil
}

// Prioritized engines carry a priority on each I/O of their own, where
// cmdprio gives it one (fio's io_uring and libaio: the CmdPrio flag).
type Prioritized interface {
	// Prioritize gives the I/O just queued on slot priority p.
	Prioritize(slot int, p uint16)
}
