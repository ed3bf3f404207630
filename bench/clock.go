package bench

import (
	"math/bits"
	"time"

	"iolab/bench/tsc"
)

// The job loop reads the clock two or three times per I/O (lat_recorded.go).
// Through the vDSO (Go's monotonic clock) a read costs ~35 ns of CPU on a
// KVM guest; the CPU's time-stamp counter read directly costs ~12 ns, and
// it is what fio 3.33 reads by default on x86-64 (clocksource=cpu,
// gettime.c). iolab reads the TSC where fio would (bench/tsc: the CPU
// says it is invariant and the CPUs' counters are in step, or the kernel
// keeps time with it), converted to nanoseconds at a rate measured against
// the monotonic clock, once per process. Anywhere else it reads the
// monotonic clock. ClockSource tells which, for the run's environment; a
// job's clocksource option chooses for the run (jobClockFor).

// Clock sources, as HostInfo.Clock and JobResult.Clock record them.
const (
	ClockTSC       = "tsc"
	ClockMonotonic = "clock_gettime"
	ClockWall      = "gettimeofday"
)

// ClockSources are the values of fio's clocksource option: the TSC, the
// monotonic clock, the wall clock at microseconds.
var ClockSources = []string{"cpu", ClockMonotonic, ClockWall}

// jobClock is the job loop's clock: nanoseconds since it was made.
type jobClock struct {
	base time.Time
	tsc0 uint64
	mult uint64 // nanoseconds per TSC tick, 32.32 fixed point; 0: not the TSC
	wall int64  // clocksource=gettimeofday: the wall clock's microseconds at base; 0: monotonic
}

func newJobClock() jobClock { return jobClockFor("") }

// jobClockFor is the clock of a run whose clocksource option is source:
// "" is fio's default (the TSC where fio would read it, else the
// monotonic clock: ClockSource); "cpu" the TSC, trusted or not (fio then
// says it "may not be reliable"), where there is one; "clock_gettime" the
// monotonic clock; "gettimeofday" the wall clock, in whole microseconds
// as gettimeofday(2) gives it (fio's CS_GTOD), so every time is a
// multiple of 1 µs and a change of the system's time moves it.
func jobClockFor(source string) jobClock {
	c := jobClock{base: time.Now()}
	var mult uint64
	switch source {
	case "":
		mult = tsc.Rate()
	case "cpu":
		mult = tsc.ForcedRate()
	case ClockWall:
		c.wall = c.base.UnixMicro()
		return c
	}
	if mult != 0 {
		c.tsc0, c.mult = tsc.Read(), mult
	}
	return c
}

// which is the clock c reads: ClockTSC, ClockWall or ClockMonotonic.
func (c *jobClock) which() string {
	switch {
	case c.mult != 0:
		return ClockTSC
	case c.wall != 0:
		return ClockWall
	}
	return ClockMonotonic
}

// since is the time since the clock was made, in nanoseconds.
func (c *jobClock) since() int64 {
	if c.mult != 0 {
		hi, lo := bits.Mul64(tsc.Read()-c.tsc0, c.mult)
		return int64(hi<<32 | lo>>32)
	}
	if c.wall != 0 {
		return (time.Now().UnixMicro() - c.wall) * 1000
	}
	return int64(time.Since(c.base))
}

// HaveTSC says whether the CPU has a time-stamp counter iolab can read
// (clocksource=cpu).
func HaveTSC() bool { return tsc.ForcedRate() != 0 }

// ClockWhy says why the default is the TSC or not (bench/tsc's Why).
func ClockWhy() string { return tsc.Why() }

// ClockSource is the clock job loops read by default: ClockTSC or
// ClockMonotonic.
func ClockSource() string {
	if tsc.Rate() != 0 {
		return ClockTSC
	}
	return ClockMonotonic
}
