package bench

import (
	"sync"
	"sync/atomic"
	"time"

	"iolab/bench/randgen"
)

// runControl is what fio's run_threads (backend.c) decides for a whole
// run about when jobs start and stop: startdelay counts from the run's
// start (fio's genesis), in every group; exitall, set by any job, makes
// every job's end stop others (fio's exitall_on_terminate), as the ending
// job's exit_what says; a job's number in the run (fio's thread_number)
// picks its CPU under cpus_allowed_policy=split. It also holds what fio
// keeps for the whole run that jobs share: the flows (flow.go) and each
// job's buffer seeds, which dedupe_global reads.
type runControl struct {
	genesis time.Time
	exitAll bool
	threads int      // jobs in the phases before this one
	seeds   []uint64 // the seeds of each job's buffers, by its number (bufferSeeds)
	flows   flows
	// ended is set when a job's exit_what=all stopped the run: the phases
	// after the one it ran in never start (fio's TERMINATE_ALL marks every
	// job, and run_threads never creates a marked one).
	ended atomic.Bool
	// traceBlock: the phases trace their targets' block layer
	// (Config.TraceBlock).
	traceBlock bool
	// clock is the run's clocksource (Job.ClockSource): fio keeps one
	// for the whole process, the value given last.
	clock string
}

func newRunControl(cfg *Config) *runControl {
	rc := &runControl{genesis: time.Now(), seeds: bufferSeeds(cfg), flows: newFlows(cfg), traceBlock: cfg.TraceBlock}
	for _, g := range cfg.Groups {
		for _, j := range g.Jobs {
			rc.exitAll = rc.exitAll || j.ExitAll
			if j.ClockSource != "" {
				rc.clock = j.ClockSource
			}
		}
	}
	return rc
}

// phaseControl holds one phase's stops and start conditions. Stops are
// per job, as fio's td->terminate is: a cancel stops every job, an ending
// job's exit_what those it names (terminate).
type phaseControl struct {
	rc    *runControl
	jobs  []*Job
	stops []atomic.Bool   // per job, what its loop watches
	quit  []chan struct{} // per job, closed with its stop
	once  []sync.Once
	group []int // per job: its group
	// started is when each job started (UnixNano; 0 until then): past
	// its ramp, a job runs (fio's runstate TD_RUNNING), which is what
	// exit_what=stonewall stops.
	started []atomic.Int64
	done    []chan struct{} // per job: closed when it has finished
	waitees [][]int         // per job: the jobs it waits for (wait_for)
	// launched is when the phase's jobs were launched, begun when they
	// were let go (on the start tick): fio creates a job whose delay has
	// passed by the launch with the others, and looks for the rest every
	// jobStartTick after it let those go.
	launched, begun time.Time
}

// phase sets up the control of the phase of groups. Its jobs are
// numbered group by group, in order.
func (rc *runControl) phase(groups []Group) *phaseControl {
	pc := &phaseControl{rc: rc}
	for g := range groups {
		for i := range groups[g].Jobs {
			pc.jobs = append(pc.jobs, &groups[g].Jobs[i])
			pc.group = append(pc.group, g)
			pc.quit = append(pc.quit, make(chan struct{}))
			pc.done = append(pc.done, make(chan struct{}))
		}
	}
	n := len(pc.jobs)
	pc.stops, pc.once, pc.started = make([]atomic.Bool, n), make([]sync.Once, n), make([]atomic.Int64, n)
	pc.waitees = make([][]int, n)
	for k, j := range pc.jobs {
		// fio's waitee_running: every job of that name but the waiter;
		// one before this phase has finished already.
		for w, other := range pc.jobs {
			if j.WaitFor != "" && other.Name == j.WaitFor && w != k {
				pc.waitees[k] = append(pc.waitees[k], w)
			}
		}
	}
	return pc
}

func (pc *phaseControl) stop(k int) *atomic.Bool { return &pc.stops[k] }

// stopJob is fio's fio_mark_td_terminate: a running job ends at its next
// I/O (or wait), one not started never starts.
func (pc *phaseControl) stopJob(k int) {
	pc.once[k].Do(func() {
		pc.stops[k].Store(true)
		close(pc.quit[k])
	})
}

func (pc *phaseControl) stopAll() {
	for k := range pc.jobs {
		pc.stopJob(k)
	}
}

// await holds job k until it may start: as fio would start it after its
// start delay (delayedStart), and once the jobs it waits for have
// finished. It is false when the job was stopped first: it never starts.
func (pc *phaseControl) await(k int, j *Job) bool {
	if d := startDelay(j, pc.rc.threads+k); d > 0 {
		t := time.NewTimer(time.Until(delayedStart(pc.rc.genesis.Add(d), pc.launched, pc.begun)))
		defer t.Stop()
		select {
		case <-t.C:
		case <-pc.quit[k]:
			return false
		}
	}
	for _, w := range pc.waitees[k] {
		select {
		case <-pc.done[w]:
		case <-pc.quit[k]:
			return false
		}
	}
	if pc.stops[k].Load() {
		return false
	}
	pc.started[k].Store(time.Now().UnixNano())
	return true
}

// finished marks job k done, for the jobs that wait for it. A job that
// ran then stops others, as fio's thread_main does as it ends: every job
// under exitall, and with exitall_on_error a job that failed. One that
// never started stops nothing (fio never created its thread).
func (pc *phaseControl) finished(k int, ran, failed bool) {
	close(pc.done[k])
	if j := pc.jobs[k]; ran && (pc.rc.exitAll || (j.ExitAllOnError && failed)) {
		pc.terminate(k)
	}
}

// terminate stops the jobs job k's exit_what names (fio's
// fio_terminate_threads, libfio.c): its group's; or, with stonewall,
// every job of the phase that is running — a job still in its start
// delay, waiting for another or ramping up is spared and runs, and the
// run goes on to the next phase; or, with all, every job, this phase's
// and those of the phases after it.
func (pc *phaseControl) terminate(k int) {
	switch pc.jobs[k].ExitWhat {
	case ExitStonewall:
		now := time.Now()
		for i, j := range pc.jobs {
			if s := pc.started[i].Load(); s != 0 && !now.Before(time.Unix(0, s).Add(j.RampTime)) {
				pc.stopJob(i)
			}
		}
	case ExitEverything:
		pc.rc.ended.Store(true)
		pc.stopAll()
	default: // ExitGroup
		for i := range pc.jobs {
			if pc.group[i] == pc.group[k] {
				pc.stopJob(i)
			}
		}
	}
}

// delayedStart is when fio starts a job whose start delay ends at due,
// in a phase whose jobs it launched at launched and let go at begun
// (run_threads): one due by the launch is created and let go with the
// others; for the rest fio looks again every jobStartTick after begun,
// creates the job at the first look at or after due, and lets it go a
// tick later, as it does every job it creates.
func delayedStart(due, launched, begun time.Time) time.Time {
	if !due.After(launched) {
		return begun
	}
	created := begun.Add(jobStartTick)
	if late := due.Sub(created); late > 0 {
		created = created.Add((late + jobStartTick - 1) / jobStartTick * jobStartTick)
	}
	return created.Add(jobStartTick)
}

// startDelay is the job's startdelay; with a range, drawn for each job as
// fio's fixup_options draws it (rand_between), from the job's seed and
// its number in the run.
func startDelay(j *Job, thread int) time.Duration {
	if j.StartDelayHigh <= j.StartDelay {
		return j.StartDelay
	}
	seed := j.RandSeed + uint64(thread)*0x9e3779b97f4a7c15 ^ 0xde1a7
	if !j.RandRepeat {
		seed = uint64(time.Now().UnixNano())
	}
	r := randgen.NewSplitMix(seed)
	return j.StartDelay + time.Duration(r.Below(uint64(j.StartDelayHigh-j.StartDelay)+1))
}

// jobCPUs is the CPUs a job's thread may run on: cpus_allowed, or under
// cpus_allowed_policy=split the one its number in the run picks, round
// the set (fio's fio_cpus_split).
func jobCPUs(j *Job, thread int) []int {
	if j.CPUsAllowedPolicy != "split" || len(j.CPUsAllowed) == 0 {
		return j.CPUsAllowed
	}
	i := thread % len(j.CPUsAllowed)
	return j.CPUsAllowed[i : i+1]
}

// notStarted is the result of a job stopped before it started (exitall):
// nothing measured, as fio reports it.
func notStarted(j *Job, groupID int, interval time.Duration) JobResult {
	return JobResult{Name: j.Name, GroupID: groupID, Job: *j, Interval: interval, Jobs: 1, Start: time.Now()}
}

// notStartedPhase is the result of a phase exit_what=all kept from
// starting: each of its jobs not started, as fio reports jobs it never
// created.
func notStartedPhase(groups []Group, interval time.Duration) []GroupResult {
	out := make([]GroupResult, len(groups))
	for g, grp := range groups {
		out[g] = GroupResult{ID: grp.ID, Reporting: grp.Reporting}
		for i := range grp.Jobs {
			out[g].Jobs = append(out[g].Jobs, notStarted(&grp.Jobs[i], grp.ID, interval))
		}
		if grp.Reporting {
			out[g].Jobs = ReportEntries(out[g].Jobs)
		}
	}
	return out
}
