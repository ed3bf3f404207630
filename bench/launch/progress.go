package launch

import (
	"sync"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
)

// StepLength is how long a step's jobs run (ramp included), when every
// job is time-based; false when a job ends on its size instead.
func StepLength(st *sweep.Step) (time.Duration, bool) {
	var total time.Duration
	for _, g := range st.Config.Groups {
		var longest time.Duration
		for _, j := range g.Jobs {
			if j.Runtime <= 0 {
				return 0, false
			}
			longest = max(longest, j.RampTime+j.Runtime)
		}
		total += longest
	}
	return total, true
}

// stepRamp is the longest ramp of a step's first group: how long after
// its first I/O its measurement begins.
func stepRamp(st *sweep.Step) time.Duration {
	var ramp time.Duration
	if len(st.Config.Groups) > 0 {
		for _, j := range st.Config.Groups[0].Jobs {
			ramp = max(ramp, j.RampTime)
		}
	}
	return ramp
}

// Tick is what Progress reports about the running step at each interval.
type Tick struct {
	Step  *sweep.Step
	Total int // steps in the plan
	// IOPS is the rate of completed I/Os (ramp included) since the last
	// tick.
	IOPS float64
	// Elapsed is the step's time since its first I/O: 0 while it
	// prepares (Phase PhasePrepare).
	Elapsed time.Duration
	// Phase is what the step does: PhasePrepare before its first I/O
	// (blkdiscard, dropping caches, switching the scheduler, laying out
	// files), then PhaseRamp and PhaseMeasure.
	Phase string
	Run   time.Duration // since the plan started
	// Left is the time left for the whole plan; LeftKnown is false when a
	// step ends on its size, not its runtime.
	Left      time.Duration
	LeftKnown bool
}

// The phases of a step, as Tick.Phase names them.
const (
	PhasePrepare = "prepare"
	PhaseRamp    = "ramp"
	PhaseMeasure = "measure"
)

// Progress follows a plan's steps and, at every interval, reports the
// running step's IOPS and the time left: the terminal's progress line and
// the dashboard's live events are both drawn from it.
type Progress struct {
	runner *bench.Runner
	steps  []sweep.Step
	report func(Tick)

	mu        sync.Mutex
	cur       *sweep.Step
	stepStart time.Time
	stepIOs   uint64    // the runner's I/Os when the step started
	firstIO   time.Time // when the step's first I/O was seen; zero before
	started   time.Time
	quit      chan struct{}
	done      chan struct{}
	stopOnce  sync.Once
}

// NewProgress starts reporting every interval until Stop. Nothing is
// reported before the first StepStarted.
func NewProgress(runner *bench.Runner, steps []sweep.Step, every time.Duration, report func(Tick)) *Progress {
	if every <= 0 {
		every = time.Second
	}
	p := &Progress{runner: runner, steps: steps, report: report, started: time.Now(),
		quit: make(chan struct{}), done: make(chan struct{})}
	go p.loop(every)
	return p
}

// StepStarted tells Progress which step runs now.
func (p *Progress) StepStarted(st *sweep.Step) {
	p.mu.Lock()
	p.cur, p.stepStart, p.stepIOs, p.firstIO = st, time.Now(), p.runner.CompletedIOs(), time.Time{}
	p.mu.Unlock()
}

// Stop ends the reports; no report is made after it returns.
func (p *Progress) Stop() {
	p.stopOnce.Do(func() { close(p.quit) })
	<-p.done
}

func (p *Progress) loop(every time.Duration) {
	defer close(p.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	last, lastAt := p.runner.CompletedIOs(), time.Now()
	for {
		select {
		case <-p.quit:
			return
		case <-tick.C:
		}
		now, at := p.runner.CompletedIOs(), time.Now()
		iops := float64(now-last) / at.Sub(lastAt).Seconds()
		last, lastAt = now, at
		p.mu.Lock()
		st := p.cur
		if st != nil && p.firstIO.IsZero() && now > p.stepIOs {
			p.firstIO = lastAt // the I/O began within the last interval
		}
		first := p.firstIO
		p.mu.Unlock()
		if st == nil {
			continue
		}
		// Until its first I/O the step prepares: its time has not begun
		// to run, so it is not counted down.
		t := Tick{Step: st, Total: len(p.steps), IOPS: iops, Phase: PhasePrepare, Run: time.Since(p.started)}
		if !first.IsZero() {
			t.Elapsed, t.Phase = at.Sub(first), PhaseMeasure
			if t.Elapsed < stepRamp(st) {
				t.Phase = PhaseRamp
			}
		}
		var remaining time.Duration
		// Steps beyond the plan's are AutoRepeat's extra rounds: how many
		// more there will be is not known.
		t.LeftKnown = st.Seq < len(p.steps)
		t.Total = max(t.Total, st.Seq+1)
		for i := st.Seq; i < len(p.steps); i++ {
			d, ok := StepLength(&p.steps[i])
			if !ok {
				t.LeftKnown = false
				break
			}
			remaining += d
		}
		if t.LeftKnown {
			t.Left = max(remaining-t.Elapsed, 0)
		}
		p.report(t)
	}
}
