package bench

import (
	"errors"

	"golang.org/x/sys/unix"
)

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

func (p *psync) prep(slot int, write bool, off int64) {
	p.pending = append(p.pending, psyncReq{slot, write, off})
}

func (p *psync) submit(int) error {
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
	return nil
}

func (p *psync) reap(c []completion) int { return p.done.pop(c) }

func (p *psync) wait(want int, c []completion) (int, error) { return p.done.popWait(want, c) }

func (p *psync) close() error { return nil }

// completions is a fixed ring of finished requests, for engines that
// complete inside submit.
type completions struct {
	ring []completion
	head int
	n    int
}

func newCompletions(depth int) completions { return completions{ring: make([]completion, depth)} }

func (q *completions) push(c completion) {
	q.ring[(q.head+q.n)%len(q.ring)] = c
	q.n++
}

func (q *completions) pop(c []completion) int {
	k := 0
	for q.n > 0 && k < len(c) {
		c[k] = q.ring[q.head]
		q.head = (q.head + 1) % len(q.ring)
		q.n--
		k++
	}
	return k
}

// errNothingInFlight would otherwise be an endless wait: a synchronous
// engine has nothing pending once submit returns.
var errNothingInFlight = errors.New("wait with no I/O in flight")

func (q *completions) popWait(want int, c []completion) (int, error) {
	if want > q.n {
		return q.pop(c), errNothingInFlight
	}
	return q.pop(c), nil
}
