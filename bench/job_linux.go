package bench

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"iolab/bench/system"
	"iolab/bench/units"

	"golang.org/x/sys/unix"
)

// jobRun is one job set up on its own locked OS thread and ready to start.
type jobRun struct {
	j      *Job
	index  int // clone index, for distinct random sequences
	fd     int
	eng    engine
	info   engineInfo
	bufs   *buffers
	depth  int
	target system.Target

	regionStart int64
	blocks      uint64 // region size in blocks
	total       uint64 // bytes the job moves unless time_based
}

// openJob runs on the job's locked thread: io_uring's SINGLE_ISSUER and
// DEFER_TASKRUN tie a ring to the thread that created it.
func openJob(sys system.FS, j *Job, index int, t system.Target) (*jobRun, error) {
	r := &jobRun{j: j, index: index, target: t, fd: -1}
	if err := setAffinity(j.CPUsAllowed); err != nil {
		return nil, fmt.Errorf("job %s: cpus_allowed: %w", j.Name, err)
	}
	size, err := regionSize(j, t)
	if err != nil {
		return nil, err
	}
	r.regionStart = j.Offset
	r.blocks = uint64(size / j.BS)
	r.total = r.blocks * uint64(j.BS)
	r.depth = j.IODepth
	if j.Engine().Has(SyncIO) {
		r.depth = 1 // fio caps synchronous engines at depth 1 too
	}
	seed := j.RandSeed + uint64(index)
	if !j.RandRepeat {
		seed = uint64(time.Now().UnixNano())
	}
	if !j.Diskless() {
		flags := unix.O_CLOEXEC | unix.O_RDONLY
		if j.Writes() {
			flags = unix.O_CLOEXEC | unix.O_RDWR
		}
		if j.Direct {
			flags |= unix.O_DIRECT
		}
		fd, err := unix.Open(t.Resolved, flags, 0)
		if err != nil {
			return nil, openError(j, t, err)
		}
		r.fd = fd
		if err := system.SameTarget(fd, t); err != nil {
			r.close()
			return nil, fmt.Errorf("job %s: %w", j.Name, err)
		}
	}
	r.bufs, err = newBuffers(int(j.BS), r.depth, seed)
	if err != nil {
		r.close()
		return nil, err
	}
	r.eng, r.info, err = newEngine(j, r.fd, r.bufs, r.depth)
	if err != nil {
		r.close()
		return nil, fmt.Errorf("job %s: %w", j.Name, err)
	}
	return r, nil
}

// newEngine sets up j's engine on fd with one buffer per slot.
func newEngine(j *Job, fd int, bufs *buffers, depth int) (engine, engineInfo, error) {
	e := j.Engine()
	if e == nil {
		return nil, engineInfo{}, fmt.Errorf("ioengine %q is not supported (use one of %s)", j.IOEngine, strings.Join(EngineNames(), ", "))
	}
	eng, info, err := e.open(j, fd, bufs, depth)
	info.sync = e.Has(SyncIO)
	return eng, info, err
}

func openError(j *Job, t system.Target, err error) error {
	switch {
	case errors.Is(err, unix.EINVAL) && j.Direct:
		return fmt.Errorf("%s: the filesystem refuses O_DIRECT (EINVAL); use --direct=0 or put the file on a filesystem that supports direct I/O", t.Path)
	case errors.Is(err, unix.ENOENT):
		return fmt.Errorf("%s: no such file or device", t.Path)
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return fmt.Errorf("%s: permission denied; run as a user that may open it (for block devices usually root or the disk group)", t.Path)
	case errors.Is(err, unix.EBUSY):
		return fmt.Errorf("%s: device is busy (EBUSY): something holds it exclusively", t.Path)
	}
	return fmt.Errorf("open %s: %w", t.Path, err)
}

// regionSize returns the bytes of the target the job covers: size, or the
// rest of the target after offset.
func regionSize(j *Job, t system.Target) (int64, error) {
	if j.Diskless() {
		if j.Size <= 0 {
			return 0, fmt.Errorf("job %s: ioengine=%s needs --size", j.Name, j.IOEngine)
		}
		return j.Size - j.Size%j.BS, nil
	}
	if j.Offset >= t.Size {
		return 0, fmt.Errorf("job %s: offset %s is at or past the end of %s (%s); lower offset, or use a larger target",
			j.Name, units.Bytes(float64(j.Offset)), t.Path, units.Bytes(float64(t.Size)))
	}
	size := j.Size
	if size == 0 {
		size = t.Size - j.Offset
	}
	if j.Offset+size > t.Size {
		return 0, fmt.Errorf("job %s: %s is %s but the job needs %s (offset %s + size %s); lower size or offset, or use a larger target",
			j.Name, t.Path, units.Bytes(float64(t.Size)), units.Bytes(float64(j.Offset+size)), units.Bytes(float64(j.Offset)), units.Bytes(float64(size)))
	}
	if size < j.BS {
		return 0, fmt.Errorf("job %s: the region (%s) is smaller than one block (bs=%s)", j.Name, units.Bytes(float64(size)), units.Bytes(float64(j.BS)))
	}
	return size - size%j.BS, nil
}

func setAffinity(cpus []int) error {
	if len(cpus) == 0 {
		return nil
	}
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	return unix.SchedSetaffinity(0, &set)
}

func (r *jobRun) close() {
	if r.eng != nil {
		r.eng.close()
		r.eng = nil
	}
	if r.bufs != nil {
		r.bufs.free()
		r.bufs = nil
	}
	if r.fd >= 0 {
		unix.Close(r.fd)
		r.fd = -1
	}
}

// threadUsage is the calling thread's rusage (fio reports per-thread CPU).
func threadUsage() unix.Rusage {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_THREAD, &ru)
	return ru
}

func tvDuration(tv unix.Timeval) time.Duration {
	return time.Duration(tv.Sec)*time.Second + time.Duration(tv.Usec)*time.Microsecond
}

// run is the job's I/O loop. Nothing in it allocates per I/O: slots,
// timestamps and completions live in slices sized once, and the engines
// write into mmap'd memory.
func (r *jobRun) run(stop *atomic.Bool, interval time.Duration, live *atomic.Uint64) JobResult {
	j := r.j
	res := JobResult{Name: j.Name, Job: *j, Interval: interval, Jobs: 1}
	depth := r.depth
	created := make([]int64, depth)
	issued := make([]int64, depth)
	dirOf := make([]uint8, depth)
	offOf := make([]int64, depth)
	free := make([]int32, depth)
	for i := range free {
		free[i] = int32(depth - 1 - i)
	}
	batch := make([]int32, depth)
	maxComplete := depth
	if j.IODepthBatchCompleteMax > 0 {
		maxComplete = min(j.IODepthBatchCompleteMax, depth)
	}
	comps := make([]completion, depth)
	res.Samples = make([]Sample, 0, int((j.Runtime+j.RampTime)/interval)+2)

	seed := j.RandSeed + uint64(r.index)*0x9e3779b97f4a7c15
	if !j.RandRepeat {
		seed = uint64(time.Now().UnixNano())
	}
	dirRand := newRand(seed ^ 0xd1)
	offRand := newRand(seed ^ 0x0ff)
	perm := newBlockPerm(r.blocks, seed)
	var seqNext [2]uint64 // next sequential block per direction
	random := j.Random()
	reads, writes := j.Reads(), j.Writes()
	mix := uint64(j.RWMixRead)
	bs := j.BS
	var writeSeq uint64

	completeMin := max(j.IODepthBatchCompleteMin, 1)

	var (
		cur      [2]DirResult
		issuedB  uint64
		inflight int
		err      error
	)
	ramp := int64(j.RampTime)
	measureStart := int64(0)
	measuring := ramp == 0
	if measuring {
		res.Start = time.Now()
	}
	var end int64 = -1
	if j.Runtime > 0 {
		end = ramp + int64(j.Runtime)
	}
	nextSample := int64(interval)
	ru0 := threadUsage()
	base := time.Now()
	now := func() int64 { return int64(time.Since(base)) }

	startMeasuring := func(t int64) {
		cur = [2]DirResult{}
		measureStart = t
		measuring = true
		res.Start = time.Now()
		nextSample = t + int64(interval)
		ru0 = threadUsage()
	}
	stopAt := int64(0)
	t := int64(0)
	for {
		t = now()
		if !measuring && t >= ramp {
			startMeasuring(t)
		}
		if (end >= 0 && t >= end) || stop.Load() {
			break
		}
		sizeDone := !j.TimeBased && issuedB >= r.total
		if sizeDone && inflight == 0 {
			break
		}
		// Fill every free slot, up to iodepth_batch_submit at a time when
		// the ring is not yet full.
		queued := 0
		for inflight+queued < depth && !(!j.TimeBased && issuedB >= r.total) {
			slot := free[len(free)-1]
			free = free[:len(free)-1]
			d := Read
			if !reads || (writes && dirRand.below(100) >= mix) {
				d = Write
			}
			var blk uint64
			switch {
			case !random:
				blk = seqNext[d]
				seqNext[d]++
				if seqNext[d] >= r.blocks {
					seqNext[d] = 0
				}
			case j.NoRandomMap:
				blk = offRand.below(r.blocks)
			default:
				blk = perm.next()
			}
			off := r.regionStart + int64(blk)*bs
			if d == Write {
				writeSeq++
				r.bufs.stamp(int(slot), off, writeSeq)
			}
			r.eng.prep(int(slot), d == Write, off)
			created[slot] = t
			dirOf[slot] = uint8(d)
			offOf[slot] = off
			batch[queued] = slot
			queued++
			issuedB += uint64(bs)
		}
		// Wait only when the ring is full (or nothing is left to queue).
		need := 0
		if inflight+queued >= depth || (queued == 0 && inflight > 0) {
			need = min(completeMin, inflight+queued)
		}
		if queued > 0 {
			// Submit and wait in one call when completions of I/Os already
			// in flight can satisfy the wait; otherwise submit alone, so the
			// new I/Os' submission ends where fio's does: when the call
			// returns (slat before, clat after). A call that also waited
			// returns late, so its I/Os are timed from their publication,
			// just before it, as under SQPOLL.
			w := 0
			if need > 0 && inflight >= need && !r.info.sync {
				w = need
			}
			tp := t
			if w > 0 {
				tp = now()
			}
			if err = r.eng.submit(w); err != nil {
				break
			}
			switch {
			case r.info.sync || r.info.published:
				for _, s := range batch[:queued] {
					issued[s] = t
				}
			default:
				if w == 0 {
					tp = now()
				}
				for _, s := range batch[:queued] {
					issued[s] = tp
					if measuring {
						cur[dirOf[s]].Slat.Add(uint64(tp - created[s]))
					}
				}
			}
			inflight += queued
		}
		n := r.eng.reap(comps[:maxComplete])
		if n == 0 && need > 0 {
			n, err = r.eng.wait(need, comps[:maxComplete])
			if err != nil {
				break
			}
		}
		if n == 0 {
			continue
		}
		tc := now()
		for _, c := range comps[:n] {
			s := c.slot
			d := dirOf[s]
			if c.res < 0 {
				err = ioError(j, r.target, d, offOf[s], unix.Errno(-c.res))
				break
			}
			res.Moved[d] += uint64(c.res)
			if measuring && created[s] >= measureStart {
				dr := &cur[d]
				dr.IOs++
				dr.Bytes += uint64(c.res)
				if int64(c.res) != bs {
					dr.Short++
				}
				dr.Clat.Add(uint64(tc - issued[s]))
				dr.Lat.Add(uint64(tc - created[s]))
			}
			free = append(free, s)
		}
		inflight -= n
		live.Add(uint64(n))
		if err != nil {
			break
		}
		if measuring && tc >= nextSample {
			res.Samples = append(res.Samples, Sample{
				At:    time.Duration(tc - measureStart),
				IOs:   [2]uint64{cur[Read].IOs, cur[Write].IOs},
				Bytes: [2]uint64{cur[Read].Bytes, cur[Write].Bytes},
			})
			nextSample += int64(interval)
			if nextSample <= tc {
				nextSample = tc + int64(interval)
			}
		}
	}
	stopAt = now()
	ru1 := threadUsage()
	// The last interval, cut short by the end of the window, is kept when
	// it is at least half an interval long: a job shorter than one
	// interval still has a point to draw, and rates are per its length.
	if measuring && stopAt-(nextSample-int64(interval)) >= int64(interval)/2 {
		res.Samples = append(res.Samples, Sample{
			At:    time.Duration(stopAt - measureStart),
			IOs:   [2]uint64{cur[Read].IOs, cur[Write].IOs},
			Bytes: [2]uint64{cur[Read].Bytes, cur[Write].Bytes},
		})
	}
	// Whatever is still in flight must land before its buffer goes away;
	// it completed after the window, so it is not counted.
	for inflight > 0 {
		n, werr := r.eng.wait(1, comps)
		if werr != nil {
			if err == nil {
				err = werr
			}
			break
		}
		for _, c := range comps[:n] {
			if c.res > 0 {
				res.Moved[dirOf[c.slot]] += uint64(c.res)
			}
		}
		inflight -= n
	}
	if !measuring {
		measureStart = stopAt
		res.Start = time.Now()
	}
	res.Runtime = time.Duration(stopAt - measureStart)
	res.Dirs = cur
	res.UsrCPU = tvDuration(ru1.Utime) - tvDuration(ru0.Utime)
	res.SysCPU = tvDuration(ru1.Stime) - tvDuration(ru0.Stime)
	res.Ctx = uint64((ru1.Nvcsw - ru0.Nvcsw) + (ru1.Nivcsw - ru0.Nivcsw))
	res.MinFlt = uint64(ru1.Minflt - ru0.Minflt)
	res.MajFlt = uint64(ru1.Majflt - ru0.Majflt)
	if err != nil {
		res.Error = err.Error()
	}
	return res
}

func ioError(j *Job, t system.Target, d uint8, off int64, errno unix.Errno) error {
	op := "read"
	if d == Write {
		op = "write"
	}
	if errno == unix.EOPNOTSUPP && j.Hipri {
		return fmt.Errorf("job %s: %s at offset %d: %v: polled I/O (hipri) is not supported here; %s has no poll queues (/sys/block/%s/queue/io_poll); drop hipri, or enable poll queues (NVMe: nvme.poll_queues=N)", j.Name, op, off, errno, t.Path, t.Disk)
	}
	return fmt.Errorf("job %s: %s of %d bytes at offset %d on %s: %v", j.Name, op, j.BS, off, t.Path, errno)
}

// lockThread pins the calling goroutine to its OS thread for the rest of
// its life: rings, AIO contexts and CPU affinity belong to that thread, and
// the thread exits with the goroutine instead of returning to the pool with
// its affinity changed.
func lockThread() { runtime.LockOSThread() }
