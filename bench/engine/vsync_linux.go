package engine

import "golang.org/x/sys/unix"

// vsyncEngine is fio's vsync: an lseek(2) and a readv(2) or writev(2) for
// every I/O. fio's vsync coalesces adjacent I/Os into one call when it
// runs deeper than one (and at iodepth>1 with iodepth_batch=1 loses
// completions); iolab runs it at iodepth 1 only.
var vsyncEngine = Engine{
	Name:     "vsync",
	Help:     "lseek then readv/writev of one iovec; iodepth 1",
	Flags:    SyncIO | NoTrim,
	MaxDepth: 1,
	open: func(st *Setup) (IO, Info, error) {
		s, err := newSyncIO(st, vsyncReadWrite)
		return s, Info{}, err
	},
}

// vsyncReadWrite is fio_vsyncio_commit for one I/O: it seeks every time.
func vsyncReadWrite(s *syncIO, r *syncReq) int32 {
	fd := uintptr(s.fds[r.file])
	if res := seek(fd, r.off); res < 0 {
		return res
	}
	return syscallRes(rwCall(r.op, unix.SYS_READV, unix.SYS_WRITEV), fd, s.vec(r), 1, 0, 0, 0)
}
