package bench

import (
	"encoding/binary"
	"unsafe"
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
	arena  *arena
	base   unsafe.Pointer
	stride int
	bs     int

	w      WriteBuffers
	seeds  rng    // one seed per buffer or compression chunk filled
	prev   rng    // seeds as they were before the last buffer that was no repeat
	dedupe rng    // picks the repeats
	seq    uint64 // writes stamped so far
}

// newBuffers makes slots buffers of bs bytes filled with random bytes.
func newBuffers(bs, slots int, seed uint64) (*buffers, error) {
	stride := (bs + pageSize - 1) &^ (pageSize - 1)
	a, err := newArena(stride * slots)
	if err != nil {
		return nil, err
	}
	b := &buffers{arena: a, base: a.base(), stride: stride, bs: bs, w: WriteBuffers{Scramble: true, Chunk: bs},
		seeds: newRand(seed ^ 0x5eed), dedupe: newRand(seed ^ 0xdede)}
	b.prev = b.seeds
	fillRandom(a.mem, b.seeds.next())
	return b, nil
}

// newJobBuffers makes the buffers of job j and, when it writes, fills
// each the way its options say, as fio does when it sets up its io_us
// (backend.c init_io_u).
func newJobBuffers(j *Job, slots int, seed uint64) (*buffers, error) {
	b, err := newBuffers(int(j.MaxBS()), slots, seed)
	if err != nil {
		return nil, err
	}
	b.w = j.WriteBuffers()
	if j.Writes() {
		for s := range slots {
			b.fill(b.slice(s))
		}
	}
	return b, nil
}

func (b *buffers) addr(slot int) uintptr {
	return uintptr(unsafe.Add(b.base, slot*b.stride))
}

func (b *buffers) slice(slot int) []byte {
	return b.arena.mem[slot*b.stride : slot*b.stride+b.bs]
}

// prepareWrite readies slot's buffer for a write of n bytes at off
// (fio's get_io_u): filled anew with refill_buffers, else stamped unless
// scramble_buffers is off (or compression or dedupe is asked for).
func (b *buffers) prepareWrite(slot, n int, off int64) {
	switch {
	case b.w.Refill:
		b.fill(b.arena.mem[slot*b.stride : slot*b.stride+n])
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
			// A repeat replays the seeds of the last buffer that was none.
			if w.Dedupe == 100 || b.dedupe.below(100) < uint64(w.Dedupe) {
				dup := b.prev
				src = &dup
			} else {
				b.prev = b.seeds
			}
		}
		for len(p) > 0 {
			c := min(w.Chunk, len(p))
			fillCompressible(p[:c], src.next(), w.Compress, w.Pattern)
			p = p[c:]
		}
	case len(w.Pattern) > 0:
		copyPattern(p, w.Pattern)
	case w.Zero:
		clear(p)
	default:
		fillRandom(p, b.seeds.next())
	}
}

// fillCompressible is fio's __fill_random_buf_percentage for one chunk:
// the first (100-pct)% random, the rest the pattern or zeros.
func fillCompressible(p []byte, seed uint64, pct int, pattern []byte) {
	n := len(p) * (100 - pct) / 100
	fillRandom(p[:n], seed)
	if len(pattern) > 0 {
		copyPattern(p[n:], pattern)
	} else {
		clear(p[n:])
	}
}

// fillRandom fills p with random bytes from seed.
func fillRandom(p []byte, seed uint64) {
	r := newRand(seed)
	i := 0
	for ; i+8 <= len(p); i += 8 {
		binary.LittleEndian.PutUint64(p[i:], r.next())
	}
	if i < len(p) {
		var last [8]byte
		binary.LittleEndian.PutUint64(last[:], r.next())
		copy(p[i:], last[:])
	}
}

// copyPattern repeats pattern over p from its start (fio's cpy_pattern).
func copyPattern(p, pattern []byte) {
	n := copy(p, pattern)
	for n < len(p) {
		n += copy(p[n:], p[:n])
	}
}

// stampSize is the unit stamp marks: the smallest logical block size.
const stampSize = 512

// stamp writes the device offset and a per-job sequence number at the start
// of every 512-byte sector of slot's buffer before it is written, so no two
// written sectors are alike (deduplicating or compressing devices cannot
// cheat) and a sector read back names where it was written.
func (b *buffers) stamp(slot, n int, off int64, seq uint64) {
	p := unsafe.Add(b.base, slot*b.stride)
	for i := 0; i+16 <= n; i += stampSize {
		*(*uint64)(unsafe.Add(p, i)) = uint64(off) + uint64(i)
		*(*uint64)(unsafe.Add(p, i+8)) = seq
	}
}

func (b *buffers) free() error { return b.arena.free() }
