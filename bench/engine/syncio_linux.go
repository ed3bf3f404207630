package engine

import (
	"unsafe"

	"golang.org/x/sys/unix"

	"iolab/bench/randgen"
)

// syncIO is the core of fio's sync, vsync, pvsync and pvsync2 engines
// (engines/sync.c): each I/O is one system call, made in commit, one at a
// time (the job runs them at depth 1, SyncIO). What the call is comes from
// the engine: its rw function. Syncs are fsync(2) and fdatasync(2), as in
// fio's do_io_u_sync. The iovecs the vectored calls hand the kernel live
// in mmap'd memory, one per slot, and every call is a raw system call:
// nothing allocates per I/O (x/sys/unix's Preadv2 would).
type syncIO struct {
	fds     []int
	bufs    *Buffers
	mem     *Arena
	iov     unsafe.Pointer // iovec per slot
	pending []syncReq
	done    completions
	rw      syncRW

	pos   []int64          // sync: where each file's position is (fio's LAST_POS)
	flags uintptr          // pvsync2: RWF_* flags for every I/O
	hipri uint64           // pvsync2: percentage of I/Os with RWF_HIPRI (0: none)
	rnd   randgen.SplitMix // pvsync2: picks them
}

type syncReq struct {
	slot int
	op   Op
	file int
	off  int64
	n    uint32
}

// syncRW does one read or write; it returns bytes done or a negative
// errno.
type syncRW func(s *syncIO, r *syncReq) int32

func newSyncIO(st *Setup, rw syncRW) (*syncIO, error) {
	fds, bufs, depth := st.Files, st.Bufs, st.Depth
	mem, err := NewArena(depth * int(unsafe.Sizeof(iovec{})))
	if err != nil {
		return nil, err
	}
	s := &syncIO{fds: fds, bufs: bufs, mem: mem, iov: mem.Base(), pending: make([]syncReq, 0, depth),
		done: newCompletions(depth), rw: rw, pos: make([]int64, len(fds)), rnd: randgen.NewSplitMix(st.RandSeed ^ 0x41)}
	return s, nil
}

func (s *syncIO) Queue(slot int, op Op, file int, off int64, n uint32) {
	s.pending = append(s.pending, syncReq{slot, op, file, off, n})
}

func (s *syncIO) Commit() (int, error) {
	n := len(s.pending)
	for i := range s.pending {
		r := &s.pending[i]
		var res int32
		if r.op == OpFsync || r.op == OpFdatasync {
			res = FsyncFile(s.fds[r.file], r.op)
		} else {
			res = s.rw(s, r)
		}
		s.done.push(Completion{Slot: int32(r.slot), Res: res})
	}
	s.pending = s.pending[:0]
	return n, nil
}

func (s *syncIO) GetEvents(min, max int, _ bool, c []Completion) (int, error) {
	return s.done.popWait(min, c[:max])
}

func (s *syncIO) Close() error { return s.mem.Free() }

// vec points the request's iovec at its slot's buffer, n bytes, and
// returns its address.
func (s *syncIO) vec(r *syncReq) uintptr {
	v := (*iovec)(unsafe.Add(s.iov, r.slot*int(unsafe.Sizeof(iovec{}))))
	v.base, v.len = uint64(s.bufs.Addr(r.slot)), uint64(r.n)
	return uintptr(unsafe.Pointer(v))
}

// syscallRes makes a raw system call, again on EINTR, and returns its
// result the way a completion holds it.
func syscallRes(nr, a1, a2, a3, a4, a5, a6 uintptr) int32 {
	for {
		n, _, errno := unix.RawSyscall6(nr, a1, a2, a3, a4, a5, a6)
		switch errno {
		case 0:
			return int32(n)
		case unix.EINTR:
			continue
		}
		return -int32(errno)
	}
}

// seek moves fd's position to off; it returns 0 or a negative errno.
func seek(fd uintptr, off int64) int32 {
	_, _, errno := unix.RawSyscall(unix.SYS_LSEEK, fd, uintptr(off), unix.SEEK_SET)
	return -int32(errno)
}

// offsetArgs splits an offset into the two words preadv and its kin take
// (pos_l, pos_h), as x/sys/unix does.
func offsetArgs(off int64) (lo, hi uintptr) {
	return uintptr(off), uintptr(uint64(off) >> (unsafe.Sizeof(uintptr(0))*8 - 1) >> 1)
}

// rwCall picks a read's or a write's system call number.
func rwCall(op Op, read, write uintptr) uintptr {
	if op == OpWrite {
		return write
	}
	return read
}

// FsyncFile makes one fsync or fdatasync system call on fd and returns its
// result as a completion does: 0, or a negative errno.
func FsyncFile(fd int, op Op) int32 {
	nr := uintptr(unix.SYS_FSYNC)
	if op == OpFdatasync {
		nr = unix.SYS_FDATASYNC
	}
	for {
		_, _, errno := unix.RawSyscall(nr, uintptr(fd), 0, 0)
		if errno != unix.EINTR {
			return -int32(errno)
		}
	}
}
