package engine

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Arena is memory mapped outside the Go heap: the kernel reads and writes
// I/O buffers, iocbs and rings after the system call that named them has
// returned, which the garbage collector cannot know about
// (reference/io_uring-aio-notes.md §3). Mappings are page-aligned, which
// satisfies every O_DIRECT alignment.
type Arena struct {
	Mem []byte
}

func NewArena(size int) (*Arena, error) {
	size = (size + PageSize - 1) &^ (PageSize - 1)
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("mmap %d bytes for I/O buffers: %w", size, err)
	}
	return &Arena{Mem: mem}, nil
}

// Base is the arena's first byte.
func (a *Arena) Base() unsafe.Pointer { return unsafe.Pointer(&a.Mem[0]) }

// Free unmaps the arena; a nil or freed arena is left as it is.
func (a *Arena) Free() error {
	if a == nil || a.Mem == nil {
		return nil
	}
	err := unix.Munmap(a.Mem)
	a.Mem = nil
	return err
}

// PageSize is the page size the arenas round to and align on.
const PageSize = 4096
