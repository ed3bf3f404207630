package sweep

import (
	"fmt"
	"slices"
	"strings"

	"iolab/bench"
	"iolab/bench/fio"
)

// Axis is a dimension a plan sweeps.
type Axis string

// The axes a plan can sweep; axisTable describes each.
const (
	AxisIODepth   Axis = "iodepth"
	AxisEngine    Axis = "ioengine" // values are engine variants: io_uring+sqpoll+hipri, libaio, …
	AxisScheduler Axis = "scheduler"
	AxisNumJobs   Axis = "numjobs"
	AxisBS        Axis = "bs"
	AxisRW        Axis = "rw"
)

// AxisSpec is everything about one sweep axis: how a value applies to a
// job and reads back from one, how ranges expand, how legends name it, and
// whether the new-run form offers it. Sweep parsing, steps, summaries,
// charts, warnings and the form all ask the table (Axes, LookupAxis).
// Adding an axis is one row of axisTable.
type AxisSpec struct {
	Name Axis
	Help string // one line, for help
	// Numeric axes take ranges (lo..hi: the powers of two in between) and
	// are drawn along the x axis; the others make series.
	Numeric bool
	// Bare axes name a series by its value alone ("io_uring", "bfq"),
	// others as "axis=value" ("bs=4k").
	Bare bool
	// Form is the label of the new-run form's field for the axis; "" when
	// the form does not offer it. Placeholder is that field's hint.
	Form, Placeholder string
	// Step axes set something about the step (the I/O scheduler its disks
	// run under), not about its jobs.
	Step bool
	// Load axes set how hard the jobs drive the device (rate_iops): their
	// values are the load a QoS curve is drawn against, not alternatives
	// to compare, so the statistical diff does not offer them.
	Load bool

	// apply sets v on a job and returns the options that record it, as
	// fio would take them; nil for Step axes, which check instead.
	apply func(j *bench.Job, v string) ([]bench.Option, error)
	check func(v string) error
	// get reads a job's value back, written as a sweep value ("" for Step
	// axes).
	get func(j *bench.Job) string
	// options are the fio options whose values the axis sets.
	options []string
	// expand, when set, expands a value written as a range of the axis's
	// own (rate_iops=10%..100%); ok is false for any other value.
	expand func(v string) (values []string, ok bool, err error)
}

// axisTable lists the axes in the order help and the form show them.
var axisTable = []AxisSpec{
	optionAxis(AxisIODepth, AxisSpec{Numeric: true, Form: "iodepth", Placeholder: "1,4,16 or 1..256",
		Help: "I/Os in flight per job"}),
	{Name: AxisEngine, Bare: true, Form: "engines", Placeholder: enginePlaceholder(), Help: "ioengine, with an engine's modes joined by + (io_uring+sqpoll+hipri)",
		apply: bench.ApplyEngineVariant, get: bench.EngineVariant, options: append([]string{"ioengine"}, bench.EngineModeOptions()...)},
	{Name: AxisScheduler, Bare: true, Step: true, Form: "schedulers", Placeholder: "none,mq-deadline,bfq,kyber",
		Help: "the I/O scheduler of the targets' disks, switched before each step and restored after the run",
		check: func(v string) error {
			if v == "" || strings.ContainsAny(v, " /[]") {
				return fmt.Errorf("%q is not a scheduler name", v)
			}
			return nil
		}},
	optionAxis(AxisNumJobs, AxisSpec{Numeric: true, Form: "numjobs", Placeholder: "1 or 1,2,4,8",
		Help: "copies of each job running at once"}),
	optionAxis(AxisBS, AxisSpec{Help: "block size"}),
	optionAxis(AxisRW, AxisSpec{Bare: true, Help: "access pattern: read, write, randread, randwrite, rw, randrw"}),
	rateIOPSAxis(),
}

// enginePlaceholder lists the engines and one variant, for the form.
func enginePlaceholder() string {
	p := strings.Join(bench.EngineNames(), ",")
	for _, e := range bench.Engines() {
		if len(e.Modes) > 1 {
			return p + ", " + e.Name + "+" + e.Modes[0].Name + "+" + e.Modes[1].Name + "…"
		}
	}
	return p
}

// optionAxis is an axis that sets the fio option of its name, the way the
// option parser takes it, and reads it back through the option's Get.
func optionAxis(name Axis, spec AxisSpec) AxisSpec {
	spec.Name = name
	spec.options = []string{string(name)}
	spec.apply = func(j *bench.Job, v string) ([]bench.Option, error) {
		if err := fio.ApplyOption(j, string(name), v); err != nil {
			return nil, err
		}
		j.Options = j.Options[:len(j.Options)-1] // the step records it once, below
		return []bench.Option{{Name: string(name), Value: v}}, nil
	}
	spec.get = func(j *bench.Job) string {
		o, ok := fio.LookupOption(string(name))
		if !ok || o.Get == nil {
			return ""
		}
		return o.Get(j)
	}
	return spec
}

// Axes lists every axis, in the table's order.
func Axes() []AxisSpec { return slices.Clone(axisTable) }

// LookupAxis returns the axis called name: a row of the table, or any
// other fio option iolab takes, as an option axis (OptionAxis).
func LookupAxis(name Axis) (*AxisSpec, bool) {
	for i := range axisTable {
		if axisTable[i].Name == name {
			return &axisTable[i], true
		}
	}
	return OptionAxis(name)
}

// notAxes are the options no sweep may set: the job's name, and what
// decides its targets and whether it may write to them — the checks
// before a run (the dashboard's allow-list, target safety, device locks)
// look at the plan's jobs, not at each step's.
var notAxes = []string{"name", "filename", "directory", "nrfiles", "filename_format", "opendir", "allow_mounted_write"}

// OptionAxis is the axis of a fio option iolab takes that the table does
// not list (rate_iops, bssplit, iodepth_batch_submit, …), by its name or
// one of its aliases: it sets the option on every job as the option
// parser takes it, is not Numeric (its values make series, not an x
// axis) and is labelled axis=value. The axis is named after the option's
// fio name. Options in notAxes are not axes.
func OptionAxis(name Axis) (*AxisSpec, bool) {
	o, ok := fio.LookupOption(string(name))
	if !ok || slices.Contains(notAxes, o.Name) {
		return nil, false
	}
	for i := range axisTable {
		if string(axisTable[i].Name) == o.Name {
			return &axisTable[i], true // an alias of a table axis (blocksize, readwrite)
		}
	}
	spec := optionAxis(Axis(o.Name), AxisSpec{Help: o.Help})
	return &spec, true
}

// AxisNames lists the table's axes' names, for messages (any other fio
// option is an axis too: OptionAxis).
func AxisNames() []string {
	names := make([]string, len(axisTable))
	for i, a := range axisTable {
		names[i] = string(a.Name)
	}
	return names
}

// Check reports whether v is a value the axis takes (for a Step axis, a
// well-formed name; whether the disks offer it is known only before the
// run).
func (a *AxisSpec) Check(v string) error {
	if a.Step {
		return a.check(v)
	}
	j := bench.NewJob()
	_, err := a.apply(&j, v)
	return err
}

// Value reads the axis's value from a job; "" for Step axes.
func (a *AxisSpec) Value(j *bench.Job) string {
	if a.get == nil {
		return ""
	}
	return a.get(j)
}

// Label names one value of the axis in a legend: the value alone for Bare
// axes, else axis=value.
func (a *AxisSpec) Label(v string) string {
	if a.Bare {
		return v
	}
	return string(a.Name) + "=" + v
}

// applyValue sets the axis's value on a job and records it in the job's
// options, replacing any earlier value, so the step's "job options" say
// what ran. Step axes change nothing on the job.
func (a *AxisSpec) applyValue(j *bench.Job, v string) error {
	if a.Step {
		return nil
	}
	opts, err := a.apply(j, v)
	if err != nil {
		return err
	}
	if a.Name == AxisEngine {
		modes := bench.EngineModeOptions()
		j.Options = slices.DeleteFunc(j.Options, func(o bench.Option) bool { return slices.Contains(modes, o.Name) })
	}
	// The axis's own option keeps its place; the modes an engine variant
	// adds follow.
	for i, o := range opts {
		if i == 0 {
			j.Options = setOption(j.Options, o.Name, o.Value)
			continue
		}
		j.Options = append(j.Options, o)
	}
	return nil
}

// setOption sets name's value in opts, or adds it.
func setOption(opts []bench.Option, name, value string) []bench.Option {
	for i := range opts {
		if opts[i].Name == name {
			opts[i].Value = value
			return opts
		}
	}
	return append(opts, bench.Option{Name: name, Value: value})
}
