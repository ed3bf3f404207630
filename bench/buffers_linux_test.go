package bench

import (
	"bytes"
	"strings"
	"testing"

	"iolab/bench/verify"
)

func testBuffers(t *testing.T, bs, slots int, w WriteBuffers) *buffers {
	t.Helper()
	b, err := newBuffers(bs, slots, 7, memPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.free() })
	b.w = w
	return b
}

// TestFillCompressible: each chunk is (100-pct)% random bytes, then zeros
// or the pattern from where the random bytes end (fio's
// __fill_random_buf_percentage and cpy_pattern).
func TestFillCompressible(t *testing.T) {
	b := testBuffers(t, 4096, 1, WriteBuffers{Compress: 25, Chunk: 1024})
	p := b.slice(0)
	b.fill(p)
	for c := 0; c < 4096; c += 1024 {
		if !bytes.Equal(p[c+768:c+1024], make([]byte, 256)) || bytes.Count(p[c:c+768], []byte{0}) > 16 {
			t.Fatalf("chunk at %d is not 768 random bytes then 256 zeros", c)
		}
		if c > 0 && bytes.Equal(p[c:c+768], p[:768]) {
			t.Fatalf("chunk at %d repeats the first: each chunk needs its own seed", c)
		}
	}
	b.w.Pattern = []byte("xyz")
	b.fill(p)
	if got := p[768:1024]; !bytes.Equal(got, bytes.Repeat([]byte("xyz"), 86)[:256]) {
		t.Fatalf("the compressible part holds %q…, want the pattern from its start", got[:9])
	}
}

// TestFillDedupe: a share of the fills repeat the last one that was not a
// repeat; 100% makes every buffer the same.
func TestFillDedupe(t *testing.T) {
	for _, tc := range []struct {
		pct, compress int
		lo, hi        int // distinct buffers of 1000
	}{{0, 30, 1000, 1000}, {100, 0, 1, 1}, {50, 0, 440, 560}, {80, 50, 150, 250}} {
		b := testBuffers(t, 4096, 1, WriteBuffers{Dedupe: tc.pct, Compress: tc.compress, Chunk: 512})
		seen := map[string]bool{}
		for range 1000 {
			b.fill(b.slice(0))
			seen[string(b.slice(0))] = true
		}
		if n := len(seen); n < tc.lo || n > tc.hi {
			t.Errorf("dedupe %d%%, compress %d%%: %d distinct buffers of 1000, want %d to %d", tc.pct, tc.compress, n, tc.lo, tc.hi)
		}
	}
}

// TestWorkingSetBlocks: block i of a working set is the data of the i-th
// buffer its job fills, and with dedupe_global the next jobs' first
// buffers follow the job's own, an equal number each (fio's dedupe.c).
func TestWorkingSetBlocks(t *testing.T) {
	seeds := []uint64{11, 22, 33}
	w := WriteBuffers{Dedupe: 50, Compress: 50, Chunk: 1024, WorkingSet: 6}
	// The first n buffers the job at index fills.
	fills := func(index, n int) [][]byte {
		b, err := newBuffers(4096, 1, seeds[index], memPolicy{})
		if err != nil {
			t.Fatal(err)
		}
		defer b.free()
		b.w = WriteBuffers{Compress: 50, Chunk: 1024}
		var out [][]byte
		for range n {
			b.fill(b.slice(0))
			out = append(out, bytes.Clone(b.slice(0)))
		}
		return out
	}
	replay := func(ws *workingSet, i uint64) []byte {
		b := testBuffers(t, 4096, 1, WriteBuffers{Compress: 50, Chunk: 1024})
		src := ws.block(i)
		p := b.slice(0)
		for c := 0; c < len(p); c += 1024 {
			fillCompressible(p[c:c+1024], src.Next(), 50, nil)
		}
		return p
	}
	own := newWorkingSet(w, 4096, 1, seeds)
	for i, f := range fills(1, 6) {
		if !bytes.Equal(replay(&own, uint64(i)), f) {
			t.Errorf("block %d is not the job's fill %d", i, i)
		}
	}
	w.Global = true
	global := newWorkingSet(w, 4096, 1, seeds)
	for i, want := range [][]byte{fills(1, 2)[0], fills(1, 2)[1], fills(2, 2)[0], fills(2, 2)[1], fills(0, 2)[0], fills(0, 2)[1]} {
		if !bytes.Equal(replay(&global, uint64(i)), want) {
			t.Errorf("global block %d is not the fill it should be (two of each job's, from the job's own on)", i)
		}
	}
}

func TestCopyPattern(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 7, 512, 4095} {
		p := make([]byte, n)
		verify.CopyPattern(p, []byte("abc"))
		if want := bytes.Repeat([]byte("abc"), n/3+1)[:n]; !bytes.Equal(p, want) {
			t.Errorf("%d bytes: %q", n, p)
		}
	}
}

// TestPrepareWriteAllocFree: filling and stamping allocate nothing.
func TestPrepareWriteAllocFree(t *testing.T) {
	for _, w := range []WriteBuffers{
		{Scramble: true, Chunk: 4096},
		{Refill: true, Chunk: 4096},
		{Refill: true, Compress: 40, Dedupe: 30, Chunk: 512, Pattern: []byte{1, 2, 3}},
		{Refill: true, Pattern: []byte{1, 2, 3}, Chunk: 4096},
	} {
		b := testBuffers(t, 4096, 2, w)
		if n := testing.AllocsPerRun(100, func() { b.prepareWrite(1, 4096, 8192) }); n != 0 {
			t.Errorf("%+v: %v allocations per write", w, n)
		}
	}
}

// TestSyncsAtFioPoints: with each I/O completing before the next is
// picked (a sync engine), a job of 16 writes with fsync=4 syncs after
// writes 4, 8 and 12 — fio's get_rw_ddir — and the end comes before a
// fourth.
func TestSyncsAtFioPoints(t *testing.T) {
	for _, tc := range []struct {
		fsync, fdatasync int
		want             string
	}{
		{4, 0, "WWWWSWWWWSWWWWSWWWW"},
		{0, 8, "WWWWWWWWDWWWWWWWW"},
		{2, 3, "WWSWDWSWWSWWSWDWSWW"}, // 12 writes; fsync first when both are due
		{1, 0, strings.Repeat("WS", 15) + "W"},
	} {
		j := NewJob()
		j.RW, j.FsyncBlocks, j.FdatasyncBlocks = "write", tc.fsync, tc.fdatasync
		blocks := uint64(16)
		if tc.fsync == 2 {
			blocks = 12
		}
		lay, err := j.layout([]fileState{{"a", int64(blocks) * 4096, true}}, 1)
		if err != nil {
			t.Fatal(err)
		}
		g := newIOGen(&j, lay, 0)
		var got []byte
		for {
			op, _, _, _, ok := g.next()
			if !ok {
				break
			}
			got = append(got, "RWTSD"[op])
			g.lastWasSync = op > opTrim // it completes at once
		}
		if string(got) != tc.want {
			t.Errorf("fsync=%d fdatasync=%d: %s, want %s", tc.fsync, tc.fdatasync, got, tc.want)
		}
	}
}
