package bench

import (
	"math"

	"iolab/bench/blocktrace"
	"testing"

	"iolab/bench/system"
)

// TestPlaceInExtents places I/Os of a file through constructed extents
// on a filesystem whose device starts at sector 2048 of its disk.
func TestPlaceInExtents(t *testing.T) {
	const k = 1024
	ext := fileExtents([]system.Extent{
		// Given out of order, as no filesystem does, to check the sort.
		{Logical: 256 * k, Physical: 4096 * k, Length: 64 * k},                                // after a hole at 192k
		{Logical: 0, Physical: 1024 * k, Length: 128 * k},                                     // 0-128k
		{Logical: 128 * k, Physical: 1152 * k, Length: 64 * k},                                // follows on the device: one run with the first
		{Logical: 320 * k, Physical: 8192 * k, Length: 64 * k, Flags: system.ExtentUnwritten}, // fallocated, never written
		{Logical: 384 * k, Physical: 8256 * k, Length: 64 * k, Flags: system.ExtentDelalloc | system.ExtentUnknown},
		{Logical: 448 * k, Physical: 9000*k + 100, Length: 4 * k, Flags: system.ExtentDataInline | system.ExtentNotAligned | system.ExtentLast},
	})
	if len(ext) != 5 || ext[0].length != 192*k {
		t.Fatalf("map %+v: want the first two extents as one of 192k, five in all", ext)
	}
	for _, c := range []struct {
		name   string
		off    int64
		n      uint32
		sector uint64
		miss   uint8
	}{
		{"first block", 0, 4 * k, 2048 + 1024*k/512, missNone},
		{"inside", 12 * k, 8 * k, 2048 + (1024+12)*k/512, missNone},
		{"across two extents one after the other on the device", 124 * k, 8 * k, 2048 + (1024+124)*k/512, missNone},
		{"end of the run", 188 * k, 4 * k, 2048 + (1024+188)*k/512, missNone},
		{"hole", 200 * k, 4 * k, 0, missUnmatched},
		{"into the hole", 188 * k, 8 * k, 0, missSplit},
		{"after the hole", 260 * k, 4 * k, 2048 + (4096+4)*k/512, missNone},
		{"into an extent elsewhere", 316 * k, 8 * k, 0, missSplit},
		{"unwritten: a write's bio is there, a read has none", 320 * k, 4 * k, 2048 + 8192*k/512, missNone},
		{"delalloc", 400 * k, 4 * k, 0, missUnmatched},
		{"inline", 448 * k, 4 * k, 0, missUnmatched},
		{"past the end", 1024 * k, 4 * k, 0, missUnmatched},
		{"negative", -4096, 4 * k, 0, missUnmatched},
	} {
		t.Run(c.name, func(t *testing.T) {
			sector, miss := placeInExtents(ext, 2048, c.off, c.n)
			if sector != c.sector || miss != c.miss {
				t.Errorf("%d bytes at %d: sector %d, miss %d; want %d, %d", c.n, c.off, sector, miss, c.sector, c.miss)
			}
		})
	}
	if _, miss := placeInExtents(nil, 0, 0, 4096); miss != missUnmatched {
		t.Errorf("an empty file's map places an I/O (miss %d)", miss)
	}
	// A block device's I/O is at its offset on it.
	f := traceFile{start: 2048}
	if s, miss := f.place(8192, 4096); s != 2048+16 || miss != missNone {
		t.Errorf("a block device's I/O at 8192: sector %d, miss %d", s, miss)
	}
}

// TestBlockJoinMiss: an I/O the map could not place is counted as the
// map says, in its window only, and takes no bio.
func TestBlockJoinMiss(t *testing.T) {
	bj := newBlockJoin(map[uint32]uint32{jDisk: jDisk}, 1)
	bj.addBios([]blocktrace.Bio{rqBio(100, 8, 110, 120, 130)})
	bj.addIO(joinIO{dev: jDisk, sector: 0, sectors: 8, start: 100, reap: 140, miss: missUnmatched})
	bj.addIO(joinIO{dev: jDisk, sector: 0, sectors: 16, start: 100, reap: 140, miss: missSplit})
	bj.addIO(joinIO{dev: jDisk, sector: 100, sectors: 8, start: 100, reap: 140})
	bj.settle(math.MaxInt64)
	bt := bj.out[0][Read]
	if bt.Unmatched != 1 || bt.Split != 1 || bt.OneToOne != 1 {
		t.Errorf("counts %+v: want one unmatched, one split, one one-to-one", bt)
	}
}
