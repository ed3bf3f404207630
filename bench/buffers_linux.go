package bench

import (
	"encoding/binary"
	"unsafe"
)

// buffers holds one I/O buffer per slot in an arena, each starting on a
// page boundary so O_DIRECT's memory alignment always holds.
type buffers struct {
	arena  *arena
	base   unsafe.Pointer
	stride int
	bs     int
}

func newBuffers(bs, slots int, seed uint64) (*buffers, error) {
	stride := (bs + pageSize - 1) &^ (pageSize - 1)
	a, err := newArena(stride * slots)
	if err != nil {
		return nil, err
	}
	// Random contents, so a compressing device (zram) cannot shrink the
	// data; stamp makes every written sector unique on top of that.
	rng := newRand(seed ^ 0x5eed)
	for i := 0; i+8 <= len(a.mem); i += 8 {
		binary.LittleEndian.PutUint64(a.mem[i:], rng.next())
	}
	return &buffers{arena: a, base: a.base(), stride: stride, bs: bs}, nil
}

func (b *buffers) addr(slot int) uintptr {
	return uintptr(unsafe.Add(b.base, slot*b.stride))
}

func (b *buffers) slice(slot int) []byte {
	return b.arena.mem[slot*b.stride : slot*b.stride+b.bs]
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
