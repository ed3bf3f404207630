package randgen

import (
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapWords returns n zeroed words for m's bits. A large map (1 bit per
// block: 32 MiB for 1 TiB of 4 KiB blocks, per job) is mapped outside the
// Go heap, where it cannot bring on the garbage collection that a run
// holds off (Runner.Run), and unmapped once m is collected.
func mapWords(m *BlockMap, n int) []uint64 {
	if n < 1<<17 {
		return make([]uint64, n)
	}
	mem, err := unix.Mmap(-1, 0, n*8, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_POPULATE)
	if err != nil {
		return make([]uint64, n)
	}
	runtime.AddCleanup(m, func(mem []byte) { unix.Munmap(mem) }, mem)
	return unsafe.Slice((*uint64)(unsafe.Pointer(&mem[0])), n)
}
