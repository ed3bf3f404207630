package bench

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func monoNow() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// TestMonoMapJobClock: the job loop's own clock, mapped, lands between
// two CLOCK_MONOTONIC readings around it, as the kernel's trace times do.
func TestMonoMapJobClock(t *testing.T) {
	c := newJobClock()
	var m monoMap
	m.anchor(takeAnchor(c.since, monoNow))
	for i := range 20 {
		if i == 10 {
			time.Sleep(150 * time.Millisecond) // past minAnchorSpan: the line's slope is used
			m.anchor(takeAnchor(c.since, monoNow))
		}
		before := monoNow()
		loop := c.since()
		after := monoNow()
		if got := m.mono(loop); got < before-200 || got > after+200 {
			t.Fatalf("reading %d: mapped %d, not within [%d, %d] (±200 ns)", i, got, before, after)
		}
	}
}

// TestMonoMapDrift: a loop clock whose rate is off by 20 ppm (a TSC
// measured short) maps within a few nanoseconds between its anchors.
func TestMonoMapDrift(t *testing.T) {
	mono := int64(5_000_000_000)
	loopOf := func(m int64) int64 { return int64(float64(m-5_000_000_000) * (1 + 20e-6)) }
	var m monoMap
	m.anchor(takeAnchor(func() int64 { return loopOf(mono) }, func() int64 { return mono }))
	mono += 60_000_000_000 // a minute later
	m.anchor(takeAnchor(func() int64 { return loopOf(mono) }, func() int64 { return mono }))
	for _, at := range []int64{5_000_000_000, 20_000_000_000, 47_000_000_123, 65_000_000_000} {
		if got := m.mono(loopOf(at)); got < at-2 || got > at+2 {
			t.Errorf("mono(loop(%d)) = %d", at, got)
		}
	}
	// One offset alone would be 1.2 ms off at the start.
	var one monoMap
	one.anchor(clockAnchor{loop: loopOf(mono), mono: mono})
	if got := one.mono(loopOf(5_000_000_000)); got-5_000_000_000 > -1_000_000 {
		t.Errorf("a single anchor mapped the start within %d ns: the test's drift is too small to see", got-5_000_000_000)
	}
}
