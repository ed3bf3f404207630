package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// axes lists the axes a sweep may use, for error messages.
var axes = []Axis{AxisIODepth, AxisEngine, AxisScheduler, AxisNumJobs, AxisBS, AxisRW}

// Engine variants: a base engine with io_uring's modes joined by '+'.
var engineModes = map[string]func(*Job){
	"hipri":         func(j *Job) { j.Hipri = true },
	"sqpoll":        func(j *Job) { j.SQThreadPoll = true },
	"fixedbufs":     func(j *Job) { j.FixedBufs = true },
	"registerfiles": func(j *Job) { j.RegisterFiles = true },
}

// ParseSweep parses AXIS=v1,v2,… as given to --sweep. Numeric axes take
// ranges: iodepth=1..256 is every power of two from 1 to 256. Values are
// checked here, so a bad one fails before anything runs.
func ParseSweep(s string) (Sweep, error) {
	name, list, ok := strings.Cut(s, "=")
	if !ok || list == "" {
		return Sweep{}, &OptionError{Option: "sweep", Value: s, Msg: fmt.Sprintf("--sweep %q: want AXIS=v1,v2,… (axes: %s)", s, axisNames())}
	}
	axis := Axis(strings.TrimSpace(name))
	if !slices.Contains(axes, axis) {
		return Sweep{}, &OptionError{Option: "sweep", Value: s, Msg: fmt.Sprintf("--sweep: %q is not an axis; use one of %s", name, axisNames())}
	}
	sw := Sweep{Axis: axis}
	for _, v := range strings.Split(list, ",") {
		v = strings.TrimSpace(v)
		if v == "" {
			return Sweep{}, &OptionError{Option: "sweep", Value: s, Msg: fmt.Sprintf("--sweep %s: empty value in %q", axis, list)}
		}
		if lo, hi, isRange := strings.Cut(v, ".."); isRange && (axis == AxisIODepth || axis == AxisNumJobs) {
			vals, err := powersOfTwo(lo, hi)
			if err != nil {
				return Sweep{}, &OptionError{Option: "sweep", Value: s, Msg: fmt.Sprintf("--sweep %s: %v", axis, err)}
			}
			sw.Values = append(sw.Values, vals...)
			continue
		}
		// Check the value the way the job option would take it.
		j := NewJob()
		if err := applyAxis(&j, axis, v); err != nil {
			return Sweep{}, &OptionError{Option: "sweep", Value: s, Msg: fmt.Sprintf("--sweep %s: %v", axis, err)}
		}
		sw.Values = append(sw.Values, v)
	}
	return sw, nil
}

func axisNames() string {
	names := make([]string, len(axes))
	for i, a := range axes {
		names[i] = string(a)
	}
	return strings.Join(names, ", ")
}

// powersOfTwo expands lo..hi into lo, 2·lo, 4·lo, … up to hi.
func powersOfTwo(lo, hi string) ([]string, error) {
	a, errA := strconv.Atoi(lo)
	b, errB := strconv.Atoi(hi)
	if errA != nil || errB != nil || a < 1 || b < a {
		return nil, fmt.Errorf("range %s..%s: want two whole numbers, 1 ≤ first ≤ last (e.g. 1..256)", lo, hi)
	}
	var out []string
	for v := a; v <= b; v *= 2 {
		out = append(out, strconv.Itoa(v))
	}
	return out, nil
}

// EngineVariant names a job's engine the way ioengine sweep values do:
// io_uring+sqpoll+hipri, libaio, … (the inverse of applying the value).
func EngineVariant(j *Job) string {
	v := j.IOEngine
	for _, m := range []struct {
		on   bool
		name string
	}{{j.SQThreadPoll, "sqpoll"}, {j.Hipri, "hipri"}, {j.FixedBufs, "fixedbufs"}, {j.RegisterFiles, "registerfiles"}} {
		if m.on {
			v += "+" + m.name
		}
	}
	return v
}

// applyAxis sets one axis value on a job.
func applyAxis(j *Job, axis Axis, v string) error {
	switch axis {
	case AxisEngine:
		parts := strings.Split(v, "+")
		if !slices.Contains(Engines, parts[0]) {
			return fmt.Errorf("%q is not an engine; use one of %s, with io_uring modes joined by + (io_uring+sqpoll+hipri)", parts[0], strings.Join(Engines, ", "))
		}
		j.IOEngine = parts[0]
		j.Hipri, j.SQThreadPoll, j.FixedBufs, j.RegisterFiles = false, false, false, false
		for _, m := range parts[1:] {
			set, ok := engineModes[m]
			if !ok {
				return fmt.Errorf("engine variant %q: unknown mode %q (modes: hipri, sqpoll, fixedbufs, registerfiles)", v, m)
			}
			if parts[0] != "io_uring" {
				return fmt.Errorf("engine variant %q: %s is an io_uring mode", v, m)
			}
			set(j)
		}
		return nil
	case AxisScheduler:
		if v == "" || strings.ContainsAny(v, " /[]") {
			return fmt.Errorf("%q is not a scheduler name", v)
		}
		return nil
	}
	return ApplyOption(j, string(axis), v)
}

// Steps expands the plan into the steps it runs, in order: each repeat runs
// every combination of the sweep values (the first sweep varies slowest),
// so repeats are spread over the run instead of back to back.
func (p *Plan) Steps() ([]Step, error) {
	if len(p.Base.Jobs) == 0 {
		return nil, fmt.Errorf("plan %q has no jobs", p.Name)
	}
	combos := [][]AxisValue{nil}
	for _, sw := range p.Sweeps {
		var next [][]AxisValue
		for _, c := range combos {
			for _, v := range sw.Values {
				next = append(next, append(slices.Clone(c), AxisValue{sw.Axis, v}))
			}
		}
		combos = next
	}
	var steps []Step
	for r := range max(p.Repeat, 1) {
		for _, c := range combos {
			st := Step{Seq: len(steps), Repeat: r, Axes: c}
			jobs := make([]Job, len(p.Base.Jobs))
			for i, base := range p.Base.Jobs {
				j := base.clone()
				for _, av := range c {
					if av.Axis == AxisScheduler {
						st.Scheduler = av.Value
						continue
					}
					if err := applyAxis(&j, av.Axis, av.Value); err != nil {
						return nil, fmt.Errorf("step %d (%s): job %s: %w", st.Seq+1, fmtAxes(c), j.Name, err)
					}
					j.Options = axisOptions(j.Options, av)
				}
				if p.Runtime > 0 {
					j.Runtime = p.Runtime
				}
				if p.RampTime > 0 {
					j.RampTime = p.RampTime
				}
				if err := FinishJob(&j); err != nil {
					return nil, fmt.Errorf("step %d (%s): job %s: %w", st.Seq+1, fmtAxes(c), j.Name, err)
				}
				jobs[i] = j
			}
			st.Config = p.Base
			st.Config.Jobs = jobs
			st.Config.Groups = Expand(jobs)
			steps = append(steps, st)
		}
	}
	return steps, nil
}

// axisOptions records an axis value in a job's options as fio would take
// them, so the step's "job options" say what ran: io_uring+sqpoll+hipri is
// ioengine=io_uring with sqthread_poll and hipri.
func axisOptions(opts []Option, av AxisValue) []Option {
	if av.Axis != AxisEngine {
		return setOption(opts, string(av.Axis), av.Value)
	}
	modes := map[string]string{"hipri": "hipri", "sqpoll": "sqthread_poll", "fixedbufs": "fixedbufs", "registerfiles": "registerfiles"}
	opts = slices.DeleteFunc(opts, func(o Option) bool {
		return slices.Contains([]string{"hipri", "sqthread_poll", "fixedbufs", "registerfiles"}, o.Name)
	})
	parts := strings.Split(av.Value, "+")
	opts = setOption(opts, "ioengine", parts[0])
	for _, m := range parts[1:] {
		opts = append(opts, Option{Name: modes[m]})
	}
	return opts
}

// setOption sets name's value in opts, or adds it.
func setOption(opts []Option, name, value string) []Option {
	for i := range opts {
		if opts[i].Name == name {
			opts[i].Value = value
			return opts
		}
	}
	return append(opts, Option{Name: name, Value: value})
}

func fmtAxes(c []AxisValue) string {
	parts := make([]string, len(c))
	for i, av := range c {
		parts[i] = string(av.Axis) + "=" + av.Value
	}
	return strings.Join(parts, " ")
}

// String shows a step's axis values, e.g. "iodepth=8 ioengine=libaio #2".
func (s *Step) String() string {
	a := fmtAxes(s.Axes)
	if a == "" {
		a = "base"
	}
	return fmt.Sprintf("%s #%d", a, s.Repeat+1)
}
