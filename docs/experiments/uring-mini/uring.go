//go:build ignore

// uring.go PATH DEPTH SECS: uring.c in Go — the same system calls through
// unix.RawSyscall6 on a locked thread with SIGURG blocked, as iolab's job
// thread makes them.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

type params struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFd uint32
	resv                                                                   [3]uint32
	sqOff                                                                  [10]uint32
	cqOff                                                                  [10]uint32
}

type sqe struct {
	opcode, flags uint8
	ioprio        uint16
	fd            int32
	off, addr     uint64
	len, rwFlags  uint32
	userData      uint64
	pad           [3]uint64
}

type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

func main() {
	path := os.Args[1]
	depth, _ := strconv.Atoi(os.Args[2])
	secs, _ := strconv.ParseFloat(os.Args[3], 64)
	runtime.LockOSThread()
	var set unix.Sigset_t
	set.Val[(unix.SIGURG-1)/64] |= 1 << ((uint(unix.SIGURG) - 1) % 64)
	unix.PthreadSigmask(unix.SIG_BLOCK, &set, nil)
	if os.Getenv("MINI_PROCS") != "" {
		n, _ := strconv.Atoi(os.Getenv("MINI_PROCS"))
		runtime.GOMAXPROCS(n)
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		panic(err)
	}
	size, _ := unix.Seek(fd, 0, 2)
	var p params
	p.flags = 1<<3 | 1<<8 | 1<<12 | 1<<13 // CQSIZE, COOP_TASKRUN, SINGLE_ISSUER, DEFER_TASKRUN
	p.cqEntries = uint32(depth)
	r, _, e := unix.RawSyscall(unix.SYS_IO_URING_SETUP, uintptr(depth), uintptr(unsafe.Pointer(&p)), 0)
	if e != 0 {
		panic(e)
	}
	rfd := int(r)
	if w := os.Getenv("MINI_WQ"); w != "" {
		n, _ := strconv.Atoi(w)
		v := [2]uint32{uint32(n), uint32(n)}
		if _, _, e := unix.RawSyscall6(unix.SYS_IO_URING_REGISTER, uintptr(rfd), 19, uintptr(unsafe.Pointer(&v)), 2, 0, 0); e != 0 {
			panic(e)
		}
	}
	sqsz := int(p.sqOff[6]) + int(p.sqEntries)*4
	cqsz := int(p.cqOff[5]) + int(p.cqEntries)*16
	sqsz = max(sqsz, cqsz)
	ring, err := unix.Mmap(rfd, 0, sqsz, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		panic(err)
	}
	sqeMem, err := unix.Mmap(rfd, 0x10000000, int(p.sqEntries)*64, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		panic(err)
	}
	base := unsafe.Pointer(&ring[0])
	u32 := func(off uint32) *uint32 { return (*uint32)(unsafe.Add(base, off)) }
	sqTail, sqMask, sqArray := u32(p.sqOff[1]), *u32(p.sqOff[2]), p.sqOff[6]
	cqHead, cqTail, cqMask, cqes := u32(p.cqOff[0]), u32(p.cqOff[1]), *u32(p.cqOff[2]), p.cqOff[5]
	sqes := unsafe.Pointer(&sqeMem[0])
	buf, _ := unix.Mmap(-1, 0, 4096*depth, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	free := make([]int, depth)
	for i := range free {
		free[i] = i
	}
	nfree := depth
	x := uint64(88172645463325252)
	blocks := uint64(size / 4096)
	tail := atomic.LoadUint32(sqTail)
	t0 := time.Now()
	done, inflight := 0, 0
	enter := func(sub, minc uint32) int {
		n, _, _ := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(rfd), uintptr(sub), uintptr(minc), 1, 0, 0)
		return int(n)
	}
	for {
		for inflight < depth {
			nfree--
			slot := free[nfree]
			s := (*sqe)(unsafe.Add(sqes, uintptr(tail&sqMask)*64))
			*s = sqe{}
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			s.opcode, s.fd, s.addr, s.len = 22, int32(fd), uint64(uintptr(unsafe.Pointer(&buf[slot*4096]))), 4096
			s.off, s.userData = (x%blocks)*4096, uint64(slot)
			*(*uint32)(unsafe.Add(base, uintptr(sqArray)+uintptr(tail&sqMask)*4)) = tail & sqMask
			tail++
			atomic.StoreUint32(sqTail, tail)
			if enter(1, 0) != 1 {
				panic("enter")
			}
			inflight++
		}
		for {
			head := *cqHead
			ct := atomic.LoadUint32(cqTail)
			if head != ct {
				for head != ct {
					c := (*cqe)(unsafe.Add(base, uintptr(cqes)+uintptr(head&cqMask)*16))
					if c.res != 4096 {
						panic(fmt.Sprint("res ", c.res))
					}
					free[nfree] = int(c.userData)
					nfree++
					head++
					inflight--
					done++
				}
				atomic.StoreUint32(cqHead, head)
				break
			}
			enter(0, 1)
		}
		if done&1023 < 8 {
			if el := time.Since(t0).Seconds(); el >= secs {
				fmt.Printf("%.0f\n", float64(done)/el)
				return
			}
		}
	}
}
