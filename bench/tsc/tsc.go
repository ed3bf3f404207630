// Package tsc reads the CPU's time-stamp counter, decides whether the job
// loop may time I/O with it (where fio would: Rate), and measures its rate
// against the monotonic clock, once per process. The job loop's clock
// (bench's jobClock) and the engines' spinning waits (bench/engine's
// waitSpin) both read it, so it sits below both: a leaf that knows nothing
// of jobs or engines.
package tsc

import (
	"fmt"
	"math"
	"math/bits"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

// monotonic is bench.ClockMonotonic: IOLAB_CLOCK=clock_gettime turns the
// TSC off.
const monotonic = "clock_gettime"

// clockSourceFile is where the kernel names its clocksource, and
// cpuInfoFile where it lists the CPU's flags; variables for tests.
var (
	clockSourceFile = "/sys/devices/system/clocksource/clocksource0/current_clocksource"
	cpuInfoFile     = "/proc/cpuinfo"
)

// calStart is the first of the two readings the TSC's rate is measured
// between, taken when the program starts, so that the second, at the first
// job, rarely has to wait for the span to be long enough.
var calStart = sample()

// minSpan is the shortest span the rate is measured over: with each
// reading paired to within ~100 ns, 20 ms leaves the rate within 10 ppm.
const minSpan = 20 * time.Millisecond

// maxSkew is how far the counters of two CPUs may differ for the TSC to
// count as in step: a latency timed from one CPU to another is off by at
// most this much.
const maxSkew = time.Microsecond

var cal struct {
	once       sync.Once
	mult       uint64 // 0: the job loop must not read the TSC
	forced     uint64 // the rate, whether or not the TSC is trusted
	why        string
	forcedOnce sync.Once
}

// Rate is the TSC's rate as nanoseconds per tick in 32.32 fixed point,
// or 0 when the job loop must not read the TSC by default. The TSC is
// read where fio 3.33 reads it by default (clocksource=cpu, gettime.c's
// fio_clock_init): the CPU says its counter is invariant (CPUID
// 0x80000007 EDX bit 8, which Linux shows as the constant_tsc and
// nonstop_tsc flags) and the counters of the CPUs the process may run on
// are in step — or the kernel keeps its own time with it (clocksource
// tsc), having checked both. The kernel of a VM may keep time with its
// hypervisor's clock (kvm-clock) over an invariant TSC; fio reads the TSC
// there, and so does iolab.
//
// fio's in-step check refuses the TSC on any read, of 1000 per CPU in one
// global order, lower than the read before it. Its reads are not fenced:
// RDTSC may be taken before the load that orders it, or after the
// compare-and-swap that gives it its place, and on this project's 2-vCPU
// VM that check failed 8 of 20 fio starts (steps back of up to ~700
// ticks), so fio's clock changed from one run to the next. iolab makes
// the same reads (readInStep) with LFENCE on both sides of RDTSC — 0
// steps back in every try there — and allows steps back of up to
// maxSkew, a latency timed across CPUs being off by at most that. Why
// says what was decided.
func Rate() uint64 {
	cal.once.Do(func() { cal.mult, cal.why = calibrate(calStart) })
	return cal.mult
}

// Why says why the job loop reads the TSC or not: "the kernel's
// clocksource is tsc", "invariant TSC, in step within 0 ns across 2
// CPUs", "the CPU does not say its TSC is invariant (…)", …
func Why() string {
	Rate()
	return cal.why
}

// ForcedRate is the TSC's rate whether or not it is trusted, for
// clocksource=cpu (which fio honours on any x86-64 CPU, saying it "may
// not be reliable"); 0 where there is no TSC to read.
func ForcedRate() uint64 {
	if m := Rate(); m != 0 {
		return m
	}
	cal.forcedOnce.Do(func() {
		if haveTSC {
			cal.forced = measure(calStart)
		}
	})
	return cal.forced
}

func calibrate(start reading) (uint64, string) {
	if !haveTSC {
		return 0, "no TSC on this architecture"
	}
	if os.Getenv("IOLAB_CLOCK") == monotonic {
		return 0, "IOLAB_CLOCK=" + monotonic
	}
	b, err := os.ReadFile(clockSourceFile)
	if err == nil && strings.TrimSpace(string(b)) == "tsc" {
		return measure(start), "the kernel's clocksource is tsc"
	}
	if !invariant() {
		return 0, "the CPU does not say its TSC is invariant (constant_tsc and nonstop_tsc)"
	}
	m := measure(start)
	if m == 0 {
		return 0, "the TSC's rate is not a TSC's"
	}
	order, ok := readInStep()
	if !ok {
		return 0, "invariant TSC, but its CPUs could not be checked for being in step (a thread could not be pinned)"
	}
	_, worst := backSteps(order)
	skew := time.Duration(ticksToNs(worst, m))
	if skew > maxSkew {
		return 0, fmt.Sprintf("invariant TSC, but the CPUs' counters differ by %v (more than %v)", skew, maxSkew)
	}
	cpus := fmt.Sprintf("%d CPUs", cpusIn(order))
	if cpusIn(order) == 1 {
		cpus = "1 CPU"
	}
	return m, fmt.Sprintf("invariant TSC, in step within %d ns across %s", skew.Nanoseconds(), cpus)
}

// measure is the rate between start and now, at least minSpan later.
func measure(start reading) uint64 {
	if left := minSpan - time.Duration(sample().mono-start.mono); left > 0 {
		time.Sleep(left)
	}
	return mult(start, sample())
}

// ticksToNs converts ticks at rate m (32.32 ns per tick) to nanoseconds.
func ticksToNs(ticks, m uint64) uint64 {
	hi, lo := bits.Mul64(ticks, m)
	return hi<<32 | lo>>32
}

// invariant says whether the kernel lists the CPU's TSC as constant-rate
// and running in every sleep state: CPUID's invariant-TSC bit, which is
// fio's tsc_reliable.
func invariant() bool {
	b, err := os.ReadFile(cpuInfoFile)
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(b)) {
		name, flags, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(name) != "flags" {
			continue
		}
		f := strings.Fields(flags)
		return slices.Contains(f, "constant_tsc") && slices.Contains(f, "nonstop_tsc")
	}
	return false
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
