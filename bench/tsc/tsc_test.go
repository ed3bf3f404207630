package tsc

import (
	"os"
	"path/filepath"
	"testing"
)

// TestTSCOnlyWhereTheKernelTrustsIt checks that the TSC is read only when
// the kernel's clocksource is tsc, and that its rate is then a plausible
// one.
func TestTSCOnlyWhereTheKernelTrustsIt(t *testing.T) {
	dir := t.TempDir()
	saved := clockSourceFile
	defer func() { clockSourceFile = saved }()
	for _, src := range []string{"kvm-clock", "hpet", "tsc"} {
		clockSourceFile = filepath.Join(dir, src)
		if err := os.WriteFile(clockSourceFile, []byte(src+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		m := calibrate(sample())
		switch {
		case src != "tsc" && m != 0:
			t.Errorf("clocksource %s: the TSC is read (rate %d)", src, m)
		case src == "tsc" && haveTSC && m == 0:
			t.Errorf("clocksource tsc on amd64: the TSC is not read")
		case m != 0:
			if ghz := float64(1<<32) / float64(m); ghz < 0.1 || ghz > 20 {
				t.Errorf("TSC at %.3f GHz", ghz)
			}
		}
	}
	clockSourceFile = filepath.Join(dir, "missing")
	if m := calibrate(sample()); m != 0 {
		t.Errorf("no clocksource file: the TSC is read")
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
