package tsc

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// cpuNow is the CPU the calling thread runs on (getcpu(2)), or -1.
func cpuNow() int32 {
	var cpu uint32
	if _, _, errno := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0); errno != 0 {
		return -1
	}
	return int32(cpu)
}
