package bench

import (
	"math"
	"math/bits"
	"os"
	"strings"
	"sync"
	"time"
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
	mult := tscRate()
	c := jobClock{base: time.Now()}
	if mult != 0 {
		c.tsc0, c.mult = rdtsc(), mult
	}
	return c
}

// since is the time since the clock was made, in nanoseconds.
func (c *jobClock) since() int64 {
	if c.mult != 0 {
		hi, lo := bits.Mul64(rdtsc()-c.tsc0, c.mult)
		return int64(hi<<32 | lo>>32)
	}
	return int64(time.Since(c.base))
}

// ClockSource is the clock job loops read: ClockTSC or ClockMonotonic.
func ClockSource() string {
	if tscRate() != 0 {
		return ClockTSC
	}
	return ClockMonotonic
}

// clockSourceFile is where the kernel names its clocksource; a variable
// for tests.
var clockSourceFile = "/sys/devices/system/clocksource/clocksource0/current_clocksource"

// tscCalStart is the first of the two readings the TSC's rate is measured
// between, taken when the program starts, so that the second, at the first
// job, rarely has to wait for the span to be long enough.
var tscCalStart = tscSample()

// tscMinSpan is the shortest span the rate is measured over: with each
// reading paired to within ~100 ns, 20 ms leaves the rate within 10 ppm.
const tscMinSpan = 20 * time.Millisecond

var tscCal struct {
	once sync.Once
	mult uint64
}

// tscRate is the TSC's rate as nanoseconds per tick in 32.32 fixed point,
// or 0 when the job loop must not read the TSC.
func tscRate() uint64 {
	tscCal.once.Do(func() { tscCal.mult = calibrateTSC(tscCalStart) })
	return tscCal.mult
}

func calibrateTSC(start tscReading) uint64 {
	if !haveTSC || os.Getenv("IOLAB_CLOCK") == ClockMonotonic {
		return 0
	}
	b, err := os.ReadFile(clockSourceFile)
	if err != nil || strings.TrimSpace(string(b)) != "tsc" {
		return 0
	}
	if left := tscMinSpan - time.Duration(tscSample().mono-start.mono); left > 0 {
		time.Sleep(left)
	}
	end := tscSample()
	return tscMult(start, end)
}

// tscMult is the rate between two readings, or 0 when it is not a TSC's
// (between 100 MHz and 20 GHz).
func tscMult(a, b tscReading) uint64 {
	if b.tsc <= a.tsc || b.mono <= a.mono {
		return 0
	}
	nsPerTick := float64(b.mono-a.mono) / float64(b.tsc-a.tsc)
	if nsPerTick < 0.05 || nsPerTick > 10 {
		return 0
	}
	return uint64(math.Round(nsPerTick * (1 << 32)))
}

// tscReading is a TSC value and the monotonic time it was read at.
type tscReading struct {
	tsc  uint64
	mono int64 // since clockEpoch
}

var clockEpoch = time.Now()

// tscSample pairs a TSC read with the monotonic clock: of a few tries, the
// one with the least time between the clock reads around it.
func tscSample() tscReading {
	if !haveTSC {
		return tscReading{}
	}
	var best tscReading
	bestGap := int64(math.MaxInt64)
	for range 7 {
		m0 := int64(time.Since(clockEpoch))
		t := rdtsc()
		m1 := int64(time.Since(clockEpoch))
		if gap := m1 - m0; gap < bestGap {
			bestGap, best = gap, tscReading{tsc: t, mono: m0 + gap/2}
		}
	}
	return best
}
