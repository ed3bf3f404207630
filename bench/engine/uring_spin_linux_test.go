package engine

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"iolab/bench/tsc"
)

// TestWaitSpin drives the wait spin with a ring of its own words: task work
// flagged ends the spin for the call that runs it, completions in the CQ
// ring end it for a reap without a call, and a spin that sees nothing
// makes the next waits skip spinning, twice as many after each such spin,
// up to spinMaxSkip, until one sees something again.
func TestWaitSpin(t *testing.T) {
	if tsc.Rate() == 0 {
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

	// Nothing comes: each empty spin lasts spinNs and sets the skips.
	var skips []int
	for range 9 {
		start := time.Now()
		if r.spinFor() {
			t.Fatal("an empty ring reaped")
		}
		if d := time.Since(start); d < spinNs*time.Nanosecond {
			t.Fatalf("an empty spin gave up after %v, before %d ns", d, spinNs)
		}
		skips = append(skips, r.spin.skip)
		for r.spin.skip > 0 {
			r.spinFor() // skipped waits return at once
		}
	}
	want := []int{0, 1, 2, 4, 8, 16, 32, 64, 64}
	for i := range want {
		if skips[i] != want[i] {
			t.Fatalf("skips after empty spins %v, want %v", skips, want)
		}
	}

	// Task work flagged: make the call, and spin again at the next wait.
	atomic.StoreUint32(&sqFlags, ioringSQTaskrun)
	if r.spinFor() {
		t.Error("task work flagged: the call must run it, not a reap")
	}
	if r.spin.skip != 0 || r.spin.backoff != 0 {
		t.Errorf("after a spin that saw task work: skip %d, backoff %d, want 0, 0", r.spin.skip, r.spin.backoff)
	}

	// A completion already in the CQ ring (without DEFER_TASKRUN a
	// completion can be posted without the thread's task work): reap it.
	atomic.StoreUint32(&sqFlags, 0)
	atomic.AddUint32(&cqTail, 1)
	if !r.spinFor() {
		t.Error("a completion in the CQ ring: the spin should end in a reap")
	}
}

// TestAIOWaitSpin: libaio's wait watches the aio ring the same way: events
// there end the spin at once; an empty ring is watched for spinNs, and
// then the next wait skips spinning.
func TestAIOWaitSpin(t *testing.T) {
	if tsc.Rate() == 0 {
		t.Skip("the job clock is not the TSC here: the wait does not spin (tscWaitSpin)")
	}
	var ring aioRing
	a := &aio{ring: &ring, spin: tscWaitSpin()}
	start := time.Now()
	a.spinFor()
	if d := time.Since(start); d < spinNs*time.Nanosecond {
		t.Fatalf("an empty aio ring was watched for %v, less than %d ns", d, spinNs)
	}
	if a.spin.skip != 0 || a.spin.backoff != 1 {
		t.Fatalf("after the first empty spin: skip %d, backoff %d, want 0, 1", a.spin.skip, a.spin.backoff)
	}
	a.spinFor() // empty again: the next wait skips
	if a.spin.skip != 1 {
		t.Fatalf("after the second empty spin: skip %d, want 1", a.spin.skip)
	}
	a.spinFor() // skipped
	atomic.StoreUint32(&ring.tail, 1)
	a.spinFor()
	if a.spin.backoff != 0 || a.spin.skip != 0 {
		t.Errorf("events in the ring: skip %d, backoff %d, want 0, 0", a.spin.skip, a.spin.backoff)
	}
}

// TestWaitSpinOneCPU: a job thread that may run on one CPU only spins on
// every wait of a window that spins, however many spins came back empty
// (there nothing can complete while it spins, and the spin pays by keeping
// the job from preempting the device's worker); its engine_setup says so.
func TestWaitSpinOneCPU(t *testing.T) {
	if tsc.Rate() == 0 {
		t.Skip("the job clock is not the TSC here: the wait does not spin (tscWaitSpin)")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var was unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		t.Fatal(err)
	}
	if was.Count() < 2 {
		t.Fatalf("this test needs a thread that may run on two CPUs or more; it may run on %d", was.Count())
	}
	if tscWaitSpin().oneCPU {
		t.Fatalf("on %d CPUs: the spin took itself to be on one", was.Count())
	}
	cpu := -1
	for c := range 1024 {
		if was.IsSet(c) {
			cpu = c
			break
		}
	}
	var one unix.CPUSet
	one.Set(cpu)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		t.Fatal(err)
	}
	defer unix.SchedSetaffinity(0, &was)
	var ring aioRing
	a := &aio{ring: &ring, spin: tscWaitSpin()}
	if !a.spin.oneCPU {
		t.Fatalf("pinned to CPU %d: the spin did not see it runs on one CPU", cpu)
	}
	for i := range 6 {
		start := time.Now()
		a.spinFor()
		if d := time.Since(start); d < spinNs*time.Nanosecond {
			t.Fatalf("on one CPU, empty spin %d gave up after %v, before %d ns (skip %d)", i+1, d, spinNs, a.spin.skip)
		}
	}
	a.spin.windows, a.spin.spun = 3, 2
	if got, want := a.spin.summary(), "waits spun in 2 of 3 windows of 4096 I/Os, on one CPU without back-off"; got != want {
		t.Errorf("engine_setup: %q, want %q", got, want)
	}
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
