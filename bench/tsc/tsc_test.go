package tsc

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTSCWhereFioReadsIt checks that the TSC is read where the kernel
// keeps time with it, or where the CPU says it is invariant and the CPUs'
// counters are in step (fio's rule, with a tolerance), and not where the
// CPU does not say so; that Why says which; and that the rate is then a
// plausible one.
func TestTSCWhereFioReadsIt(t *testing.T) {
	dir := t.TempDir()
	savedSrc, savedInfo := clockSourceFile, cpuInfoFile
	defer func() { clockSourceFile, cpuInfoFile = savedSrc, savedInfo }()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const flags = "processor\t: 0\nflags\t\t: fpu tsc msr %s rdtscp\n\nprocessor\t: 1\n"
	for _, tc := range []struct {
		src, cpuFlags string
		want          string // "tsc", "no", or "either" (the in-step check on this machine decides)
		why           string
	}{
		{"tsc", "", "tsc", "the kernel's clocksource is tsc"},
		{"kvm-clock", "constant_tsc nonstop_tsc", "either", "invariant TSC"},
		{"hpet", "constant_tsc nonstop_tsc tsc_reliable", "either", "invariant TSC"},
		{"kvm-clock", "constant_tsc", "no", "does not say its TSC is invariant"},
		{"kvm-clock", "nonstop_tsc", "no", "does not say its TSC is invariant"},
		{"kvm-clock", "", "no", "does not say its TSC is invariant"},
	} {
		clockSourceFile = write("src", tc.src+"\n")
		cpuInfoFile = write("cpuinfo", fmt.Sprintf(flags, tc.cpuFlags))
		m, why := calibrate(sample())
		name := tc.src + " [" + tc.cpuFlags + "]"
		if !haveTSC {
			if m != 0 {
				t.Errorf("%s: the TSC is read where there is none", name)
			}
			continue
		}
		switch {
		case tc.want == "tsc" && m == 0, tc.want == "no" && m != 0:
			t.Errorf("%s: rate %d (%s), want %s", name, m, why, tc.want)
		case !strings.Contains(why, tc.why):
			t.Errorf("%s: why %q, want it to say %q", name, why, tc.why)
		case tc.want == "either" && m == 0 && !strings.Contains(why, "differ by"):
			t.Errorf("%s: TSC refused without the skew that refused it: %q", name, why)
		case tc.want == "either" && m != 0 && !strings.Contains(why, "in step within"):
			t.Errorf("%s: TSC read without saying how close the CPUs are: %q", name, why)
		}
		if m != 0 {
			if ghz := float64(1<<32) / float64(m); ghz < 0.1 || ghz > 20 {
				t.Errorf("%s: TSC at %.3f GHz", name, ghz)
			}
		}
	}
	clockSourceFile, cpuInfoFile = filepath.Join(dir, "missing"), filepath.Join(dir, "missing")
	if m, why := calibrate(sample()); m != 0 {
		t.Errorf("no clocksource or cpuinfo file: the TSC is read (%s)", why)
	}
	t.Setenv("IOLAB_CLOCK", "clock_gettime")
	clockSourceFile = write("src", "tsc\n")
	if m, why := calibrate(sample()); m != 0 || !strings.Contains(why, "IOLAB_CLOCK") {
		t.Errorf("IOLAB_CLOCK=clock_gettime: rate %d (%s)", m, why)
	}
}

// TestBackSteps counts the steps back in an order of reads and the
// largest of them.
func TestBackSteps(t *testing.T) {
	st := func(tscs ...uint64) []stamp {
		var o []stamp
		for i, v := range tscs {
			o = append(o, stamp{seq: uint32(i), cpu: int32(i % 2), tsc: v})
		}
		return o
	}
	for _, tc := range []struct {
		order []stamp
		n     int
		worst uint64
	}{
		{nil, 0, 0},
		{st(5), 0, 0},
		{st(1, 2, 2, 3, 10), 0, 0},
		{st(1, 10, 4, 11, 12), 1, 6},
		{st(100, 90, 95, 40, 200, 199), 3, 55},
	} {
		n, worst := backSteps(tc.order)
		if n != tc.n || worst != tc.worst {
			t.Errorf("backSteps(%v) = %d, %d; want %d, %d", tc.order, n, worst, tc.n, tc.worst)
		}
	}
}

func TestTSCMultBounds(t *testing.T) {
	a := reading{tsc: 1000, mono: 1000}
	for _, tc := range []struct {
		b    reading
		want bool
	}{
		{reading{tsc: 3_000_001_000, mono: 1_000_001_000}, true}, // 3 GHz
		{reading{tsc: 1000, mono: 2000}, false},                  // no ticks
		{reading{tsc: 2000, mono: 1000}, false},                  // no time
		{reading{tsc: 1_001_000, mono: 1_000_001_000}, false},    // 1 MHz
		{reading{tsc: 900, mono: 2000}, false},                   // backwards
	} {
		if got := mult(a, tc.b) != 0; got != tc.want {
			t.Errorf("mult(%v, %v) usable = %v, want %v", a, tc.b, got, tc.want)
		}
	}
	if m := mult(a, reading{tsc: 3_000_001_000, mono: 1_000_001_000}); m != 1431655765 {
		t.Errorf("3 GHz: mult %d, want 1431655765 (2^32/3)", m)
	}
}
