package bench

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"iolab/bench/joblog"
	"iolab/bench/system"
)

// Prepare checks every job before anything runs, so a bad target fails the
// run up front: it works out each job's files and regions as fio's
// setup_files does, lays out missing or short files, resolves targets,
// refuses unsafe writes and hipri without poll queues, and checks O_DIRECT
// alignment. It returns each job's files, indexed like
// cfg.Groups[g].Jobs[i].
func (rn *Runner) Prepare(cfg *Config) ([][]JobFiles, error) {
	if err := checkSteadyGroups(cfg.Groups); err != nil {
		return nil, err
	}
	if err := checkFlows(cfg.Groups); err != nil {
		return nil, err
	}
	out := make([][]JobFiles, len(cfg.Groups))
	seen := map[string]system.Target{}
	for g, grp := range cfg.Groups {
		out[g] = make([]JobFiles, len(grp.Jobs))
		for i := range grp.Jobs {
			if _, _, err := numaPlacement(rn.Sys, &grp.Jobs[i]); err != nil {
				return nil, err
			}
			if cfg.TraceBlock {
				// Before anything is laid out: a file that cannot be traced
				// is not made.
				if err := rn.checkTraceTargets(&grp.Jobs[i]); err != nil {
					return nil, err
				}
			}
			if grp.Jobs[i].CreateParallel {
				out[g][i] = JobFiles{parallel: true} // prepareParallel
				continue
			}
			jf, err := rn.prepareJob(&grp.Jobs[i], seen)
			if err != nil {
				return nil, err
			}
			out[g][i] = jf
		}
	}
	if err := rn.checkIOSchedulers(cfg, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Run runs cfg's groups in order: a group that does not wait (new_group)
// runs at the same time as the one before it. It returns what was measured
// even when a job failed; the error says which. ctx cancels the run: jobs
// stop, their in-flight I/O lands, and what they measured is kept.
func (rn *Runner) Run(ctx context.Context, cfg *Config) (*Result, error) {
	files, err := rn.Prepare(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.TraceBlock {
		// Refused before any I/O: a file target, no rights, no BTF.
		if err := rn.CheckTraceBlock(files); err != nil {
			return nil, err
		}
	}
	interval := rn.Interval
	if interval <= 0 {
		interval = time.Second
	}
	host, _ := rn.Sys.Host()
	host.Clock = ClockSource()
	res := &Result{Start: time.Now(), Host: host}
	rn.status.begin(res)
	defer rn.status.end()

	// The job loops allocate nothing per I/O, but a GC cycle would still
	// stop them; there is nothing to collect until the run ends.
	// A memory limit still lets the collector run if the rest of the
	// program allocates a lot during a long run.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(int64(ms.HeapAlloc) + 1<<30))

	var errs []error
	rc := newRunControl(cfg)
	for first := 0; first < len(cfg.Groups); {
		last := first + 1
		for last < len(cfg.Groups) && !cfg.Groups[last].Wait {
			last++
		}
		if rc.ended.Load() {
			// exit_what=all ended the run in an earlier phase.
			res.Groups = append(res.Groups, notStartedPhase(cfg.Groups[first:last], interval)...)
			rn.status.phaseDone(res.Groups)
			first = last
			continue
		}
		phase, err := rn.runPhase(ctx, cfg.Groups[first:last], files[first:last], interval, rc)
		res.Groups = append(res.Groups, phase...)
		rn.status.phaseDone(res.Groups)
		if err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil || isSetupError(err) {
				break
			}
		}
		first = last
	}
	return res, errors.Join(errs...)
}

// jobTargets are the targets of each job's files, per group.
func jobTargets(files [][]JobFiles) [][][]system.Target {
	out := make([][][]system.Target, len(files))
	for g := range files {
		for _, jf := range files[g] {
			out[g] = append(out[g], jf.Targets)
		}
	}
	return out
}

type setupError struct{ error }

func (e setupError) Unwrap() error { return e.error }

func isSetupError(err error) bool {
	var se setupError
	return errors.As(err, &se)
}

// jobStartTick is how often fio's parent looks whether the jobs it started
// have set up (backend.c run_threads: do_usleep(100000), then a check for
// TD_INITIALIZED), and only then lets them go (fio_sem_up(td->sem)): a fio
// job's thread sleeps about this long between its set-up and its first
// I/O. iolab's jobs start on the same tick. The pause matters beyond its
// tenth of a second: where the kernel runs a device's worker threads
// beside the job (the loop driver's kworker, io_uring's io-wq worker, and
// on this project's VMs whether they share the job's vCPU) follows its
// view of the job thread when the I/O starts — its PELT utilisation, which
// decays with a 32 ms half-life — and stays so: at iodepth 1 the pause
// decides the IOPS (BENCHMARKS.md, "Jobs now start as fio's do").
const jobStartTick = 100 * time.Millisecond

// waitStartTick waits, as fio's parent does, for the first tick of
// jobStartTick since the jobs were launched at which they are all set up
// (now), or for ctx to end.
func waitStartTick(ctx context.Context, launched time.Time) {
	t := time.NewTimer(startTickWait(time.Since(launched)))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// startTickWait is the wait from elapsed after the launch to the next
// tick: never the launch itself, since fio sleeps before it first looks.
func startTickWait(elapsed time.Duration) time.Duration {
	return (elapsed/jobStartTick+1)*jobStartTick - elapsed
}

// runPhase runs the jobs of groups at the same time. Every job sets up on
// its own locked thread first; they start together only when all are ready,
// on fio's start tick (waitStartTick).
// The run's jobs before these (rc.threads) number first. Its steps:
// preparePhase lays the files out, runJob is each job's thread, awaitSetup
// waits for every job to set up and switches the schedulers, and
// phaseResults gathers the groups' results.
func (rn *Runner) runPhase(ctx context.Context, groups []Group, files [][]JobFiles, interval time.Duration, rc *runControl) ([]GroupResult, error) {
	refs := phaseRefs(groups)
	// Start delays, wait_for, exitall and exit_what (control_linux.go); k
	// counts the phase's jobs in the order of refs.
	pc := rc.phase(groups)
	ssm := newSteadyMonitor(groups) // steady state (steady_linux.go); nil without ss_dur
	defer func() { rc.threads += len(refs) }()
	results := make([][]JobResult, len(groups))
	for g := range groups {
		results[g] = make([]JobResult, len(groups[g].Jobs))
	}
	// Job threads keep their P through blocking raw system calls (see
	// engine.go), and so do offload's submit workers, iodepth a job; give
	// the rest of the program the Ps it had.
	threads := len(refs)
	for _, r := range refs {
		if j := &groups[r.g].Jobs[r.i]; j.Offloaded() {
			threads += j.IODepth
		}
	}
	procs := runtime.GOMAXPROCS(0)
	runtime.GOMAXPROCS(procs + threads)
	defer runtime.GOMAXPROCS(procs)

	if err := rn.preparePhase(groups, files, refs); err != nil {
		return nil, setupError{err}
	}
	var bc *blockCollector
	if rc.traceBlock {
		var jobs []JobFiles
		for _, ref := range refs {
			jobs = append(jobs, files[ref.g][ref.i])
		}
		var err error
		if bc, err = rn.startBlockTrace(jobs); err != nil {
			return nil, setupError{err}
		}
		defer bc.close() // on every path; finish has closed it on the usual one
	}
	live := rn.startLive(groups, refs)
	defer rn.endLive()
	status := rn.status.phaseStarting(groups, refs, interval)
	launched := time.Now()
	start := make(chan struct{})
	ready := make(chan error, len(refs))
	var wg sync.WaitGroup
	for k, ref := range refs {
		pj := phaseJob{
			j: &groups[ref.g].Jobs[ref.i], k: k, index: rc.threads + k,
			files: files[ref.g][ref.i], group: groups[ref.g].ID, interval: interval,
			start: start, ready: ready, result: &results[ref.g][ref.i],
			pc: pc, probe: ssm.probe(ref.g, ref.i), rc: rc, live: live[k], status: status[k],
		}
		if bc != nil {
			pj.blk = bc.jobs[k]
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			rn.runJob(pj)
		}()
	}
	switched, restore, err := rn.awaitSetup(len(refs), ready, groups, files)
	if err != nil {
		pc.stopAll()
		close(start)
		wg.Wait()
		return nil, setupError{err}
	}

	targets := jobTargets(files)
	var flat [][]system.Target
	for _, g := range targets {
		for _, ts := range g {
			flat = append(flat, ts)
		}
	}
	disks := phaseDisks(flat)
	before, _ := rn.Sys.DiskStats()
	t0 := time.Now()
	rn.status.phaseStarted(disks, before, t0)
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			pc.stopAll()
		case <-done:
		}
	}()
	waitStartTick(ctx, launched)
	pc.launched, pc.begun = launched, time.Now()
	ssm.start()
	close(start)
	wg.Wait()
	close(done)
	ssm.finish(results)
	var trace *BlockTrace
	var terr error
	if bc != nil {
		var rs []*JobResult
		for _, ref := range refs {
			rs = append(rs, &results[ref.g][ref.i])
		}
		tr, err := bc.finish(rs)
		trace, terr = &tr, err
	}
	elapsed := time.Since(t0)
	after, _ := rn.Sys.DiskStats()
	rerr := restore()

	util := diskUtilization(disks, before, after, elapsed)
	countJobBytes(util, groups, targets, results)
	out, err := phaseResults(ctx, groups, results, util, switched, rerr)
	for i := range out {
		out[i].Trace = trace
	}
	return out, errors.Join(err, terr)
}

// jobRef is a job of a phase: its group's index and its own in the group.
type jobRef struct{ g, i int }

// phaseRefs are the jobs of groups, group by group.
func phaseRefs(groups []Group) []jobRef {
	var refs []jobRef
	for g := range groups {
		for i := range groups[g].Jobs {
			refs = append(refs, jobRef{g, i})
		}
	}
	return refs
}

// preparePhase prepares the files of the phase's jobs, and lays out again
// the files an earlier phase removed (unlink).
func (rn *Runner) preparePhase(groups []Group, files [][]JobFiles, refs []jobRef) error {
	if err := rn.prepareParallel(groups, files); err != nil {
		return err
	}
	for _, ref := range refs {
		jf, err := rn.refreshJob(&groups[ref.g].Jobs[ref.i], files[ref.g][ref.i])
		if err != nil {
			return err
		}
		files[ref.g][ref.i] = jf
	}
	return nil
}

// phaseJob is what the thread of one job of a phase is handed.
type phaseJob struct {
	j        *Job
	k        int // the job's place in the phase, in the order of its refs
	index    int // the job's place in the run, fio's thread_number - 1
	files    JobFiles
	group    int // its group's ID
	interval time.Duration
	start    <-chan struct{} // closed when the jobs start together
	ready    chan<- error    // takes the job's set-up error, or nil
	result   *JobResult      // where its result goes
	pc       *phaseControl   // the phase's start and stop (control_linux.go)
	probe    *steadyProbe    // steady state's view of the job; nil without ss_dur
	rc       *runControl     // the run's seeds and flows
	live     *LiveJob        // its count of completed I/Os, for progress
	status   *jobStatus      // its snapshots for --status-interval (status.go)
	blk      *jobTrace       // takes its measured I/Os for --trace-block; nil untraced
}

// runJob is one job's thread: it sets the job up on its locked thread,
// says so on pj.ready, waits for the start, runs and stores the result.
func (rn *Runner) runJob(pj phaseJob) {
	j := pj.j
	ran, failed := false, false
	defer func() { pj.pc.finished(pj.k, ran, failed) }()
	lockThread()
	run, err := openJob(rn.Sys, j, pj.index, pj.files, pj.rc.seeds)
	if err == nil {
		run.stateDir, run.clock = rn.StateDir, pj.rc.clock
		if run.logs, err = joblog.Open(j.LogParams(), pj.index+1, rn.LogFiles); err != nil {
			run.close()
		}
	}
	pj.ready <- err
	if err != nil {
		return
	}
	defer run.close()
	run.ss = pj.probe
	run.flow = pj.rc.flows.join(j)
	defer run.flow.leave()
	run.notice = rn.Notice
	run.status = pj.status
	run.blk = pj.blk
	<-pj.start
	if !pj.pc.await(pj.k, j) {
		*pj.result = notStarted(j, pj.group, pj.interval)
		pj.status.end(pj.result)
		return
	}
	r := run.run(pj.pc.stop(pj.k), pj.interval, &pj.live.ios)
	r.GroupID = pj.group
	*pj.result = r
	pj.status.end(pj.result)
	ran, failed = true, r.Error != ""
}

// awaitSetup waits for the n jobs of the phase to set up, then switches
// the targets' I/O schedulers as the jobs ask; it returns the schedulers
// switched and how to restore them, or every job's set-up error.
func (rn *Runner) awaitSetup(n int, ready <-chan error, groups []Group, files [][]JobFiles) (map[string]string, func() error, error) {
	var setupErrs []error
	for range n {
		if err := <-ready; err != nil {
			setupErrs = append(setupErrs, err)
		}
	}
	if len(setupErrs) > 0 {
		return nil, nil, errors.Join(setupErrs...)
	}
	switched, restore, err := rn.switchSchedulers(groups, files)
	if err != nil {
		return nil, nil, errors.Join(err)
	}
	return switched, restore, nil
}

// phaseResults are the results of the phase's groups, with the errors of
// its jobs, of restoring the schedulers (rerr) and of a cancel.
func phaseResults(ctx context.Context, groups []Group, results [][]JobResult, util []system.DiskUtilization, switched map[string]string, rerr error) ([]GroupResult, error) {
	var out []GroupResult
	var errs []error
	if rerr != nil {
		errs = append(errs, rerr)
	}
	for g, grp := range groups {
		gr := GroupResult{ID: grp.ID, Reporting: grp.Reporting, Jobs: results[g], Schedulers: switched}
		for _, r := range results[g] {
			if r.Error != "" {
				errs = append(errs, errors.New(r.Error))
			}
		}
		if grp.Reporting {
			gr.Jobs = ReportEntries(gr.Jobs)
		}
		gr.Disks = slices.Clone(util)
		out = append(out, gr)
	}
	if ctx.Err() != nil {
		errs = append(errs, fmt.Errorf("run cancelled: %w", context.Cause(ctx)))
	}
	return out, errors.Join(errs...)
}
