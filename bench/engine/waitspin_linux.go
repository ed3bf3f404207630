package engine

import (
	"fmt"
	"slices"

	"golang.org/x/sys/unix"

	"iolab/bench/tsc"
)

// waitSpin is how a job thread waits for completions that other threads
// post: io_uring's io-wq workers (zram and other devices without NOWAIT:
// every I/O is punted to them), the loop driver's kworker, a disk's
// interrupt. A thread that sleeps in its wait must be woken for each: on a
// VM an IPI and a halted vCPU to rouse, microseconds paid on both sides —
// by the io-wq worker that is the device's bottleneck, or as a queue that
// runs dry while the job wakes. With several I/Os in flight the next
// completion is usually that close, so before a blocking wait the thread
// first watches its ring for up to spinNs (io_uring: the task-run flag the
// kernel sets when completions are queued for the thread; libaio: the aio
// ring's tail), then makes the same call it would have made — which now
// finds the completions instead of sleeping for them. The system calls are
// fio's; only the sleep is saved. A spin that sees nothing makes the next
// ones rarer (skip doubles up to spinMaxSkip waits) — unless the job's
// thread may run on one CPU only (oneCPU, below).
//
// Spinning does not always pay. With a deep queue on a device that
// completes from its own context (a loop device at iodepth 16 or 32) the
// job seldom waits long, its rare sleeps stall nothing, and a spin only
// burns CPU; at moderate depths, or on zram, it buys more I/O. So the
// spin tries both and keeps what pays: it counts completions in windows
// of spinWindow, alternates spinning and not over spinPairs pairs of
// windows, times each, and then spins for the next spinExploit windows
// only if the median window with the spin completed its I/O at least
// spinGain faster than without; then it tries both again. The gain asked
// for is that of the CPU a spin costs: a wait that does not spin is
// fio's, and one that spins must buy more I/O than the CPU it burns.
// Trials overstate the gain against whole runs, hence a spinGain above
// that cost.
//
// On one CPU (cpus_allowed of one CPU, which io_uring's io-wq workers and
// a loop device's kworker then share with the job) nothing can complete
// while the job spins, so every spin comes back empty, and with the
// back-off the job would go back to sleeping on each wait, to be woken —
// and to preempt the worker — at each completion. There every wait of a
// window that spins does spin: the job then runs long enough that its
// wake-ups stop preempting the worker, which completes several I/Os per
// turn. With the job free to move the back-off stays: there it saves
// both IOPS and CPU.
//
// The measurements behind each choice are in BENCHMARKS.md, "The wait
// spin's choices".
type waitSpin struct {
	ok      bool   // the engine can watch its ring and the TSC can time the spin
	ticks   uint64 // spinNs in TSC ticks
	skip    int    // waits left to make without spinning, after empty spins
	backoff int    // skip after the next spin that sees nothing
	oneCPU  bool   // the thread may only run on one CPU: no back-off

	off    bool                 // this window's waits do not spin
	chosen bool                 // the last choice: spin
	done   int                  // completions reaped in this window
	start  uint64               // TSC when this window began; 0 before the first
	window int                  // this window's place in the cycle of trials and use
	trials [2][spinPairs]uint64 // [with, without the spin]: each trial window's length in ticks

	windows, spun int // windows ended, and those whose waits could spin
}

const (
	spinNs      = 2000
	spinMaxSkip = 64

	spinWindow  = 4096
	spinPairs   = 3
	spinExploit = 32
	spinGain    = 1.15
)

// spinNote is what a job's engine_setup records of its waits.
const spinNote = "waits spin ≤2µs where trials show it pays"

// tscWaitSpin is a spin of spinNs timed by the TSC, or none without one.
func tscWaitSpin() waitSpin {
	mult := tsc.Rate() // ns per tick, 32.32
	if mult == 0 {
		return waitSpin{}
	}
	return waitSpin{ok: true, ticks: uint64(spinNs) << 32 / mult, oneCPU: onOneCPU()}
}

// onOneCPU says whether the calling thread may run on one CPU only (the
// job's thread, after cpus_allowed).
func onOneCPU() bool {
	var set unix.CPUSet
	return unix.SchedGetaffinity(0, &set) == nil && set.Count() == 1
}

// spinning says whether this wait may spin (then spinFor decides on
// its own whether it does, after empty spins).
func (sp *waitSpin) spinning() bool { return !sp.off }

// reaped counts n completions; a full window ends.
func (sp *waitSpin) reaped(n int) {
	sp.done += n
	if sp.done >= spinWindow {
		sp.windowEnd(tsc.Read())
	}
}

// windowEnd ends the window at TSC now: a trial window records its length,
// the last trial makes the choice, and the next window's waits spin or
// not.
func (sp *waitSpin) windowEnd(now uint64) {
	if sp.start == 0 {
		// The first window warms up (it began before the ring's first
		// I/O was timed); the trials start after it.
		sp.start, sp.done = now, 0
		return
	}
	if sp.window < 2*spinPairs {
		sp.trials[sp.window%2][sp.window/2] = now - sp.start
	}
	sp.windows++
	if !sp.off {
		sp.spun++
	}
	sp.start, sp.done = now, 0
	sp.window++
	switch {
	case sp.window == 2*spinPairs:
		with, without := medianTicks(sp.trials[0]), medianTicks(sp.trials[1])
		// Faster by spinGain: the same completions in less time.
		sp.chosen = with > 0 && float64(without) >= spinGain*float64(with)
	case sp.window == 2*spinPairs+spinExploit:
		sp.window = 0
	}
	if sp.window < 2*spinPairs {
		sp.off = sp.window%2 == 1
	} else {
		sp.off = !sp.chosen
	}
}

// medianTicks is the median of the trial windows' lengths.
func medianTicks(v [spinPairs]uint64) uint64 {
	slices.Sort(v[:])
	return v[spinPairs/2]
}

// summary says, for the run's engine_setup, in how many windows the
// waits spun: what the trials chose. "" before the trials began.
func (sp *waitSpin) summary() string {
	if !sp.ok || sp.windows == 0 {
		return ""
	}
	s := fmt.Sprintf("waits spun in %d of %d windows of %d I/Os", sp.spun, sp.windows, spinWindow)
	if sp.oneCPU {
		s += ", on one CPU without back-off"
	}
	return s
}

// skipping is true for a wait that is not to spin, after empty spins.
func (sp *waitSpin) skipping() bool {
	if sp.skip > 0 {
		sp.skip--
		return true
	}
	return false
}

// saw records how a spin ended: something came, or the next waits skip.
func (sp *waitSpin) saw(something bool) {
	if something {
		sp.backoff = 0
		return
	}
	if sp.oneCPU {
		return
	}
	sp.skip = sp.backoff
	sp.backoff = min(max(1, 2*sp.backoff), spinMaxSkip)
}
