package bench

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// latTarget is fio 3.33's latency-target search (io_u.c lat_target_*):
// the job starts at queue depth 1 and, every latency_window, doubles it
// while latency_percentile % of the window's I/Os complete within
// latency_target, then bisects between the last depth that met it and
// the first that did not. When the depth stops changing it drains, starts
// the measured window over and runs one more window there (the result is
// that depth's), then ends — or, with latency_run, keeps adjusting. With
// latency_percentile=100 a single late I/O steps the depth down at once,
// and one at depth 1 fails the job (fio's "max latency exceeded").
type latTarget struct {
	target  int64 // ns
	window  int64 // ns
	pct     float64
	run     bool
	iodepth int

	qd, low, high int
	stable        int
	endRun        bool
	done          bool

	start  int64  // the cycle's start (fio's latency_ts)
	ios    uint64 // completed I/Os, ever (fio's io_blocks sum)
	cycle  uint64 // ios at the cycle's start (fio's latency_ios)
	failed uint64 // late I/Os in the cycle (fio's latency_failed)

	quiesceDue bool // a step down waits for the I/O in flight
	resetDue   bool // the measured window starts over (the final run)
}

// newLatTarget is nil without a latency_target.
func newLatTarget(j *Job, t int64) *latTarget {
	if j.LatencyTarget <= 0 {
		return nil
	}
	lt := &latTarget{target: int64(j.LatencyTarget), window: int64(j.LatencyWindow), pct: j.Percentile(),
		run: j.LatencyRun, iodepth: j.IODepth}
	lt.init(t)
	return lt
}

// init is fio's lat_target_init.
func (lt *latTarget) init(t int64) {
	lt.endRun = false
	lt.qd, lt.high, lt.low = 1, lt.iodepth, 1
	lt.start, lt.cycle = t, lt.ios
}

// restart is fio's lat_target_reset, when the measured window starts
// over: the search starts again unless this is its final run.
func (lt *latTarget) restart(t int64) {
	if !lt.endRun {
		lt.init(t)
	}
}

// full is fio's queue_full under a latency target: as many I/Os checked
// out as the depth the search is at.
func (lt *latTarget) full(checkedOut int) bool {
	return lt != nil && checkedOut >= lt.qd
}

func (lt *latTarget) newCycle(t int64) {
	lt.start, lt.cycle, lt.failed = t, lt.ios, 0
}

// completed counts an I/O that took lat ns; it returns an error when the
// job must fail (a late I/O at depth 1 with latency_percentile=100).
func (lt *latTarget) completed(lat int64) error {
	lt.ios++
	if lat <= lt.target {
		return nil
	}
	if lt.pct < 100 {
		lt.failed++
		return nil
	}
	if lt.stepDown() {
		return fmt.Errorf("max latency exceeded: an I/O took %d nsec, over latency_target (%d nsec) at depth 1: %w", lat, lt.target, unix.ETIMEDOUT)
	}
	return nil
}

// stepDown is fio's __lat_target_failed: true when the depth is 1 already.
// The drain and the new cycle follow in step, out of the reap.
func (lt *latTarget) stepDown() bool {
	if lt.qd == 1 {
		return true
	}
	lt.high = lt.qd
	if lt.qd == lt.low {
		lt.low--
	}
	lt.qd = (lt.qd + lt.low) / 2
	lt.stable = 0
	lt.quiesceDue = true
	return false
}

// stepUp is fio's lat_target_success.
func (lt *latTarget) stepUp(t int64) {
	qd := lt.qd
	lt.low = lt.qd
	if lt.qd+1 == lt.high {
		// Stuck one below a depth that failed once: try it again after
		// three successes in a row.
		if lt.stable++; lt.stable >= 3 {
			lt.high++
			lt.stable = 0
		}
	}
	if lt.high != lt.iodepth {
		lt.qd = (lt.qd + lt.high) / 2
	} else {
		lt.qd *= 2
	}
	lt.qd = min(lt.qd, lt.iodepth)
	if !lt.run && lt.qd == qd {
		if lt.endRun {
			lt.done = true
		} else {
			lt.quiesceDue = true
			lt.endRun = true
			lt.resetDue = true
		}
	}
	lt.newCycle(t)
}

// check is fio's lat_target_check, once a window has passed.
func (lt *latTarget) check(t int64) {
	if t-lt.start < lt.window {
		return
	}
	ios := lt.ios - lt.cycle
	// A window without a completion fails, as fio's 0/0 does: the depth
	// is not raised, nor found, on nothing.
	if ios > 0 && 100*float64(ios-lt.failed)/float64(ios) >= lt.pct {
		lt.stepUp(t)
	} else {
		// At depth 1 fio just lets the cycle grow until it succeeds.
		lt.stepDown()
	}
}

// latTargetStep runs in the job loop after each I/O's completions:
// (after ramp_time) the window check, then the drain a step asked for and
// a new cycle. It reports whether the measured window must start over.
func (l *loop) latTargetStep() bool {
	lt := l.lt
	if l.measuring && !lt.quiesceDue {
		lt.check(l.tick)
	}
	if lt.quiesceDue {
		lt.quiesceDue = false
		l.drain()
		lt.newCycle(l.clock())
	}
	reset := lt.resetDue
	lt.resetDue = false
	return reset
}

// drain is fio's io_u_quiesce: submit what is queued, then reap until
// nothing is in flight.
func (l *loop) drain() {
	if l.pending > 0 {
		l.commit()
		l.pending = 0
	}
	for l.err == nil && l.checkedOut > 0 {
		before := l.checkedOut
		l.reap(1, true)
		if l.checkedOut == before {
			break
		}
	}
}
