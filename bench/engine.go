package bench

import (
	"slices"
	"strings"

	"iolab/bench/engine"
)

// Engine is one of bench/engine's engines as bench's option parsing sees
// it: the engine's row, with its own options (declared in bench/engine
// against engine.Params) made OptionSpecs of a whole Job, and fio's cmdprio
// options after them on the engines that take them (engine.CmdPrio). This
// is the one place engine options meet Job: help, fio's CheckOption,
// sweeps and the web form all read Options.
type Engine struct {
	*engine.Engine
	Options []OptionSpec
}

// EngineFlags are fio's ioengine flags that iolab needs (engine.Flags).
type EngineFlags = engine.Flags

// The engine flags, under the names bench's callers know them by.
const (
	SyncIO          = engine.SyncIO
	Diskless        = engine.Diskless
	PowerOfTwoDepth = engine.PowerOfTwoDepth
	SyncInline      = engine.SyncInline
	PollQueues      = engine.PollQueues
	NoOffload       = engine.NoOffload
	NoTrim          = engine.NoTrim
)

// EngineMode is one sweep variant of an engine (engine.Mode).
type EngineMode = engine.Mode

// engineTable is bench/engine's table, in its order, with each engine's
// options as OptionSpecs.
var engineTable = jobEngines(engine.Engines())

func jobEngines(es []*engine.Engine) []*Engine {
	out := make([]*Engine, len(es))
	for i, e := range es {
		je := &Engine{Engine: e}
		for _, o := range e.Options {
			je.Options = append(je.Options, jobOption(o))
		}
		if e.Has(engine.CmdPrio) {
			je.Options = append(je.Options, cmdprioOptions...)
		}
		out[i] = je
	}
	return out
}

// jobOption is an engine's option set on and read from a job's
// engine.Params.
func jobOption(o engine.Option) OptionSpec {
	return OptionSpec{Name: o.Name, Aliases: o.Aliases, Flag: o.Flag, Example: o.Example, Unit: o.Unit, Default: o.Default, Help: o.Help,
		Set: func(j *Job, v string) error {
			p := j.EngineParams()
			if err := o.Set(&p, v); err != nil {
				return err
			}
			j.setEngineParams(p)
			return nil
		},
		Get: func(j *Job) string {
			p := j.EngineParams()
			return o.Get(&p)
		}}
}

// EngineParams are the job's fields only its engine reads. Job keeps
// them where they have always been in its JSON (hipri_percentage and
// nowait among the buffer options, userspace_reap among the batching
// ones), so this copies them out rather than embedding engine.Params.
func (j *Job) EngineParams() engine.Params {
	return engine.Params{Hipri: j.Hipri, SQThreadPoll: j.SQThreadPoll, SQThreadPollCPU: j.SQThreadPollCPU,
		FixedBufs: j.FixedBufs, RegisterFiles: j.RegisterFiles, UserspaceReap: j.UserspaceReap,
		HipriPercentage: j.HipriPercentage, NoWait: j.NoWait}
}

func (j *Job) setEngineParams(p engine.Params) {
	j.Hipri, j.SQThreadPoll, j.SQThreadPollCPU = p.Hipri, p.SQThreadPoll, p.SQThreadPollCPU
	j.FixedBufs, j.RegisterFiles, j.UserspaceReap = p.FixedBufs, p.RegisterFiles, p.UserspaceReap
	j.HipriPercentage, j.NoWait = p.HipriPercentage, p.NoWait
}

// Option returns the engine's own option called name (or an alias).
func (e *Engine) Option(name string) (*OptionSpec, bool) {
	for i := range e.Options {
		o := &e.Options[i]
		if o.Name == name || slices.Contains(o.Aliases, name) {
			return o, true
		}
	}
	return nil, false
}

// LookupEngine returns the engine called name.
func LookupEngine(name string) (*Engine, bool) {
	for _, e := range engineTable {
		if e.Name == name {
			return e, true
		}
	}
	return nil, false
}

// Engines lists the engines iolab has on this platform, in the table's
// order.
func Engines() []*Engine { return slices.Clone(engineTable) }

// EngineNames lists the engines' names, in the table's order.
func EngineNames() []string { return engine.Names() }

// Engine returns the job's engine; nil when it names none iolab has.
func (j *Job) Engine() *Engine {
	e, _ := LookupEngine(j.IOEngine)
	return e
}

// Diskless reports whether the job's engine opens no file (null).
func (j *Job) Diskless() bool {
	e := j.Engine()
	return e != nil && e.Has(Diskless)
}

// EngineVariant names a job's engine the way ioengine sweep values do:
// io_uring+sqpoll+hipri, libaio, … (the inverse of ApplyEngineVariant).
func EngineVariant(j *Job) string {
	v := j.IOEngine
	e := j.Engine()
	if e == nil {
		return v
	}
	for _, m := range e.Modes {
		if o, ok := e.Option(m.Option); ok && o.Get != nil && o.Get(j) == "1" {
			v += "+" + m.Name
		}
	}
	return v
}

// ApplyEngineVariant sets a job's engine from a sweep value such as
// io_uring+sqpoll+hipri: the engine, with every mode named turned on and
// every other mode turned off. It returns the options as fio would take
// them (ioengine=io_uring, sqthread_poll=1, hipri=1; the modes off as 0),
// for the job's recorded options.
func ApplyEngineVariant(j *Job, v string) ([]Option, error) {
	parts := strings.Split(v, "+")
	e, ok := LookupEngine(parts[0])
	if !ok {
		return nil, &OptionError{Option: "ioengine", Value: v,
			Msg: "\"" + parts[0] + "\" is not an engine; use one of " + strings.Join(EngineNames(), ", ") + variantHint()}
	}
	on := map[string]bool{}
	for _, m := range parts[1:] {
		i := slices.IndexFunc(e.Modes, func(x EngineMode) bool { return x.Name == m })
		if i < 0 {
			return nil, &OptionError{Option: "ioengine", Value: v, Msg: "engine variant \"" + v + "\": " + modeHint(e, m)}
		}
		on[e.Modes[i].Option] = true
	}
	// Modes of other engines go too: a libaio step of an io_uring+hipri
	// sweep does not poll.
	for _, other := range engineTable {
		for _, m := range other.Modes {
			if o, ok := other.Option(m.Option); ok {
				if err := o.Set(j, o.Default); err != nil {
					return nil, err
				}
			}
		}
	}
	j.IOEngine = e.Name
	opts := []Option{{Name: "ioengine", Value: e.Name}}
	for _, m := range e.Modes {
		if on[m.Option] {
			o, _ := e.Option(m.Option)
			if err := o.Set(j, "1"); err != nil {
				return nil, err
			}
			opts = append(opts, Option{Name: m.Option})
		}
	}
	return opts, nil
}

// EngineModeOptions are the option names every engine's modes set, so a
// sweep can drop them from a job's recorded options before it records the
// variant's own.
func EngineModeOptions() []string {
	var names []string
	for _, e := range engineTable {
		for _, m := range e.Modes {
			if !slices.Contains(names, m.Option) {
				names = append(names, m.Option)
			}
		}
	}
	return names
}

func variantHint() string {
	var ex []string
	for _, e := range engineTable {
		if len(e.Modes) > 0 {
			ex = append(ex, e.Name+"+"+e.Modes[0].Name)
		}
	}
	if len(ex) == 0 {
		return ""
	}
	return ", with an engine's modes joined by + (" + strings.Join(ex, ", ") + ")"
}

func modeHint(e *Engine, m string) string {
	for _, other := range engineTable {
		if other != e && slices.ContainsFunc(other.Modes, func(x EngineMode) bool { return x.Name == m }) {
			return m + " is an " + other.Name + " mode"
		}
	}
	names := make([]string, len(e.Modes))
	for i, x := range e.Modes {
		names[i] = x.Name
	}
	if len(names) == 0 {
		return e.Name + " has no modes (unknown mode \"" + m + "\")"
	}
	return "unknown mode \"" + m + "\" (modes: " + strings.Join(names, ", ") + ")"
}
