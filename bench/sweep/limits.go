package sweep

import (
	"fmt"
	"math"
	"slices"

	"iolab/bench"
	"iolab/bench/units"
)

// Limits bound what one plan may ask of the machine. They are checked
// before anything is expanded, allocated or stored, so a plan that would
// exhaust threads or memory is refused with what to change, instead of
// taking the process down.
type Limits struct {
	// Steps is the most steps a plan may have, repeats included.
	Steps int
	// Jobs is the most job threads one step may run at once (numjobs
	// expanded, over the groups that run together).
	Jobs int
	// Buffers is the most bytes of I/O buffers one step may map at once
	// (iodepth × bs over the jobs that run together).
	Buffers int64
}

// DefaultLimits are sized for a small machine (2 cores, 24 GiB): far above
// what the write-ups need, far below what takes a process down.
var defaultLimits = Limits{Steps: 10000, Jobs: 1024, Buffers: 4 << 30}

// DefaultLimits returns the limits a plan gets unless told otherwise.
func DefaultLimits() Limits { return defaultLimits }

// hardMaxSteps bounds Steps whatever the limits: expanding more would cost
// memory before any limit could be checked.
const hardMaxSteps = 1_000_000

// StepCount is how many steps the plan expands to (the first rounds, with
// AutoRepeat), computed without expanding them; false when the count does
// not fit in an int.
func (p *Plan) StepCount() (int, bool) { return p.countSteps(p.rounds()) }

// countSteps is every combination of the sweeps' values r times; false
// when that does not fit in an int.
func (p *Plan) countSteps(r int) (int, bool) {
	n := 1
	for _, sw := range p.Sweeps {
		v := len(sw.Values)
		if v == 0 {
			return 0, true
		}
		if n > math.MaxInt/v {
			return 0, false
		}
		n *= v
	}
	if r > 0 && n > math.MaxInt/r {
		return 0, false
	}
	return n * r, true
}

// Planned is how many steps a run of p makes: every combination of its
// sweeps' values the check before the run did not leave out (Skipped),
// Repeat times; with AutoRepeat, lo from the first rounds and hi at the
// cap. 0, 0 when the count does not fit in an int.
func (p *Plan) Planned() (lo, hi int) {
	combos, ok := p.countSteps(1)
	if !ok {
		return 0, 0
	}
	var left []Skip
	for _, s := range p.Skipped {
		if !slices.ContainsFunc(left, func(l Skip) bool { return sameAxes(l.Axes, s.Axes) }) {
			left = append(left, s)
		}
	}
	// Fewer combinations than countSteps checked: the products fit.
	if _, ok := p.countSteps(p.MaxRepeats()); !ok {
		return 0, 0
	}
	combos = max(combos-len(left), 0)
	return combos * p.rounds(), combos * p.MaxRepeats()
}

// MaxRepeats is the most repeats a run of p can make of one combination:
// its repeat count, or with AutoRepeat the cap, or a PTS test's most
// rounds.
func (p *Plan) MaxRepeats() int {
	r := p.rounds()
	if p.AutoRepeat != nil {
		r = max(r, p.AutoRepeat.Max)
	}
	if p.PTS != nil {
		r = max(r, p.PTS.Rounds())
	}
	return r
}

// MaxSteps is the most steps a run of p can hold: every combination of
// its sweeps' values MaxRepeats times; false when that overflows.
func (p *Plan) MaxSteps() (int, bool) { return p.countSteps(p.MaxRepeats()) }

// CheckLimits refuses a plan that asks more than l allows, naming what and
// how to lower it. A zero field of l is that field of DefaultLimits.
func (p *Plan) CheckLimits(l Limits) error {
	d := DefaultLimits()
	if l.Steps <= 0 {
		l.Steps = d.Steps
	}
	if l.Jobs <= 0 {
		l.Jobs = d.Jobs
	}
	if l.Buffers <= 0 {
		l.Buffers = d.Buffers
	}
	n, ok := p.StepCount()
	if !ok || n > l.Steps {
		shown := fmt.Sprint(n)
		if !ok {
			shown = "more than 2^63"
		}
		return &bench.OptionError{Option: "sweep", Msg: fmt.Sprintf("the plan has %s steps (sweep values × repeats); at most %d: sweep fewer values or repeat less", shown, l.Steps)}
	}
	for _, c := range p.combos() {
		if p.skipped(c) {
			continue
		}
		st, err := p.step(0, 0, c)
		if err != nil {
			return err
		}
		jobs, bytes := stepLoad(&st.Config)
		label := fmtAxes(c)
		if label != "" {
			label = " (" + label + ")"
		}
		if jobs > l.Jobs {
			return &bench.OptionError{Option: "numjobs", Msg: fmt.Sprintf("a step%s runs %d jobs at once; at most %d threads: lower numjobs or run fewer jobs together (stonewall)", label, jobs, l.Jobs)}
		}
		if bytes > l.Buffers {
			return &bench.OptionError{Option: "iodepth", Msg: fmt.Sprintf("a step%s maps %s of I/O buffers at once (iodepth × bs × jobs); at most %s: lower iodepth, bs or numjobs",
				label, units.Bytes(float64(bytes)), units.Bytes(float64(l.Buffers)))}
		}
	}
	return nil
}

// stepLoad is the most job threads and buffer bytes a config runs at once:
// a group that does not wait runs beside the one before it.
func stepLoad(cfg *bench.Config) (jobs int, bytes int64) {
	var curJobs int
	var curBytes int64
	for i, g := range cfg.Groups {
		if i == 0 || g.Wait {
			jobs, bytes = max(jobs, curJobs), max(bytes, curBytes)
			curJobs, curBytes = 0, 0
		}
		for _, j := range g.Jobs {
			curJobs++
			depth := int64(j.IODepth)
			if e := j.Engine(); e != nil && e.Has(bench.SyncIO) {
				depth = 1
			}
			if j.BS > 0 && depth > math.MaxInt64/j.BS {
				curBytes = math.MaxInt64
				continue
			}
			if b := depth * j.BS; curBytes <= math.MaxInt64-b {
				curBytes += b
			} else {
				curBytes = math.MaxInt64
			}
		}
	}
	return max(jobs, curJobs), max(bytes, curBytes)
}
