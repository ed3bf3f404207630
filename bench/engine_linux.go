package bench

import "errors"

// completion is one finished I/O as an engine reports it: the slot it was
// queued on and the kernel's result (bytes done, or a negative errno).
type completion struct {
	slot int32
	res  int32
}

// The engines make their I/O system calls with unix.RawSyscall6, not
// Syscall6: Syscall6's entersyscall/exitsyscall lets the runtime hand the
// thread's P to another thread while the call blocks, and taking it back
// costs microseconds per I/O (io_uring at depth 1 on zram ran ~15% slower
// than fio that way). A raw call keeps the P, so the runner raises
// GOMAXPROCS by the number of job threads for the run: the rest of the
// program keeps as many Ps as before.

// engine is the per-job I/O backend, fio's ioengine_ops ->queue, ->commit
// and ->getevents. One goroutine, locked to its OS thread, owns an engine
// for its whole life: no method is safe for concurrent use, and none
// allocates, so the job loop stays allocation-free.
type engine interface {
	// queue prepares an I/O of n bytes on slot's buffer, on the job's
	// file number file, without a system call.
	queue(slot int, op ioOp, file int, off int64, n uint32)
	// commit hands the queued I/Os to the kernel in order — one
	// io_uring_enter or io_submit; a sync engine does each one's read or
	// write — and returns how many it handed over: fewer when the kernel
	// took only some (libaio's EAGAIN), the rest staying queued.
	commit() (int, error)
	// getevents stores at least min and at most max completions in c
	// (len(c) >= max). With block it waits in the kernel for what is
	// missing; without (fio's iodepth_batch_complete_min=0) it asks the
	// kernel without waiting, over and over, until min are there.
	getevents(min, max int, block bool, c []completion) (int, error)
	close() error
}

// engineInfo says how a job must time an engine's I/Os.
type engineInfo struct {
	// sync engines do the I/O inside submit: clat spans the call and there
	// is no slat (fio's FIO_SYNCIO).
	sync bool
	// published engines (SQPOLL) start an I/O when it is published to the
	// ring, not in a system call: time it from there, with no slat.
	published bool
	// setup is how the engine was set up, when there are choices the
	// kernel may refuse (io_uring's flags): JobResult.EngineSetup.
	setup string
}

// engineOpener sets up an engine for job j on its files' descriptors fds,
// with one buffer per slot of depth.
type engineOpener func(j *Job, fds []int, bufs *buffers, depth int) (engine, engineInfo, error)

// completions is a fixed ring of finished requests, for engines that
// complete inside submit.
type completions struct {
	ring []completion
	head int
	n    int
}

func newCompletions(depth int) completions { return completions{ring: make([]completion, depth)} }

func (q *completions) push(c completion) {
	q.ring[(q.head+q.n)%len(q.ring)] = c
	q.n++
}

func (q *completions) pop(c []completion) int {
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

func (q *completions) popWait(want int, c []completion) (int, error) {
	if want > q.n {
		return q.pop(c), errNothingInFlight
	}
	return q.pop(c), nil
}

// prioritized engines carry a priority on each I/O of their own, where
// cmdprio gives it one (fio's io_uring and libaio).
type prioritized interface {
	// prioritize gives the I/O just queued on slot priority p.
	prioritize(slot int, p uint16)
}
