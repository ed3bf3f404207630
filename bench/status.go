package bench

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"iolab/bench/hist"
	"iolab/bench/system"
)

// A running run's status, for fio's --status-interval (stat.c
// __show_running_run_stats): a complete report of the jobs as they are
// now, each cumulative since its measured window began. fio's status
// thread sets each running job's update_rusage and waits for the job to
// bring its stats up to date between two I/Os (backend.c
// check_update_rusage); iolab's jobs do the same: Runner.Status asks each
// running job for a snapshot, the job's thread copies its counts and
// histograms into its jobStatus between two I/Os (publishStatus,
// loop_status_linux.go: one atomic load an I/O while nobody asks, a lock
// only as it answers), and Status builds the Result from the copies. A job
// that does not answer in time (asleep on its rate, in its verify phase)
// is reported as it last answered.

// jobStatus is one job's latest snapshot: asked by Runner.Status, written
// by the job's thread.
type jobStatus struct {
	asked atomic.Bool
	// served takes a token each time the job answers.
	served chan struct{}
	group  int // the job's group's ID

	mu    sync.Mutex
	snap  JobResult
	has   bool // snap holds a snapshot
	final bool // snap is the job's result: it has ended
}

func newJobStatus(group int) *jobStatus {
	return &jobStatus{served: make(chan struct{}, 1), group: group}
}

// end keeps the job's result as its last snapshot.
func (s *jobStatus) end(r *JobResult) {
	s.mu.Lock()
	s.snap, s.has, s.final = *r, true, true
	s.mu.Unlock()
	s.answer()
}

// answer says that the snapshot is up to date.
func (s *jobStatus) answer() {
	s.asked.Store(false)
	select {
	case s.served <- struct{}{}:
	default:
	}
}

// ask asks the job for a snapshot, unless it has ended; it says whether
// an answer is to be waited for.
func (s *jobStatus) ask() bool {
	select {
	case <-s.served: // an answer nobody waited for
	default:
	}
	s.mu.Lock()
	final := s.final
	s.mu.Unlock()
	if final {
		return false
	}
	s.asked.Store(true)
	return true
}

// result is the job's latest snapshot, or its job not started when it has
// answered none yet.
func (s *jobStatus) result(j *Job, interval time.Duration) JobResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.has {
		return notStarted(j, s.group, interval)
	}
	r := s.snap
	r.Samples = slices.Clone(r.Samples)
	return r
}

// runStatus is what Runner.Status reads of the run under way: the
// groups of the phases that ended and the running phase's jobs.
type runStatus struct {
	mu sync.Mutex
	runState
}

// runState is runStatus's state, under its lock.
type runState struct {
	running bool
	start   time.Time
	host    system.HostInfo
	done    []GroupResult
	// The running phase: its groups, their jobs' statuses (in the order of
	// phaseRefs), the sampling interval, and from its start the disks it
	// watches with their counters then.
	groups   []Group
	jobs     []*jobStatus
	interval time.Duration
	disks    []string
	before   map[string]system.DiskStat
	t0       time.Time
}

func (st *runStatus) begin(res *Result) {
	st.mu.Lock()
	st.runState = runState{running: true, start: res.Start, host: res.Host}
	st.mu.Unlock()
}

func (st *runStatus) end() {
	st.mu.Lock()
	st.runState = runState{}
	st.mu.Unlock()
}

// phaseDone keeps the groups of the run so far, a phase having ended.
func (st *runStatus) phaseDone(groups []GroupResult) {
	st.mu.Lock()
	st.done = slices.Clone(groups)
	st.groups, st.jobs, st.disks, st.before = nil, nil, nil, nil
	st.mu.Unlock()
}

// phaseStarting makes the statuses of a phase's jobs, in the order of refs.
func (st *runStatus) phaseStarting(groups []Group, refs []jobRef, interval time.Duration) []*jobStatus {
	jobs := make([]*jobStatus, len(refs))
	for k, ref := range refs {
		jobs[k] = newJobStatus(groups[ref.g].ID)
	}
	st.mu.Lock()
	st.groups, st.jobs, st.interval = groups, jobs, interval
	st.mu.Unlock()
	return jobs
}

// phaseStarted notes the phase's disks and their counters as its jobs
// start, for the disks' part of a report.
func (st *runStatus) phaseStarted(disks []string, before map[string]system.DiskStat, t0 time.Time) {
	st.mu.Lock()
	st.disks, st.before, st.t0 = disks, before, t0
	st.mu.Unlock()
}

// askAll asks the running phase's jobs for a snapshot and waits at most
// wait for their answers (st.mu held): the jobs that have not answered
// by then are as they last answered.
func (st *runStatus) askAll(wait time.Duration) {
	asked := make([]*jobStatus, 0, len(st.jobs))
	for _, s := range st.jobs {
		if s.ask() {
			asked = append(asked, s)
		}
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for _, s := range asked {
		select {
		case <-s.served:
			continue
		case <-timer.C:
		}
		break
	}
}

// LiveClat adds to lat the completion latency (clat) of both directions
// of the running phase's jobs, each since its measured window began, as
// Status asks for it; it copies no result, for the dashboard's live view,
// four times a second. It says whether a phase runs.
func (rn *Runner) LiveClat(wait time.Duration, lat *hist.Lat) bool {
	st := &rn.status
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.running || len(st.jobs) == 0 {
		return false
	}
	st.askAll(wait)
	for _, s := range st.jobs {
		s.mu.Lock()
		if s.has {
			for d := range s.snap.Dirs {
				lat.Merge(&s.snap.Dirs[d].Clat)
			}
		}
		s.mu.Unlock()
	}
	return true
}

// Status is the run under way as fio's --status-interval reports it: the
// groups of the phases that ended as they ended, and the running phase's
// jobs each as it is now, cumulative since its measured window began (a
// job still in its ramp has measured nothing yet, as fio, which resets its
// stats at the ramp's end), with group_reporting's merge and the disks'
// figures since the phase began. It waits at most wait for the running
// jobs to answer. It is nil when no run is under way. Jobs of phases
// not begun yet are not in it.
func (rn *Runner) Status(wait time.Duration) *Result {
	st := &rn.status
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.running {
		return nil
	}
	st.askAll(wait)
	res := &Result{Start: st.start, Host: st.host, Groups: slices.Clone(st.done)}
	if len(st.jobs) == 0 {
		return res
	}
	var util []system.DiskUtilization
	if !st.t0.IsZero() {
		if now, err := rn.Sys.DiskStats(); err == nil {
			util = diskUtilization(st.disks, st.before, now, time.Since(st.t0))
		}
	}
	k := 0
	for _, grp := range st.groups {
		gr := GroupResult{ID: grp.ID, Reporting: grp.Reporting, Disks: slices.Clone(util)}
		for i := range grp.Jobs {
			gr.Jobs = append(gr.Jobs, st.jobs[k].result(&grp.Jobs[i], st.interval))
			k++
		}
		if grp.Reporting {
			gr.Jobs = ReportEntries(gr.Jobs)
		}
		res.Groups = append(res.Groups, gr)
	}
	return res
}
