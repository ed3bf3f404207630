package bench

import (
	"fmt"
	"math"
	"math/bits"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"iolab/bench/randgen"
)

// pacer is a job's rate control and think time, run from its I/O loop on
// the job's thread: fio 3.33's rate_ddir and io_u_quiesce (io_u.c),
// usec_for_io, handle_thinktime and check_min_rate (backend.c), usec_sleep
// and usec_spin (time.c). A job without rate, rate_iops, their minimums or
// thinktime has none, and its loop pays nothing for it.
//
// Times are the loop's (nanoseconds since it started). fio counts a rate
// from its epoch, which the end of the ramp moves; so does restart.
type pacer struct {
	l    *loop
	stop *atomic.Bool

	// Rate (fio's rate_bps, rate_next_io_time, rate_io_issue_bytes,
	// last_usec), per direction.
	bps      [2]uint64
	poisson  bool
	meanGap  [2]int64            // poisson: fio's 1000000/iops µs, in ns
	rnd      [2]randgen.SplitMix // poisson: fio's poisson_state
	mixed    bool                // both directions take a share: a rate may switch them
	epoch    int64
	deadline int64 // epoch + runtime; -1 without a runtime
	runtime  int64
	issued   [2]uint64 // bytes queued since epoch
	next     [2]int64  // when the next I/O of a direction is due
	gapSum   [2]int64  // poisson: the sum of the gaps drawn since epoch
	// intended is, per slot, when its I/O counts as started for the
	// latency from intended starts: its start, less the time the engine
	// held the job past the I/O's due time (lat_intended.go).
	intended []int64
	// holds are the job's engine calls, for intended; nil without a rate.
	holds   *holds
	expired bool // a rate wait ran into the runtime or a stop

	// Think time; the block counter never restarts (fio 3.35 and later
	// rebase it at the end of the ramp; 3.33 has a burst there).
	think, spin int64
	thinkEvery  uint64
	onIssue     bool   // thinktime_blocks_type=issue: count issued I/Os, not completed ones
	issues      uint64 // I/Os queued since the loop started
	lastThink   uint64

	// Minimum rates, per direction (fio's ratemin, rate_iops_min,
	// last_rate_check_*).
	minBytes  [2]uint64
	minIOs    [2]uint64
	cycle     int64 // ms
	lastCheck [2]int64
	lastBytes [2]uint64
	lastIOs   [2]uint64
	checkMin  bool

	gran int64 // nanosleep's granularity (fio's ns_granularity)
}

// newPacer sets up j's pacing for loop l, or returns nil when j has none.
// It runs before the job starts, on its thread.
func newPacer(l *loop, j *Job, stop *atomic.Bool, depth int) *pacer {
	if !j.Rated() && j.Thinktime <= 0 {
		return nil
	}
	p := &pacer{l: l, stop: stop, think: int64(j.Thinktime), spin: int64(min(j.ThinktimeSpin, j.Thinktime)),
		thinkEvery: uint64(max(j.ThinktimeBlocks, 0)), onIssue: j.ThinktimeBlocksType == "issue",
		poisson: j.RateProcess == RatePoisson, mixed: j.Reads() && j.Writes(), cycle: j.RateCycle.Milliseconds(),
		intended: make([]int64, depth)}
	p.runtime = int64(j.Runtime)
	seed := j.RandSeed + uint64(l.r.index)*0x9e3779b97f4a7c15
	if !j.RandRepeat {
		seed = uint64(time.Now().UnixNano())
	}
	for d := range 2 {
		// fio's setup_rate: rate in bytes/s, or rate_iops × the block size.
		p.bps[d] = uint64(j.Rate[d])
		if p.bps[d] == 0 {
			p.bps[d] = uint64(j.RateIOPS[d]) * uint64(j.BS)
		}
		if iops := p.bps[d] / uint64(j.BS); p.poisson && iops > 0 {
			p.meanGap[d] = int64(1000000/iops) * 1000
		}
		p.rnd[d] = randgen.NewSplitMix(seed ^ 0x7a1 ^ uint64(d))
		p.minBytes[d], p.minIOs[d] = uint64(j.RateMin[d]), uint64(j.RateIOPSMin[d])
		p.checkMin = p.checkMin || p.minBytes[d] > 0 || p.minIOs[d] > 0
	}
	if p.bps[Read] > 0 || p.bps[Write] > 0 {
		p.holds = newHolds()
	}
	p.gran = l.r.sleepGran
	// The rate counts from the loop's start, as fio's from its epoch;
	// during a ramp, fio holds rate waits to the runtime counted from
	// there too.
	p.restart(0)
	return p
}

// paced reports whether the generator must ask rateDir before each I/O.
func (p *pacer) paced() bool { return p.bps[Read] > 0 || p.bps[Write] > 0 || p.checkMin }

// sleepGranularity measures how long the shortest nanosleep takes, as
// fio's fio_time_init does: the longest of ten sleeps of 1 µs. Shorter
// waits spin instead of sleeping. A job that paces measures it as it is
// set up (openJob).
func sleepGranularity() int64 {
	var g int64
	req := unix.Timespec{Nsec: 1000}
	for range 10 {
		t0 := time.Now()
		nanosleep(&req)
		g = max(g, int64(time.Since(t0)))
	}
	return g
}

// restart is the end of the ramp: fio's reset_all_stats starts a new
// epoch, and the rate and its minimum count from there.
func (p *pacer) restart(t int64) {
	p.epoch = t
	p.deadline = -1
	if p.runtime > 0 {
		p.deadline = t + p.runtime
	}
	p.issued, p.gapSum = [2]uint64{}, [2]int64{}
	p.next = [2]int64{t, t}
	p.lastCheck, p.lastBytes, p.lastIOs = [2]int64{}, [2]uint64{}, [2]uint64{}
}

// rateDir is fio's rate_ddir, asked by the generator once it has picked
// op's direction: an I/O whose direction is due goes; otherwise the other
// direction goes if it is due, or the job drains what is in flight and
// sleeps until the earlier of the two is. ok is false when the wait ran
// into the runtime (or the job was stopped): the job ends there.
func (p *pacer) rateDir(op ioOp) (ioOp, bool) {
	if op > opWrite {
		return op, true // fio paces reads and writes only
	}
	now := p.l.tick
	d := op
	if p.next[d] <= now {
		return op, true
	}
	wait := p.next[d] - now
	if o := d ^ 1; p.mixed {
		if p.next[o] <= now {
			return o, true
		}
		if p.next[o] < p.next[d] {
			wait, d = p.next[o]-now, o
		}
	}
	p.quiesce(true)
	if p.l.err != nil {
		return op, false
	}
	if p.deadline >= 0 && now+wait > p.deadline {
		if now > p.deadline {
			p.expired = true
			return op, false
		}
		wait = p.deadline - now
	}
	p.sleep(wait)
	now = p.l.clock()
	if (p.deadline >= 0 && now > p.deadline) || p.stop.Load() {
		p.expired = true
		return op, false
	}
	return d, true
}

// queued books an I/O of n bytes just queued on slot (fio's
// rate_io_issue_bytes and usec_for_io): it sets when the direction's next
// I/O is due, and keeps when this one was.
func (p *pacer) queued(slot int32, op ioOp, n uint32, t int64) {
	p.intended[slot] = t
	if op > opTrim {
		return
	}
	p.issues++
	d := op
	if d == opTrim || p.bps[d] == 0 { // trims are never rated (finishTrims)
		return
	}
	if due := p.next[d]; t > due {
		held := p.holds.heldSince(due)
		if held < 0 || held > t-due {
			held = t - due
		}
		p.intended[slot] = t - held
	}
	p.issued[d] += uint64(n)
	if p.poisson {
		// Exponential gaps: -ln(u) for u in (0, 1] has mean 1. fio draws
		// the gap in whole µs of its integer mean.
		u := (float64(p.rnd[d].Next()>>11) + 1) / (1 << 53)
		p.gapSum[d] += int64(float64(p.meanGap[d]/1000)*-math.Log(u)) * 1000
		p.next[d] = p.epoch + p.gapSum[d]
		return
	}
	p.next[d] = p.epoch + bytesTime(p.issued[d], p.bps[d])
}

// bytesTime is how long bytes take at bps bytes/s, in ns, without
// overflow.
func bytesTime(bytes, bps uint64) int64 {
	secs, rem := bytes/bps, bytes%bps
	hi, lo := bits.Mul64(rem, uint64(time.Second))
	frac, _ := bits.Div64(hi, lo, bps)
	return int64(secs)*int64(time.Second) + int64(frac)
}

// after runs at the end of each iteration that issued op, as fio's do_io
// does: think time after reads and writes, then the minimum rates (once
// the ramp is over).
func (p *pacer) after(op ioOp) {
	if p.think > 0 && op <= opTrim {
		p.thinkTime()
	}
	if p.checkMin && p.l.measuring {
		if err := p.checkMinRate(p.l.tick); err != nil && p.l.err == nil {
			p.l.err = err
		}
	}
}

// thinkTime is fio 3.33's handle_thinktime: after every thinktime_blocks
// I/Os, drain what is in flight, spin for thinktime_spin and sleep for
// the rest of thinktime.
func (p *pacer) thinkTime() {
	l := p.l
	b, due := p.thinkDue()
	if !due {
		return
	}
	p.quiesce(false)
	var total int64
	if p.spin > 0 {
		total = p.spinFor(p.spin)
	}
	// fio 3.33 sleeps for years when spinning overran thinktime (fixed in
	// 3.36); iolab does not sleep then.
	if left := p.think - total; left > 0 {
		p.sleep(left)
	}
	if p.checkMin {
		l.clock()
	}
	p.lastThink = b
}

// thinkDue counts the I/Os for thinktime_blocks (fio's
// thinktime_blocks_counter) and says whether a think time is due.
func (p *pacer) thinkDue() (uint64, bool) {
	b := p.issues
	if !p.onIssue {
		b -= uint64(p.l.checkedOut)
	}
	return b, b >= p.lastThink+p.thinkEvery
}

// quiesce is fio's io_u_quiesce: submit what is queued, then reap one at a
// time until nothing is in flight. picking is true while an I/O is being
// picked: fio has it checked out already, which bounds its reaps.
//
// Offloaded, fio quiesces nothing: rate_ddir quiesces only inline, and
// the job's thread has nothing in flight of its own (its workers do), so
// a wait for the rate or think time leaves the I/Os in flight on their
// own; the loop takes back what they finished without waiting.
func (p *pacer) quiesce(picking bool) {
	l := p.l
	if l.off != nil {
		if l.checkedOut > 0 {
			l.reap(0, false)
		}
		return
	}
	if l.pending > 0 {
		l.commit()
		l.pending = 0
	}
	extra := 0
	if picking {
		extra = 1
	}
	l.checkedOut += extra
	for l.err == nil && l.checkedOut-extra-len(l.queued) > 0 {
		before := l.checkedOut
		l.reap(1, true)
		if l.checkedOut == before {
			break
		}
	}
	l.checkedOut -= extra
}

// sleep is fio's usec_sleep: nanosleep for d less the granularity, in
// pieces of at most a little over a second so a stop is noticed, until d
// has passed; what is left below the granularity is spun. It returns the
// time it took.
func (p *pacer) sleep(d int64) int64 {
	var total int64
	for {
		if d < p.gran {
			return total + p.spinFor(d)
		}
		ts := d - p.gran
		req := unix.Timespec{Sec: ts / int64(time.Second), Nsec: ts % int64(time.Second)}
		req.Sec = min(req.Sec, 1)
		t0 := p.l.clock()
		e := nanosleep(&req)
		slept := p.l.clock() - t0
		total += slept
		// A signal (the Go runtime's preemption SIGURG among them) cuts a
		// sleep short: sleep again for what is left, or the I/O would go
		// before it is due.
		if (e != 0 && e != unix.EINTR) || slept >= d || p.stop.Load() {
			return total
		}
		d -= slept
	}
}

// nanosleep sleeps as fio's nanosleep(3) does, with clock_nanosleep on
// CLOCK_REALTIME. A short sleep is a raw system call, like the engines'
// (engine.go): the thread keeps its P and wakes as a C thread would, on
// time. A long one lets the runtime have the P, so a stop-the-world
// elsewhere in the program never waits for it.
func nanosleep(req *unix.Timespec) unix.Errno {
	call := unix.RawSyscall6
	if req.Sec > 0 || req.Nsec >= 10_000_000 {
		call = unix.Syscall6
	}
	_, _, e := call(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_REALTIME, 0, uintptr(unsafe.Pointer(req)), 0, 0, 0)
	return e
}

// spinFor is fio's usec_spin: busy-wait for d, returning how long it took.
func (p *pacer) spinFor(d int64) int64 {
	t0 := p.l.clock()
	for {
		if t := p.l.clock() - t0; t >= d {
			return t
		}
	}
}

// checkMinRate is fio's check_min_rate for each direction that has
// completed something: after 2 s from the epoch, once per rate_cycle, the
// rate since the last check must reach rate_min (or rate_iops_min).
func (p *pacer) checkMinRate(now int64) error {
	for d := range 2 {
		c := &p.l.cur[d]
		if c.Bytes == 0 || (p.minBytes[d] == 0 && p.minIOs[d] == 0) || now-p.epoch < int64(2*time.Second) {
			continue
		}
		if p.lastBytes[d] != 0 || p.lastIOs[d] != 0 {
			spent := uint64((now - p.lastCheck[d]) / int64(time.Millisecond))
			if spent < uint64(p.cycle) || spent == 0 {
				continue
			}
			dir := "read"
			if d == Write {
				dir = "write"
			}
			if p.minBytes[d] > 0 {
				if got := (c.Bytes - p.lastBytes[d]) * 1000 / spent; got < p.minBytes[d] {
					return fmt.Errorf("job %s: rate_min=%dB/s not met, got %dB/s (%s, over %d ms)", p.l.j.Name, p.minBytes[d], got, dir, spent)
				}
			} else if got := (c.IOs - p.lastIOs[d]) * 1000 / spent; got < p.minIOs[d] {
				return fmt.Errorf("job %s: rate_iops_min=%d not met, got %d IOPS (%s, over %d ms)", p.l.j.Name, p.minIOs[d], got, dir, spent)
			}
		}
		p.lastBytes[d], p.lastIOs[d], p.lastCheck[d] = c.Bytes, c.IOs, now
	}
	return nil
}
