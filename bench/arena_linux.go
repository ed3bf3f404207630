package bench

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// arena is memory mapped outside the Go heap: the kernel reads and writes
// I/O buffers, iocbs and rings after the system call that named them has
// returned, which the garbage collector cannot know about
// (reference/io_uring-aio-notes.md §3). Mappings are page-aligned, which
// satisfies every O_DIRECT alignment.
type arena struct {
	mem []byte
}

func newArena(size int) (*arena, error) {
	size = (size + pageSize - 1) &^ (pageSize - 1)
	mem, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
	if err != nil {
		return nil, fmt.Errorf("mmap %d bytes for I/O buffers: %w", size, err)
	}
	return &arena{mem: mem}, nil
}

func (a *arena) base() unsafe.Pointer { return unsafe.Pointer(&a.mem[0]) }

func (a *arena) free() error {
	if a == nil || a.mem == nil {
		return nil
	}
	err := unix.Munmap(a.mem)
	a.mem = nil
	return err
}

const pageSize = 4096
