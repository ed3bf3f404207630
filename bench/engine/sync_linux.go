package engine

import "golang.org/x/sys/unix"

// syncEngine is fio's sync: read(2) and write(2) at the file's position,
// with an lseek(2) first only when that position is not the I/O's offset.
var syncEngine = Engine{
	Name:  "sync",
	Help:  "read/write, with an lseek when the file position is not the offset; one I/O at a time",
	Flags: SyncIO,
	open: func(st *Setup) (IO, Info, error) {
		s, err := newSyncIO(st, syncReadWrite)
		return s, Info{}, err
	},
}

// syncReadWrite is fio_syncio_prep and fio_syncio_queue: the position
// starts at 0 when the file is opened and moves by what each I/O did
// (LAST_POS).
func syncReadWrite(s *syncIO, r *syncReq) int32 {
	fd := uintptr(s.fds[r.file])
	if s.pos[r.file] != r.off {
		if res := seek(fd, r.off); res < 0 {
			return res
		}
	}
	res := syscallRes(rwCall(r.op, unix.SYS_READ, unix.SYS_WRITE), fd, s.bufs.Addr(r.slot), uintptr(r.n), 0, 0, 0)
	if res >= 0 {
		s.pos[r.file] = r.off + int64(res)
	}
	return res
}
