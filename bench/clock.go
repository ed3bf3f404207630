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
// gettime.c). iolab reads the TSC where the kernel itself keeps time with
// it — its clocksource is "tsc", so the counter is invariant and in step
// across CPUs — converted to nanoseconds at a rate measured against the
// monotonic clock, once per process. Anywhere else it reads the monotonic
// clock. ClockSource tells which, for the run's environment.

// Clock sources, as HostInfo.Clock records them.
const (
	ClockTSC       = "tsc"
	ClockMonotonic = "clock_gettime"
)

// jobClock is the job loop's clock: nanoseconds since it was made.
type jobClock struct {
	base time.Time
	tsc0 uint64
	mult uint64 // nanoseconds per TSC tick, 32.32 fixed point; 0: monotonic
}

func newJobClock() jobClock {
	mult := tsc.Rate()
	c := jobClock{base: time.Now()}
	if mult != 0 {
		c.tsc0, c.mult = tsc.Read(), mult
	}
	return c
}

// since is the time since the clock was made, in nanoseconds.
func (c *jobClock) since() int64 {
	if c.mult != 0 {
		hi, lo := bits.Mul64(tsc.Read()-c.tsc0, c.mult)
		return int64(hi<<32 | lo>>32)
	}
	return int64(time.Since(c.base))
}

// ClockSource is the clock job loops read: ClockTSC or ClockMonotonic.
func ClockSource() string {
	if tsc.Rate() != 0 {
		return ClockTSC
	}
	return ClockMonotonic
}
