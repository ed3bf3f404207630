package bench

import (
	"sync"
	"sync/atomic"
	"time"
)

// steadyProbe is what a job's loop tells the steady-state monitor: its
// completed I/Os and bytes, when its epoch began (the job's start, then
// the end of its ramp_time, as fio's reset_all_stats moves td->epoch) and
// whether it is running. The monitor tells it to stop.
type steadyProbe struct {
	ios, bytes atomic.Uint64
	epoch      atomic.Int64 // unix ns; 0 until the job runs
	measure    atomic.Int64 // unix ns when the measured window began
	running    atomic.Bool
	stop       atomic.Bool

	// the monitor's own, per fio's steadystate_data: the previous check
	prevTime        int64
	prevEpoch       int64
	prevIOs, prevBy uint64
	rampOver        bool
}

// steadyUnit is what fio judges at once: a job, or with group_reporting
// the jobs of a group, whose rates are summed into one window (kept, as
// fio keeps it, for the group's last job).
type steadyUnit struct {
	job    *Job
	probes []*steadyProbe
	refs   [][2]int // (group, job) of each probe
	win    *steadyWindow
	last   time.Duration
}

// steadyMonitor is fio's helper-thread check (steadystate_check, every
// STEADYSTATE_MSEC = 1000 ms) over one phase's jobs.
type steadyMonitor struct {
	units  []*steadyUnit
	probes map[[2]int]*steadyProbe
	quit   chan struct{}
	wg     sync.WaitGroup
}

// newSteadyMonitor sets up the checks of the phase's jobs that have ss_dur;
// nil when none has.
func newSteadyMonitor(groups []Group) *steadyMonitor {
	m := &steadyMonitor{probes: map[[2]int]*steadyProbe{}, quit: make(chan struct{})}
	for g := range groups {
		var unit *steadyUnit
		for i := range groups[g].Jobs {
			j := &groups[g].Jobs[i]
			if !j.Steady() {
				continue
			}
			p := &steadyProbe{}
			m.probes[[2]int{g, i}] = p
			if unit == nil || !j.GroupReporting {
				unit = &steadyUnit{job: j, win: newSteadyWindow(j)}
				m.units = append(m.units, unit)
			}
			unit.probes = append(unit.probes, p)
			unit.refs = append(unit.refs, [2]int{g, i})
		}
	}
	if len(m.units) == 0 {
		return nil
	}
	return m
}

// probe is job (g, i)'s probe, nil without steady state.
func (m *steadyMonitor) probe(g, i int) *steadyProbe {
	if m == nil {
		return nil
	}
	return m.probes[[2]int{g, i}]
}

// start checks every second until finish.
func (m *steadyMonitor) start() {
	if m == nil {
		return
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-m.quit:
				return
			case now := <-t.C:
				for _, u := range m.units {
					u.check(now.UnixNano())
				}
			}
		}
	}()
}

// finish stops the checks and gives each job's result its unit's window.
func (m *steadyMonitor) finish(results [][]JobResult) {
	if m == nil {
		return
	}
	close(m.quit)
	m.wg.Wait()
	for _, u := range m.units {
		r := u.win.result(u.last)
		for _, ref := range u.refs {
			results[ref[0]][ref[1]].Steady = r
		}
	}
}

// check is one round of fio's steadystate_check for the unit: each
// running job's rates since the previous check, summed, into the window
// once a job's ss_ramp (plus a second) is over.
func (u *steadyUnit) check(now int64) {
	if u.win.attained {
		return
	}
	var iops, bw uint64
	over := 0
	for _, p := range u.probes {
		epoch := p.epoch.Load()
		if epoch == 0 || !p.running.Load() {
			continue
		}
		if epoch != p.prevEpoch {
			// The job started, or its ramp_time ended: the counts
			// start over from the new epoch. (fio keeps its count of
			// before the reset, which makes its first sample after a
			// ramp_time wrap around; iolab does not.)
			p.prevEpoch, p.prevTime = epoch, epoch
			p.prevIOs, p.prevBy = 0, 0
			p.rampOver = u.job.SSRamp == 0
		}
		if !p.rampOver && now-epoch >= int64(u.job.SSRamp+time.Second) {
			p.rampOver = true
		}
		ios, by := p.ios.Load(), p.bytes.Load()
		if ios < p.prevIOs || by < p.prevBy || p.epoch.Load() != epoch {
			continue // the epoch moved under this check; the next one starts from it
		}
		ms := uint64((now - p.prevTime) / int64(time.Millisecond))
		p.prevTime = now
		if p.rampOver && ms > 0 {
			bw += 1000 * (by - p.prevBy) / ms
			iops += 1000 * (ios - p.prevIOs) / ms
			over++
		}
		p.prevIOs, p.prevBy = ios, by
	}
	if over == 0 {
		return
	}
	if m := u.probes[len(u.probes)-1].measure.Load(); m > 0 {
		u.last = time.Duration(now - m)
	}
	if u.win.add(iops, bw) {
		for _, p := range u.probes {
			p.stop.Store(true)
		}
	}
}
