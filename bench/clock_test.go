package bench

import (
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
