package bench

import (
	"unsafe"

	"golang.org/x/sys/unix"

	"iolab/bench/engine"
)

// trim does one trim of n bytes at off on the job's file number file, as
// fio 3.33's engines do: every one of them (io_uring, libaio, psync and
// the sync family) discards inside ->queue with do_io_u_trim and answers
// FIO_Q_COMPLETED; io_uring and libaio first answer FIO_Q_BUSY while I/Os
// are queued and not yet submitted, so that fio commits them first
// (engines/io_uring.c fio_ioring_queue, engines/libaio.c
// fio_libaio_queue). fio times such a trim as a sync engine's I/O
// (ioengines.c td_io_queue, async_ioengine_sync_trim): its issue time is
// read just before the discard, it has no slat, its clat is the discard
// and its lat runs from its creation; it counts one I/O submitted and one
// reaped at the depth checked out.
func (l *loop) trim(file int, off int64, n uint32, t int64) {
	if l.pending > 0 {
		l.markDepth()
		l.commit()
		l.pending = 0
		if l.vfy != nil && l.vfy.trims != nil {
			// fio's FIO_Q_BUSY requeues the trim, and its next get_io_u
			// passes it through check_get_trim again.
			l.vfy.trims.requeued()
		}
	}
	slot := l.free[len(l.free)-1]
	l.free = l.free[:len(l.free)-1]
	l.checkedOut++
	l.created[slot] = t
	l.dirOf[slot] = uint8(opTrim)
	l.fileOf[slot] = int32(file)
	l.offOf[slot] = off
	l.lenOf[slot] = n
	if l.measuring {
		l.dist.Issued[Trim]++
		l.dist.MarkDepth(l.checkedOut, 1)
	}
	if l.pace != nil {
		l.pace.queued(slot, opTrim, n, t)
	}
	l.holdOpen()
	issued := l.now()
	l.issued[slot] = issued
	res := int32(n)
	if f := l.r.files[file]; f.fd >= 0 { // a diskless engine (null) trims nothing, as fio's
		if errno := discard(f, off, uint64(n)); errno != 0 {
			res = -int32(errno)
		}
	}
	tc := l.now()
	l.holdClose(tc)
	if l.measuring {
		l.dist.MarkSubmit(1)
		l.dist.MarkComplete(1)
	}
	c := [1]engine.Completion{{Slot: slot, Res: res}}
	l.completed(c[:], tc)
	if l.pace != nil {
		l.pace.after(opTrim)
	}
}

// discard is fio's os_trim for a block device: BLKDISCARD of the range
// (os/os-linux.h). A regular file has its range deallocated instead,
// with fallocate(FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE): the file's
// discard, where fio 3.33's BLKDISCARD fails with ENOTTY (docs/fio.md).
func discard(f jobFile, off int64, n uint64) unix.Errno {
	if f.target.IsBlock {
		r := [2]uint64{uint64(off), n}
		_, _, errno := unix.RawSyscall(unix.SYS_IOCTL, uintptr(f.fd), unix.BLKDISCARD, uintptr(unsafe.Pointer(&r)))
		return errno
	}
	_, _, errno := unix.RawSyscall6(unix.SYS_FALLOCATE, uintptr(f.fd), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, uintptr(off), uintptr(n), 0, 0)
	return errno
}
