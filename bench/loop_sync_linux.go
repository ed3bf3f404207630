package bench

import (
	"fmt"

	"golang.org/x/sys/unix"

	"iolab/bench/engine"
)

// loopSync is the job loop's part of fio's fsync=N, fdatasync=N, end_fsync
// and fsync_on_close. A sync is an I/O like the others (fio's DDIR_SYNC
// io_u): the generator says when one is due (genSync), it takes a slot and
// goes through the engine — io_uring's IORING_OP_FSYNC, a sync engine's
// fsync(2) — and its completion tells the generator the last I/O was a
// sync. Engines with the SyncInline flag (libaio, as in fio 3.33) leave
// syncs to the job thread, which makes the call itself once nothing waits
// to be submitted.
//
// fio accounts a sync from its issue to its completion (stat.c
// add_sync_clat_sample): "sync" in its JSON, with total_ios counting the
// fsyncs (fdatasyncs only in lat_ns; fio 3.33 counts them one slot past
// its array, into the reads' short_ios — a bug iolab does not copy).
type loopSync struct {
	inline bool       // the engine leaves syncs to the job thread
	ending bool       // the end-of-job fsync, which is not accounted (fio's TD_FSYNCING)
	cur    SyncResult // over the measured window
}

func (l *loop) initSync(gen *ioGen) {
	l.gen = gen
	if e := l.j.Engine(); e != nil {
		l.sync.inline = e.Has(SyncInline)
	}
}

// syncRampEnd: when the ramp ends fio starts counting the I/Os issued
// afresh (reset_all_stats: the writes fsync=N counts, the mix's counts),
// and the syncs measured so far go with the ramp.
func (l *loop) syncRampEnd() {
	l.sync.cur = SyncResult{}
	l.gen.issues, l.gen.mixIssues = [3]uint64{}, 0
	l.gen.lastWasSync = false
}

// completedSync is called for every completion reaped: it tells the
// generator whether the last I/O was a sync (fio's io_completed), and
// accounts a sync, reporting true so the caller skips it.
func (l *loop) completedSync(slot int32, d uint8, res int32, tc int64) bool {
	sync := ioOp(d) > opTrim
	l.gen.lastWasSync = sync
	if sync {
		l.accountSync(ioOp(d), res, l.created[slot], l.issued[slot], tc)
	}
	return sync
}

func (l *loop) accountSync(op ioOp, res int32, created, issued, tc int64) {
	if res < 0 {
		if l.err == nil {
			l.err = fmt.Errorf("job %s: %s of %s: %w", l.j.Name, syncName(op), l.r.target.Path, unix.Errno(-res))
		}
		return
	}
	if l.sync.ending || !l.measuring || created < l.measureStart {
		return
	}
	if op == opFsync {
		l.sync.cur.Fsyncs++
	} else {
		l.sync.cur.Fdatasyncs++
	}
	l.sync.cur.Lat.Add(uint64(tc - issued))
}

// syncInline does a sync on the job thread, for SyncInline engines. As in
// fio's libaio, a sync that finds I/Os queued but not submitted is turned
// back (FIO_Q_BUSY): they are submitted and reaped as on a full queue
// first. The sync completes at once (FIO_Q_COMPLETED) and takes no slot.
func (l *loop) syncInline(op ioOp, file int, created int64) {
	if len(l.queued) > 0 {
		l.commit()
		l.pending = 0
		full := len(l.free) == 1 // every slot out but the sync's own
		want := min(l.cmin, l.checkedOut)
		if l.cmin == 0 || (full && want == 0) {
			want = 1
		}
		for l.err == nil {
			l.reap(want, true)
			if !(full && l.checkedOut > l.low) {
				break
			}
		}
		created = l.now()
	}
	if l.err != nil {
		return
	}
	if l.measuring && !l.sync.ending {
		// fio's io_u_mark_depth for an I/O completed in ->queue, its own
		// io_u counted in.
		l.dist.MarkDepth(l.checkedOut+1, 1)
	}
	l.holdOpen()
	res := engine.FsyncFile(l.r.files[file].fd, op)
	tc := l.now()
	l.holdClose(tc)
	l.gen.lastWasSync = true
	l.accountSync(op, res, created, created, tc)
	if l.cmin == 0 && l.cmax == 0 && l.checkedOut > 0 {
		// Polling reaps after every I/O, the sync included.
		l.reap(1, true)
	}
}

// endSync is fio's end_fsync — and its fsync_on_close, which fio 3.33 does
// at the same point (backend.c do_io; the fsync at close then finds the
// last I/O was a sync and skips): once the I/O is drained, one fsync per
// file through the engine, unless the last I/O was a sync. It belongs to
// the job's runtime but not to its syncs. It returns how long it took.
func (l *loop) endSync() int64 {
	j := l.j
	if !(j.EndFsync || j.FsyncOnClose) || !l.gen.writes || l.gen.lastWasSync || l.err != nil {
		return 0
	}
	t0 := l.now()
	l.sync.ending = true
	for file := range l.r.files {
		l.syncNow(opFsync, file)
	}
	l.sync.ending = false
	return l.now() - t0
}

// syncNow issues one sync on an empty queue and waits for it (fio's
// fio_io_sync).
func (l *loop) syncNow(op ioOp, file int) {
	t := l.now()
	if l.sync.inline {
		l.syncInline(op, file, t)
		return
	}
	slot := l.free[len(l.free)-1]
	l.free = l.free[:len(l.free)-1]
	l.checkedOut++
	l.eng.Queue(int(slot), op, file, 0, 0)
	l.created[slot], l.dirOf[slot], l.offOf[slot], l.lenOf[slot] = t, uint8(op), 0, 0
	l.queued = append(l.queued, slot)
	l.commit()
	l.reap(1, true)
}

func syncName(op ioOp) string {
	if op == opFdatasync {
		return "fdatasync"
	}
	return "fsync"
}

// openSyncFlags are the open(2) flags of fio's sync option: O_SYNC or
// O_DSYNC (filesetup.c generic_open_file, for reads and writes alike).
func (j *Job) openSyncFlags() int {
	switch j.SyncIO {
	case "sync":
		return unix.O_SYNC
	case "dsync":
		return unix.O_DSYNC
	}
	return 0
}
