package bench

// genSync is the generator's part of fio's fsync=N and fdatasync=N
// (io_u.c get_rw_ddir and fio.h should_fsync): before picking a read or a
// write, a job that writes issues a sync when the writes it has issued
// (ioGen.issues, fio's io_issues, reset when the ramp ends) are a multiple
// of N — unless the last I/O to complete was itself a sync. The job loop
// says what each completion was, so with an asynchronous engine several
// syncs can go out before the first completes, as in fio.
type genSync struct {
	lastWasSync bool // fio's last_was_sync: the last completion was a sync
}

// syncDue returns the sync to issue next, if one is due.
func (g *ioGen) syncDue() (ioOp, bool) {
	w := g.issues[opWrite]
	if !g.writes || g.lastWasSync || w == 0 {
		return 0, false
	}
	if n := uint64(g.j.FsyncBlocks); n > 0 && w%n == 0 {
		return opFsync, true
	}
	if n := uint64(g.j.FdatasyncBlocks); n > 0 && w%n == 0 {
		return opFdatasync, true
	}
	return 0, false
}
