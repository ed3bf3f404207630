package bench

// The block layer's timestamps are the kernel's CLOCK_MONOTONIC
// (bpf_ktime_get_ns); a job loop's are its jobClock's (clock.go): the
// monotonic clock since the loop began, or the TSC at a rate measured once
// against it. monoMap turns the second into the first. On a monotonic
// jobClock the offset is constant and one anchor does; a TSC rate off by
// a few ppm drifts by microseconds over a run, so the map draws a line
// through the first anchor and the latest, and every anchor is taken
// after the loop times it converts (the collector takes one as each chunk
// of records arrives): a time is interpolated, never extrapolated far.

// clockAnchor is a reading of both clocks at (nearly) the same instant.
type clockAnchor struct{ loop, mono int64 }

// anchorTries is how many bracketed readings an anchor takes the
// narrowest of: a preemption between the reads widens one, not all.
const anchorTries = 5

// takeAnchor reads loop, then mono, then loop again, and keeps the mono
// reading against the middle of the narrowest bracket.
func takeAnchor(loop, mono func() int64) clockAnchor {
	best := clockAnchor{}
	width := int64(-1)
	for range anchorTries {
		a := loop()
		m := mono()
		b := loop()
		if w := b - a; width < 0 || w < width {
			width, best = w, clockAnchor{loop: a + w/2, mono: m}
		}
	}
	return best
}

// monoMap maps a job loop's times to CLOCK_MONOTONIC.
type monoMap struct {
	first, last clockAnchor
	set         bool
}

// anchor adds a reading: the first stays, the latest replaces the last.
func (m *monoMap) anchor(a clockAnchor) {
	if !m.set {
		m.first, m.last, m.set = a, a, true
		return
	}
	m.last = a
}

// minSpan is the least span between anchors whose slope is used: below
// it, the readings' own jitter would tilt the line more than the clock's
// drift does.
const minAnchorSpan = 100_000_000 // 100 ms

// mono is t on CLOCK_MONOTONIC.
func (m *monoMap) mono(t int64) int64 {
	span := m.last.loop - m.first.loop
	if span < minAnchorSpan {
		return t + m.last.mono - m.last.loop
	}
	slope := float64(m.last.mono-m.first.mono) / float64(span)
	return m.first.mono + int64(float64(t-m.first.loop)*slope+0.5)
}
