package bench

import (
	"math"
	"slices"
	"testing"

	"iolab/bench/blocktrace"
)

const (
	jDisk = 7<<20 | 0
	jPart = 7<<20 | 1
)

// rqBio is an own bio of a request-based device, queued at q, issued at
// d, completed at c.
func rqBio(sector uint64, sectors uint32, q, d, c int64) blocktrace.Bio {
	return blocktrace.Bio{Dev: jDisk, Sector: sector, Sectors: sectors, Own: true, Queue: q, Insert: q + 1, Issue: d, Complete: c}
}

func newTestJoin() *blockJoin {
	return newBlockJoin(map[uint32]uint32{jDisk: jDisk, jPart: jDisk}, 2)
}

func TestBlockJoinOneToOne(t *testing.T) {
	bj := newTestJoin()
	// The I/O arrives before its bio; both before the horizon passes.
	bj.addIO(joinIO{dev: jDisk, sector: 80, sectors: 8, start: 1000, reap: 9000, job: 1, dir: uint8(Read)})
	bj.settle(500) // not yet: reaped after the horizon
	if got := bj.out[1][Read]; got.OneToOne+got.Unmatched != 0 {
		t.Fatalf("settled before its horizon: %+v", got)
	}
	bj.addBios([]blocktrace.Bio{rqBio(80, 8, 1500, 4000, 8000)})
	bj.settle(10000)
	got := bj.out[1][Read]
	if got.OneToOne != 1 || got.Unmatched+got.Split+got.Merged != 0 {
		t.Fatalf("counts %+v", got)
	}
	parts := map[string]uint64{"submit": got.Submit.Stat.Max, "queue": got.Queue.Stat.Max, "device": got.Device.Stat.Max, "completion": got.Completion.Stat.Max}
	want := map[string]uint64{"submit": 500, "queue": 2500, "device": 4000, "completion": 1000}
	for k, v := range want {
		if parts[k] != v {
			t.Errorf("%s = %d, want %d", k, parts[k], v)
		}
	}
	if sum := parts["submit"] + parts["queue"] + parts["device"] + parts["completion"]; sum != 8000 {
		t.Errorf("parts add up to %d, lat is 8000", sum)
	}
}

func TestBlockJoinBioBased(t *testing.T) {
	bj := newTestJoin()
	bj.addBios([]blocktrace.Bio{{Dev: jPart, Sector: 2048 + 16, Sectors: 8, Own: true, Queue: 1200, Complete: 3200, BioBased: true}})
	// A partition's I/O: its sector is the disk's (the partition starts at 2048).
	bj.addIO(joinIO{dev: jDisk, sector: 2048 + 16, sectors: 8, start: 1000, reap: 4000, dir: uint8(Write)})
	bj.settle(math.MaxInt64)
	got := bj.out[0][Write]
	if got.OneToOne != 1 || got.Queue.Stat.Max != 0 || got.Device.Stat.Max != 2000 || got.Submit.Stat.Max != 200 || got.Completion.Stat.Max != 800 {
		t.Fatalf("got %+v", got)
	}
}

func TestBlockJoinCounts(t *testing.T) {
	bj := newTestJoin()
	bios := []blocktrace.Bio{
		// Two I/Os of one sector in flight one after the other, their
		// bios arriving in the other order.
		rqBio(100, 8, 20_500, 21_000, 22_000),
		rqBio(100, 8, 10_500, 11_000, 12_000),
		// A merged one.
		func() blocktrace.Bio { b := rqBio(200, 8, 1100, 1200, 1300); b.Merged = true; return b }(),
		// A split: queued whole, its front piece never queued.
		rqBio(300, 16, 1100, 1500, 1900),
		{Dev: jDisk, Sector: 300, Sectors: 8, Split: true, Issue: 1400, Complete: 1800},
		// Another process's bio.
		{Dev: jDisk, Sector: 400, Sectors: 8, Queue: 1100, Issue: 1200, Complete: 1300},
		// Own, but of another time: not the I/O at sector 500's.
		rqBio(500, 8, 100, 200, 300),
		// A bio larger than its I/O (readahead): a merge.
		rqBio(600, 64, 1100, 1200, 1300),
	}
	bj.foreignFrom = 0
	bj.addBios(bios[:3])
	ios := []joinIO{
		{dev: jDisk, sector: 100, sectors: 8, start: 10_000, reap: 12_500},
		{dev: jDisk, sector: 100, sectors: 8, start: 12_600, reap: 22_500},
		{dev: jDisk, sector: 200, sectors: 8, start: 1000, reap: 1400},
		{dev: jDisk, sector: 300, sectors: 16, start: 1000, reap: 2000},
		{dev: jDisk, sector: 500, sectors: 8, start: 1000, reap: 2000},
		{dev: jDisk, sector: 600, sectors: 8, start: 1000, reap: 2000},
	}
	for _, io := range ios {
		bj.addIO(io)
	}
	bj.addBios(bios[3:])
	bj.settle(math.MaxInt64)
	got := bj.out[0][Read]
	if got.OneToOne != 2 || got.Merged != 2 || got.Split != 1 || got.SplitTimed != 1 || got.Unmatched != 1 {
		t.Errorf("counts: one-to-one %d merged %d split %d (timed %d) unmatched %d; want 2 2 1 (1) 1", got.OneToOne, got.Merged, got.Split, got.SplitTimed, got.Unmatched)
	}
	// The two I/Os of sector 100 took their own bios (submit 500 and
	// 7,900, device 1,000 each); the split, timed over its pieces, was
	// queued at 1,100, first issued at 1,400 (its front piece) and last
	// completed at 1,900: submit 100, queue 300, device 500, completion 100.
	if got.Device.Stat.Min != 500 || got.Device.Stat.Max != 1000 || got.Submit.Stat.Min != 100 || got.Submit.Stat.Max != 7900 ||
		got.Queue.Stat.Max != 500 || got.Completion.Stat.Min != 100 {
		t.Errorf("parts: submit %d..%d, device %d..%d, queue max %d, completion min %d", got.Submit.Stat.Min, got.Submit.Stat.Max,
			got.Device.Stat.Min, got.Device.Stat.Max, got.Queue.Stat.Max, got.Completion.Stat.Min)
	}
	if bj.foreign != 1 {
		t.Errorf("foreign = %d, want 1", bj.foreign)
	}
	if len(bj.byKey) != 0 {
		t.Errorf("%d keys held after the end", len(bj.byKey))
	}
}

// TestBlockJoinSplits: a split I/O whose pieces were all seen is timed
// over them — its parts add up to its lat — and one with a piece unseen,
// or a piece of a merged request, is counted but not timed.
func TestBlockJoinSplits(t *testing.T) {
	bj := newTestJoin()
	merged := rqBio(200, 8, 1100, 1500, 1700)
	merged.Merged = true
	bj.addBios([]blocktrace.Bio{
		// 1 MiB in four pieces of 512 sectors, issued one after another.
		rqBio(0, 512, 1100, 1300, 2100),
		{Dev: jDisk, Sector: 512, Sectors: 512, Own: true, Split: true, Issue: 1400, Complete: 2300},
		{Dev: jDisk, Sector: 1024, Sectors: 512, Own: true, Split: true, Issue: 1500, Complete: 2600},
		{Dev: jDisk, Sector: 1536, Sectors: 512, Own: true, Split: true, Issue: 1600, Complete: 2400},
		// An I/O at 100 whose second piece was not seen.
		rqBio(100, 8, 1100, 1200, 1300),
		// One at 200 whose second piece's request held others' bios.
		{Dev: jDisk, Sector: 192, Sectors: 8, Own: true, Split: true, Queue: 1100, Issue: 1200, Complete: 1300},
		merged,
	})
	bj.addIO(joinIO{dev: jDisk, sector: 0, sectors: 2048, start: 1000, reap: 3000})
	bj.addIO(joinIO{dev: jDisk, sector: 100, sectors: 16, start: 1000, reap: 3000})
	bj.addIO(joinIO{dev: jDisk, sector: 192, sectors: 16, start: 1000, reap: 3000})
	bj.settle(math.MaxInt64)
	got := bj.out[0][Read]
	if got.Split != 3 || got.SplitTimed != 1 || got.OneToOne != 0 || got.Timed() != 1 {
		t.Fatalf("split %d (timed %d), one-to-one %d; want 3 (1), 0", got.Split, got.SplitTimed, got.OneToOne)
	}
	parts := []uint64{got.Submit.Stat.Max, got.Queue.Stat.Max, got.Device.Stat.Max, got.Completion.Stat.Max}
	if want := []uint64{100, 200, 1300, 400}; !slices.Equal(parts, want) {
		t.Errorf("parts %v, want %v (queued at 1,100, first issued at 1,300, last completed at 2,600)", parts, want)
	}
}

// TestBlockJoinBounded: a long run's bios that no I/O claims (another
// thread's, the ramp's) and its I/Os are let go as the horizon passes;
// the slab stops growing.
func TestBlockJoinBounded(t *testing.T) {
	bj := newTestJoin()
	const step = 1_000_000 // an I/O a millisecond
	var slab int
	for i := range int64(60_000) {
		at := i * step
		bj.addBios([]blocktrace.Bio{rqBio(uint64(i%4096)*8, 8, at+10, at+20, at+30), rqBio(1<<30, 8, at+10, at+20, at+30)})
		bj.addIO(joinIO{dev: jDisk, sector: uint64(i%4096) * 8, sectors: 8, start: at, reap: at + 40})
		if i%1000 == 0 {
			bj.settle(at - 1_000_000_000)
		}
		if i == 30_000 {
			slab = len(bj.slab)
		}
	}
	bj.settle(math.MaxInt64)
	if got := bj.out[0][Read]; got.OneToOne != 60_000 {
		t.Fatalf("one-to-one %d of 60000 (%+v)", got.OneToOne, got)
	}
	if len(bj.slab) > slab+2000 || len(bj.slab) > 30_000 {
		t.Errorf("slab grew to %d (%d at half way)", len(bj.slab), slab)
	}
	if len(bj.byKey) != 0 || len(bj.ios) != 0 {
		t.Errorf("held after the end: %d keys, %d I/Os", len(bj.byKey), len(bj.ios))
	}
}

// TestBlockJoinRestart: a job whose window opened again (latency_target)
// keeps only the I/Os started since, whether joined before the restart
// reached the join or after.
func TestBlockJoinRestart(t *testing.T) {
	bj := newTestJoin()
	bj.addBios([]blocktrace.Bio{rqBio(8, 8, 1100, 1200, 1300), rqBio(16, 8, 2100, 2200, 2300), rqBio(24, 8, 5100, 5200, 5300)})
	bj.addIO(joinIO{dev: jDisk, sector: 8, sectors: 8, start: 1000, reap: 1400})
	bj.settle(1500) // joined before the restart
	bj.addIO(joinIO{dev: jDisk, sector: 16, sectors: 8, start: 2000, reap: 2400})
	bj.restart(0, 5000)
	bj.addIO(joinIO{dev: jDisk, sector: 24, sectors: 8, start: 5000, reap: 5400})
	bj.settle(math.MaxInt64)
	if got := bj.out[0][Read]; got.OneToOne != 1 || got.Submit.Stat.Max != 100 || got.Unmatched != 0 {
		t.Errorf("after the restart: %+v", got)
	}
}
