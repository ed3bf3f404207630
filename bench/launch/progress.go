package launch

import (
	"slices"
	"sync"
	"time"

	"iolab/bench"
	"iolab/bench/hist"
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
	// tick, of all the step's jobs added up when they are alike (one rw
	// and bs in one group, bench.LiveJob.Alike); 0 when they are not, for
	// a 1 MiB writer's I/Os and a 4 KiB reader's add up to no figure:
	// then Jobs has each job's.
	IOPS float64
	// Summed says IOPS is the jobs' sum (they are alike, or one).
	Summed bool
	// Jobs are the rates of the step's jobs by name (numjobs' clones
	// added up), in the order of the job file; one when the step runs
	// one job.
	Jobs []JobRate
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
	// ClatP99 is the 99th percentile of the completion latency (clat)
	// of the step's running jobs, both directions, since their measured
	// window began (bench.Runner.LiveClat: the snapshots --status-interval
	// reports): only while they measure, when they are alike (Summed) and
	// once they have completed enough I/Os for it (hist.ReliableN); else 0.
	ClatP99 time.Duration
}

// JobRate is one job's rate of completed I/Os since the last tick.
type JobRate struct {
	Name string
	IOPS float64
}

// The phases of a step, as Tick.Phase names them.
const (
	PhasePrepare = "prepare"
	PhaseRamp    = "ramp"
	PhaseMeasure = "measure"
)

// LiveEvery is how often the dashboard's and the agents' runs report a
// running step's progress: four points a second draw a 1 s step.
const LiveEvery = 250 * time.Millisecond

// Progress follows a plan's steps and, at every interval, reports the
// running step's IOPS, job by job, and the time left: the terminal's
// progress line and the dashboard's live events are both drawn from it.
// It reads the jobs' own counters (bench.Runner.LiveJobs), which the job
// loop keeps anyway: sampling more often costs the I/O path nothing.
type Progress struct {
	runner *bench.Runner
	steps  []sweep.Step
	report func(Tick)

	mu      sync.Mutex
	cur     *sweep.Step
	before  map[*bench.LiveJob]uint64 // the counters running when the step started, and their counts
	firstIO time.Time                 // when the step's first I/O was seen; zero before
	started time.Time
	quit    chan struct{}
	done    chan struct{}
	stopped sync.Once
	lat     hist.Lat // the loop's, for ClatP99: made once, not every tick
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
	before := map[*bench.LiveJob]uint64{}
	for _, lj := range p.runner.LiveJobs() {
		before[lj] = lj.IOs()
	}
	p.mu.Lock()
	p.cur, p.before, p.firstIO = st, before, time.Time{}
	p.mu.Unlock()
}

// Stop ends the reports; no report is made after it returns.
func (p *Progress) Stop() {
	p.stopped.Do(func() { close(p.quit) })
	<-p.done
}

func (p *Progress) loop(every time.Duration) {
	defer close(p.done)
	tick := time.NewTicker(every)
	defer tick.Stop()
	var s sampler
	s.sample(p.runner.LiveJobs(), time.Now())
	for {
		select {
		case <-p.quit:
			return
		case <-tick.C:
		}
		jobs, at := p.runner.LiveJobs(), time.Now()
		rates, sum, summed := s.sample(jobs, at)
		p.mu.Lock()
		st := p.cur
		if st != nil && p.firstIO.IsZero() && p.begun(jobs) {
			p.firstIO = at // the I/O began within the last interval
		}
		first := p.firstIO
		p.mu.Unlock()
		// Nothing to report before the first step, nor between a step's
		// phases (stonewall) or after its jobs: no job runs, and a rate
		// of 0 would draw a dip that no job made.
		if st == nil || (!first.IsZero() && len(jobs) == 0) {
			continue
		}
		// Until its first I/O the step prepares: its time has not begun
		// to run, so it is not counted down.
		t := Tick{Step: st, Total: len(p.steps), Jobs: rates, Summed: summed, Phase: PhasePrepare, Run: time.Since(p.started)}
		if summed {
			t.IOPS = sum
		}
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
		if summed && t.Phase == PhaseMeasure {
			t.ClatP99 = p.clatP99(every)
		}
		p.report(t)
	}
}

// clatP99 is the running jobs' clat p99 so far, or 0 while too few I/Os
// completed for it. It waits for the jobs' answers a fifth of an interval
// at most.
func (p *Progress) clatP99(every time.Duration) time.Duration {
	p.lat = hist.Lat{}
	if !p.runner.LiveClat(every/5, &p.lat) || p.lat.Stat.N < hist.ReliableN(99) {
		return 0
	}
	return time.Duration(p.lat.Percentiles([]float64{99})[0])
}

// begun says whether the running step's jobs have completed an I/O: a
// counter made since the step started, or one that has moved since (p.mu
// held).
func (p *Progress) begun(jobs []*bench.LiveJob) bool {
	for _, lj := range jobs {
		if n, ok := p.before[lj]; lj.IOs() > n || (!ok && lj.IOs() > 0) {
			return true
		}
	}
	return false
}

// sampler turns the jobs' counters into rates between two samples.
type sampler struct {
	last map[*bench.LiveJob]uint64
	at   time.Time
}

// sample returns each job name's rate since the last sample, and their
// sum when the jobs are alike (summed). A counter made since then (a new
// phase) counts from zero; one gone since (its phase ended) is not
// counted: the next phase is a new figure.
func (s *sampler) sample(jobs []*bench.LiveJob, at time.Time) (rates []JobRate, sum float64, summed bool) {
	secs := at.Sub(s.at).Seconds()
	last := make(map[*bench.LiveJob]uint64, len(jobs))
	summed = true
	for _, lj := range jobs {
		n := lj.IOs()
		last[lj] = n
		iops := 0.0
		if secs > 0 {
			iops = float64(n-s.last[lj]) / secs
		}
		sum += iops
		if !lj.Alike(jobs[0]) {
			summed = false
		}
		i := slices.IndexFunc(rates, func(r JobRate) bool { return r.Name == lj.Name })
		if i < 0 {
			rates = append(rates, JobRate{Name: lj.Name})
			i = len(rates) - 1
		}
		rates[i].IOPS += iops
	}
	s.last, s.at = last, at
	return rates, sum, summed
}
