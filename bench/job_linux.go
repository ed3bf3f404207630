package bench

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"iolab/bench/engine"
	"iolab/bench/guard"
	"iolab/bench/joblog"
	"iolab/bench/system"
)

// jobRun is one job set up on its own locked OS thread and ready to start.
type jobRun struct {
	j      *Job
	index  int // place among the run's jobs (fio's thread_number - 1), for their seeds
	files  []jobFile
	layout jobLayout
	guard  *guard.Guard // opened files, removes them (unlink)
	eng    engine.IO
	info   engine.Info
	bufs   *buffers
	depth  int
	target system.Target // the first file's, for messages

	sleepGran int64 // a pacing job's nanosleep granularity (pacer_linux.go)

	ss   *steadyProbe   // steady state's view of the job (steady_linux.go); nil without ss_dur
	logs *joblog.Writer // its log files; nil without them
	flow *flowShare     // its part in its flow (flow.go); nil in none
	// stateDir is where its verify state and dumps go (Runner.StateDir).
	stateDir string
	// notice tells the user what the job reports as it goes (error_dump;
	// Runner.Notice); nil: nobody listens.
	notice func(msg string)
	// status is where its thread answers --status-interval's asks
	// (status.go); nil: nobody asks.
	status *jobStatus
	// blk takes its measured I/Os for --trace-block's join
	// (blocktrace_linux.go); nil untraced.
	blk *jobTrace
	// clock is the run's clocksource option (jobClockFor).
	clock string
}

// jobFile is one file (or device) a job does I/O on.
type jobFile struct {
	fd     int // -1 for a diskless engine
	path   string
	target system.Target
	id     guard.Identity // what the guard opened
}

// fds are the job's files' descriptors, in order.
func (r *jobRun) fds() []int {
	out := make([]int, len(r.files))
	for i, f := range r.files {
		out[i] = f.fd
	}
	return out
}

// openJob runs on the job's locked thread: io_uring's SINGLE_ISSUER and
// DEFER_TASKRUN tie a ring to the thread that created it. It opens each of
// the job's files through the guard that checked them, only if each is
// still what Prepare checked (guard.Open), and drops its
// cached pages (invalidate), as fio's td_io_open_file does. index is the
// job's place in the run, from 0 (fio's thread_number - 1); seeds are the
// seeds of the buffers of the run's jobs, by index (bufferSeeds), which a
// dedupe working set shared among them reads; nil: the job's own alone.
func openJob(sys system.FS, j *Job, index int, jf JobFiles, seeds []uint64) (*jobRun, error) {
	r := &jobRun{j: j, index: index, layout: jf.layout, guard: jf.opener()}
	cpus, mem, err := numaPlacement(sys, j)
	if err != nil {
		return nil, err
	}
	if cpus != nil {
		// fio sets numa_cpu_nodes' CPUs after cpus_allowed's, in place
		// of them (thread_main).
		if err := setAffinity(cpus); err != nil {
			return nil, fmt.Errorf("job %s: numa_cpu_nodes: CPUs %v: %w", j.Name, cpus, err)
		}
	} else if err := setAffinity(jobCPUs(j, index)); err != nil {
		return nil, fmt.Errorf("job %s: cpus_allowed: %w", j.Name, err)
	}
	if err := setThreadIOPrio(j); err != nil {
		return nil, fmt.Errorf("job %s: %w", j.Name, err)
	}
	r.depth = j.Engine().Depth(j.IODepth)
	if j.Offloaded() {
		// fio's io_us: iodepth of them whatever the engine, each handed to
		// a submit worker (offload_linux.go).
		r.depth = j.IODepth
	}
	if j.Rated() || j.Thinktime > 0 {
		r.sleepGran = sleepGranularity()
	}
	if j.Diskless() {
		r.files = append(r.files, jobFile{fd: -1})
	}
	for i, reg := range jf.layout.Files {
		if j.Diskless() {
			break
		}
		t := jf.Targets[i]
		f := jobFile{fd: -1, path: reg.Path, target: t}
		flags := unix.O_CLOEXEC | unix.O_RDONLY
		if j.Modifies() {
			flags = unix.O_CLOEXEC | unix.O_RDWR
		}
		// fio opens a trimming job's files without O_DIRECT or its sync
		// flags (file_open's skip_flags), trimwrite's writes too.
		if j.Direct && !j.Trims() {
			flags |= unix.O_DIRECT
		}
		if !j.Trims() {
			flags |= j.openSyncFlags()
		}
		// fio opens what is not a regular file with O_NOATIME, and again
		// without it when that is not allowed (generic_open_file): a read
		// of a device then does not check its inode's atime each time.
		if t.IsBlock {
			flags |= unix.O_NOATIME
		}
		var fd int
		if t.Dev == "" && !t.IsBlock {
			// create_on_open's file, not there at Prepare (it has no
			// identity yet), is made now, as fio opens it with O_CREAT,
			// where the guard may make it.
			fd, f.id, err = jf.opener().Create(reg.Path, flags, 0o644)
		} else {
			f.id = identityOf(t)
			fd, err = jf.opener().Open(reg.Path, f.id, flags)
			if err == unix.EPERM && flags&unix.O_NOATIME != 0 {
				fd, err = jf.opener().Open(reg.Path, f.id, flags&^unix.O_NOATIME)
			}
		}
		if err != nil {
			r.close()
			return nil, openError(j, system.Target{Path: reg.Path}, err)
		}
		f.fd = fd
		r.files = append(r.files, f)
		if j.Invalidate {
			invalidate(fd, t, reg)
		}
		if i == 0 {
			r.target = t
		}
	}
	if seeds == nil {
		seeds = make([]uint64, index+1)
		seeds[index] = bufferSeed(j, index)
	}
	r.bufs, err = newJobBuffers(j, r.depth, index, seeds, mem)
	if err != nil {
		r.close()
		return nil, err
	}
	r.eng, r.info, err = newEngine(j, r.fds(), r.bufs, r.depth)
	if err != nil {
		r.close()
		return nil, fmt.Errorf("job %s: %w", j.Name, err)
	}
	return r, nil
}

// bufferSeeds are the seeds of the buffers of cfg's jobs, in the run's
// order (a job's index): every job's is known before any starts, as
// dedupe_global's working set takes blocks of the others' data.
func bufferSeeds(cfg *Config) []uint64 {
	var out []uint64
	for _, g := range cfg.Groups {
		for i := range g.Jobs {
			out = append(out, bufferSeed(&g.Jobs[i], len(out)))
		}
	}
	return out
}

// bufferSeed is the seed of the buffers of j at index among the run's
// jobs: fixed with randrepeat, else new every run.
func bufferSeed(j *Job, index int) uint64 {
	if !j.RandRepeat {
		return uint64(time.Now().UnixNano()) + uint64(index)
	}
	return j.RandSeed + uint64(index)
}

// newEngine sets up j's engine on its files' descriptors fds with one
// buffer per slot of depth.
func newEngine(j *Job, fds []int, bufs *buffers, depth int) (engine.IO, engine.Info, error) {
	e := j.Engine()
	if e == nil {
		return nil, engine.Info{}, fmt.Errorf("ioengine %q is not supported (use one of %s)", j.IOEngine, strings.Join(EngineNames(), ", "))
	}
	if j.Offloaded() {
		o, info, err := newOffload(j, e, fds, &bufs.Buffers, depth)
		if err != nil {
			return nil, info, err
		}
		return o, info, nil
	}
	return e.Open(&engine.Setup{Params: j.EngineParams(), Files: fds, Bufs: &bufs.Buffers, Depth: depth,
		IODepth: j.IODepth, BS: j.BS, IOPrio: j.JobIOPrio(), RandSeed: j.RandSeed})
}

func openError(j *Job, t system.Target, err error) error {
	var refused *guard.RefusedError
	switch {
	case errors.As(err, &refused), errors.Is(err, guard.ErrChanged):
		return fmt.Errorf("job %s: %w", j.Name, err)
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
	if r.logs != nil {
		r.logs.Close() // a job that never ran: its files, still empty
		r.logs = nil
	}
	if r.eng != nil {
		r.eng.Close()
		r.eng = nil
	}
	if r.bufs != nil {
		r.bufs.free()
		r.bufs = nil
	}
	for i := range r.files {
		if r.files[i].fd >= 0 {
			unix.Close(r.files[i].fd)
			r.files[i].fd = -1
		}
	}
	unlinkFiles(r.guard, r.j, r.files)
	r.files = nil
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

func ioError(j *Job, t system.Target, d uint8, off int64, n uint32, errno unix.Errno) error {
	op := dirName(d)
	if d == Trim && (errno == unix.EOPNOTSUPP || errno == unix.ENOTTY) {
		return fmt.Errorf("job %s: trim of %d bytes at offset %d on %s: %w: the device (or filesystem) does not discard; see /sys/block/%s/queue/discard_max_bytes", j.Name, n, off, t.Path, errno, t.Disk)
	}
	if errno == unix.EOPNOTSUPP && j.Hipri {
		return fmt.Errorf("job %s: %s at offset %d: %w: polled I/O (hipri) is not supported here; %s has no poll queues (/sys/block/%s/queue/io_poll); drop hipri, or enable poll queues (NVMe: nvme.poll_queues=N)", j.Name, op, off, errno, t.Path, t.Disk)
	}
	if errno == unix.EPERM && j.UsesCmdprio() {
		return fmt.Errorf("job %s: %s at offset %d: %w", j.Name, op, off, ioprioError("cmdprio_class", IOPrioClassRT, errno))
	}
	if errno == unix.EAGAIN && j.NoWait {
		return fmt.Errorf("job %s: %s of %d bytes at offset %d on %s: %w: with nowait (RWF_NOWAIT) an I/O that would block fails instead, as in fio: the data is not in the page cache, or the device is busy; drop nowait", j.Name, op, n, off, t.Path, errno)
	}
	return fmt.Errorf("job %s: %s of %d bytes at offset %d on %s: %w", j.Name, op, n, off, t.Path, errno)
}

// lockThread pins the calling goroutine to its OS thread for the rest of
// its life: rings, AIO contexts and CPU affinity belong to that thread, and
// the thread exits with the goroutine instead of returning to the pool with
// its affinity changed.
//
// The thread also blocks SIGURG, Go's asynchronous-preemption signal: a
// job thread spends its time in raw I/O system calls, and a SIGURG would
// interrupt io_getevents or io_uring_enter (EINTR), making the same
// options cost more system calls than in fio. The goroutine never gives
// its thread back, so the mask dies with it.
func lockThread() {
	runtime.LockOSThread()
	var set unix.Sigset_t
	set.Val[(unix.SIGURG-1)/64] |= 1 << ((uint(unix.SIGURG) - 1) % 64)
	unix.PthreadSigmask(unix.SIG_BLOCK, &set, nil)
}
