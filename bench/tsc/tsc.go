// Package tsc reads the CPU's time-stamp counter and measures its rate
// against the monotonic clock, once per process. The job loop's clock
// (bench's jobClock) and the engines' spinning waits (bench/engine's
// waitSpin) both read it, so it sits below both: a leaf that knows nothing
// of jobs or engines.
package tsc

import (
	"math"
	"os"
	"strings"
	"sync"
	"time"
)

// monotonic is bench.ClockMonotonic: IOLAB_CLOCK=clock_gettime turns the
// TSC off.
const monotonic = "clock_gettime"

// clockSourceFile is where the kernel names its clocksource; a variable
// for tests.
var clockSourceFile = "/sys/devices/system/clocksource/clocksource0/current_clocksource"

// calStart is the first of the two readings the TSC's rate is measured
// between, taken when the program starts, so that the second, at the first
// job, rarely has to wait for the span to be long enough.
var calStart = sample()

// minSpan is the shortest span the rate is measured over: with each
// reading paired to within ~100 ns, 20 ms leaves the rate within 10 ppm.
const minSpan = 20 * time.Millisecond

var cal struct {
	once sync.Once
	mult uint64
}

// Rate is the TSC's rate as nanoseconds per tick in 32.32 fixed point,
// or 0 when the job loop must not read the TSC.
func Rate() uint64 {
	cal.once.Do(func() { cal.mult = calibrate(calStart) })
	return cal.mult
}

func calibrate(start reading) uint64 {
	if !haveTSC || os.Getenv("IOLAB_CLOCK") == monotonic {
		return 0
	}
	b, err := os.ReadFile(clockSourceFile)
	if err != nil || strings.TrimSpace(string(b)) != "tsc" {
		return 0
	}
	if left := minSpan - time.Duration(sample().mono-start.mono); left > 0 {
		time.Sleep(left)
	}
	end := sample()
	return mult(start, end)
}

// mult is the rate between two readings, or 0 when it is not a TSC's
// (between 100 MHz and 20 GHz).
func mult(a, b reading) uint64 {
	if b.tsc <= a.tsc || b.mono <= a.mono {
		return 0
	}
	nsPerTick := float64(b.mono-a.mono) / float64(b.tsc-a.tsc)
	if nsPerTick < 0.05 || nsPerTick > 10 {
		return 0
	}
	return uint64(math.Round(nsPerTick * (1 << 32)))
}

// reading is a TSC value and the monotonic time it was read at.
type reading struct {
	tsc  uint64
	mono int64 // since epoch
}

var epoch = time.Now()

// sample pairs a TSC read with the monotonic clock: of a few tries, the
// one with the least time between the clock reads around it.
func sample() reading {
	if !haveTSC {
		return reading{}
	}
	var best reading
	bestGap := int64(math.MaxInt64)
	for range 7 {
		m0 := int64(time.Since(epoch))
		t := Read()
		m1 := int64(time.Since(epoch))
		if gap := m1 - m0; gap < bestGap {
			bestGap, best = gap, reading{tsc: t, mono: m0 + gap/2}
		}
	}
	return best
}
