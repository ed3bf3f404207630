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
	Op      byte   // 'R', 'W', 'D' (discard), 'F' (flush), 'N'
	TID     uint32 // the thread that queued it
	Own     bool   // the thread is the traced process's

	Queue    int64 // Q: entered the block layer
	GetRq    int64 // G: a request was allocated for it (0 when merged into another's)
	Insert   int64 // I: its request was inserted into the I/O scheduler (0 when issued directly)
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

	ptrs   []uint64 // its own address and its split pieces'
	pieces int      // pieces not yet complete
}

// OneToOne reports whether the bio was one request and the request only
// it: its parts are its own.
func (b *Bio) OneToOne() bool { return !b.Merged && !b.Split }

// MatchStats count what the matcher could not pair.
type MatchStats struct {
	Bios int // emitted
	// Orphans are request events whose request or bio was never seen
	// (queued before tracing began).
	Orphans int
	// Lost are bios and requests whose completion never came although
	// their address was used again (an event the kernel did not record).
	Lost int
	// Pending are bios still in flight when the matcher was flushed.
	Pending int
}

// request is one request and the bios in it.
type request struct {
	dev           uint32
	start         uint64
	sectors       uint32
	bios          []*Bio
	insert, issue int64
	requeues      int
}

// Matcher pairs a trace's events into bios by the kernel's addresses of
// bios and requests: a bio from its Q until it completes, a request from
// its first event until it completes, the request's first bio linked by
// its address and bios merged into it by their sectors. Events are taken
// in time order: Add holds the newest window back, since the ring buffer
// interleaves CPUs only roughly in time.
type Matcher struct {
	emit   func(*Bio)
	window int64 // ns held back for reordering
	held   []Event
	bios   map[uint64]*Bio
	reqs   map[uint64]*request
	// unlinked are bios given a request (G) or merged into one (M, F)
	// whose request has not named them: a request names only its first
	// bio, so the others join it by their sectors when it completes.
	unlinked []*Bio
	stats    MatchStats
}

// NewMatcher makes a matcher that hands each bio to emit once it has
// completed.
func NewMatcher(emit func(*Bio)) *Matcher {
	return &Matcher{emit: emit, window: 2e6, bios: map[uint64]*Bio{}, reqs: map[uint64]*request{}}
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
	st.Pending = len(seen)
	return st
}

func (m *Matcher) step(e *Event) {
	switch e.Kind {
	case Queue:
		if old := m.bios[e.Ptr]; old != nil {
			m.lose(old)
		}
		b := &Bio{Dev: e.Dev, Sector: e.Sector, Sectors: e.Sectors, Op: e.Op, TID: e.TID, Own: e.Own,
			Queue: e.Time, pieces: 1, ptrs: []uint64{e.Ptr}}
		m.bios[e.Ptr] = b
	case Split:
		// The front piece (e.Ptr, new) goes on as a bio of its own; the
		// rest keeps the bio's address at sector e.Link.
		for _, b := range m.bios {
			if b.Dev == e.Dev && b.Sector == e.Sector && !b.BioBased && b.GetRq == 0 {
				b.Split = true
				b.pieces++
				b.ptrs = append(b.ptrs, e.Ptr)
				m.bios[e.Ptr] = b
				break
			}
		}
	case GetRq:
		if b := m.bios[e.Ptr]; b != nil && b.GetRq == 0 {
			b.GetRq = e.Time
			m.unlinked = append(m.unlinked, b)
		}
	case BackMerge, FrontMerge:
		if b := m.bios[e.Ptr]; b != nil {
			b.Merged = true
			m.unlinked = append(m.unlinked, b)
		}
	case Insert, Issue, Requeue:
		r := m.reqs[e.Ptr]
		if r == nil || (e.Kind == Issue && r.issue != 0) || (e.Kind == Insert && r.insert != 0 && r.requeues == 0) {
			// A new request at this address: an old one there never
			// completed.
			if r != nil {
				m.loseRequest(e.Ptr, r)
			}
			r = &request{dev: e.Dev, start: e.Sector, sectors: e.Sectors}
			if b := m.bios[e.Link]; b != nil && !slices.Contains(r.bios, b) {
				r.bios = append(r.bios, b)
				if i := slices.Index(m.unlinked, b); i >= 0 {
					m.unlinked = slices.Delete(m.unlinked, i, i+1)
				}
			}
			m.reqs[e.Ptr] = r
		}
		switch e.Kind {
		case Insert:
			if r.insert == 0 {
				r.insert = e.Time
			}
		case Issue:
			r.issue = e.Time
			r.sectors = max(r.sectors, e.Sectors)
		case Requeue:
			// Issued again later: the device's time starts then.
			r.issue = 0
			r.requeues++
		}
	case Complete:
		m.complete(e)
	case BioComplete:
		// A bio-based driver's completion; blk-mq's bios complete
		// with their request.
		if b := m.bios[e.Ptr]; b != nil && b.GetRq == 0 {
			b.BioBased = true
			m.finish(b, e.Time)
		}
	}
}

// complete ends the request e.Ptr, or its first e.Sectors for a partial
// completion (the rest stays, from the sector after).
func (m *Matcher) complete(e *Event) {
	r := m.reqs[e.Ptr]
	if r == nil {
		m.stats.Orphans++
		return
	}
	// Its other bios, by their sectors.
	m.unlinked = slices.DeleteFunc(m.unlinked, func(b *Bio) bool {
		if b.pieces == 0 {
			return true
		}
		if b.Dev == r.dev && b.Sector >= r.start && b.Sector < r.start+uint64(r.sectors) {
			if !slices.Contains(r.bios, b) {
				r.bios = append(r.bios, b)
			}
			return true
		}
		return false
	})
	if len(r.bios) > 1 {
		for _, b := range r.bios {
			b.Merged = true
		}
	}
	done := r.bios
	if e.Sectors > 0 && e.Sectors < r.sectors {
		cut := e.Sector + uint64(e.Sectors)
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
	} else {
		delete(m.reqs, e.Ptr)
	}
	if len(r.bios) == 0 && len(done) == 0 {
		m.stats.Orphans++
	}
	for _, b := range done {
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
	for _, p := range b.ptrs {
		if m.bios[p] == b {
			delete(m.bios, p)
		}
	}
	m.stats.Bios++
	m.emit(b)
}

// lose drops a bio whose completion never came.
func (m *Matcher) lose(b *Bio) {
	for _, p := range b.ptrs {
		if m.bios[p] == b {
			delete(m.bios, p)
		}
	}
	b.pieces = 0
	m.stats.Lost++
}

// loseRequest drops a request whose completion never came, and its bios.
func (m *Matcher) loseRequest(ptr uint64, r *request) {
	delete(m.reqs, ptr)
	for _, b := range r.bios {
		if b.pieces > 0 {
			m.lose(b)
		}
	}
}
