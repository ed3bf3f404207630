package blocktrace

import (
	"math/rand/v2"
	"testing"
)

// bio and rq are events at time t (µs) on device 1: of the bio at address
// ptr, and of the request at ptr whose first bio is at first.
func bio(t int64, k Kind, ptr, sector uint64, sectors uint32) Event {
	return Event{Time: t * 1000, Kind: k, Ptr: ptr, Sector: sector, Sectors: sectors, Dev: 1, Op: 'R', Own: k == Queue}
}

func rq(t int64, k Kind, ptr, first, sector uint64, sectors uint32) Event {
	return Event{Time: t * 1000, Kind: k, Ptr: ptr, Link: first, Sector: sector, Sectors: sectors, Dev: 1, Op: 'R'}
}

func match(t *testing.T, evs []Event) (map[uint64]Bio, MatchStats) {
	t.Helper()
	out := map[uint64]Bio{}
	m := NewMatcher(func(b *Bio) { out[b.Sector] = *b })
	m.Add(evs)
	return out, m.Flush()
}

// TestMatchOneToOne: a bio through a scheduler — Q, G, I, D, C — and one
// issued directly (no I), each with its own times; a bio-based driver's
// bio has Q and C only.
func TestMatchOneToOne(t *testing.T) {
	bios, st := match(t, []Event{
		bio(10, Queue, 0xb1, 800, 8), bio(11, GetRq, 0xb1, 800, 8), rq(12, Insert, 0x71, 0xb1, 800, 8),
		bio(13, Queue, 0xb2, 64, 8), bio(14, GetRq, 0xb2, 64, 8), rq(15, Issue, 0x72, 0xb2, 64, 8),
		rq(20, Issue, 0x71, 0xb1, 800, 8), rq(30, Complete, 0x72, 0xb2, 64, 8), rq(50, Complete, 0x71, 0xb1, 800, 8),
		{Time: 60e3, Kind: Queue, Ptr: 0xb3, Sector: 8, Sectors: 8, Dev: 2},
		{Time: 63e3, Kind: BioComplete, Ptr: 0xb3, Sector: 8, Sectors: 8, Dev: 2},
	})
	if len(bios) != 3 || st != (MatchStats{Bios: 3}) {
		t.Fatalf("bios %+v, stats %+v", bios, st)
	}
	for _, w := range []Bio{
		{Dev: 1, Sector: 64, Queue: 13e3, GetRq: 14e3, Issue: 15e3, Complete: 30e3},
		{Dev: 1, Sector: 800, Queue: 10e3, GetRq: 11e3, Insert: 12e3, Issue: 20e3, Complete: 50e3},
		{Dev: 2, Sector: 8, Queue: 60e3, Complete: 63e3, BioBased: true},
	} {
		b := bios[w.Sector]
		if b.Dev != w.Dev || b.Queue != w.Queue || b.GetRq != w.GetRq || b.Insert != w.Insert ||
			b.Issue != w.Issue || b.Complete != w.Complete || b.BioBased != w.BioBased || !b.OneToOne() {
			t.Errorf("bio at %d: %+v, want %+v", w.Sector, b, w)
		}
	}
}

// TestMatchMergeSplitRequeue: bios merged into one request complete with
// it, marked merged; a split bio completes with its later piece; a
// partial completion ends only the bios it covers; a requeued request's
// device time starts at its last issue; two bios of one sector in flight
// at once are told apart by their addresses.
func TestMatchMergeSplitRequeue(t *testing.T) {
	bios, st := match(t, []Event{
		bio(1, Queue, 0xa, 100, 8), bio(2, GetRq, 0xa, 100, 8),
		bio(3, Queue, 0xb, 108, 8), bio(4, BackMerge, 0xb, 108, 8),
		bio(5, Queue, 0xc, 92, 8), bio(6, FrontMerge, 0xc, 92, 8),
		rq(7, Issue, 0x1, 0xc, 92, 24), rq(9, Complete, 0x1, 0xc, 92, 24),
		// Split: 16 sectors at 500 cut at 508; the front piece 0xf.
		bio(10, Queue, 0xd, 500, 16), {Time: 11e3, Kind: Split, Ptr: 0xf, Sector: 500, Sectors: 8, Link: 508, Dev: 1},
		rq(12, Issue, 0x2, 0xf, 500, 8), rq(14, Issue, 0x3, 0xd, 508, 8),
		rq(16, Complete, 0x2, 0xf, 500, 8), rq(20, Complete, 0x3, 0xd, 508, 8),
		// Two bios in one request, completed in two parts.
		bio(30, Queue, 0xe, 900, 8), bio(31, GetRq, 0xe, 900, 8), bio(32, Queue, 0x10, 908, 8), bio(33, BackMerge, 0x10, 908, 8),
		rq(34, Issue, 0x4, 0xe, 900, 16), rq(40, Complete, 0x4, 0xe, 900, 8), rq(45, Complete, 0x4, 0xe, 908, 8),
		// Requeued: issued at 52, back at 53, issued again at 60.
		bio(50, Queue, 0x11, 2000, 8), rq(51, Insert, 0x5, 0x11, 2000, 8), rq(52, Issue, 0x5, 0x11, 2000, 8),
		rq(53, Requeue, 0x5, 0x11, 2000, 8), rq(60, Issue, 0x5, 0x11, 2000, 8), rq(70, Complete, 0x5, 0x11, 2000, 8),
	})
	if st != (MatchStats{Bios: 7}) {
		t.Fatalf("stats %+v, bios %+v", st, bios)
	}
	for _, s := range []uint64{92, 100, 108} {
		if b := bios[s]; !b.Merged || b.Issue != 7e3 || b.Complete != 9e3 {
			t.Errorf("merged bio at %d: %+v", s, b)
		}
	}
	if b := bios[500]; !b.Split || b.Merged || b.Complete != 20e3 || b.Queue != 10e3 {
		t.Errorf("split bio: %+v", b)
	}
	if bios[900].Complete != 40e3 || bios[908].Complete != 45e3 {
		t.Errorf("partial completion: %+v and %+v", bios[900], bios[908])
	}
	if b := bios[2000]; b.Issue != 60e3 || b.Requeues != 1 || b.Insert != 51e3 {
		t.Errorf("requeued: %+v", b)
	}
}

// TestMatchReordersAndLoses: events handed over out of order, in batches,
// as the ring buffer interleaves CPUs, pair as if in order, even with the
// same sector and addresses used again and again; a request whose
// completion was never recorded is lost, counted, and never pairs with a
// later request at its address.
func TestMatchReordersAndLoses(t *testing.T) {
	var evs []Event
	for i := range int64(1000) {
		b, r := uint64(0x100+i%7), uint64(0x900+i%5) // addresses used again
		at := i * 10
		evs = append(evs, bio(at, Queue, b, 64, 8), bio(at+1, GetRq, b, 64, 8), rq(at+2, Issue, r, b, 64, 8))
		if i != 500 {
			evs = append(evs, rq(at+5, Complete, r, b, 64, 8))
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
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
	if st.Bios != 999 || st.Lost != 1 || st.Pending != 0 || len(got) != 999 {
		t.Fatalf("stats %+v, %d bios", st, len(got))
	}
	for _, b := range got {
		if b.Complete-b.Queue != 5e3 || b.Issue-b.Queue != 2e3 {
			t.Fatalf("bio %+v", b)
		}
	}
}
