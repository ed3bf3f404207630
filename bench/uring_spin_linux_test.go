package bench

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestWaitSpin drives the wait spin with a ring of its own words: task work
// flagged ends the spin for the call that runs it, completions in the CQ
// ring end it for a reap without a call, and a spin that sees nothing
// lasts spinNs — every time: the trials, not a back-off, stop spins that
// do not pay (on a CPU shared with the device's worker every spin comes
// back empty, and spinning is what pays there).
func TestWaitSpin(t *testing.T) {
	if tscRate() == 0 {
		t.Skip("the job clock is not the TSC here: the wait does not spin (newWaitSpin)")
	}
	var sqFlags, cqHead, cqTail uint32
	r := &uring{sqFlags: &sqFlags, cqHead: &cqHead, cqTail: &cqTail}
	r.spin = newWaitSpin(ioringSetupCoopTaskrun|ioringSetupTaskrunFlag|ioringSetupDeferTaskrun, false)
	if !r.spin.ok {
		t.Fatal("TASKRUN_FLAG with a TSC: the wait should spin")
	}
	if s := newWaitSpin(ioringSetupCoopTaskrun, false); s.ok {
		t.Error("without TASKRUN_FLAG there is no flag to watch: no spin")
	}
	if s := newWaitSpin(ioringSetupTaskrunFlag|ioringSetupSQPoll, true); s.ok {
		t.Error("under SQPOLL the wait spins on the ring already: no spin")
	}

	// Nothing comes: every spin lasts spinNs, however many came back empty.
	for i := range 8 {
		start := time.Now()
		if r.spinFor() {
			t.Fatal("an empty ring reaped")
		}
		if d := time.Since(start); d < spinNs*time.Nanosecond {
			t.Fatalf("empty spin %d gave up after %v, before %d ns", i+1, d, spinNs)
		}
	}

	// From here on a spin would last longer than the test may: only what
	// it watches can end it.
	r.spin.ticks = 1 << 62
	// Task work flagged: make the call.
	atomic.StoreUint32(&sqFlags, ioringSQTaskrun)
	if ended(t, r.spinFor) {
		t.Error("task work flagged: the call must run it, not a reap")
	}
	// A completion already in the CQ ring (without DEFER_TASKRUN a
	// completion can be posted without the thread's task work): reap it.
	atomic.StoreUint32(&sqFlags, 0)
	atomic.AddUint32(&cqTail, 1)
	if !ended(t, r.spinFor) {
		t.Error("a completion in the CQ ring: the spin should end in a reap")
	}
}

// ended runs spin and returns what it returned, failing the test if it
// has not returned within a minute (a spin that missed what it watches).
func ended(t *testing.T, spin func() bool) bool {
	t.Helper()
	done := make(chan bool, 1)
	go func() { done <- spin() }()
	select {
	case v := <-done:
		return v
	case <-time.After(time.Minute):
		t.Fatal("the spin did not end on what it watches")
		return false
	}
}

// TestAIOWaitSpin: libaio's wait watches the aio ring the same way: events
// there end the spin; an empty ring is watched for spinNs, every time.
func TestAIOWaitSpin(t *testing.T) {
	if tscRate() == 0 {
		t.Skip("the job clock is not the TSC here: the wait does not spin (tscWaitSpin)")
	}
	var ring aioRing
	a := &aio{ring: &ring, spin: tscWaitSpin()}
	for i := range 4 {
		start := time.Now()
		a.spinFor()
		if d := time.Since(start); d < spinNs*time.Nanosecond {
			t.Fatalf("empty aio ring watched for %v at spin %d, less than %d ns", d, i+1, spinNs)
		}
	}
	a.spin.ticks = 1 << 62
	atomic.StoreUint32(&ring.tail, 1)
	ended(t, func() bool { a.spinFor(); return true })
}

// TestWaitSpinTrials: after a warm-up window the spin alternates windows
// with and without spinning, spinPairs of each, then keeps spinning for
// spinExploit windows only where the windows with the spin were at least
// spinGain faster (by their medians: one slow window is not a verdict),
// and then tries again.
func TestWaitSpinTrials(t *testing.T) {
	// run plays one cycle: the warm-up (first) or the previous cycle's
	// use, then the trials, windows with the spin lasting with ticks and
	// those without without, the last of each pair odd; it returns the
	// choice, and checks the windows after it follow it.
	run := func(t *testing.T, sp *waitSpin, now *uint64, with, without uint64) bool {
		t.Helper()
		for k := range 2 * spinPairs {
			wantOff := k%2 == 1
			if sp.spinning() == wantOff {
				t.Fatalf("trial window %d: spinning %v, want %v", k, sp.spinning(), !wantOff)
			}
			d := with
			if wantOff {
				d = without
			}
			if k == 2 {
				d *= 10 // one window held up: the median ignores it
			}
			*now += d
			sp.windowEnd(*now)
		}
		chosen := sp.spinning()
		for k := range spinExploit {
			if sp.spinning() != chosen {
				t.Fatalf("window %d after the choice: spinning %v, the choice was %v", k, sp.spinning(), chosen)
			}
			*now += 1000
			sp.windowEnd(*now)
		}
		return chosen
	}
	sp := waitSpin{ok: true}
	now := uint64(1 << 40)
	sp.windowEnd(now) // the warm-up window
	if !run(t, &sp, &now, 1000, 1300) {
		t.Error("windows with the spin 30 % faster: not spinning")
	}
	if run(t, &sp, &now, 1000, 1020) {
		t.Error("windows with the spin 2 % faster: spinning, which only costs CPU there")
	}
	if run(t, &sp, &now, 1100, 1000) {
		t.Error("windows with the spin slower: spinning")
	}
	if run(t, &sp, &now, 1000, 1100) {
		t.Errorf("windows with the spin 10 %% faster (spinGain %v): spinning", spinGain)
	}
	if !run(t, &sp, &now, 1000, 1200) {
		t.Errorf("windows with the spin 20 %% faster (spinGain %v): not spinning", spinGain)
	}
	// reaped ends a window after spinWindow completions, not before.
	sp = waitSpin{ok: true}
	sp.reaped(spinWindow - 1)
	if sp.start != 0 {
		t.Fatal("a window ended before spinWindow completions")
	}
	sp.reaped(1)
	if sp.start == 0 || sp.done != 0 {
		t.Fatalf("after spinWindow completions: start %d, done %d; want a new window", sp.start, sp.done)
	}
}
