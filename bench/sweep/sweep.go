package sweep

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/units"
)

// ParseSweep parses AXIS=v1,v2,… as given to --sweep: AXIS is one of the
// table's axes or any fio option iolab takes (OptionAxis). Values are
// separated by commas, or by semicolons when a value holds a comma
// (SplitValues: bs=4k,64k;8k,128k sweeps two per-direction block sizes).
// Numeric axes take ranges: iodepth=1..256 is every power of two from 1
// to 256. Values are checked here, so a bad one fails before anything
// runs.
func ParseSweep(s string) (Sweep, error) {
	name, list, ok := strings.Cut(s, "=")
	if !ok || list == "" {
		return Sweep{}, &bench.OptionError{Option: "sweep", Value: s, Msg: fmt.Sprintf("--sweep %q: want AXIS=v1,v2,… (axes: %s, or any fio option iolab takes)", s, axisNames())}
	}
	return NewSweep(Axis(strings.TrimSpace(name)), SplitValues(list))
}

// SplitValues splits a sweep's list of values: at semicolons when it has
// one (values that hold commas: bs=4k,64k;8k,128k, where a last ";" may
// end a list of one), else at commas.
func SplitValues(list string) []string {
	sep := ","
	if strings.Contains(list, ";") {
		sep = ";"
		list = strings.TrimSuffix(strings.TrimSpace(list), ";")
	}
	return strings.Split(list, sep)
}

// JoinValues writes values as SplitValues reads them back: with commas,
// or with semicolons when a value holds a comma.
func JoinValues(values []string) string {
	if !slices.ContainsFunc(values, func(v string) bool { return strings.Contains(v, ",") }) {
		return strings.Join(values, ",")
	}
	s := strings.Join(values, ";")
	if len(values) == 1 {
		s += ";"
	}
	return s
}

// String is the sweep as --sweep takes it: AXIS=v1,v2 (JoinValues).
func (sw Sweep) String() string { return string(sw.Axis) + "=" + JoinValues(sw.Values) }

// NewSweep checks values on axis and expands ranges, as ParseSweep does
// for a list already split: the API's and the form's sweeps come this
// way, a value per string.
func NewSweep(axis Axis, values []string) (Sweep, error) {
	s := string(axis) + "=" + strings.Join(values, ";")
	spec, ok := LookupAxis(axis)
	if !ok {
		msg := fmt.Sprintf("--sweep: %q is not an axis%s; use one of %s, or a fio option iolab takes", axis, didYouMean(axis), axisNames())
		if slices.Contains(notAxes, string(axis)) {
			msg = fmt.Sprintf("--sweep: %s cannot be swept: the checks before a run look at the plan's jobs' %s", axis, axis)
		}
		return Sweep{}, &bench.OptionError{Option: "sweep", Value: s, Msg: msg}
	}
	axis = spec.Name // fio's name for an alias (blocksize is bs)
	sw := Sweep{Axis: axis}
	if n := len(values); n > maxSweepValues {
		return Sweep{}, &bench.OptionError{Option: "sweep", Value: s, Msg: fmt.Sprintf("--sweep %s: %d values; at most %d", axis, n, maxSweepValues)}
	}
	for _, v := range values {
		v = strings.TrimSpace(v)
		if v == "" {
			return Sweep{}, &bench.OptionError{Option: "sweep", Value: s, Msg: fmt.Sprintf("--sweep %s: empty value in %q", axis, JoinValues(values))}
		}
		if spec.expand != nil {
			vals, ok, err := spec.expand(v)
			if err != nil {
				return Sweep{}, &bench.OptionError{Option: "sweep", Value: s, Msg: fmt.Sprintf("--sweep %s: %v", axis, err)}
			}
			if ok {
				sw.Values = append(sw.Values, vals...)
				continue
			}
		}
		if lo, hi, isRange := strings.Cut(v, ".."); isRange && spec.Numeric {
			vals, err := powersOfTwo(lo, hi)
			if err != nil {
				return Sweep{}, &bench.OptionError{Option: "sweep", Value: s, Msg: fmt.Sprintf("--sweep %s: %v", axis, err)}
			}
			for _, rv := range vals {
				if err := spec.Check(rv); err != nil {
					return Sweep{}, &bench.OptionError{Option: "sweep", Value: s, Msg: fmt.Sprintf("--sweep %s: range %s: %v", axis, v, err)}
				}
			}
			sw.Values = append(sw.Values, vals...)
			continue
		}
		// Check the value the way the job option would take it.
		if err := spec.Check(v); err != nil {
			return Sweep{}, &bench.OptionError{Option: "sweep", Value: s, Msg: fmt.Sprintf("--sweep %s: %v", axis, err)}
		}
		sw.Values = append(sw.Values, v)
	}
	return withProbe(sw), nil
}

func axisNames() string { return strings.Join(AxisNames(), ", ") }

// didYouMean names the axis nearest to a mistyped one by edit distance
// (units.Closest, as for a mistyped option or command): the table's axes
// first, so that one of them wins a tie with a fio option, then every
// option iolab takes and its aliases; "" when none is near.
func didYouMean(axis Axis) string {
	names := AxisNames()
	for _, o := range fio.AllOptions() {
		for _, n := range append([]string{o.Name}, o.Aliases...) {
			if !slices.Contains(notAxes, o.Name) && !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	if near := units.Closest(string(axis), names); near != "" {
		return fmt.Sprintf(" (did you mean %q?)", near)
	}
	return ""
}

// maxSweepValues bounds one sweep's values.
const maxSweepValues = 1000

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
		if v > b/2 { // the next doubling would pass b, or overflow
			break
		}
	}
	return out, nil
}

// Steps expands the plan into the steps it runs, in order: each repeat runs
// every combination of the sweep values (the first sweep varies slowest),
// so repeats are spread over the run instead of back to back.
func (p *Plan) Steps() ([]Step, error) {
	if len(p.Base.Jobs) == 0 {
		return nil, fmt.Errorf("plan %q has no jobs", p.Name)
	}
	if n, ok := p.StepCount(); !ok || n > hardMaxSteps {
		return nil, &bench.OptionError{Option: "sweep", Msg: fmt.Sprintf("the plan has too many steps (sweep values × repeats); at most %d", hardMaxSteps)}
	}
	combos := p.combos()
	var steps []Step
	for r := range p.rounds() {
		for _, c := range combos {
			if p.skipped(c) {
				continue
			}
			st, err := p.step(len(steps), r, c)
			if err != nil {
				return nil, err
			}
			steps = append(steps, st)
		}
	}
	return steps, nil
}

// combos are every combination of the sweeps' values, the first sweep
// varying slowest.
func (p *Plan) combos() [][]AxisValue {
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
	return combos
}

// rounds is how many times Steps runs every combination: Repeat, or with
// AutoRepeat the rounds every combination runs before any is judged.
func (p *Plan) rounds() int {
	if a := p.AutoRepeat; a != nil {
		return min(max(p.Repeat, MinAutoRepeat), max(a.Max, MinAutoRepeat))
	}
	return max(p.Repeat, 1)
}

// step builds step seq: repeat r of the combination c.
func (p *Plan) step(seq, r int, c []AxisValue) (Step, error) {
	st := Step{Seq: seq, Repeat: r, Axes: c}
	jobs := make([]bench.Job, len(p.Base.Jobs))
	for i, base := range p.Base.Jobs {
		j := base.Clone()
		for _, av := range c {
			spec, ok := LookupAxis(av.Axis)
			if !ok {
				return Step{}, fmt.Errorf("step %d (%s): %q is not an axis", st.Seq+1, fmtAxes(c), av.Axis)
			}
			if spec.Step && av.Axis == AxisScheduler {
				st.Scheduler = av.Value
			}
			if err := spec.applyValue(&j, av.Value); err != nil {
				return Step{}, fmt.Errorf("step %d (%s): job %s: %w", st.Seq+1, fmtAxes(c), j.Name, err)
			}
		}
		if p.Runtime > 0 {
			j.Runtime = p.Runtime
		}
		if p.RampTime > 0 {
			j.RampTime = p.RampTime
		}
		if err := fio.FinishJob(&j); err != nil {
			return Step{}, fmt.Errorf("step %d (%s): job %s: %w", st.Seq+1, fmtAxes(c), j.Name, err)
		}
		jobs[i] = j
	}
	st.Config = p.Base
	st.Config.Jobs = jobs
	st.Config.Groups = bench.Expand(jobs)
	return st, nil
}

// FormatAxes writes axis values as "iodepth=8 ioengine=libaio".
func FormatAxes(c []AxisValue) string { return fmtAxes(c) }

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
