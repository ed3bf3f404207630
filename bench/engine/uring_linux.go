package engine

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"iolab/bench/tsc"
	"iolab/bench/units"
)

// io_uring ABI, from the kernel's include/uapi/linux/io_uring.h (the same
// values liburing ships); x/sys/unix has none of them.
const (
	ioringSetupIOPoll       = 1 << 0
	ioringSetupSQPoll       = 1 << 1
	ioringSetupSQAff        = 1 << 2
	ioringSetupCQSize       = 1 << 3
	ioringSetupCoopTaskrun  = 1 << 8
	ioringSetupTaskrunFlag  = 1 << 9
	ioringSetupSingleIssuer = 1 << 12
	ioringSetupDeferTaskrun = 1 << 13
	ioringSetupNoSQArray    = 1 << 16

	ioringEnterGetEvents      = 1 << 0
	ioringEnterSQWakeup       = 1 << 1
	ioringEnterRegisteredRing = 1 << 4

	ioringSQNeedWakeup = 1 << 0
	ioringSQCQOverflow = 1 << 1
	ioringSQTaskrun    = 1 << 2

	ioringOpReadFixed  = 4
	ioringOpWriteFixed = 5
	ioringOpFsync      = 3
	// ioringFsyncDatasync is IORING_FSYNC_DATASYNC, in an FSYNC SQE's
	// fsync_flags (the rw_flags union).
	ioringFsyncDatasync = 1
	ioringOpRead        = 22
	ioringOpWrite       = 23

	iosqeFixedFile = 1 << 0

	ioringRegisterBuffers = 0
	ioringRegisterFiles   = 2
	ioringRegisterRingFDs = 20

	ioringOffSQRing = 0
	ioringOffSQEs   = 0x10000000
)

// uringParams mirrors struct io_uring_params (120 bytes).
type uringParams struct {
	sqEntries    uint32
	cqEntries    uint32
	flags        uint32
	sqThreadCPU  uint32
	sqThreadIdle uint32
	features     uint32
	wqFD         uint32
	resv         [3]uint32
	sqOff        sqringOffsets
	cqOff        cqringOffsets
}

type sqringOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type cqringOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

// sqe mirrors struct io_uring_sqe (64 bytes) for the fields iolab sets.
type sqe struct {
	opcode      uint8
	flags       uint8
	ioprio      uint16
	fd          int32
	off         uint64
	addr        uint64
	len         uint32
	rwFlags     uint32
	userData    uint64
	bufIndex    uint16
	personality uint16
	spliceFDIn  int32
	addr3       uint64
	pad         uint64
}

// cqe mirrors struct io_uring_cqe (16 bytes).
type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

// rsrcUpdate mirrors struct io_uring_rsrc_update, for IORING_REGISTER_RING_FDS.
type rsrcUpdate struct {
	offset uint32
	resv   uint32
	data   uint64
}

type iovec struct {
	base uint64
	len  uint64
}

// ioURingEngine is Linux's io_uring, set up on raw system calls: fio's
// io_uring engine and its options (engines/io_uring.c).
var ioURingEngine = Engine{
	Name: "io_uring",
	Help: "Linux io_uring: mmap'd submission and completion rings (IOPOLL, SQPOLL, fixed buffers and files)",
	// IORING_MAX_ENTRIES (io_uring/io_uring.h): io_uring_setup refuses a
	// larger ring with EINVAL.
	MaxDepth: 32768,
	// fio's io_uring engine rounds iodepth up to its ring's size, a power
	// of two, and keeps that many I/Os in flight: iodepth=3 runs 4.
	Flags: PowerOfTwoDepth | PollQueues | CmdPrio | NoOffload,
	Options: []Option{
		{Name: "hipri", Flag: true, Unit: "bool", Default: "0",
			Help: "polled completions (IORING_SETUP_IOPOLL); needs O_DIRECT and a device with poll queues",
			Set:  units.SetBool(func(p *Params) *bool { return &p.Hipri }), Get: units.GetBool(func(p *Params) *bool { return &p.Hipri })},
		{Name: "sqthread_poll", Flag: true, Unit: "bool", Default: "0",
			Help: "a kernel thread polls the submission ring (IORING_SETUP_SQPOLL)",
			Set:  units.SetBool(func(p *Params) *bool { return &p.SQThreadPoll }), Get: units.GetBool(func(p *Params) *bool { return &p.SQThreadPoll })},
		{Name: "sqthread_poll_cpu", Example: "3", Unit: "int",
			Help: "the CPU the SQPOLL thread runs on (IORING_SETUP_SQ_AFF)",
			Set:  units.SetInt(0, MaxCPU-1, func(p *Params) *int { return &p.SQThreadPollCPU }),
			Get: func(p *Params) string {
				if p.SQThreadPollCPU < 0 {
					return ""
				}
				return strconv.Itoa(p.SQThreadPollCPU)
			}},
		{Name: "fixedbufs", Flag: true, Unit: "bool", Default: "0",
			Help: "registered buffers, READ_FIXED/WRITE_FIXED",
			Set:  units.SetBool(func(p *Params) *bool { return &p.FixedBufs }), Get: units.GetBool(func(p *Params) *bool { return &p.FixedBufs })},
		{Name: "registerfiles", Flag: true, Unit: "bool", Default: "0",
			Help: "a registered file (IOSQE_FIXED_FILE)",
			Set:  units.SetBool(func(p *Params) *bool { return &p.RegisterFiles }), Get: units.GetBool(func(p *Params) *bool { return &p.RegisterFiles })},
	},
	Modes: []Mode{{"sqpoll", "sqthread_poll"}, {"hipri", "hipri"}, {"fixedbufs", "fixedbufs"}, {"registerfiles", "registerfiles"}},
	open: func(st *Setup) (IO, Info, error) {
		u, err := newURing(st)
		if err != nil {
			return nil, Info{}, err
		}
		return u, Info{Published: u.sqpoll(), Setup: u.describe()}, nil
	},
}

// uring is one io_uring instance owned by one job thread.
type uring struct {
	fd       int // ring fd, or its registered index with enterFlags
	ringFD   int // the real fd, to close
	setup    uint32
	features uint32

	enterFlags uint32 // IORING_ENTER_REGISTERED_RING when the fd is registered

	ring []byte
	sqes []byte

	sqHead, sqTail, sqFlags *uint32
	sqMask                  uint32
	cqHead, cqTail          *uint32
	cqMask                  uint32
	cqes                    unsafe.Pointer
	sqeBase                 unsafe.Pointer

	tail     uint32 // local SQ tail, published by submit
	toSubmit uint32

	files     []int32 // fd, or fixed-file index, for SQEs: per job file
	sqeFlags  uint8
	fixedBufs bool
	bufs      *Buffers
	// ioprio is the priority every read and write carries (the job's,
	// prio and prioclass) unless cmdprio gives it another (prioritize).
	ioprio uint16

	inflight int // submitted and not yet reaped
	spin     waitSpin
}

func (r *uring) sqpoll() bool { return r.setup&ioringSetupSQPoll != 0 }

// newURing sets up a ring of depth entries for fd, trying the fastest setup
// the kernel takes first and falling back on EINVAL the way fio's engine
// does (engines/io_uring.c fio_ioring_queue_init).
func newURing(st *Setup) (*uring, error) {
	fds, bufs, depth := st.Files, st.Bufs, st.Depth
	var base uint32 = ioringSetupCQSize
	if st.Hipri {
		base |= ioringSetupIOPoll
	}
	var tries []uint32
	if st.SQThreadPoll {
		base |= ioringSetupSQPoll
		if st.SQThreadPollCPU >= 0 {
			base |= ioringSetupSQAff
		}
		tries = []uint32{base | ioringSetupNoSQArray, base}
	} else {
		for _, extra := range []uint32{
			ioringSetupCoopTaskrun | ioringSetupTaskrunFlag | ioringSetupSingleIssuer | ioringSetupDeferTaskrun,
			ioringSetupCoopTaskrun | ioringSetupTaskrunFlag | ioringSetupSingleIssuer,
			ioringSetupCoopTaskrun | ioringSetupTaskrunFlag,
			0,
		} {
			tries = append(tries, base|extra|ioringSetupNoSQArray, base|extra)
		}
	}
	var p uringParams
	var ringFD int
	var err error
	for _, flags := range tries {
		// fio sizes the CQ to the SQ (CQSIZE with cq_entries = depth): at
		// most depth I/Os are ever in flight.
		p = uringParams{sqEntries: uint32(depth), cqEntries: uint32(depth), flags: flags}
		if flags&ioringSetupSQAff != 0 {
			p.sqThreadCPU = uint32(st.SQThreadPollCPU)
		}
		r1, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(depth), uintptr(unsafe.Pointer(&p)), 0)
		if errno == 0 {
			ringFD, err = int(r1), nil
			break
		}
		err = errno
		if errno != unix.EINVAL {
			break
		}
	}
	if err != nil {
		return nil, uringSetupError(err, st)
	}
	r := &uring{fd: ringFD, ringFD: ringFD, setup: p.flags, features: p.features, bufs: bufs, ioprio: st.IOPrio}
	for _, fd := range fds {
		r.files = append(r.files, int32(fd))
	}
	if err := r.mapRings(&p); err != nil {
		r.Close()
		return nil, err
	}
	r.spin = newWaitSpin(r.setup, r.sqpoll())
	// A registered ring fd saves the fd lookup on every enter (fio does the
	// same since June 2026, after 3.42; fio 3.33 does not — BENCHMARKS.md
	// has what it changes against that); it is only an optimisation, so
	// failure is not an error.
	up := rsrcUpdate{offset: ^uint32(0), data: uint64(ringFD)}
	if n, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(ringFD), ioringRegisterRingFDs, uintptr(unsafe.Pointer(&up)), 1, 0, 0); errno == 0 && n == 1 {
		r.fd = int(up.offset)
		r.enterFlags = ioringEnterRegisteredRing
	}
	if (st.RegisterFiles || st.SQThreadPoll) && len(r.files) > 0 {
		if _, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(ringFD), ioringRegisterFiles, uintptr(unsafe.Pointer(&r.files[0])), uintptr(len(r.files)), 0, 0); errno != 0 {
			r.Close()
			return nil, fmt.Errorf("io_uring: register files: %w", errno)
		}
		for i := range r.files {
			r.files[i] = int32(i)
		}
		r.sqeFlags = iosqeFixedFile
	}
	if st.FixedBufs {
		iov := make([]iovec, depth)
		for i := range iov {
			iov[i] = iovec{base: uint64(bufs.Addr(i)), len: uint64(bufs.BS)}
		}
		if _, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(ringFD), ioringRegisterBuffers, uintptr(unsafe.Pointer(&iov[0])), uintptr(depth), 0, 0); errno != 0 {
			r.Close()
			hint := ""
			if errno == unix.ENOMEM {
				hint = " (locked memory limit: raise `ulimit -l`)"
			}
			return nil, fmt.Errorf("io_uring: register %d buffers of %d bytes: %w%s", depth, st.BS, errno, hint)
		}
		r.fixedBufs = true
	}
	return r, nil
}

// uringDisabledKnob is the sysctl that turns io_uring off for everyone (2)
// or for those outside a group (1); a variable so a test can point it at a
// file of its own instead of changing the machine's setting under every
// other test running at the time.
var uringDisabledKnob = "/proc/sys/kernel/io_uring_disabled"

func uringSetupError(err error, st *Setup) error {
	switch {
	case errors.Is(err, unix.ENOSYS):
		return fmt.Errorf("io_uring is not available: this kernel has no io_uring_setup (ENOSYS); use --ioengine=libaio or psync")
	case errors.Is(err, unix.EPERM):
		msg := "io_uring is disabled for this process (EPERM)"
		if b, rerr := os.ReadFile(uringDisabledKnob); rerr == nil && strings.TrimSpace(string(b)) != "0" {
			msg = fmt.Sprintf("io_uring is disabled by the kernel (kernel.io_uring_disabled=%s); run `sysctl kernel.io_uring_disabled=0` or use --ioengine=libaio", strings.TrimSpace(string(b)))
		}
		return errors.New(msg)
	case errors.Is(err, unix.EINVAL) && st.SQThreadPollCPU >= 0:
		return fmt.Errorf("io_uring setup refused sqthread_poll_cpu=%d (EINVAL): that CPU must be online and allowed to this process", st.SQThreadPollCPU)
	case errors.Is(err, unix.ENOMEM):
		return fmt.Errorf("io_uring setup with %d entries: out of memory (ENOMEM); lower iodepth or raise `ulimit -l`", st.IODepth)
	}
	return fmt.Errorf("io_uring setup: %w", err)
}

// mapRings maps the SQ/CQ rings and the SQE array at the offsets the kernel
// returned in p (liburing src/setup.c io_uring_mmap); never hard-coded.
func (r *uring) mapRings(p *uringParams) error {
	sqSize := int(p.sqOff.array) + 4*int(p.sqEntries)
	cqSize := int(p.cqOff.cqes) + int(unsafe.Sizeof(cqe{}))*int(p.cqEntries)
	size := max(sqSize, cqSize)
	ring, err := unix.Mmap(r.ringFD, ioringOffSQRing, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return fmt.Errorf("io_uring: mmap rings: %w", err)
	}
	r.ring = ring
	sqes, err := unix.Mmap(r.ringFD, ioringOffSQEs, int(unsafe.Sizeof(sqe{}))*int(p.sqEntries), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return fmt.Errorf("io_uring: mmap SQEs: %w", err)
	}
	r.sqes = sqes
	base := unsafe.Pointer(&ring[0])
	u32 := func(off uint32) *uint32 { return (*uint32)(unsafe.Add(base, off)) }
	r.sqHead, r.sqTail, r.sqFlags = u32(p.sqOff.head), u32(p.sqOff.tail), u32(p.sqOff.flags)
	r.sqMask = *u32(p.sqOff.ringMask)
	r.cqHead, r.cqTail = u32(p.cqOff.head), u32(p.cqOff.tail)
	r.cqMask = *u32(p.cqOff.ringMask)
	r.cqes = unsafe.Add(base, p.cqOff.cqes)
	r.sqeBase = unsafe.Pointer(&sqes[0])
	if p.flags&ioringSetupNoSQArray == 0 {
		// SQE i always sits in slot i of the index array.
		for i := uint32(0); i < p.sqEntries; i++ {
			*u32(p.sqOff.array + 4*i) = i
		}
	}
	r.tail = atomic.LoadUint32(r.sqTail)
	return nil
}

func (r *uring) Queue(slot int, op Op, file int, off int64, n uint32) {
	s := (*sqe)(unsafe.Add(r.sqeBase, uintptr(r.tail&r.sqMask)*unsafe.Sizeof(sqe{})))
	*s = sqe{flags: r.sqeFlags, fd: r.files[file], userData: uint64(slot)}
	switch op {
	case OpRead, OpWrite:
		s.opcode = ioringOpRead
		switch {
		case op == OpWrite && r.fixedBufs:
			s.opcode = ioringOpWriteFixed
		case op == OpWrite:
			s.opcode = ioringOpWrite
		case r.fixedBufs:
			s.opcode = ioringOpReadFixed
		}
		s.off = uint64(off)
		s.addr = uint64(r.bufs.Addr(slot))
		s.len = n
		s.bufIndex = uint16(slot)
		// fio sets the job's priority on every read and write, not
		// trusting the submitting thread's to be inherited (an SQPOLL
		// thread's is its own): fio_ioring_prep.
		s.ioprio = r.ioprio
	case OpFsync, OpFdatasync:
		s.opcode = ioringOpFsync
		if op == OpFdatasync {
			s.rwFlags = ioringFsyncDatasync
		}
	}
	r.tail++
	r.toSubmit++
}

// Prioritize gives the I/O queued last priority p in its SQE's ioprio
// (fio_ioring_cmdprio_prep).
func (r *uring) Prioritize(_ int, p uint16) {
	s := (*sqe)(unsafe.Add(r.sqeBase, uintptr((r.tail-1)&r.sqMask)*unsafe.Sizeof(sqe{})))
	s.ioprio = p
}

func (r *uring) enter(toSubmit, minComplete, flags uint32) (int, error) {
	for {
		n, _, errno := unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(toSubmit), uintptr(minComplete), uintptr(flags|r.enterFlags), 0, 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return int(n), errno
		}
		return int(n), nil
	}
}

// Commit is fio's fio_ioring_commit: publish the queued SQEs and submit
// them with io_uring_enter(fd, n, 0, IORING_ENTER_GETEVENTS) — GETEVENTS
// so that, with DEFER_TASKRUN, completions already done are posted — until
// the kernel took them all. Under SQPOLL the kernel's thread takes them:
// no system call unless it sleeps (NEED_WAKEUP).
func (r *uring) Commit() (int, error) {
	n := int(r.toSubmit)
	if n == 0 {
		return 0, nil
	}
	// Store-release of the tail publishes the SQEs (liburing
	// __io_uring_flush_sq); Go's atomic store is a full fence on amd64, which
	// also orders the flags load below for SQPOLL's wakeup check.
	atomic.StoreUint32(r.sqTail, r.tail)
	if r.sqpoll() {
		r.toSubmit = 0
		r.inflight += n
		if atomic.LoadUint32(r.sqFlags)&ioringSQNeedWakeup != 0 {
			if _, err := r.enter(0, 0, ioringEnterSQWakeup); err != nil {
				return n, uringEnterError(err)
			}
		}
		return n, nil
	}
	for r.toSubmit > 0 {
		k, err := r.enter(r.toSubmit, 0, ioringEnterGetEvents)
		if err == unix.EAGAIN || err == unix.EBUSY {
			// Short of resources: the SQEs stay published and are taken
			// by the next try (fio retries after a microsecond).
			unix.Nanosleep(&unix.Timespec{Nsec: 1000}, nil)
			continue
		}
		if err != nil {
			return n - int(r.toSubmit), uringEnterError(err)
		}
		r.toSubmit -= uint32(k)
		r.inflight += k
	}
	return n, nil
}

func uringEnterError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EOWNERDEAD):
		return fmt.Errorf("io_uring_enter: the SQPOLL thread died (EOWNERDEAD)")
	case errors.Is(err, unix.EEXIST):
		return fmt.Errorf("io_uring_enter from a thread that does not own the ring (EEXIST): iolab bug, please report")
	}
	return fmt.Errorf("io_uring_enter: %w", err)
}

// reapRing takes ready completions from the CQ ring, without a system
// call, into c.
func (r *uring) reapRing(c []Completion) int {
	head := *r.cqHead
	tail := atomic.LoadUint32(r.cqTail)
	n := 0
	for head != tail && n < len(c) {
		e := (*cqe)(unsafe.Add(r.cqes, uintptr(head&r.cqMask)*unsafe.Sizeof(cqe{})))
		c[n] = Completion{Slot: int32(e.userData), Res: e.res}
		head++
		n++
	}
	if n > 0 {
		atomic.StoreUint32(r.cqHead, head)
		r.inflight -= n
	}
	return n
}

// GetEvents is fio's fio_ioring_getevents: take what the CQ ring holds;
// only when that is fewer than want, io_uring_enter(fd, 0, missing,
// GETEVENTS) — or, without block, with 0 to wait for, spinning. Under
// SQPOLL fio makes no call and spins on the ring.
func (r *uring) GetEvents(want, most int, block bool, c []Completion) (int, error) {
	got := 0
	for {
		got += r.reapRing(c[got:most])
		if got >= want {
			if r.spin.ok {
				r.spin.reaped(got)
			}
			return got, nil
		}
		if r.sqpoll() {
			continue // the kernel's thread completes them (and polls, with hipri)
		}
		wait := uint32(0)
		if block {
			wait = uint32(want - got)
			if r.spin.ok && r.inflight >= 2 && r.spin.spinning() && r.spinFor() {
				continue // completions came to the ring itself
			}
		}
		if _, err := r.enter(0, wait, ioringEnterGetEvents); err != nil && err != unix.EAGAIN && err != unix.EBUSY {
			return got, uringEnterError(err)
		}
	}
}

// newWaitSpin is the ring's wait spin (waitspin_linux.go): it watches
// the task-run flag, which only TASKRUN_FLAG sets; under SQPOLL the wait
// spins on the ring already.
func newWaitSpin(setup uint32, sqpoll bool) waitSpin {
	if setup&ioringSetupTaskrunFlag == 0 || sqpoll {
		return waitSpin{}
	}
	return tscWaitSpin()
}

// spinFor watches the ring before a blocking wait: true when completions
// reached the CQ ring itself (reap them, no call), false to make the call
// (task work is queued, or nothing came).
func (r *uring) spinFor() bool {
	sp := &r.spin
	if sp.skipping() {
		return false
	}
	head := *r.cqHead
	end := tsc.Read() + sp.ticks
	for {
		if atomic.LoadUint32(r.sqFlags)&ioringSQTaskrun != 0 {
			sp.saw(true)
			return false
		}
		if atomic.LoadUint32(r.cqTail) != head {
			sp.saw(true)
			return true
		}
		if tsc.Read() > end {
			sp.saw(false)
			return false
		}
	}
}

// spinSummary is what the wait spin chose, for the run's engine_setup.
func (r *uring) spinSummary() string { return r.spin.summary() }

func (r *uring) Close() error {
	var errs []error
	if r.sqes != nil {
		errs = append(errs, unix.Munmap(r.sqes))
		r.sqes = nil
	}
	if r.ring != nil {
		errs = append(errs, unix.Munmap(r.ring))
		r.ring = nil
	}
	if r.ringFD >= 0 {
		errs = append(errs, unix.Close(r.ringFD))
		r.ringFD = -1
	}
	return errors.Join(errs...)
}
