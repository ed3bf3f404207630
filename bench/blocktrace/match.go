package blocktrace

import (
	"slices"
)

// Bio is one bio's way through the block layer, as its events tell it:
// the times (CLOCK_MONOTONIC ns; 0 where there was no such event) of the
// request it ended in.
type Bio struct {
	Dev     uint32
	Sector  uint64
	Sectors uint32
	Op      byte   // rwbs' first letter: 'R', 'W', 'D' (discard), 'F' (flush)
	TID     uint32 // the thread that queued it
	Own     bool   // the thread is the traced process's

	Queue    int64 // Q: entered the block layer
	GetRq    int64 // G: given a request (0 when merged into another's)
	Insert   int64 // I: inserted into the I/O scheduler (0 when issued directly)
	Issue    int64 // D: issued to the driver (the last issue, after a requeue)
	Complete int64 // C: completed (the last piece's, for a split bio)

	// Merged: it shared its request with other bios, so Issue and
	// Complete are the request's. Split: the kernel cut it into several
	// requests. BioBased: the driver took it as a bio (zram, dm), with
	// no request: only Queue and Complete are set.
	Merged, Split, BioBased bool

	pieces int // requests of a split bio not yet complete
}

// OneToOne reports whether the bio was one request and the request only
// it: its parts are its own.
func (b *Bio) OneToOne() bool { return !b.Merged && !b.Split }

// MatchStats count what the matcher could not pair.
type MatchStats struct {
	Bios int // emitted
	// Orphans are request events whose bio was never seen (queued
	// before tracing began, or its Q lost).
	Orphans int
	// Pending are bios still in flight when the matcher was flushed.
	Pending int
}

type devSector struct {
	dev    uint32
	sector uint64
}

// request is one request and the bios in it.
type request struct {
	dev                  uint32
	start                uint64
	sectors              uint32
	bios                 []*Bio
	getRq, insert, issue int64
}

// Matcher pairs a trace's events into bios, as btt does blktrace's: a
// bio by its device and first sector from its Q until a request takes it
// (G) or it is merged into one (M, F), a request by its first sector
// (and its last, for back merges) until it completes (C). Events are
// taken in time order: Add holds the newest window back, since the ring
// buffer interleaves CPUs only roughly in time.
type Matcher struct {
	emit   func(*Bio)
	window int64 // ns held back for reordering
	held   []Event
	bios   map[devSector]*Bio
	reqs   map[devSector]*request
	ends   map[devSector]*request
	stats  MatchStats
}

// NewMatcher makes a matcher that hands each bio to emit once it has
// completed.
func NewMatcher(emit func(*Bio)) *Matcher {
	return &Matcher{emit: emit, window: 2e6,
		bios: map[devSector]*Bio{}, reqs: map[devSector]*request{}, ends: map[devSector]*request{}}
}

// Add takes a batch of events (in any order within the window).
func (m *Matcher) Add(evs []Event) {
	m.held = append(m.held, evs...)
	if len(m.held) == 0 {
		return
	}
	slices.SortStableFunc(m.held, func(a, b Event) int {
		switch {
		case a.Time < b.Time:
			return -1
		case a.Time > b.Time:
			return 1
		}
		return 0
	})
	until := m.held[len(m.held)-1].Time - m.window
	n := 0
	for n < len(m.held) && m.held[n].Time <= until {
		m.step(&m.held[n])
		n++
	}
	m.held = append(m.held[:0], m.held[n:]...)
}

// Flush takes every event held back and returns the counts; bios still
// in flight stay pending.
func (m *Matcher) Flush() MatchStats {
	for i := range m.held {
		m.step(&m.held[i])
	}
	m.held = m.held[:0]
	st := m.stats
	seen := map[*Bio]bool{}
	for _, b := range m.bios {
		seen[b] = true
	}
	for _, r := range m.reqs {
		for _, b := range r.bios {
			seen[b] = true
		}
	}
	st.Pending = len(seen)
	return st
}

func (m *Matcher) step(e *Event) {
	k := devSector{e.Dev, e.Sector}
	switch e.Kind {
	case Queue:
		m.bios[k] = &Bio{Dev: e.Dev, Sector: e.Sector, Sectors: e.Sectors, Op: e.RWBS[0], TID: e.TID, Own: e.Own,
			Queue: e.Time, pieces: 1}
	case Split:
		// The bio goes on at Sector+Sectors as a piece of its own,
		// queued no more.
		if b := m.bios[k]; b != nil {
			b.Split = true
			b.pieces++
			m.bios[devSector{e.Dev, e.Sector + uint64(e.Sectors)}] = b
		}
	case GetRq:
		r := &request{dev: e.Dev, start: e.Sector, sectors: e.Sectors, getRq: e.Time}
		if b := m.bios[k]; b != nil {
			delete(m.bios, k)
			r.bios = append(r.bios, b)
		}
		m.reqs[k] = r
		m.ends[devSector{e.Dev, e.Sector + uint64(e.Sectors)}] = r
	case BackMerge:
		// Appended to the request that ends where the bio begins.
		r := m.ends[k]
		b := m.bios[k]
		if r == nil || b == nil {
			return
		}
		delete(m.bios, k)
		delete(m.ends, k)
		r.sectors += e.Sectors
		m.ends[devSector{e.Dev, r.start + uint64(r.sectors)}] = r
		r.bios = append(r.bios, b)
		for _, x := range r.bios {
			x.Merged = true
		}
	case FrontMerge:
		// Put before the request that begins where the bio ends.
		rk := devSector{e.Dev, e.Sector + uint64(e.Sectors)}
		r := m.reqs[rk]
		b := m.bios[k]
		if r == nil || b == nil {
			return
		}
		delete(m.bios, k)
		delete(m.reqs, rk)
		r.start, r.sectors = e.Sector, r.sectors+e.Sectors
		m.reqs[k] = r
		r.bios = append(r.bios, b)
		for _, x := range r.bios {
			x.Merged = true
		}
	case Insert:
		if r := m.reqs[k]; r != nil && r.insert == 0 {
			r.insert = e.Time
		}
	case Issue:
		if r := m.reqs[k]; r != nil {
			r.issue = e.Time
		} else {
			m.stats.Orphans++
		}
	case Complete:
		m.complete(k, e)
	case BioComplete:
		// A bio-based driver's completion; blk-mq's bios complete
		// with their request.
		if b := m.bios[k]; b != nil {
			delete(m.bios, k)
			b.BioBased = true
			m.finish(b, e.Time)
		}
	}
}

// complete ends the request at k, or its first e.Sectors for a partial
// completion (the rest stays, from the sector after).
func (m *Matcher) complete(k devSector, e *Event) {
	r := m.reqs[k]
	if r == nil {
		m.stats.Orphans++
		return
	}
	end := r.start + uint64(r.sectors)
	done := r.bios
	if e.Sectors > 0 && e.Sectors < r.sectors {
		cut := r.start + uint64(e.Sectors)
		done = nil
		var rest []*Bio
		for _, b := range r.bios {
			if b.Sector+uint64(b.Sectors) <= cut {
				done = append(done, b)
			} else {
				rest = append(rest, b)
			}
		}
		delete(m.reqs, k)
		r.bios, r.start, r.sectors = rest, cut, r.sectors-e.Sectors
		m.reqs[devSector{r.dev, cut}] = r
	} else {
		delete(m.reqs, k)
		delete(m.ends, devSector{r.dev, end})
	}
	for _, b := range done {
		if b.GetRq == 0 || r.getRq < b.GetRq {
			b.GetRq = r.getRq
		}
		b.Insert, b.Issue = max(b.Insert, r.insert), max(b.Issue, r.issue)
		m.finish(b, e.Time)
	}
}

// finish records one piece's completion and emits the bio after its last.
func (m *Matcher) finish(b *Bio, at int64) {
	b.Complete = max(b.Complete, at)
	b.pieces--
	if b.pieces > 0 {
		return
	}
	m.stats.Bios++
	m.emit(b)
}
