package bench

import (
	"golang.org/x/sys/unix"
)

// psyncEngine is fio's psync: one pread or pwrite per I/O, at depth 1.
var psyncEngine = Engine{
	Name:  "psync",
	Help:  "pread/pwrite, one I/O at a time",
	Flags: SyncIO,
	open: func(j *Job, fd int, bufs *buffers, depth int) (engine, engineInfo, error) {
		return newPsync(fd, bufs, depth), engineInfo{}, nil
	},
}

// psync does each I/O with pread/pwrite inside submit, as raw system calls
// on the mmap'd buffer (no allocation, unlike unix.Preadv2). Jobs run sync engines at depth 1, like fio.
type psync struct {
	fd      int
	bufs    *buffers
	pending []psyncReq
	done    completions
}

type psyncReq struct {
	slot  int
	write bool
	off   int64
}

func newPsync(fd int, bufs *buffers, depth int) *psync {
	return &psync{fd: fd, bufs: bufs, pending: make([]psyncReq, 0, depth), done: newCompletions(depth)}
}

func (p *psync) queue(slot int, write bool, off int64) {
	p.pending = append(p.pending, psyncReq{slot, write, off})
}

func (p *psync) commit() (int, error) {
	n := len(p.pending)
	for _, r := range p.pending {
		nr := uintptr(unix.SYS_PREAD64)
		if r.write {
			nr = unix.SYS_PWRITE64
		}
		var n uintptr
		var errno unix.Errno
		for {
			n, _, errno = unix.RawSyscall6(nr, uintptr(p.fd), p.bufs.addr(r.slot), uintptr(p.bufs.bs), uintptr(r.off), 0, 0)
			if errno != unix.EINTR {
				break
			}
		}
		res := int32(n)
		if errno != 0 {
			res = -int32(errno)
		}
		p.done.push(completion{slot: int32(r.slot), res: res})
	}
	p.pending = p.pending[:0]
	return n, nil
}

func (p *psync) getevents(min, max int, _ bool, c []completion) (int, error) {
	return p.done.popWait(min, c[:max])
}

func (p *psync) close() error { return nil }
