package bench

import "time"

// The job loop's hooks for steady state and latency targets
// (steady_linux.go, lattarget_linux.go).

// startProbe tells steady state the job runs, from now (fio's epoch).
func (l *loop) startProbe(p *steadyProbe) {
	l.ssp = p
	if p == nil {
		return
	}
	now := time.Now().UnixNano()
	p.measure.Store(now)
	p.epoch.Store(now)
	p.running.Store(true)
}

// windowRestarted follows the measured window starting (over) at t: after
// ramp_time, or for a latency target's final run (fio's reset_all_stats).
func (l *loop) windowRestarted(t int64) {
	l.res.Samples = l.res.Samples[:0]
	if l.lt != nil {
		l.lt.restart(t)
	}
	if l.ssp != nil {
		// The counts start over with the epoch, as fio's reset zeroes
		// them, and before it, so the monitor never pairs the new epoch
		// with the old counts.
		l.ssp.ios.Store(0)
		l.ssp.bytes.Store(0)
		now := time.Now().UnixNano()
		l.ssp.measure.Store(now)
		l.ssp.epoch.Store(now)
	}
}

// endedEarly is true when steady state was attained or a latency target's
// search is done: the job ends as if its runtime were over.
func (l *loop) endedEarly() bool {
	return (l.ssp != nil && l.ssp.stop.Load()) || (l.lt != nil && l.lt.done)
}

// measuredHook takes a read or write of slot s that completed at tc with
// res: its latency against the target, its count for steady state.
func (l *loop) measuredHook(s int32, res int32, tc int64) {
	if l.dirOf[s] > Write {
		return
	}
	if l.ssp != nil {
		l.ssp.ios.Add(1)
		l.ssp.bytes.Add(uint64(res))
	}
	if l.lt != nil {
		if err := l.lt.completed(tc - l.created[s]); err != nil && l.err == nil {
			l.err = err
		}
	}
}

// endProbe records what the search ended at and that the job stopped.
func (l *loop) endProbe(res *JobResult) {
	if l.lt != nil {
		res.LatencyDepth = l.lt.qd
	}
	if l.ssp != nil {
		l.ssp.running.Store(false)
	}
}
