package bench

import (
	"unsafe"

	"iolab/bench/engine"
	"iolab/bench/randgen"
	"iolab/bench/verify"
)

// buffers holds one I/O buffer per slot in an arena, each starting on a
// page boundary so O_DIRECT's memory alignment always holds, and fills
// them with what the job's writes must carry (Job.WriteBuffers).
//
// What devices see, by default: fio fills its buffers with random bytes
// once and scrambles every 512-byte sector of each write with its offset
// and the time (io_u.c small_content_scramble), so no two written sectors
// are alike and nothing compresses. iolab does the same with its own
// stamp — the sector's offset and a per-job write sequence number at the
// start of every sector — which a test can check against the sector's
// place on the device. A deduplicating or compressing device (zram, a
// dedup SSD) finds as little to save in iolab's writes as in fio's;
// scramble_buffers=0 writes each slot's buffer unchanged, over and over,
// as fio does.
type buffers struct {
	engine.Buffers // what the engine is handed: each slot's address
	arena          *engine.Arena

	w      WriteBuffers
	seeds  randgen.SplitMix // one seed per buffer or compression chunk filled
	prev   randgen.SplitMix // seeds as they were before the last buffer that was no repeat
	dedupe randgen.SplitMix // picks the repeats
	ws     workingSet       // dedupe_mode=working_set; no blocks without it
	seq    uint64           // writes stamped so far
}

// newBuffers makes slots buffers of bs bytes filled with random bytes,
// in memory placed as mem says (numa_mem_policy).
func newBuffers(bs, slots int, seed uint64, mem memPolicy) (*buffers, error) {
	stride := (bs + engine.PageSize - 1) &^ (engine.PageSize - 1)
	a, err := newArenaFor(stride*slots, mem)
	if err != nil {
		return nil, err
	}
	first, seeds := dataStream(seed)
	b := &buffers{Buffers: engine.Buffers{Base: a.Base(), Stride: stride, BS: bs}, arena: a, w: WriteBuffers{Scramble: true, Chunk: bs},
		seeds: seeds, prev: seeds, dedupe: randgen.NewSplitMix(seed ^ 0xdede)}
	verify.FillRandom(a.Mem, first)
	return b, nil
}

// dataStream is what a job whose buffers have seed fills them from: the
// seed of its arena's first fill, then the stream of seeds its buffers
// and compression chunks take one by one.
func dataStream(seed uint64) (first uint64, stream randgen.SplitMix) {
	stream = randgen.NewSplitMix(seed ^ 0x5eed)
	return stream.Next(), stream
}

// newJobBuffers makes the buffers of job j, index among the run's jobs
// whose buffers have seeds (by index), in memory placed as mem says, and,
// when it writes, fills each the way its options say, as fio does when it
// sets up its io_us (backend.c init_io_u).
func newJobBuffers(j *Job, slots, index int, seeds []uint64, mem memPolicy) (*buffers, error) {
	b, err := newBuffers(int(j.MaxBS()), slots, seeds[index], mem)
	if err != nil {
		return nil, err
	}
	b.w = j.WriteBuffers()
	if b.w.WorkingSet > 0 {
		minBS, _ := j.BlockSizes(Write)
		b.ws = newWorkingSet(b.w, minBS, index, seeds)
	}
	if j.Writes() {
		for s := range slots {
			b.fill(b.slice(s))
		}
	}
	return b, nil
}

func (b *buffers) slice(slot int) []byte {
	return b.arena.Mem[slot*b.Stride : slot*b.Stride+b.BS]
}

// prepareWrite readies slot's buffer for a write of n bytes at off
// (fio's get_io_u): filled anew with refill_buffers, else stamped unless
// scramble_buffers is off (or compression or dedupe is asked for).
func (b *buffers) prepareWrite(slot, n int, off int64) {
	switch {
	case b.w.Refill:
		b.fill(b.arena.Mem[slot*b.Stride : slot*b.Stride+n])
	case b.w.Scramble:
		b.seq++
		b.stamp(slot, n, off, b.seq)
	}
}

// fill is fio's fill_io_buffer: compressible chunks (with repeats for
// dedupe), else the pattern, else zeros, else random bytes.
func (b *buffers) fill(p []byte) {
	w := &b.w
	switch {
	case w.Compress > 0 || w.Dedupe > 0:
		src := &b.seeds
		if w.Dedupe > 0 {
			// A repeat replays the seeds of the last buffer that was none,
			// or of a block of the working set.
			if w.Dedupe == 100 || b.dedupe.Below(100) < uint64(w.Dedupe) {
				dup := b.prev
				if b.ws.blocks > 0 {
					dup = b.ws.block(b.ws.pick.Below(b.ws.blocks))
				}
				src = &dup
			} else {
				b.prev = b.seeds
			}
		}
		for len(p) > 0 {
			c := min(w.Chunk, len(p))
			fillCompressible(p[:c], src.Next(), w.Compress, w.Pattern)
			p = p[c:]
		}
	case len(w.Pattern) > 0:
		verify.CopyPattern(p, w.Pattern)
	case w.Zero:
		clear(p)
	default:
		verify.FillRandom(p, b.seeds.Next())
	}
}

// workingSet is fio's dedupe working set (dedupe.c
// init_dedupe_working_set_seeds, io_u.c get_buf_state): the seeds of the
// first blocks a job's writes fill, one of which a repeat replays. Those
// blocks are the job's own first ones; with dedupe_global they are taken
// from every job of the run in turn, blocks/jobs of each (at least one),
// starting with this job's and going on with the next job's in the
// run's order, so jobs that share the run share the set. A block is the
// smallest write; a longer write that repeats one goes on into the blocks
// after it, as its seeds do.
type workingSet struct {
	blocks uint64
	perJob uint64 // fio's pages_per_seed
	// stride is the seeds one block takes (fio's num_seed_advancements),
	// rounded up as a fill takes one for a last, shorter chunk too (fio
	// rounds down, and then replays blocks that were never written).
	stride  uint64
	streams []randgen.SplitMix // the jobs' data streams, this job's first
	pick    randgen.SplitMix   // fio's dedupe_working_set_index_state
}

// newWorkingSet sets up the working set of the job at index among the
// run's jobs, whose buffers have seeds; its blocks are of minBS bytes.
func newWorkingSet(w WriteBuffers, minBS int64, index int, seeds []uint64) workingSet {
	ws := workingSet{blocks: uint64(w.WorkingSet), perJob: uint64(w.WorkingSet),
		stride: uint64((minBS + int64(w.Chunk) - 1) / int64(w.Chunk)), pick: randgen.NewSplitMix(seeds[index] ^ 0xd5e7)}
	_, own := dataStream(seeds[index])
	ws.streams = []randgen.SplitMix{own}
	if w.Global {
		ws.perJob = max(ws.blocks/uint64(len(seeds)), 1)
		for k := 1; k < len(seeds); k++ {
			_, s := dataStream(seeds[(index+k)%len(seeds)])
			ws.streams = append(ws.streams, s)
		}
	}
	return ws
}

// block is the seeds of the working set's block i.
func (ws *workingSet) block(i uint64) randgen.SplitMix {
	s := ws.streams[(i/ws.perJob)%uint64(len(ws.streams))]
	return s.Skip(i % ws.perJob * ws.stride)
}

// fillCompressible is fio's __fill_random_buf_percentage for one chunk:
// the first (100-pct)% random, the rest the pattern or zeros.
func fillCompressible(p []byte, seed uint64, pct int, pattern []byte) {
	n := len(p) * (100 - pct) / 100
	verify.FillRandom(p[:n], seed)
	if len(pattern) > 0 {
		verify.CopyPattern(p[n:], pattern)
	} else {
		clear(p[n:])
	}
}

// stampSize is the unit stamp marks: the smallest logical block size.
const stampSize = 512

// stamp writes the device offset and a per-job sequence number at the start
// of every 512-byte sector of slot's buffer before it is written, so no two
// written sectors are alike (deduplicating or compressing devices cannot
// cheat) and a sector read back names where it was written.
func (b *buffers) stamp(slot, n int, off int64, seq uint64) {
	p := unsafe.Add(b.Base, slot*b.Stride)
	for i := 0; i+16 <= n; i += stampSize {
		*(*uint64)(unsafe.Add(p, i)) = uint64(off) + uint64(i)
		*(*uint64)(unsafe.Add(p, i+8)) = seq
	}
}

func (b *buffers) free() error { return b.arena.Free() }
