package bench

import (
	"errors"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"iolab/bench/engine"
)

// The job loop follows fio 3.33's do_io (backend.c) and its helpers
// (io_u.c get_io_u, io_u_queued_complete; ioengines.c td_io_queue,
// td_io_commit, td_io_getevents), so that the same options make the same
// system calls per I/O as fio:
//
//   - an I/O is queued on the engine without a system call, and committed
//     (io_uring_enter / io_submit) once iodepth_batch of them are queued —
//     with fio's default of 1, each I/O is submitted on its own;
//   - completions are reaped only once every slot is taken (fio never
//     reaps while the queue is not full, unless polling), at least
//     iodepth_batch_complete_min of them and at most
//     iodepth_batch_complete_max (both 1 by default), reaping again while
//     more than iodepth_low are in flight; a reap first commits what is
//     queued;
//   - with iodepth_batch_complete_min=0 and no max, fio polls: it reaps
//     after every I/O, spinning without blocking, which keeps one I/O in
//     flight;
//   - at the end, what is in flight is reaped in one call.
//
// Timestamps are fio's: an I/O is created (start_time) when it is queued,
// issued when the commit that submits it returns (one clock read per
// commit; sync engines: just before their read or write), and completed
// when the reap that returns it does (one read per reap). slat is issue −
// create, clat complete − issue, lat complete − create.
//
// Nothing here allocates per I/O: slots, timestamps and completions live
// in slices sized once, and the engines write into mmap'd memory.

// loop is one job's I/O loop state, on the job's locked thread.
type loop struct {
	r *jobRun
	j *Job
	// filled: a write found the filesystem full under fill_device.
	filled bool
	eng    engine.IO
	info   engine.Info
	live   *atomic.Uint64

	clk jobClock // clock.go

	// Per slot (fio's io_u): when it was created and issued, its direction,
	// file and offset.
	created, issued []int64
	dirOf           []uint8
	fileOf          []int32
	offOf           []int64
	lenOf           []uint32

	free       []int32 // slots not checked out (fio's io_u_freelist)
	queued     []int32 // slots queued on the engine, not yet committed
	checkedOut int     // slots taken: queued, in flight, or done but not reaped (fio's cur_depth)
	pending    int     // I/Os queued since the last commit by count (fio's td->io_u_queued)
	comps      []engine.Completion

	batch, cmin, cmax, low int

	measuring    bool
	measureStart int64
	cur          DirResults
	dist         IODist // fio's depth and latency distributions, over the window
	res          *JobResult
	nextSample   int64
	interval     int64
	err          error
	// ended: the job ended itself without an error (verify_fatal's first
	// bad block under continue_on_error=verify; loop_errors_linux.go).
	ended bool

	gen  *ioGen
	sync loopSync // fsync=N, fdatasync=N, end_fsync (loop_sync_linux.go)

	pace   *pacer    // rate and think time (pacer_linux.go); nil without them
	off    *offload  // io_submit_mode=offload's submit workers (offload_linux.go); nil inline
	holds  *holds    // a rated job's engine calls (lat_intended.go); nil without a rate
	holdAt int64     // when the engine call under way began; -1 between calls
	st     stamps    // which latencies are recorded (lat_recorded.go)
	qos    qosLoop   // latency from intended starts, per interval (qos_linux.go)
	tick   int64     // the latest clock(): the current I/O's time
	vfy    *verifier // data verification (verify_linux.go); nil without verify
	prio   prioLoop  // I/O priorities (loop_prio_linux.go)
	clocks uint64    // clock reads, for the tests of how few there are

	lt   *latTarget   // latency_target's search (lattarget_linux.go); nil without it
	ssp  *steadyProbe // what steady state watches (steady_linux.go); nil without ss_dur
	flow *flowShare   // the job's part in its flow (flow.go); nil in none

	status *jobStatus // --status-interval's snapshots (loop_status_linux.go); nil: nobody asks
	blk    *jobTrace  // --trace-block's records of the measured I/Os (blocktrace_linux.go); nil untraced
}

func (l *loop) now() int64 {
	l.clocks++
	return l.clk.since()
}

// clock reads the time of the I/O being picked into tick.
func (l *loop) clock() int64 {
	l.tick = l.now()
	return l.tick
}

// run is the job's I/O loop; see the comment at the top of this file. Its
// steps: newLoop sets the loop up, startWindow opens the measured window
// (at the ramp's end, or a latency_target restart), and finish drains what
// is left and writes the result. The loop below is the per-I/O path: it
// keeps queueing an I/O inline rather than in a step of its own, so an I/O
// costs no more calls than before the cut.
func (r *jobRun) run(stop *atomic.Bool, interval time.Duration, live *atomic.Uint64) JobResult {
	j := r.j
	res := JobResult{Name: j.Name, Job: *j, Interval: interval, Jobs: 1, TID: unix.Gettid(), EngineSetup: r.info.Setup}
	l, gen := newLoop(r, stop, interval, live, &res)
	res.Clock = l.clk.which()
	// Offloaded, the workers wait for each I/O at depth 1: the job's
	// thread never polls.
	polling := l.cmin == 0 && l.cmax == 0 && l.off == nil

	ramp := int64(j.RampTime)
	l.measuring = ramp == 0
	if l.measuring {
		res.Start = time.Now()
		l.logStart()
		if l.blk != nil {
			l.blk.begin(&l.clk, 0)
		}
	}
	l.lt = newLatTarget(j, l.clock())
	l.startProbe(r.ss)
	var end int64 = -1
	if j.Runtime > 0 {
		end = ramp + int64(j.Runtime)
	}
	l.nextSample = l.interval
	ru0 := threadUsage()
	timeEnded := false
	for l.err == nil {
		if l.vfy != nil {
			l.verifyBacklog()
		}
		t := l.clock()
		restart := l.lt != nil && l.latTargetStep()
		if (!l.measuring && t >= ramp) || restart {
			end, ru0 = l.startWindow(t, end)
		}
		if l.status != nil && l.status.asked.Load() {
			l.publishStatus(t, ru0)
		}
		if (end >= 0 && t >= end) || stop.Load() || l.endedEarly() {
			timeEnded = true
			break
		}
		if l.filled || l.ended {
			break
		}
		if l.flow != nil && l.flowHeld(stop) {
			continue
		}
		if l.vfy != nil && l.vfy.trims != nil && l.verifyTrim(t) {
			continue // check_get_trim comes first in fio's get_io_u
		}
		op, file, off, n, ok := gen.next()
		t = l.tick // later than t if a rate waited
		if !ok {
			timeEnded = l.pace != nil && l.pace.expired
			break
		}
		if op > opTrim && l.sync.inline {
			l.syncInline(op, file, t)
			continue
		}
		if op == opTrim {
			l.trim(file, off, n, t)
			continue
		}
		if l.vfy != nil && l.vfy.only && op == opWrite {
			l.vfy.dryWrite(file, off, n) // verify_only: fio's do_dry_run
			continue
		}
		if l.vfy != nil && l.vfy.async != nil {
			// verify_async's checkers give back the slots they are done
			// with; when they hold every slot not in flight, wait for one.
			if l.reclaim(len(l.free) == 0); l.err != nil {
				break
			}
		}
		l.queue(op, file, off, n, t)
		if l.info.Sync {
			// A sync engine does the I/O in the commit and completes it
			// there (fio's FIO_Q_COMPLETED): it is reaped at once.
			l.markDepth()
			l.commit()
			l.pending = 0
			l.reap(1, true)
			if l.pace != nil {
				l.pace.after(op)
			}
			continue
		}
		if l.pending >= l.batch {
			l.markDepth()
			l.commit()
			l.pending = 0
		}
		// fio's wait_for_completions, only once every slot is taken (or
		// when polling).
		if full := len(l.free) == 0 || l.lt.full(l.checkedOut); full || polling {
			want := min(l.cmin, l.checkedOut)
			if l.cmin == 0 || (full && want == 0) {
				want = 1
			}
			for {
				l.reap(want, true)
				if l.err != nil || !(full && l.checkedOut > l.low) {
					break
				}
			}
		}
		if l.off != nil && l.checkedOut > 0 {
			l.reap(0, false) // what the workers finished, without waiting
		}
		if l.pace != nil {
			l.pace.after(op)
		}
	}
	l.finish(timeEnded, ru0, stop)
	return res
}

// queue is fio's get_io_u and td_io_queue for one I/O created at t: a
// slot (one is free here, since a full queue was reaped before the loop
// came round again), its buffer, the engine's queue, and the slot's
// record of what it holds.
func (l *loop) queue(op ioOp, file int, off int64, n uint32, t int64) {
	slot := l.free[len(l.free)-1]
	l.free = l.free[:len(l.free)-1]
	l.checkedOut++
	if op == opWrite {
		l.r.bufs.prepareWrite(int(slot), int(n), off)
	}
	if l.vfy != nil {
		l.vfy.queued(l, slot, op, file, off, n)
	}
	l.eng.Queue(int(slot), op, file, off, n)
	if l.prio.cp != nil && op <= opWrite {
		l.queuedPrio(slot, op, n)
	}
	l.created[slot] = t
	l.dirOf[slot] = uint8(op)
	l.fileOf[slot] = int32(file)
	l.offOf[slot] = off
	l.lenOf[slot] = n
	l.queued = append(l.queued, slot)
	l.pending++
	if l.measuring && op <= opWrite {
		l.dist.Issued[op]++
	}
	if l.pace != nil {
		l.pace.queued(slot, op, n, t)
	}
}

// newLoop sets up the loop of job run r, writing into res: the slots, fio's
// batch and depth limits, the I/O generator and the loop's parts that
// options turn on (sync, stamps, QoS, verify, priorities, pacing).
func newLoop(r *jobRun, stop *atomic.Bool, interval time.Duration, live *atomic.Uint64, res *JobResult) (*loop, *ioGen) {
	j := r.j
	depth := r.depth
	l := &loop{r: r, j: j, eng: r.eng, info: r.info, live: live, clk: jobClockFor(r.clock), res: res, interval: int64(interval), flow: r.flow, status: r.status, blk: r.blk,
		created: make([]int64, depth), issued: make([]int64, depth), dirOf: make([]uint8, depth), fileOf: make([]int32, depth), offOf: make([]int64, depth), lenOf: make([]uint32, depth),
		free: make([]int32, depth), queued: make([]int32, 0, depth), comps: make([]engine.Completion, depth)}
	for i := range l.free {
		l.free[i] = int32(depth - 1 - i)
	}
	// fio's fixup_options: iodepth_batch 0 (or above iodepth) is iodepth;
	// complete_max below complete_min is complete_min; iodepth_low 0 (or
	// above iodepth) is iodepth.
	l.batch = j.IODepthBatchSubmit
	if l.batch <= 0 || l.batch > depth {
		l.batch = depth
	}
	l.cmin = j.IODepthBatchCompleteMin
	l.cmax = max(j.IODepthBatchCompleteMax, l.cmin)
	l.low = j.IODepthLow
	if l.low <= 0 || l.low > j.IODepth {
		l.low = j.IODepth
	}
	res.Samples = make([]Sample, 0, int((j.Runtime+j.RampTime)/interval)+2)

	gen := newIOGen(j, r.layout, r.index)
	if l.off, _ = r.eng.(*offload); l.off != nil {
		// The workers stamp their I/Os on the loop's clock. fio's do_io
		// counts no offloaded I/O against the pass's size, as it counts
		// none of a sync engine's: a pass ends when its files are done.
		l.off.clk = &l.clk
		l.batch, l.low = 1, depth
		gen.syncEngine()
	}
	if r.info.Sync {
		gen.syncEngine()
	}
	l.initSync(gen)
	l.st = newStamps(j)
	l.qos = newQoSLoop(l.st)
	l.initVerify(gen)
	l.initPrio(depth, gen.seeds[seedPrioCmds])
	if l.pace = newPacer(l, j, stop, depth); l.pace != nil && l.pace.paced() {
		gen.rate = l.pace.rateDir
		l.holds = l.pace.holds
	}
	l.holdAt = -1
	return l, gen
}

// startWindow opens the measured window at t: the ramp's end, or a
// latency_target restart. It returns the runtime's new end and the
// thread's usage at the window's start.
func (l *loop) startWindow(t, end int64) (int64, unix.Rusage) {
	l.cur = DirResults{}
	l.dist = IODist{}
	l.prioRestart()
	l.measureStart = t
	l.measuring = true
	// fio's reset_all_stats: the runtime counts from the
	// ramp's end as it is seen, however late that is.
	if end >= 0 {
		end = t + int64(l.j.Runtime)
	}
	l.res.Start = time.Now()
	l.nextSample = t + l.interval
	ru0 := threadUsage()
	l.syncRampEnd()
	if l.pace != nil {
		l.pace.restart(t)
	}
	l.windowRestarted(t)
	l.logStart()
	if l.blk != nil {
		l.blk.begin(&l.clk, t)
	}
	return end, ru0
}

// finish ends the loop: it reaps what is still in flight, closes the
// window and the logs after verify's phase, and writes the result (times,
// CPU use, the engine's spin summary, the error). ru0 is the thread's usage
// at the window's start; timeEnded, that the runtime (or a cancel) ended
// the job rather than its size.
func (l *loop) finish(timeEnded bool, ru0 unix.Rusage, stop *atomic.Bool) {
	res := l.res
	// What is still in flight is reaped in one call (fio's
	// io_u_queued_complete(cur_depth)) before its buffer goes away. At the
	// end of a size-based job it is part of the job: the window ends after
	// it. After the runtime (or a cancel) it completed after the window and
	// is not counted.
	var stopAt int64
	if timeEnded {
		stopAt = l.now()
	}
	ru1 := threadUsage()
	measured := l.measuring
	if timeEnded {
		l.measuring = false
		l.closeInterval(stopAt, measured)
	}
	for l.checkedOut > 0 {
		before := l.checkedOut
		l.reap(l.checkedOut, true)
		if l.checkedOut == before {
			break // the engine failed; its error is kept
		}
	}
	if l.blk != nil {
		l.blk.flush()
	}
	if took := l.endSync(); timeEnded {
		stopAt += took
	}
	if !timeEnded {
		stopAt = l.now()
		ru1 = threadUsage()
		l.closeInterval(stopAt, measured)
	}
	if !measured {
		// The ramp never ended: nothing was measured.
		l.measureStart = stopAt
		res.Start = time.Now()
	}
	res.Runtime = time.Duration(stopAt - l.measureStart)
	res.Dirs = l.cur
	l.prioResult()
	res.Dist = l.dist
	res.Sync = l.sync.cur
	res.UsrCPU = tvDuration(ru1.Utime) - tvDuration(ru0.Utime)
	res.SysCPU = tvDuration(ru1.Stime) - tvDuration(ru0.Stime)
	res.Ctx = uint64((ru1.Nvcsw - ru0.Nvcsw) + (ru1.Nivcsw - ru0.Nivcsw))
	res.MinFlt = uint64(ru1.Minflt - ru0.Minflt)
	res.MajFlt = uint64(ru1.Majflt - ru0.Majflt)
	res.ClockReads = l.clocks
	if s, ok := l.eng.(interface{ spinSummary() string }); ok {
		if spun := s.spinSummary(); spun != "" {
			res.EngineSetup += "; " + spun
		}
	}
	l.verifyEnd(stop.Load)
	// The logs close after the verify phase, whose reads they log too.
	logEnd := stopAt
	if l.vfy != nil {
		logEnd = max(logEnd, l.vfy.end)
	}
	l.logEnd(logEnd)
	l.endProbe(res)
	if l.err != nil {
		res.Error = l.err.Error()
		if errno, ok := errors.AsType[unix.Errno](l.err); ok {
			res.Errno = int(errno)
		}
	}
}

// closeInterval keeps the last interval, cut short by the end of the
// window, when it is at least half an interval long: a job shorter than
// one interval still has a point to draw, and rates are per its length.
func (l *loop) closeInterval(stopAt int64, measured bool) {
	if measured && stopAt-(l.nextSample-l.interval) >= l.interval/2 {
		s := Sample{At: time.Duration(stopAt - l.measureStart), Lat: l.qosInterval()}
		s.IOs, s.Bytes = l.cur.Counts()
		l.res.Samples = append(l.res.Samples, s)
	}
}

// markDepth is fio's io_u_mark_depth in td_io_commit: the I/Os queued
// since the last commit, at the depth checked out now.
func (l *loop) markDepth() {
	if l.measuring && l.off == nil {
		l.dist.MarkDepth(l.checkedOut, l.pending)
	}
}

// holdOpen and holdClose bracket an engine call of a rated job, for the
// latency from intended starts (lat_intended.go); end -1 reads the clock.
func (l *loop) holdOpen() {
	if l.holds != nil && l.holdAt < 0 {
		l.holdAt = l.now()
	}
}

func (l *loop) holdClose(end int64) {
	if l.holdAt < 0 {
		return
	}
	if end < 0 {
		end = l.now()
	}
	l.holds.add(l.holdAt, end)
	l.holdAt = -1
}

// commit submits the queued I/Os (fio's td_io_commit and ->commit) and
// stamps their issue time: after the call for async engines (slat then
// spans the submission, as in fio), before it for sync engines (which do
// the I/O in it and have no slat), at publication for SQPOLL.
func (l *loop) commit() {
	if len(l.queued) == 0 || l.err != nil {
		return
	}
	if l.off != nil {
		// Handed to the workers, which time the submission themselves.
		if _, err := l.eng.Commit(); err != nil {
			l.err = err
		}
		l.queued = l.queued[:0]
		return
	}
	var tp int64
	if l.info.Sync {
		// The I/O was created a moment ago, just before this: its creation
		// time serves as the issue time, which saves a clock read per I/O.
		tp = l.created[l.queued[0]]
	}
	l.holdOpen()
	done, err := l.eng.Commit()
	if err != nil {
		l.err = err
		return
	}
	if l.measuring && !l.info.Published {
		// fio's io_u_mark_submit, per submit call; its SQPOLL commit
		// marks nothing.
		l.dist.MarkSubmit(done)
	}
	if !l.info.Sync && !l.info.Published && l.st.issue {
		tp = l.now()
		l.holdClose(tp)
	} else if !l.info.Sync {
		l.holdClose(-1)
	} // a sync engine's I/O is reaped next: the hold ends there
	for _, s := range l.queued[:done] {
		l.issued[s] = tp
		if l.info.Published {
			// SQPOLL's kernel thread picks the I/O up as it is published:
			// timed from there, with no slat (fio has none either).
			l.issued[s] = l.created[s]
		}
		if l.measuring && l.st.slat && !l.info.Sync && !l.info.Published && l.created[s] >= l.measureStart && l.dirOf[s] <= Write {
			l.cur[l.dirOf[s]].Slat.Add(uint64(tp - l.created[s]))
			l.logSlat(s, tp)
		}
	}
	// What the kernel did not take (libaio's full context) stays queued
	// for the next commit, after a reap.
	l.queued = l.queued[:copy(l.queued, l.queued[done:])]
}

// reap is fio's io_u_queued_complete: commit what is queued, then take at
// least want and at most iodepth_batch_complete_max completions (never
// more than are checked out), blocking for want unless polling, and
// account them with one clock read.
func (l *loop) reap(want int, block bool) {
	want = min(want, l.checkedOut)
	most := min(l.cmax, l.checkedOut)
	if l.off != nil {
		most = l.checkedOut // whatever the workers finished
	}
	if want > most {
		most = want
	}
	if want > 0 {
		l.commit()
	}
	if l.err != nil || most == 0 {
		return
	}
	// Taking back what offload's workers finished, without waiting, holds
	// the job up no more than any step of its loop.
	held := l.off == nil || block
	if held {
		l.holdOpen()
	}
	n, err := l.eng.GetEvents(want, most, block && (l.cmin > 0 || l.off != nil), l.comps[:most])
	if err != nil {
		l.err = err
	} else if l.measuring && l.off == nil {
		l.dist.MarkComplete(n) // fio's io_u_mark_complete, per reap
	}
	if n == 0 {
		l.holdClose(-1)
		return
	}
	tc := l.tick // without latencies to take, the I/O's own time will do
	if l.st.complete {
		tc = l.now()
		l.holdClose(tc)
	} else {
		l.holdClose(-1)
	}
	l.completed(l.comps[:n], tc)
}

// completed accounts the completions comps, reaped (or, for a trim, done)
// at tc: slots freed, counts and latencies of the measured window, the
// interval's sample when one is due. Offloaded, each I/O's completion is
// its worker's stamp, and the sample is taken at the latest.
func (l *loop) completed(comps []engine.Completion, tc int64) {
	n := len(comps)
	last := tc
	for _, c := range comps {
		s := c.Slot
		d := l.dirOf[s]
		if l.off != nil && d != Trim { // a trim is done by the job's thread (loop_trim_linux.go)
			tc = l.offloaded(s, d)
			last = max(last, tc)
		}
		l.free = append(l.free, s)
		if l.completedSync(s, d, c.Res, tc) {
			continue
		}
		if c.Res < 0 {
			var dr *DirResult
			if l.measuring && l.created[s] >= l.measureStart {
				dr = &l.cur[d]
			}
			if l.ioFailed(s, d, unix.Errno(-c.Res), dr) {
				continue // continue_on_error: counted, and the job goes on
			}
			if l.filledUp(s, d, c.Res) {
				continue // fill_device: the end, not an error
			}
			if l.err == nil {
				l.err = ioError(l.j, l.r.target, d, l.offOf[s], l.lenOf[s], unix.Errno(-c.Res))
			}
			continue
		}
		if d <= Write {
			l.res.Moved[d] += uint64(c.Res) // the disk's reads and writes; trims are neither
		}
		if l.vfy != nil {
			l.vfy.completed(l, s, d, c.Res)
		}
		if l.lt != nil || l.ssp != nil {
			l.measuredHook(s, c.Res, tc)
		}
		if l.measuring && l.created[s] >= l.measureStart {
			dr := &l.cur[d]
			dr.IOs++
			dr.Bytes += uint64(c.Res)
			if uint32(c.Res) != l.lenOf[s] {
				dr.Short++
			}
			clat := uint64(tc - l.issued[s])
			if l.st.clat {
				dr.Clat.Add(clat)
			}
			l.dist.MarkLatency(clat)
			if l.st.lat {
				dr.Lat.Add(uint64(tc - l.created[s]))
			}
			if l.prio.cp != nil {
				l.prioDone(s, d, clat, tc)
			}
			l.qosCompleted(dr, s, d, tc, int64(clat))
			l.logDone(s, c.Res, clat, tc)
			if l.blk != nil {
				l.blk.add(ioRecord{start: l.created[s], reap: tc, off: l.offOf[s], len: l.lenOf[s], file: l.fileOf[s], dir: d})
			}
		}
	}
	l.checkedOut -= n
	l.live.Add(uint64(n))
	tc = last
	if l.measuring && tc >= l.nextSample {
		s := Sample{At: time.Duration(tc - l.measureStart), Lat: l.qosInterval()}
		s.IOs, s.Bytes = l.cur.Counts()
		l.res.Samples = append(l.res.Samples, s)
		l.nextSample += l.interval
		if l.nextSample <= tc {
			l.nextSample = tc + l.interval
		}
	}
}
