package bench

import (
	"testing"
	"time"
)

// TestJobsStartOnFioTick: a phase's jobs start on fio's start tick — the
// first multiple of 100 ms after their launch at which all are set up —
// never straight after their set-up, so their threads sleep before the
// first I/O as fio's do; every phase of a stonewalled run waits its own.
func TestJobsStartOnFioTick(t *testing.T) {
	for _, tc := range []struct{ elapsed, want time.Duration }{
		{0, 100 * time.Millisecond},
		{30 * time.Millisecond, 70 * time.Millisecond},
		{100 * time.Millisecond, 100 * time.Millisecond},
		{250 * time.Millisecond, 50 * time.Millisecond},
	} {
		if got := startTickWait(tc.elapsed); got != tc.want {
			t.Errorf("set up %v after the launch: start %v later, want %v", tc.elapsed, got, tc.want)
		}
	}

	first, second := NewJob(), NewJob()
	first.Name, first.IOEngine, first.RW, first.Size = "first", "null", "randread", 64<<10
	second = first
	second.Name, second.Stonewall = "second", true
	before := time.Now()
	res := runOne(t, first, second)
	if len(res.Groups) != 2 {
		t.Fatalf("%d groups, want 2 phases", len(res.Groups))
	}
	a, b := res.Groups[0].Jobs[0], res.Groups[1].Jobs[0]
	if d := a.Start.Sub(before); d < jobStartTick {
		t.Errorf("the first phase's job started %v after the run, want at least %v", d, jobStartTick)
	}
	if d := b.Start.Sub(a.Start); d < jobStartTick {
		t.Errorf("the second phase's job started %v after the first's, want at least %v", d, jobStartTick)
	}
}

// TestDelayedStartAsFio: a job whose startdelay has passed by its phase's
// launch starts with the others; a later one is created at fio's next
// look (every tick after the others started) at or after its delay's end,
// and starts a tick after that.
func TestDelayedStartAsFio(t *testing.T) {
	launched := time.Unix(1000, 0)
	begun := launched.Add(150 * time.Millisecond)
	ms := func(n int) time.Time { return launched.Add(time.Duration(n) * time.Millisecond) }
	for _, tc := range []struct {
		due, want time.Time
	}{
		{ms(-20), begun},  // due before the launch: with the others
		{ms(0), begun},    // due at the launch
		{ms(10), ms(350)}, // first look at begun+100, started a tick later
		{ms(250), ms(350)},
		{ms(251), ms(450)}, // just missed the first look
		{ms(560), ms(750)},
	} {
		if got := delayedStart(tc.due, launched, begun); !got.Equal(tc.want) {
			t.Errorf("due %v after the launch: starts %v after it, want %v", tc.due.Sub(launched), got.Sub(launched), tc.want.Sub(launched))
		}
	}
}
