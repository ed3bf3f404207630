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
	// Requeues counts the times the driver gave its request back to be
	// issued again; Issue is the last issue.
	Requeues int

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
	requeues             int
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
	// Bios waiting for a request, requests by first sector and by the
	// sector after their last: a list per key, oldest first, since two
	// I/Os of one sector may be in flight at once.
	bios  fifo[*Bio]
	reqs  fifo[*request]
	ends  fifo[*request]
	stats MatchStats
}

// fifo keeps, per device and sector, what is in flight there, oldest
// first.
type fifo[T comparable] map[devSector][]T

func (f fifo[T]) push(k devSector, v T) { f[k] = append(f[k], v) }

// peek is the oldest at k.
func (f fifo[T]) peek(k devSector) (v T) {
	if l := f[k]; len(l) > 0 {
		v = l[0]
	}
	return v
}

// pop takes the oldest at k.
func (f fifo[T]) pop(k devSector) (v T) {
	l := f[k]
	if len(l) == 0 {
		return v
	}
	v = l[0]
	if len(l) == 1 {
		delete(f, k)
	} else {
		f[k] = l[1:]
	}
	return v
}

// remove takes v from k's list.
func (f fifo[T]) remove(k devSector, v T) {
	l := f[k]
	if i := slices.Index(l, v); i >= 0 {
		l = slices.Delete(l, i, i+1)
	}
	if len(l) == 0 {
		delete(f, k)
	} else {
		f[k] = l
	}
}

// NewMatcher makes a matcher that hands each bio to emit once it has
// completed.
func NewMatcher(emit func(*Bio)) *Matcher {
	return &Matcher{emit: emit, window: 2e6,
		bios: fifo[*Bio]{}, reqs: fifo[*request]{}, ends: fifo[*request]{}}
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
	for _, l := range m.bios {
		for _, b := range l {
			seen[b] = true
		}
	}
	for _, l := range m.reqs {
		for _, r := range l {
			for _, b := range r.bios {
				seen[b] = true
			}
		}
	}
	st.Pending = len(seen)
	return st
}

func (m *Matcher) step(e *Event) {
	k := devSector{e.Dev, e.Sector}
	switch e.Kind {
	case Queue:
		m.bios.push(k, &Bio{Dev: e.Dev, Sector: e.Sector, Sectors: e.Sectors, Op: e.RWBS[0], TID: e.TID, Own: e.Own,
			Queue: e.Time, pieces: 1})
	case Split:
		// The bio goes on at Sector+Sectors as a piece of its own,
		// queued no more.
		if b := m.bios.peek(k); b != nil {
			b.Split = true
			b.pieces++
			m.bios.push(devSector{e.Dev, e.Sector + uint64(e.Sectors)}, b)
		}
	case GetRq:
		r := &request{dev: e.Dev, start: e.Sector, sectors: e.Sectors, getRq: e.Time}
		if b := m.bios.pop(k); b != nil {
			r.bios = append(r.bios, b)
		}
		m.reqs.push(k, r)
		m.ends.push(devSector{e.Dev, e.Sector + uint64(e.Sectors)}, r)
	case BackMerge:
		// Appended to the request that ends where the bio begins.
		r, b := m.ends.peek(k), m.bios.peek(k)
		if r == nil || b == nil {
			return
		}
		m.bios.pop(k)
		m.ends.pop(k)
		r.sectors += e.Sectors
		m.ends.push(devSector{e.Dev, r.start + uint64(r.sectors)}, r)
		r.bios = append(r.bios, b)
		for _, x := range r.bios {
			x.Merged = true
		}
	case FrontMerge:
		// Put before the request that begins where the bio ends.
		rk := devSector{e.Dev, e.Sector + uint64(e.Sectors)}
		r, b := m.reqs.peek(rk), m.bios.peek(k)
		if r == nil || b == nil {
			return
		}
		m.bios.pop(k)
		m.reqs.pop(rk)
		r.start, r.sectors = e.Sector, r.sectors+e.Sectors
		m.reqs.push(k, r)
		r.bios = append(r.bios, b)
		for _, x := range r.bios {
			x.Merged = true
		}
	case Insert:
		if r := m.firstWithout(k, func(r *request) bool { return r.insert == 0 }); r != nil {
			r.insert = e.Time
		}
	case Issue:
		if r := m.firstWithout(k, func(r *request) bool { return r.issue == 0 }); r != nil {
			r.issue = e.Time
		} else {
			m.stats.Orphans++
		}
	case Requeue:
		// Issued again later: the device's time starts then.
		if r := m.firstWithout(k, func(r *request) bool { return r.issue != 0 }); r != nil {
			r.issue = 0
			r.requeues++
		}
	case Complete:
		m.complete(k, e)
	case BioComplete:
		// A bio-based driver's completion; blk-mq's bios complete
		// with their request.
		if b := m.bios.pop(k); b != nil {
			b.BioBased = true
			m.finish(b, e.Time)
		}
	}
}

// firstWithout is the oldest request at k that ok says has not had the
// event yet.
func (m *Matcher) firstWithout(k devSector, ok func(*request) bool) *request {
	for _, r := range m.reqs[k] {
		if ok(r) {
			return r
		}
	}
	return nil
}

// complete ends the request at k, or its first e.Sectors for a partial
// completion (the rest stays, from the sector after).
func (m *Matcher) complete(k devSector, e *Event) {
	// The oldest issued request there: completions follow issues.
	r := m.firstWithout(k, func(r *request) bool { return r.issue != 0 })
	if r == nil {
		r = m.reqs.peek(k)
	}
	if r == nil {
		m.stats.Orphans++
		return
	}
	end := devSector{r.dev, r.start + uint64(r.sectors)}
	done := r.bios
	m.reqs.remove(k, r)
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
		r.bios, r.start, r.sectors = rest, cut, r.sectors-e.Sectors
		m.reqs.push(devSector{r.dev, cut}, r)
	} else {
		m.ends.remove(end, r)
	}
	for _, b := range done {
		if b.GetRq == 0 || r.getRq < b.GetRq {
			b.GetRq = r.getRq
		}
		b.Insert, b.Issue = max(b.Insert, r.insert), max(b.Issue, r.issue)
		b.Requeues += r.requeues
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
