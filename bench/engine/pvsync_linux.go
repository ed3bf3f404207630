package engine

import "golang.org/x/sys/unix"

// pvsyncEngine is fio's pvsync: preadv(2) and pwritev(2) of one iovec.
var pvsyncEngine = Engine{
	Name:  "pvsync",
	Help:  "preadv/pwritev of one iovec, one I/O at a time",
	Flags: SyncIO,
	open: func(st *Setup) (IO, Info, error) {
		s, err := newSyncIO(st, pvsyncReadWrite)
		return s, Info{}, err
	},
}

func pvsyncReadWrite(s *syncIO, r *syncReq) int32 {
	lo, hi := offsetArgs(r.off)
	return syscallRes(rwCall(r.op, unix.SYS_PREADV, unix.SYS_PWRITEV), uintptr(s.fds[r.file]), s.vec(r), 1, lo, hi, 0)
}
