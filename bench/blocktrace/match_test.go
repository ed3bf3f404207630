package blocktrace

import (
	"math/rand/v2"
	"testing"
)

// ev is an event at time t (µs) on device 1.
func ev(t int64, k Kind, sector uint64, sectors uint32) Event {
	return Event{Time: t * 1000, Kind: k, Sector: sector, Sectors: sectors, Dev: 1, RWBS: [2]byte{'R'}, Own: k == Queue}
}

func match(t *testing.T, evs []Event) ([]Bio, MatchStats) {
	t.Helper()
	var out []Bio
	m := NewMatcher(func(b *Bio) { out = append(out, *b) })
	m.Add(evs)
	return out, m.Flush()
}

// TestMatchOneToOne: a bio through a scheduler — Q, G, I, D, C — and one
// issued directly (no I), each with its own times; a bio-based driver's
// bio has Q and C only.
func TestMatchOneToOne(t *testing.T) {
	bios, st := match(t, []Event{
		ev(10, Queue, 800, 8), ev(11, GetRq, 800, 8), ev(12, Insert, 800, 8),
		ev(13, Queue, 64, 8), ev(14, GetRq, 64, 8), ev(15, Issue, 64, 8),
		ev(20, Issue, 800, 8), ev(30, Complete, 64, 8), ev(50, Complete, 800, 8),
		{Time: 60e3, Kind: Queue, Sector: 8, Sectors: 8, Dev: 2},
		{Time: 63e3, Kind: BioComplete, Sector: 8, Sectors: 8, Dev: 2},
	})
	if len(bios) != 3 || st.Bios != 3 || st.Orphans != 0 || st.Pending != 0 {
		t.Fatalf("bios %+v, stats %+v", bios, st)
	}
	want := []Bio{
		{Dev: 1, Sector: 64, Sectors: 8, Queue: 13e3, GetRq: 14e3, Issue: 15e3, Complete: 30e3},
		{Dev: 1, Sector: 800, Sectors: 8, Queue: 10e3, GetRq: 11e3, Insert: 12e3, Issue: 20e3, Complete: 50e3},
		{Dev: 2, Sector: 8, Sectors: 8, Queue: 60e3, Complete: 63e3, BioBased: true},
	}
	for i, w := range want {
		b := bios[i]
		if b.Dev != w.Dev || b.Sector != w.Sector || b.Queue != w.Queue || b.GetRq != w.GetRq || b.Insert != w.Insert ||
			b.Issue != w.Issue || b.Complete != w.Complete || b.BioBased != w.BioBased || !b.OneToOne() {
			t.Errorf("bio %d: %+v, want %+v", i, b, w)
		}
	}
}

// TestMatchMergeSplit: two bios back-merged into one request and a third
// front-merged complete with the request, marked merged; a bio split
// into two requests completes with the later; a partial completion ends
// only the bios it covers.
func TestMatchMergeSplit(t *testing.T) {
	bios, st := match(t, []Event{
		ev(1, Queue, 100, 8), ev(2, GetRq, 100, 8),
		ev(3, Queue, 108, 8), ev(4, BackMerge, 108, 8),
		ev(5, Queue, 92, 8), ev(6, FrontMerge, 92, 8),
		ev(7, Issue, 92, 24), ev(9, Complete, 92, 24),
		// Split: 16 sectors at 500 cut at 508.
		ev(10, Queue, 500, 16), ev(11, Split, 500, 8),
		ev(12, GetRq, 500, 8), ev(13, Issue, 500, 8),
		ev(14, GetRq, 508, 8), ev(15, Issue, 508, 8),
		ev(16, Complete, 500, 8), ev(20, Complete, 508, 8),
		// Two bios in one request, completed in two parts.
		ev(30, Queue, 900, 8), ev(31, GetRq, 900, 8), ev(32, Queue, 908, 8), ev(33, BackMerge, 908, 8),
		ev(34, Issue, 900, 16), ev(40, Complete, 900, 8), ev(45, Complete, 908, 8),
	})
	if st.Bios != 6 || st.Pending != 0 || st.Orphans != 0 {
		t.Fatalf("stats %+v, bios %+v", st, bios)
	}
	done := map[uint64]Bio{}
	for _, b := range bios {
		done[b.Sector] = b
	}
	for _, s := range []uint64{92, 100, 108} {
		if b := done[s]; !b.Merged || b.Issue != 7e3 || b.Complete != 9e3 {
			t.Errorf("merged bio at %d: %+v", s, b)
		}
	}
	if b := done[500]; !b.Split || b.Merged || b.Complete != 20e3 || b.Queue != 10e3 {
		t.Errorf("split bio: %+v", b)
	}
	if done[900].Complete != 40e3 || done[908].Complete != 45e3 {
		t.Errorf("partial completion: %+v and %+v", done[900], done[908])
	}
}

// TestMatchReorders: events handed over out of order, in batches, as the
// ring buffer interleaves CPUs, pair as if in order; a completion whose
// bio was never queued is an orphan.
func TestMatchReorders(t *testing.T) {
	var evs []Event
	for i := range int64(1000) {
		s := uint64(i * 8)
		at := i * 10
		evs = append(evs, ev(at, Queue, s, 8), ev(at+1, GetRq, s, 8), ev(at+2, Issue, s, 8), ev(at+5, Complete, s, 8))
	}
	evs = append(evs, ev(20000, Complete, 1<<30, 8))
	rng := rand.New(rand.NewPCG(1, 2))
	// Shuffle within 1 µs of each other's neighbourhood: swap neighbours.
	for i := 0; i+1 < len(evs); i += 2 {
		if rng.IntN(2) == 0 {
			evs[i], evs[i+1] = evs[i+1], evs[i]
		}
	}
	var got []Bio
	m := NewMatcher(func(b *Bio) { got = append(got, *b) })
	for i := 0; i < len(evs); i += 97 {
		m.Add(evs[i:min(i+97, len(evs))])
	}
	st := m.Flush()
	if st.Bios != 1000 || st.Orphans != 1 || len(got) != 1000 {
		t.Fatalf("stats %+v, %d bios", st, len(got))
	}
	for _, b := range got {
		if b.Complete-b.Queue != 5e3 || b.Issue-b.Queue != 2e3 {
			t.Fatalf("bio %+v", b)
		}
	}
}
