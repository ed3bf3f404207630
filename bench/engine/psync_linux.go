package engine

import (
	"golang.org/x/sys/unix"
)

// psyncEngine is fio's psync: one pread or pwrite per I/O, at depth 1.
var psyncEngine = Engine{
	Name:  "psync",
	Help:  "pread/pwrite, one I/O at a time",
	Flags: SyncIO,
	open: func(st *Setup) (IO, Info, error) {
		return newPsync(st.Files, st.Bufs, st.Depth), Info{}, nil
	},
}

// psync does each I/O with pread/pwrite inside submit, as raw system calls
// on the mmap'd buffer (no allocation, unlike unix.Preadv2). Jobs run sync engines at depth 1, like fio.
type psync struct {
	fds     []int
	bufs    *Buffers
	pending []psyncReq
	done    completions
}

type psyncReq struct {
	slot int
	op   Op
	file int
	off  int64
	n    uint32
}

func newPsync(fds []int, bufs *Buffers, depth int) *psync {
	return &psync{fds: fds, bufs: bufs, pending: make([]psyncReq, 0, depth), done: newCompletions(depth)}
}

func (p *psync) Queue(slot int, op Op, file int, off int64, n uint32) {
	p.pending = append(p.pending, psyncReq{slot, op, file, off, n})
}

// Commit does each queued I/O with one raw pread, pwrite, fsync or
// fdatasync, as fio's psync engine does.
func (p *psync) Commit() (int, error) {
	n := len(p.pending)
	for _, r := range p.pending {
		fd := uintptr(p.fds[r.file])
		var args [4]uintptr
		switch r.op {
		case OpRead:
			args = [4]uintptr{unix.SYS_PREAD64, fd, p.bufs.Addr(r.slot), uintptr(r.n)}
		case OpWrite:
			args = [4]uintptr{unix.SYS_PWRITE64, fd, p.bufs.Addr(r.slot), uintptr(r.n)}
		case OpFsync:
			args = [4]uintptr{unix.SYS_FSYNC, fd}
		case OpFdatasync:
			args = [4]uintptr{unix.SYS_FDATASYNC, fd}
		}
		var done uintptr
		var errno unix.Errno
		for {
			done, _, errno = unix.RawSyscall6(args[0], args[1], args[2], args[3], uintptr(r.off), 0, 0)
			if errno != unix.EINTR {
				break
			}
		}
		res := int32(done)
		if errno != 0 {
			res = -int32(errno)
		}
		p.done.push(Completion{Slot: int32(r.slot), Res: res})
	}
	p.pending = p.pending[:0]
	return n, nil
}

func (p *psync) GetEvents(min, max int, _ bool, c []Completion) (int, error) {
	return p.done.popWait(min, c[:max])
}

func (p *psync) Close() error { return nil }
