package bench

import (
	"fmt"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"

	"iolab/bench/verify"
)

// verify_async (fio's verify.c verify_io_u_async and
// verify_async_thread): a completed verify read is not checked on the
// job's thread but handed, with its slot, to one of verify_async threads;
// the job's thread goes on submitting with the slots it has, and takes a
// slot back once its block is checked (fio's io_u goes back to the free
// list in the verify thread's put_io_u). A bad block reaches the job's
// thread with its slot and fails the job there, as the verify thread's
// td_verror does in fio; with verify_fatal it ends the job.

// checkWork is one read handed to the checkers: its slot, its length and
// what its header must say.
type checkWork struct {
	slot int32
	n    int
	r    verify.ReadBack
}

// checkDone is a checked slot coming back, with its block's failure.
type checkDone struct {
	slot int32
	err  *verify.Error
}

// asyncVerify is a job's verify_async threads.
type asyncVerify struct {
	work    chan checkWork // never full: at most one per slot
	done    chan checkDone
	held    int // slots with the checkers (the job's thread's count)
	wg      sync.WaitGroup
	threads []VerifyThread // each checker's, written as it ends
	stopped bool
}

// startAsync starts the job's verify_async threads, each on an OS thread
// of its own, pinned to verify_async_cpus if given. It returns once each
// has its thread (and its affinity), or the first that could not.
func (v *verifier) startAsync(l *loop) error {
	j := l.j
	depth := len(l.created)
	a := &asyncVerify{work: make(chan checkWork, depth), done: make(chan checkDone, depth), threads: make([]VerifyThread, j.VerifyAsync)}
	ready := make(chan error, j.VerifyAsync)
	bufs := l.r.bufs
	for i := range j.VerifyAsync {
		a.wg.Add(1)
		go v.checker(a, i, v.spec.Clone(), bufs, ready)
	}
	v.async = a
	var first error
	for range j.VerifyAsync {
		if err := <-ready; err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		v.stopAsync(l)
		return fmt.Errorf("job %s: verify_async_cpus: CPUs %v: %w", j.Name, j.VerifyAsyncCPUs, first)
	}
	return nil
}

// checker is one verify_async thread (fio's verify_async_thread).
func (v *verifier) checker(a *asyncVerify, i int, spec *verify.Spec, bufs *buffers, ready chan<- error) {
	defer a.wg.Done()
	// Never unlocked: the thread, with its affinity, ends with the
	// goroutine instead of going back to Go's pool.
	runtime.LockOSThread()
	if err := setAffinity(v.job.VerifyAsyncCPUs); err != nil {
		ready <- err
		for w := range a.work { // give the slots back unchecked
			a.done <- checkDone{slot: w.slot}
		}
		return
	}
	t := VerifyThread{TID: unix.Gettid()}
	if len(v.job.VerifyAsyncCPUs) > 0 {
		// As the kernel has it, not as asked.
		var set unix.CPUSet
		if unix.SchedGetaffinity(0, &set) == nil {
			for c := range 1024 {
				if set.IsSet(c) {
					t.CPUs = append(t.CPUs, c)
				}
			}
		}
	}
	ru0 := threadUsage()
	ready <- nil
	for w := range a.work {
		buf := bufs.slice(int(w.slot))[:w.n]
		e := spec.Check(v.job.Name, buf, w.r)
		if e != nil && spec.Dump {
			v.dump(e, buf, w.r)
		}
		t.Blocks++
		a.done <- checkDone{slot: w.slot, err: e}
	}
	ru1 := threadUsage()
	t.CPU = tvDuration(ru1.Utime) - tvDuration(ru0.Utime) + tvDuration(ru1.Stime) - tvDuration(ru0.Stime)
	a.threads[i] = t
}

// hand gives a completed read in slot to the checkers; the slot is theirs
// until reclaim takes it back.
func (v *verifier) hand(slot int32, n int, r verify.ReadBack) {
	v.async.held++
	v.async.work <- checkWork{slot: slot, n: n, r: r}
}

// reclaim takes checked slots back into the free list and fails the job
// on a bad block: at least one if block (and any are held), else those
// already done.
func (l *loop) reclaim(block bool) {
	a := l.vfy.async
	for a.held > 0 {
		var d checkDone
		if block {
			d = <-a.done
			block = false
		} else {
			select {
			case d = <-a.done:
			default:
				return
			}
		}
		a.held--
		l.free = append(l.free, d.slot)
		if d.err != nil {
			l.vfy.failed(l, d.err)
		}
	}
}

// stopAsync waits for every held slot, ends the checkers and keeps what
// each did in the verify result.
func (v *verifier) stopAsync(l *loop) {
	a := v.async
	if a == nil || a.stopped {
		return
	}
	for a.held > 0 {
		l.reclaim(true)
	}
	close(a.work)
	a.wg.Wait()
	a.stopped = true
	for _, t := range a.threads {
		if t.TID != 0 {
			v.res.Threads = append(v.res.Threads, t)
		}
	}
}
