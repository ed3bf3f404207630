package bench

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestJobClockAgrees checks the job clock against the monotonic clock read
// around it: within 50 ppm of the span plus 2 µs, after 50 ms, whichever
// source it reads.
func TestJobClockAgrees(t *testing.T) {
	c := newJobClock()
	time.Sleep(50 * time.Millisecond)
	var last string
	for try := 0; try < 20; try++ {
		before := int64(time.Since(c.base))
		got := c.since()
		after := int64(time.Since(c.base))
		if after-before > 20_000 {
			continue // descheduled between the reads: no bracket
		}
		tol := after/20_000 + 2_000
		if got >= before-tol && got <= after+tol {
			return
		}
		last = time.Duration(got).String() + " outside " + time.Duration(before).String() + "…" + time.Duration(after).String()
	}
	t.Fatalf("job clock (%s) disagrees with the monotonic clock: %s", ClockSource(), last)
}

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
		m := calibrateTSC(tscSample())
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
	if m := calibrateTSC(tscSample()); m != 0 {
		t.Errorf("no clocksource file: the TSC is read")
	}
}

func TestTSCMultBounds(t *testing.T) {
	a := tscReading{tsc: 1000, mono: 1000}
	for _, tc := range []struct {
		b    tscReading
		want bool
	}{
		{tscReading{tsc: 3_000_001_000, mono: 1_000_001_000}, true}, // 3 GHz
		{tscReading{tsc: 1000, mono: 2000}, false},                  // no ticks
		{tscReading{tsc: 2000, mono: 1000}, false},                  // no time
		{tscReading{tsc: 1_001_000, mono: 1_000_001_000}, false},    // 1 MHz
		{tscReading{tsc: 900, mono: 2000}, false},                   // backwards
	} {
		if got := tscMult(a, tc.b) != 0; got != tc.want {
			t.Errorf("tscMult(%v, %v) usable = %v, want %v", a, tc.b, got, tc.want)
		}
	}
	if m := tscMult(a, tscReading{tsc: 3_000_001_000, mono: 1_000_001_000}); m != 1431655765 {
		t.Errorf("3 GHz: mult %d, want 1431655765 (2^32/3)", m)
	}
}

// BenchmarkClockRead is one job-clock read, against one monotonic read.
func BenchmarkClockRead(b *testing.B) {
	c := newJobClock()
	b.Run("job", func(b *testing.B) {
		var s int64
		for b.Loop() {
			s += c.since()
		}
		_ = s
	})
	b.Run("monotonic", func(b *testing.B) {
		var s int64
		for b.Loop() {
			s += int64(time.Since(c.base))
		}
		_ = s
	})
}
