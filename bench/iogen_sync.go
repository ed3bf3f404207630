package bench

// genSync is the generator's part of fio's fsync=N and fdatasync=N
// (io_u.c get_rw_ddir and fio.h should_fsync): before picking a read or a
// write, a job that writes issues a sync when the writes it has issued are
// a multiple of N — unless the last I/O to complete was itself a sync. The
// job loop keeps both counts: it counts writes as it issues them and says
// what each completion was, so with an asynchronous engine several syncs
// can go out before the first completes, as in fio.
type genSync struct {
	writesIssued uint64 // fio's io_issues[DDIR_WRITE]; reset when the ramp ends
	lastWasSync  bool   // fio's last_was_sync: the last completion was a sync
}

// syncDue returns the sync to issue next, if one is due.
func (g *ioGen) syncDue() (ioOp, bool) {
	if !g.writes || g.lastWasSync || g.writesIssued == 0 {
		return 0, false
	}
	if n := uint64(g.j.FsyncBlocks); n > 0 && g.writesIssued%n == 0 {
		return opFsync, true
	}
	if n := uint64(g.j.FdatasyncBlocks); n > 0 && g.writesIssued%n == 0 {
		return opFdatasync, true
	}
	return 0, false
}
