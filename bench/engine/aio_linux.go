package engine

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"iolab/bench/tsc"
	"iolab/bench/units"
)

// Linux AIO ABI, from include/uapi/linux/aio_abi.h.
const (
	iocbCmdPread  = 0
	iocbCmdPwrite = 1
	iocbCmdFsync  = 2
	iocbCmdFdsync = 3

	// iocbFlagIOPrio says aio_reqprio holds the I/O's priority (else it
	// has the submitting thread's).
	iocbFlagIOPrio = 1 << 1

	aioRingMagic = 0xa10a10a1
)

// iocb mirrors struct iocb (64 bytes, little-endian layout).
type iocb struct {
	data      uint64
	key       uint32
	rwFlags   uint32
	lioOpcode uint16
	reqPrio   int16
	fildes    uint32
	buf       uint64
	nbytes    uint64
	offset    int64
	reserved2 uint64
	flags     uint32
	resFD     uint32
}

// ioEvent mirrors struct io_event (32 bytes).
type ioEvent struct {
	data uint64
	obj  uint64
	res  int64
	res2 int64
}

// aioRing mirrors the header of the completion ring the kernel maps at the
// context address (fs/aio.c struct aio_ring); io_event[nr] follow it.
type aioRing struct {
	id, nr, head, tail      uint32
	magic, compat, incompat uint32
	headerLength            uint32
}

// aio is one Linux AIO context owned by one job thread. Completions are
// reaped from the ring in user space when they are there, as fio's libaio
// engine does with userspace_reap (engines/libaio.c user_io_getevents).
// libaioEngine is Linux's native AIO (io_setup, io_submit, io_getevents):
// fio's libaio engine.
var libaioEngine = Engine{
	Name: "libaio",
	Help: "Linux native asynchronous I/O (io_submit, io_getevents)",
	// fsync=N: fio's libaio does each sync with fsync(2) on its own thread.
	Flags: SyncInline | CmdPrio,
	Options: []Option{
		{Name: "userspace_reap", Flag: true, Unit: "bool", Default: "0",
			Help: "reap from the aio ring in user space instead of io_getevents, when not waiting (iodepth_batch_complete_min=0)",
			Set:  units.SetBool(func(p *Params) *bool { return &p.UserspaceReap }), Get: units.GetBool(func(p *Params) *bool { return &p.UserspaceReap })},
	},
	open: func(st *Setup) (IO, Info, error) {
		a, err := newAIO(st)
		if err != nil {
			return nil, Info{}, err
		}
		return a, Info{Setup: a.describe()}, nil
	},
}

// describe is what the run records of the context's setup: whether its
// waits spin on the aio ring (it has none to spin on when the ring's
// layout is not the one iolab knows, or without a TSC to time the spin).
func (a *aio) describe() string {
	if !a.spin.ok {
		return ""
	}
	return "libaio; " + spinNote + " (the aio ring)"
}

type aio struct {
	ctx    uintptr
	ring   *aioRing
	events unsafe.Pointer // the ring's io_event array

	mem    *Arena // iocbs, the submit pointer array and io_getevents' output
	iocbs  unsafe.Pointer
	ptrs   unsafe.Pointer // *iocb array handed to io_submit
	out    unsafe.Pointer // io_event array for io_getevents
	depth  int
	queued int
	done   int // prefix of ptrs already submitted
	// submitAt is where fio's libaio would submit from in its ring of iodepth
	// iocbs: it never submits across the ring's end in one call.
	submitAt int

	fds       []uint32 // per job file
	bufs      *Buffers
	userspace bool // userspace_reap

	inflight int // submitted and not yet reaped
	// spin watches the aio ring before a blocking io_getevents, as the
	// io_uring engine watches its ring (waitspin_linux.go): the loop
	// driver's and filesystems' completions come from other threads, and
	// one that arrives while the thread sleeps costs a wake-up on both
	// sides.
	spin waitSpin
}

func newAIO(st *Setup) (*aio, error) {
	fds, bufs, depth := st.Files, st.Bufs, st.Depth
	a := &aio{depth: depth, bufs: bufs, userspace: st.UserspaceReap}
	for _, fd := range fds {
		a.fds = append(a.fds, uint32(fd))
	}
	mem, err := NewArena(depth * (int(unsafe.Sizeof(iocb{})) + 8 + int(unsafe.Sizeof(ioEvent{}))))
	if err != nil {
		return nil, err
	}
	a.mem = mem
	a.iocbs = mem.Base()
	a.ptrs = unsafe.Add(a.iocbs, depth*int(unsafe.Sizeof(iocb{})))
	a.out = unsafe.Add(a.ptrs, depth*8)
	for i := range depth {
		p := (*uintptr)(unsafe.Add(a.ptrs, i*8))
		*p = uintptr(unsafe.Add(a.iocbs, i*int(unsafe.Sizeof(iocb{}))))
	}
	if _, _, errno := unix.Syscall(unix.SYS_IO_SETUP, uintptr(depth), uintptr(unsafe.Pointer(&a.ctx)), 0); errno != 0 {
		mem.Free()
		if errno == unix.EAGAIN {
			return nil, fmt.Errorf("libaio: io_setup(%d): the system-wide AIO limit is reached (EAGAIN): raise fs.aio-max-nr (sysctl) or lower iodepth/numjobs", depth)
		}
		return nil, fmt.Errorf("libaio: io_setup(%d): %w", depth, errno)
	}
	a.ring = aioRingAt(a.ctx)
	if a.ring.magic != aioRingMagic || a.ring.headerLength != uint32(unsafe.Sizeof(aioRing{})) {
		// Not the layout we know: fall back to io_getevents only.
		a.ring = nil
	} else {
		a.events = unsafe.Add(unsafe.Pointer(a.ring), unsafe.Sizeof(aioRing{}))
		a.spin = tscWaitSpin()
	}
	return a, nil
}

// aioRingAt turns the context id, which is the user address of the ring
// the kernel mapped (fs/aio.c aio_setup_ring), into a pointer. The mapping
// is not Go memory, so the GC never moves or frees it; reading the integer's
// bits as a pointer keeps go vet's uintptr→Pointer check quiet here alone.
func aioRingAt(ctx uintptr) *aioRing {
	return *(**aioRing)(unsafe.Pointer(&ctx))
}

func (a *aio) Queue(slot int, op Op, file int, off int64, n uint32) {
	cb := (*iocb)(unsafe.Add(a.iocbs, slot*int(unsafe.Sizeof(iocb{}))))
	*cb = iocb{data: uint64(slot), fildes: a.fds[file]}
	switch op {
	case OpRead, OpWrite:
		cb.lioOpcode = iocbCmdPread
		if op == OpWrite {
			cb.lioOpcode = iocbCmdPwrite
		}
		cb.buf, cb.nbytes, cb.offset = uint64(a.bufs.Addr(slot)), uint64(n), off
	case OpFsync:
		cb.lioOpcode = iocbCmdFsync
	case OpFdatasync:
		cb.lioOpcode = iocbCmdFdsync
	}
	p := (*uintptr)(unsafe.Add(a.ptrs, a.queued*8))
	*p = uintptr(unsafe.Pointer(cb))
	a.queued++
}

// Prioritize gives the I/O queued on slot priority p: aio_reqprio with
// IOCB_FLAG_IOPRIO (fio_libaio_cmdprio_prep). The others carry none, and
// the kernel gives them the submitting thread's (prio, prioclass).
func (a *aio) Prioritize(slot int, p uint16) {
	cb := (*iocb)(unsafe.Add(a.iocbs, slot*int(unsafe.Sizeof(iocb{}))))
	cb.reqPrio = int16(p)
	cb.flags |= iocbFlagIOPrio
}

// Commit is fio's fio_libaio_commit: one io_submit of every queued iocb
// (two where they straddle the end of fio's ring of iocbs).
// When the context is full (EAGAIN) the rest stay queued for the next
// commit, after the job has reaped.
func (a *aio) Commit() (int, error) {
	total := 0
	for a.done < a.queued {
		nr := min(a.queued-a.done, a.depth-a.submitAt)
		n, _, errno := unix.RawSyscall(unix.SYS_IO_SUBMIT, a.ctx, uintptr(nr), uintptr(unsafe.Add(a.ptrs, a.done*8)))
		switch {
		case errno == unix.EINTR:
			continue
		case errno == unix.EAGAIN:
			a.compact()
			return total, nil
		case errno != 0:
			return total, fmt.Errorf("libaio: io_submit: %w", errno)
		}
		a.done += int(n)
		a.submitAt = (a.submitAt + int(n)) % a.depth
		total += int(n)
		a.inflight += int(n)
	}
	a.queued, a.done = 0, 0
	return total, nil
}

// compact moves iocb pointers not yet submitted to the front.
func (a *aio) compact() {
	if a.done == 0 {
		return
	}
	for i := a.done; i < a.queued; i++ {
		*(*uintptr)(unsafe.Add(a.ptrs, (i-a.done)*8)) = *(*uintptr)(unsafe.Add(a.ptrs, i*8))
	}
	a.queued -= a.done
	a.done = 0
}

// userReap copies completions from the user-space ring without a system
// call (fio's user_io_getevents, with userspace_reap): acquire-load the
// tail, copy, release-store the head (fs/aio.c clamps a head userland
// wrote).
func (a *aio) userReap(c []Completion) int {
	nr := a.ring.nr
	head := atomic.LoadUint32(&a.ring.head)
	tail := atomic.LoadUint32(&a.ring.tail)
	n := 0
	for head != tail && n < len(c) {
		e := (*ioEvent)(unsafe.Add(a.events, uintptr(head)*unsafe.Sizeof(ioEvent{})))
		c[n] = Completion{Slot: int32(e.data), Res: int32(e.res)}
		head++
		if head == nr {
			head = 0
		}
		n++
	}
	if n > 0 {
		atomic.StoreUint32(&a.ring.head, head)
		a.inflight -= n
	}
	return n
}

// GetEvents is fio's fio_libaio_getevents: io_getevents(ctx, min, max)
// blocks for min, once; without block it asks for 0 and spins. With
// userspace_reap, a spin reads the aio ring in user space instead of
// calling io_getevents (fio does so only when it does not block).
func (a *aio) GetEvents(want, most int, block bool, c []Completion) (int, error) {
	got := 0
	for got < want {
		if !block && a.userspace && a.ring != nil {
			got += a.userReap(c[got:most])
			continue
		}
		wait := 0
		if block {
			wait = want - got
			if a.spin.ok && a.inflight >= 2 && a.spin.spinning() {
				a.spinFor()
			}
		}
		n, _, errno := unix.RawSyscall6(unix.SYS_IO_GETEVENTS, a.ctx, uintptr(wait), uintptr(most-got), uintptr(a.out), 0, 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return got, fmt.Errorf("libaio: io_getevents: %w", errno)
		}
		a.inflight -= int(n)
		for i := range int(n) {
			e := (*ioEvent)(unsafe.Add(a.out, i*int(unsafe.Sizeof(ioEvent{}))))
			c[got] = Completion{Slot: int32(e.data), Res: int32(e.res)}
			got++
		}
	}
	if a.spin.ok {
		a.spin.reaped(got)
	}
	return got, nil
}

// spinFor watches the aio ring for up to spinNs before a blocking
// io_getevents: the call that follows is the same, but finds the events
// there instead of sleeping for them.
func (a *aio) spinFor() {
	sp := &a.spin
	if sp.skipping() {
		return
	}
	end := tsc.Read() + sp.ticks
	for {
		if atomic.LoadUint32(&a.ring.tail) != atomic.LoadUint32(&a.ring.head) {
			sp.saw(true)
			return
		}
		if tsc.Read() > end {
			sp.saw(false)
			return
		}
	}
}

// spinSummary is what the wait spin chose, for the run's engine_setup.
func (a *aio) spinSummary() string { return a.spin.summary() }

func (a *aio) Close() error {
	var errs []error
	if a.ctx != 0 {
		if _, _, errno := unix.Syscall(unix.SYS_IO_DESTROY, a.ctx, 0, 0); errno != 0 {
			errs = append(errs, fmt.Errorf("libaio: io_destroy: %w", errno))
		}
		a.ctx = 0
	}
	errs = append(errs, a.mem.Free())
	return errors.Join(errs...)
}
