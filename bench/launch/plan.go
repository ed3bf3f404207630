package launch

import (
	"slices"
	"strings"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/pts"
	"iolab/bench/sweep"
)

// Spec is a plan as a front door takes it — `iolab run`'s flags and
// arguments, or the web form and POST /api/runs — before it is parsed.
type Spec struct {
	Name   string // the run's name; "" takes the preset's, else the first job's
	Preset string
	// Args are fio options and job files, as `iolab run` takes them. With
	// a preset they override the preset's and must include
	// --filename=TARGET.
	Args []string
	// JobFile is the text of a fio job file, instead of Args.
	JobFile string
	// Sweeps replace a preset's sweep on the same axis, or add one.
	Sweeps []sweep.Sweep
	Repeat int // 0: the preset's, or 1
	// AutoRepeat repeats each combination until its median is known well
	// enough (it replaces Repeat and the preset's repeats).
	AutoRepeat *sweep.AutoRepeat

	Discard, DropCaches, AllowDiskScheduler bool
	// TraceBlock is --trace-block: the block layer traced, the run
	// refused where it cannot be (a preset's own trace is where able).
	TraceBlock bool
	// Limits bound the plan (zero fields: sweep.DefaultLimits).
	Limits sweep.Limits
	// SkipImpossible leaves out the steps the targets cannot run instead
	// of refusing the plan (sweep.Check records them).
	SkipImpossible bool
	// SLO is the latency objective for the QoS curve's knee (--slo
	// p99<1ms); "" takes the preset's, if any.
	SLO string
	// Exact makes sweeps, repeat, discard and drop caches the spec's
	// alone, not merged with the preset's: the web form shows the preset's
	// and sends back what the user kept.
	Exact bool
	// PTS, when set, makes the plan a SNIA PTS test on the device Args
	// names (--filename=DEV; further fio options in Args override the
	// test's, such as --ioengine): the test's matrix, rounds until steady
	// state, purge and preconditioning first. It takes no preset, job
	// file, sweeps or repeats.
	PTS *pts.Spec
	// Quota, when set, bounds what the plan may lay out in the data
	// directory (Quota.Check): the dashboard's and an agent's plans.
	Quota *Quota
}

// NewPlan builds the plan a spec describes: a preset's jobs, sweeps and
// flags under the spec's overrides, or the fio options or job file as
// given. Errors are *bench.OptionError naming the option at fault.
func NewPlan(spec Spec) (*sweep.Plan, error) {
	if spec.PTS != nil {
		return newPTSPlan(spec)
	}
	plan := &sweep.Plan{Repeat: 1, Discard: spec.Discard, DropCaches: spec.DropCaches, AllowDiskScheduler: spec.AllowDiskScheduler,
		SkipImpossible: spec.SkipImpossible}
	args := spec.Args
	if spec.Preset != "" {
		if spec.JobFile != "" {
			return nil, &bench.OptionError{Option: "preset", Msg: "give a job file or a preset, not both"}
		}
		p, err := sweep.PresetByName(spec.Preset)
		if err != nil {
			return nil, err
		}
		filename, overrides := takeFilename(args)
		if filename == "" {
			return nil, &bench.OptionError{Option: "filename", Msg: "preset " + p.Name + " needs a target: --filename=TARGET"}
		}
		args = p.Args(filename, overrides)
		plan.Name, plan.Preset = p.Name, p.Name
		plan.TraceBlockWhereAble = p.TraceBlock
		if spec.SLO == "" && p.SLO != "" {
			spec.SLO = p.SLO
		}
		if !spec.Exact {
			plan.Sweeps = slices.Clone(p.Sweeps)
			plan.Repeat = max(p.Repeat, 1)
			plan.Discard = plan.Discard || p.Discard
			plan.DropCaches = plan.DropCaches || p.DropCaches
		}
	}
	var cfg *bench.Config
	var err error
	if spec.JobFile != "" {
		cfg, err = fio.ParseJobFile(strings.NewReader(spec.JobFile), "jobfile")
		if err == nil {
			args = cfg.Args()
		}
	} else {
		cfg, err = fio.ParseArgs(args)
	}
	if err != nil {
		return nil, err
	}
	for _, sw := range spec.Sweeps {
		plan.Sweeps = slices.DeleteFunc(plan.Sweeps, func(x sweep.Sweep) bool { return x.Axis == sw.Axis })
		plan.Sweeps = append(plan.Sweeps, sw)
	}
	if spec.Repeat > 0 {
		plan.Repeat = spec.Repeat
	}
	if spec.AutoRepeat != nil {
		plan.Repeat, plan.AutoRepeat = 1, spec.AutoRepeat
	}
	if spec.SLO != "" {
		slo, err := sweep.ParseSLO(spec.SLO)
		if err != nil {
			return nil, err
		}
		plan.SLO = &slo
	}
	plan.Args = args
	plan.Base = *cfg
	plan.Base.TraceBlock = plan.Base.TraceBlock || spec.TraceBlock
	if err := plan.CheckLimits(spec.Limits); err != nil {
		return nil, err
	}
	if spec.Quota != nil {
		// Before anything names the plan's files one by one: a job of
		// 100,000 files is refused here, at once.
		if err := spec.Quota.Check(plan); err != nil {
			return nil, err
		}
	}
	switch {
	case spec.Name != "":
		plan.Name = spec.Name
	case plan.Name == "" && len(cfg.Jobs) > 0:
		plan.Name = cfg.Jobs[0].Name
	}
	return plan, nil
}

// takeFilename takes the global --filename out of args (--filename=T or
// --filename T, before the first --name) and returns it and the rest.
func takeFilename(args []string) (filename string, rest []string) {
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(args[i], "=")
		if name == "--name" || name == "-name" {
			return filename, append(rest, args[i:]...)
		}
		if name == "--filename" {
			if !hasValue && i+1 < len(args) {
				value = args[i+1]
				i++
			}
			filename = value
			continue
		}
		rest = append(rest, args[i])
	}
	return filename, rest
}
