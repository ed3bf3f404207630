package engine

import "unsafe"

// Buffers are where an engine does its I/O: one buffer per slot, each
// starting on a page boundary of an Arena, so O_DIRECT's memory alignment
// always holds. What they hold is the job's (bench fills them with what
// its writes must carry, and verifies what its reads bring): an engine
// only needs each slot's address, and io_uring the size to register.
type Buffers struct {
	Base   unsafe.Pointer
	Stride int // bytes from one slot's buffer to the next: BS in whole pages
	BS     int // bytes in each buffer
}

// Addr is slot's buffer's address, for a system call or an SQE.
func (b *Buffers) Addr(slot int) uintptr {
	return uintptr(unsafe.Add(b.Base, slot*b.Stride))
}
