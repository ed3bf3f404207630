package bench

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"iolab/bench/guard"
	"iolab/bench/randgen"
	"iolab/bench/verify"

	"golang.org/x/sys/unix"
)

// The job loop's verification (fio's verify.c get_next_verify and
// verify_io_u, backend.c do_verify and do_dry_run): a write job fills each
// write with verifiable data and logs it; once the writes are done (or
// every verify_backlog writes) it reads the logged blocks back through the
// same engine and checks each. A read job with verify checks every read.
// The first block that does not verify fails the job with a verify.Error.

// verifyPiece is one logged write (fio's io_piece).
type verifyPiece struct {
	off      int64
	seed     uint64
	n        uint32
	file     int32
	numberio uint16
	trim     uint8 // pieceTrimmed or pieceDropped after a verify trim (verifytrim_linux.go)
}

// verifier is one job's verification state, on its loop.
type verifier struct {
	spec     *verify.Spec
	job      *Job
	only     bool          // verify_only: the writes are not done, only logged
	log      []verifyPiece // written and not yet read back
	seeds    randgen.SplitMix
	numberio uint64 // writes issued (fio's io_issues[DDIR_WRITE])
	thread   uint16
	checkNum bool

	fileOf []int32 // per slot: the file of the I/O in it
	// verifyPieces' own, kept so that verify_backlog allocates nothing
	// per backlog: per slot, the piece it reads back; the slots queued
	// and not yet committed.
	readPiece []verifyPiece
	batch     []int32

	// The last iodepth completed writes per file, for the verify state
	// (fio's f->last_write_comp).
	lastComp [][]int64
	lastIdx  []int
	writes   uint64 // writes completed (fio's io_blocks[DDIR_WRITE])
	wrote    uint64 // their bytes (fio's bytes_done[DDIR_WRITE]): what experimental_verify reads back

	async *asyncVerify // verify_async's checkers (verify_async_linux.go); nil without
	trims *verifyTrims // trim_percentage and trim_backlog's (verifytrim_linux.go); nil without

	state *verifyState // verify_state_load's, or nil
	dir   string       // where the state and dumps go (Runner.StateDir)
	guard *guard.Guard // writes them there (nil: the CLI's)
	end   int64        // loop time the last verify reads ended
	res   VerifyResult
}

// initVerify sets up the loop's verifier when the job verifies; gen is
// the job's I/O generator, whose seeds and generator width the verify
// trims share.
func (l *loop) initVerify(gen *ioGen) {
	j := l.j
	spec := j.verifySpec()
	if spec == nil {
		return
	}
	depth := len(l.created)
	minW, maxW := j.BlockSizes(Write)
	v := &verifier{spec: spec, job: j, only: j.VerifyOnly && j.Writes(), seeds: randgen.NewSplitMix(j.seeds(l.r.index)[seedVerify]),
		thread: uint16(l.r.index + 1), checkNum: j.Writes() && minW == maxW && !j.TimeBased && !j.VerifyOnly,
		fileOf: make([]int32, depth), readPiece: make([]verifyPiece, depth), batch: make([]int32, 0, depth),
		lastComp: make([][]int64, len(l.r.files)), lastIdx: make([]int, len(l.r.files)), dir: l.r.stateDir, guard: l.r.guard}
	for i := range v.lastComp {
		v.lastComp[i] = make([]int64, j.IODepth)
	}
	v.res.Method = spec.Kind.Name
	if j.VerifyStateLoad && j.VerifyOnly {
		s, err := loadVerifyState(v.files(), filepath.Join(v.dir, verifyStateName(j.Name, l.r.index)))
		if err != nil {
			l.err = fmt.Errorf("job %s: verify_state_load: %w", j.Name, err)
			return
		}
		v.state = s
	}
	v.trims = newVerifyTrims(j, gen.seeds, gen.use64())
	l.vfy = v
	if j.VerifyAsync > 0 {
		if err := v.startAsync(l); err != nil {
			l.err = err
		}
	}
}

// queued is the loop's hook when an I/O is queued: a write gets its
// verifiable data and is logged (fio's populate_verify_io_u and
// log_io_piece), a read remembers its file to name it if it fails.
func (v *verifier) queued(l *loop, slot int32, op ioOp, file int, off int64, n uint32) {
	v.fileOf[slot] = int32(file)
	if op != opWrite {
		return
	}
	p := verifyPiece{off: off, n: n, file: int32(file), numberio: uint16(v.numberio)}
	v.numberio++
	if v.spec.Pattern == nil {
		p.seed = v.seeds.Next()
	}
	t := l.tick
	v.spec.Fill(l.r.bufs.slice(int(slot))[:n], verify.Meta{Offset: off, Seed: p.seed, NumberIO: p.numberio, Thread: v.thread,
		Sec: uint32(t / 1e9), Nsec: uint32(t % 1e9)})
	if l.j.DoVerify && !l.j.ExperimentalVerify {
		v.log = append(v.log, p)
		if v.trims != nil {
			v.trims.logged(len(v.log) - 1)
		}
	}
}

// dryWrite logs a write that verify_only does not do (fio's do_dry_run).
func (v *verifier) dryWrite(file int, off int64, n uint32) {
	p := verifyPiece{off: off, n: n, file: int32(file), numberio: uint16(v.numberio)}
	v.numberio++
	v.writes++
	v.wrote += uint64(n)
	if !v.job.ExperimentalVerify {
		v.log = append(v.log, p)
	}
}

// completed is the loop's hook when an I/O completes without error: a
// write is recorded for the verify state, a read of a read job checked.
func (v *verifier) completed(l *loop, slot int32, d uint8, n int32) {
	if d == Write {
		f := v.fileOf[slot]
		v.lastComp[f][v.lastIdx[f]] = l.offOf[slot]
		v.lastIdx[f] = (v.lastIdx[f] + 1) % len(v.lastComp[f])
		v.writes++
		v.wrote += uint64(n)
		return
	}
	if d != Read || l.err != nil {
		return
	}
	r := verify.ReadBack{File: l.r.files[v.fileOf[slot]].path, Off: l.offOf[slot]}
	if v.async != nil {
		// The reap put the slot on the free list a moment ago, last: it
		// is the checkers' until they are done with its buffer.
		l.free = l.free[:len(l.free)-1]
		v.hand(slot, int(n), r)
		return
	}
	v.checkRead(l, slot, r, int(n))
}

func (v *verifier) checkRead(l *loop, slot int32, r verify.ReadBack, n int) {
	buf := l.r.bufs.slice(int(slot))[:n]
	if e := v.spec.Check(l.j.Name, buf, r); e != nil {
		if v.spec.Dump && !r.Trimmed { // fio dumps no trimmed block
			v.dump(e, buf, r)
		}
		v.failed(l, e)
	}
}

// failed is a block that did not verify, on the job's thread: the first
// is the result's, and it fails the job unless continue_on_error takes it.
func (v *verifier) failed(l *loop, e *verify.Error) {
	if v.res.Failed == nil {
		v.res.Failed = e
	}
	if !l.verifyFailed(e) && l.err == nil {
		l.err = e
	}
}

// backlog is the loop's hook after a reap: with verify_backlog, once that
// many writes are logged and done, it reads them back (fio's
// TD_F_VER_BACKLOG).
func (l *loop) verifyBacklog() {
	v := l.vfy
	if v == nil || l.j.VerifyBacklog <= 0 || int64(len(v.log)) < l.j.VerifyBacklog || l.err != nil {
		return
	}
	for l.checkedOut > 0 && l.err == nil {
		l.reap(l.checkedOut, true)
	}
	l.pending = 0 // the reap committed what was queued
	l.verifyPieces(logged(v.log), nil)
	// Read back: forgotten, as fio frees its io_pieces, so that a long
	// time_based job's log holds one backlog, not the whole run.
	v.log = v.log[:0]
}

// verifyEnd runs after the job's I/O: the verify phase (do_verify), then
// the verify state (verify_state_save), as fio's thread_main does.
func (l *loop) verifyEnd(stopped func() bool) {
	v := l.vfy
	if v == nil {
		return
	}
	if l.err == nil && l.j.DoVerify && l.j.Writes() && !stopped() {
		if l.j.ExperimentalVerify {
			l.verifyPieces(l.replayWrites(), stopped)
		} else {
			l.verifyPieces(logged(v.verifiedPieces()), stopped)
		}
	}
	if v.async != nil {
		// A read job's last reads may still be with the checkers.
		v.stopAsync(l)
	}
	if l.j.VerifyStateSave && l.j.Writes() && !v.only {
		name := verifyStateName(l.j.Name, l.r.index)
		if err := v.saveState(filepath.Join(v.dir, name)); err != nil && l.err == nil {
			l.err = fmt.Errorf("job %s: verify_state_save: %w", l.j.Name, err)
		} else if err == nil {
			v.res.StateFile = name
		}
	}
	if v.res.Reads.IOs > 0 || v.res.Failed != nil || l.j.DoVerify {
		r := v.res
		l.res.Verify = &r
	}
}

// latestPieces keeps, of blocks written more than once, the last write,
// in the order of the writes (fio's rb-tree replaces an overlapped piece).
func latestPieces(ps []verifyPiece) []verifyPiece {
	type key struct {
		file int32
		off  int64
	}
	last := make(map[key]int, len(ps))
	for i, p := range ps {
		last[key{p.file, p.off}] = i
	}
	if len(last) == len(ps) {
		return ps
	}
	out := make([]verifyPiece, 0, len(last))
	for i, p := range ps {
		if last[key{p.file, p.off}] == i {
			out = append(out, p)
		}
	}
	return out
}

// pieceSource yields the blocks a verify phase reads back, in order: the
// logged writes, or experimental_verify's replay of them.
type pieceSource func() (verifyPiece, bool)

// logged reads back the pieces ps, in their order.
func logged(ps []verifyPiece) pieceSource {
	i := 0
	return func() (verifyPiece, bool) {
		if i == len(ps) {
			return verifyPiece{}, false
		}
		i++
		return ps[i-1], true
	}
}

// verifyPieces reads the pieces of src back through the engine, iodepth
// at a time, and checks each (on the job's thread, or handed to
// verify_async's); its reads and time are the verify result's, not the
// measured I/O's.
func (l *loop) verifyPieces(src pieceSource, stopped func() bool) {
	v := l.vfy
	t0 := l.now()
	more, next, inflight, pending := true, 0, 0, 0
	readPiece, batch := v.readPiece, v.batch[:0]
	held := false // by the job's flow, as in fio's do_verify (flow_linux.go)
	checking := func() bool { return v.async != nil && v.async.held > 0 }
	for l.err == nil && (more || inflight > 0 || checking()) {
		if ((stopped != nil && stopped()) || l.ended) && inflight == 0 {
			break
		}
		if held && inflight == 0 {
			l.flow.doze(stopped)
			held = false
		}
		if v.async != nil {
			// Slots the checkers are done with; wait for one when they
			// hold every slot not in flight.
			l.reclaim(len(l.free) == 0 && inflight == 0)
			if l.err != nil {
				break
			}
		}
		for more && len(l.free) > 0 && !held && (stopped == nil || !stopped()) && !l.ended {
			if l.flow != nil && l.flow.over() {
				// With flow_sleep, reap what is in flight and sleep;
				// without, try again at once.
				held = l.flow.sleep > 0
				break
			}
			p, ok := src()
			if !ok {
				more = false
				break
			}
			if v.state != nil && v.state.shouldStop(uint64(next), p) {
				v.res.Stopped = true
				more = false
				break
			}
			slot := l.free[len(l.free)-1]
			l.free = l.free[:len(l.free)-1]
			l.eng.Queue(int(slot), opRead, int(p.file), p.off, p.n)
			l.created[slot] = l.now()
			l.offOf[slot], l.lenOf[slot], l.dirOf[slot], l.fileOf[slot] = p.off, p.n, uint8(opRead), p.file
			readPiece[slot] = p
			batch = append(batch, slot)
			next++
			inflight++
			pending++
		}
		if pending > 0 {
			done, err := l.eng.Commit()
			if err != nil {
				l.err = err
				break
			}
			tp := l.now()
			for _, s := range batch[:done] {
				l.issued[s] = tp
				if l.info.Sync || l.info.Published {
					l.issued[s] = l.created[s] // as the job loop times them: no slat
				} else {
					v.res.Reads.Slat.Add(uint64(tp - l.created[s]))
					l.logSlat(s, tp)
				}
			}
			batch = batch[:copy(batch, batch[done:])]
			pending -= done
		}
		if inflight-pending == 0 {
			continue
		}
		n, err := l.eng.GetEvents(1, inflight-pending, true, l.comps[:inflight-pending])
		if err != nil {
			l.err = err
			break
		}
		tc := l.now()
		for _, c := range l.comps[:n] {
			s := c.Slot
			inflight--
			if l.err != nil {
				l.free = append(l.free, s)
				continue
			}
			if c.Res < 0 {
				l.free = append(l.free, s)
				if !l.ioFailed(s, Read, unix.Errno(-c.Res), &v.res.Reads) {
					l.err = ioError(l.j, l.r.target, Read, l.offOf[s], l.lenOf[s], unix.Errno(-c.Res))
				}
				continue
			}
			p := readPiece[s]
			v.res.Reads.IOs++
			v.res.Reads.Bytes += uint64(c.Res)
			l.res.Moved[Read] += uint64(c.Res) // the device read them: not another process's I/O
			clat := uint64(tc - l.issued[s])
			v.res.Reads.Clat.Add(clat)
			v.res.Reads.Lat.Add(uint64(tc - l.created[s]))
			// fio's logs have the verify reads as the job's reads.
			if l.r.logs != nil {
				l.r.logs.Verified(tc, clat, tc-l.created[s], uint32(c.Res), l.offOf[s], &v.res.Reads.Clat.Hist, l.prio.def)
			}
			if int(c.Res) != int(p.n) {
				l.free = append(l.free, s)
				l.err = fmt.Errorf("job %s: verify: short read of %d bytes at offset %d of %s (wrote %d)", l.j.Name, c.Res, p.off, l.r.files[p.file].path, p.n)
				continue
			}
			r := verify.ReadBack{File: l.r.files[p.file].path, Off: p.off, NumberIO: p.numberio, CheckNum: v.checkNum,
				Seed: p.seed, SeedKnown: !v.only && v.spec.Pattern == nil && !l.j.ExperimentalVerify, Trimmed: p.trim == pieceTrimmed}
			if v.async != nil {
				v.hand(s, int(p.n), r)
				continue
			}
			l.free = append(l.free, s)
			v.checkRead(l, s, r, int(p.n))
		}
	}
	// A failure leaves reads in flight: reap them before the buffers go.
	for inflight > 0 {
		n, err := l.eng.GetEvents(inflight, inflight, true, l.comps[:inflight])
		if err != nil || n == 0 {
			break
		}
		for _, c := range l.comps[:n] {
			l.free = append(l.free, c.Slot)
		}
		inflight -= n
	}
	if v.async != nil {
		// The phase ends when its last block is checked.
		for v.async.held > 0 {
			l.reclaim(true)
		}
	}
	v.end = l.now()
	v.res.Runtime += time.Duration(v.end - t0)
}

// files is the guard the verifier writes its state and dumps through.
func (v *verifier) files() *guard.Guard {
	if v.guard == nil {
		return guard.Unrestricted()
	}
	return v.guard
}

// dump writes the received block, and the expected one where it can be
// rebuilt from the header, beside the job (fio's dump_buf:
// NAME.OFFSET.received and NAME.OFFSET.expected in the working directory,
// or Runner.StateDir).
func (v *verifier) dump(e *verify.Error, buf []byte, r verify.ReadBack) {
	base := filepath.Base(r.File)
	write := func(kind string, data []byte) {
		name := filepath.Join(v.dir, fmt.Sprintf("%s.%d.%s", base, e.Offset, kind))
		if err := v.files().WriteFile(name, data); err == nil {
			e.Dumped = append(e.Dumped, name)
		}
	}
	at := int(e.Offset - r.Off)
	inc := e.Length
	if at < 0 || at+inc > len(buf) {
		return
	}
	write("received", buf[at:at+inc])
	if e.Method == "header" {
		return
	}
	// The header (swapped back by the check) gives the seed and the rest.
	h := verify.ReadHeader(buf[at:])
	exp := make([]byte, len(buf))
	v.spec.Fill(exp, verify.Meta{Offset: r.Off, Seed: h.Seed, NumberIO: h.NumberIO, Thread: h.Thread, Sec: h.Sec, Nsec: h.Nsec})
	if v.spec.Offset > 0 {
		// fill swapped the header to verify_offset; dump it in place.
		verify.SwapBytes(exp[at:at+v.spec.Kind.HdrSize()], exp[at+v.spec.Offset:at+v.spec.Offset+v.spec.Kind.HdrSize()])
	}
	write("expected", exp[at:at+inc])
}

// verifyStateName is fio's verify_state_gen_name with prefix "local":
// local-NAME-N-verify.state, '/' in the name turned into '.'.
func verifyStateName(job string, index int) string {
	return fmt.Sprintf("local-%s-%d-verify.state", strings.ReplaceAll(job, "/", "."), index)
}
