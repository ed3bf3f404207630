package bench

import "iolab/bench/randgen"

// Trims of a verifying job's written blocks, as fio 3.33 does them
// (trim.c io_u_should_trim and get_next_trim, io_u.c check_get_trim,
// iolog.c log_io_piece, verify.c verify_trimmed_io_u): each write the job
// logs for its verify phase goes on a trim list with probability
// trim_percentage, drawn from the job's trim seed (FIO_RAND_TRIM_OFF);
// before each new I/O the job may trim the oldest listed block instead.
// A trimmed block is read back in the verify phase and must be zeros
// (trim_verify_zero=1, the default), or is dropped from it.
//
// fio 3.33's batches, kept as they are: when io_hist_len (the blocks
// logged and not dropped) is a multiple of trim_backlog and the last
// I/O completed was not a read, the job trims one block and sets
// trim_batch to trim_backlog_batch (0: trim_backlog); while trim_batch
// is not 0, each new I/O with a block listed trims one more and counts
// trim_batch down. So a batch is one trim more than trim_backlog_batch,
// a batch cut short by an empty list goes on as soon as a write lists
// another block, and with trim_verify_zero=1 (io_hist_len unchanged by
// a trim) a batch that ends on a multiple starts the next at once. (fio
// 3.40 changed all three.) No read completes in such a job's writes
// (verify_backlog is refused beside it, and a trimwrite job's first I/O
// is a trim, done before any write is logged), so the read condition
// always holds here.

// Piece states for the verify trims.
const (
	pieceTrimmed = 1 + iota // trimmed: reads back as zeros
	pieceDropped            // trimmed and dropped from the verify phase (trim_verify_zero=0)
)

// verifyTrims is the job's trim list and batch (fio's td->trim_list,
// trim_entries, trim_batch, io_hist_len).
type verifyTrims struct {
	rand    randgen.Frand
	cut     uint64 // a draw at most this lists the block (fio's frand_max / 100 * trim_percentage)
	list    []int  // indexes into the verifier's log, oldest first
	next    int    // the first of list not yet trimmed
	hist    int64  // io_hist_len
	batch   int64  // trim_batch
	backlog int64
	size    int64 // trim_backlog_batch, or trim_backlog
	zero    bool
}

// newVerifyTrims is the job's verify trims, nil when it does none.
func newVerifyTrims(j *Job, seeds randSeeds, use64 bool) *verifyTrims {
	if !j.VerifyTrims() {
		return nil
	}
	t := &verifyTrims{rand: randgen.NewFrand(seeds[seedTrim], use64), backlog: j.TrimBacklog, size: int64(j.TrimBacklogBatch), zero: !j.TrimSkipZero}
	t.cut = t.rand.Max() / 100 * uint64(j.TrimPercentage)
	if t.size == 0 {
		t.size = j.TrimBacklog
	}
	return t
}

// logged is log_io_piece's part: the write just logged at index i of
// the verifier's log may go on the trim list.
func (t *verifyTrims) logged(i int) {
	t.hist++
	if t.rand.Next() <= t.cut {
		t.list = append(t.list, i)
	}
}

// take is check_get_trim, before the job picks a new I/O: the index in
// the log of the block to trim now, or false.
func (t *verifyTrims) take(log []verifyPiece) (int, bool) {
	if t.next == len(t.list) {
		return 0, false
	}
	switch {
	case t.batch > 0:
		t.batch--
	case t.hist%t.backlog == 0:
		t.batch = t.size
	default:
		return 0, false
	}
	i := t.list[t.next]
	t.next++
	if t.zero {
		log[i].trim = pieceTrimmed
	} else {
		log[i].trim = pieceDropped
		t.hist--
	}
	return i, true
}

// requeued is check_get_trim on an I/O fio requeued (an engine's
// FIO_Q_BUSY, which io_uring and libaio answer a trim while I/Os are
// queued and not submitted): the I/O keeps its block (get_next_trim
// returns at once), but the batch moves as if it had taken one.
func (t *verifyTrims) requeued() {
	switch {
	case t.next == len(t.list):
	case t.batch > 0:
		t.batch--
	case t.hist%t.backlog == 0:
		t.batch = t.size
	}
}

// verifyTrim trims the next listed block if check_get_trim says so; it
// reports whether it did.
func (l *loop) verifyTrim(t int64) bool {
	v := l.vfy
	i, ok := v.trims.take(v.log)
	if !ok {
		return false
	}
	p := v.log[i]
	if l.pending > 0 && v.trims.next == len(v.trims.list) && l.gen.sizeIssued() {
		// The last listed block, taken while I/Os wait to be submitted:
		// the engine answers FIO_Q_BUSY, fio commits them and requeues
		// the trim, and its do_io loop, with the list empty and the
		// job's size issued, ends before it comes round to it. fio 3.33
		// never trims that block (and, with trim_verify_zero=1, expects
		// zeros of it all the same).
		l.markDepth()
		l.commit()
		l.pending = 0
		return true
	}
	v.res.Trimmed++
	v.res.TrimmedRead = v.trims.zero
	l.trim(int(p.file), p.off, p.n, t)
	return true
}

// verifiedPieces are the logged blocks the verify phase reads back: the
// last write of each, without those a trim dropped.
func (v *verifier) verifiedPieces() []verifyPiece {
	ps := latestPieces(v.log)
	if v.trims == nil || v.trims.zero {
		return ps
	}
	out := make([]verifyPiece, 0, len(ps))
	for _, p := range ps {
		if p.trim != pieceDropped {
			out = append(out, p)
		}
	}
	return out
}
