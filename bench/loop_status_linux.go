package bench

import (
	"time"

	"golang.org/x/sys/unix"
)

// publishStatus answers Runner.Status (status.go) between two I/Os, as a
// fio job brings its stats up to date when its update_rusage is set
// (backend.c check_update_rusage): it copies what the job has measured
// since its window opened at t's clock, the counts and histograms of
// both directions, the depth and latency distributions, the intervals'
// samples and the thread's CPU use since ru0 (read on this thread: fio's
// RUSAGE_THREAD too). Before the window opens (the ramp) the copy holds
// nothing measured.
func (l *loop) publishStatus(t int64, ru0 unix.Rusage) {
	s := l.status
	var ru unix.Rusage
	if l.measuring {
		ru = threadUsage()
	}
	s.mu.Lock()
	snap := &s.snap
	*snap = *l.res
	snap.GroupID = s.group
	snap.Jobs = 1
	snap.Samples = l.res.Samples[:len(l.res.Samples):len(l.res.Samples)]
	if l.measuring {
		snap.Runtime = time.Duration(t - l.measureStart)
		snap.Dirs = l.cur
		l.prioInto(&snap.Dirs)
		snap.Dist = l.dist
		snap.Sync = l.sync.cur
		snap.UsrCPU = tvDuration(ru.Utime) - tvDuration(ru0.Utime)
		snap.SysCPU = tvDuration(ru.Stime) - tvDuration(ru0.Stime)
		snap.Ctx = uint64((ru.Nvcsw - ru0.Nvcsw) + (ru.Nivcsw - ru0.Nivcsw))
		snap.MinFlt = uint64(ru.Minflt - ru0.Minflt)
		snap.MajFlt = uint64(ru.Majflt - ru0.Majflt)
	} else {
		snap.Start = time.Now()
	}
	s.has = true
	s.mu.Unlock()
	s.answer()
}
