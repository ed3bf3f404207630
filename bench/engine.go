package bench

import (
	"slices"
	"strings"
)

// Engine is one ioengine, the way fio's struct ioengine_ops describes one:
// its name, what the job loop must know of it, its own options and its
// constructor. Each engine is one file that declares its Engine; the table
// (engineTable, in engines_linux.go) lists them, and everything else asks
// the table instead of comparing names.
type Engine struct {
	Name string
	Help string // one line, for help and the web form
	// Flags are what the job loop and the checks before a run must know.
	Flags EngineFlags
	// MaxDepth is the largest iodepth the engine can set up (io_uring's
	// IORING_MAX_ENTRIES); 0: iodepth's own limit.
	MaxDepth int
	// Options are the fio options only this engine takes: fio knows them
	// only once the engine is loaded, and refuses them on other engines.
	Options []OptionSpec
	// Modes are the engine's sweep variants (io_uring+sqpoll+hipri): each
	// turns one of Options on.
	Modes []EngineMode
	open  engineOpener
}

// EngineFlags are fio's ioengine flags that iolab needs.
type EngineFlags uint

const (
	// SyncIO engines do the I/O inside submit: clat spans the call, there is
	// no slat, and jobs run them at depth 1 (fio's FIO_SYNCIO).
	SyncIO EngineFlags = 1 << iota
	// Diskless engines open no file; their jobs need a size and no
	// filename (fio's FIO_DISKLESSIO).
	Diskless
	// PowerOfTwoDepth engines run iodepth rounded up to a power of two, as
	// fio's io_uring engine does (its ring has that many entries).
	PowerOfTwoDepth
	// SyncInline engines take no fsync or fdatasync: the job thread makes
	// the call itself, once nothing waits to be submitted (fio 3.33's
	// libaio, which does not trust Linux AIO's fsync).
	SyncInline
	// PollQueues engines fail every hipri I/O on a device without poll
	// queues (io_uring's IOPOLL); others fall back to interrupts (RWF_HIPRI).
	PollQueues
)

// Depth is how many I/Os the engine keeps in flight for iodepth: 1 for a
// sync engine, iodepth rounded up to a power of two where the engine does
// that, else iodepth.
func (e *Engine) Depth(iodepth int) int {
	switch {
	case e.Has(SyncIO):
		return 1
	case e.Has(PowerOfTwoDepth):
		d := 1
		for d < iodepth {
			d <<= 1
		}
		return d
	}
	return iodepth
}

// EngineMode is one sweep variant of an engine: Name after a '+' in a sweep
// value (io_uring+sqpoll) sets Option (sqthread_poll) to 1.
type EngineMode struct {
	Name   string
	Option string
}

// Has reports whether the engine has all of flags.
func (e *Engine) Has(flags EngineFlags) bool { return e.Flags&flags == flags }

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
func EngineNames() []string {
	names := make([]string, len(engineTable))
	for i, e := range engineTable {
		names[i] = e.Name
	}
	return names
}

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
