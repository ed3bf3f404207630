package bench

import (
	"sync"
	"sync/atomic"
)

// LiveJob is one running job's count of completed I/Os, for progress
// while the job runs: the job loop adds to its own counter as it reaps
// (one atomic add a reaping, on a counter no other job thread writes),
// and Runner.LiveJobs hands the running phase's counters to whoever
// samples them, so a step of unlike jobs (a 1 MiB writer beside a 4 KiB
// reader) is followed job by job, never as their sum.
type LiveJob struct {
	Name  string // the job's name: numjobs' clones share it
	Group int    // its group's ID
	RW    string
	BS    int64
	ios   atomic.Uint64
	_     [56]byte // keeps the next job's counter off this cache line
}

// IOs is how many I/Os the job has completed, ramp included: sample it
// twice for its current IOPS.
func (lj *LiveJob) IOs() uint64 { return lj.ios.Load() }

// Alike says whether two jobs' rates add up to a figure with one meaning:
// the same rw and bs in the same group, as summary's total of alike jobs.
func (lj *LiveJob) Alike(o *LiveJob) bool {
	return lj.RW != "" && lj.RW == o.RW && lj.BS == o.BS && lj.Group == o.Group
}

// liveJobs are the counters of the running phase's jobs.
type liveJobs struct {
	mu      sync.Mutex
	running []*LiveJob
}

// startLive makes the counters of a phase's jobs, in the order of refs.
func (rn *Runner) startLive(groups []Group, refs []jobRef) []*LiveJob {
	jobs := make([]*LiveJob, len(refs))
	for k, ref := range refs {
		j := &groups[ref.g].Jobs[ref.i]
		jobs[k] = &LiveJob{Name: j.Name, Group: groups[ref.g].ID, RW: j.RW, BS: j.BS}
	}
	rn.live.mu.Lock()
	rn.live.running = jobs
	rn.live.mu.Unlock()
	return jobs
}

// endLive drops the phase's counters once its jobs have ended.
func (rn *Runner) endLive() {
	rn.live.mu.Lock()
	rn.live.running = nil
	rn.live.mu.Unlock()
}

// LiveJobs are the counters of the jobs running now, one per job thread
// (numjobs' clones each have their own), or none between phases. The
// slice is the runner's but never changed: a phase makes a new one.
func (rn *Runner) LiveJobs() []*LiveJob {
	rn.live.mu.Lock()
	defer rn.live.mu.Unlock()
	return rn.live.running
}
