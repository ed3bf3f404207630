package sweep

import (
	"fmt"
	"time"

	"iolab/bench"
)

// A step measured while the process could not run — stopped (SIGSTOP,
// a debugger, a frozen cgroup) or starved of CPU — holds figures from a
// window in which the jobs did nothing: a runtime=5 step stopped for 28 s
// reports 30 s and a sixth of its IOPS. Such a step is failed, never
// stored as clean.
//
// The rule: a heartbeat goroutine wakes every stallTick during the step
// and adds up every gap between two wakes longer than stallGap (the
// process, or at least this goroutine, did not run). When those gaps add
// up to more than StallAllowed plus StallShare of the step's measured
// window, the step is failed. The monotonic clock counts stopped time, so
// a stop of any length is seen; a slow device is not a stall (the
// heartbeat runs beside a job blocked in a system call).
const (
	stallTick = 50 * time.Millisecond
	stallGap  = 250 * time.Millisecond
	// StallAllowed and StallShare bound the stalls a step may have had:
	// 1 s plus a tenth of its window.
	StallAllowed = time.Second
	StallShare   = 0.10
)

// watchStalls starts the heartbeat; the function it returns stops it and
// says how long the process was stalled, in total, since.
func watchStalls() (stop func() time.Duration) {
	quit := make(chan struct{})
	total := make(chan time.Duration, 1)
	go func() {
		var stalled time.Duration
		t := time.NewTimer(stallTick)
		defer t.Stop()
		last := time.Now()
		for {
			select {
			case <-quit:
				// A stop that has just ended is a gap too.
				if gap := time.Since(last); gap > stallGap {
					stalled += gap - stallTick
				}
				total <- stalled
				return
			case <-t.C:
			}
			now := time.Now()
			if gap := now.Sub(last); gap > stallGap {
				stalled += gap - stallTick
			}
			last = now
			t.Reset(stallTick)
		}
	}()
	return func() time.Duration {
		close(quit)
		return <-total
	}
}

// stallError is the error of a step stalled for stalled, nil when the
// stall is within the rule's bounds. result gives the measured window
// and the runtime asked for, to say what the stall did to them.
func stallError(stalled, wall time.Duration, result *bench.Result) error {
	window, asked := time.Duration(0), time.Duration(0)
	if result != nil {
		for _, g := range result.Groups {
			for _, j := range g.Jobs {
				window = max(window, j.Runtime)
				asked = max(asked, j.Job.Runtime)
			}
		}
	}
	if window == 0 {
		window = wall
	}
	if stalled <= StallAllowed+time.Duration(StallShare*float64(window)) {
		return nil
	}
	what := ""
	if asked > 0 {
		what = fmt.Sprintf(" (its measured window lasted %.1f s against a runtime of %s)", window.Seconds(), asked)
	}
	return fmt.Errorf("the process was stopped or starved for %.1f s during the step%s; its figures are not kept: run it again on a machine where nothing stops or starves iolab", stalled.Seconds(), what)
}
