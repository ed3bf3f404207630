package sweep

import (
	"fmt"
	"slices"
	"strings"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/units"
)

// Preset is a ready-made plan for one of the experiments in DESIGN.md:
// `iolab run --preset NAME --filename TARGET [overrides]`.
type Preset struct {
	Name, Description string
	// Global are fio options for every job: they go before the first
	// --name. The target (--filename) is not among them; Args adds it.
	Global []string
	// Jobs are each job's own options, each starting with --name=…. Jobs
	// in one preset run at the same time (none sets stonewall).
	Jobs   [][]string
	Sweeps []Sweep
	Repeat int
	// Before each step.
	Discard, DropCaches bool
	// Measured is the job the experiment measures, which charts draw
	// first (the foreground reader of sched-fairness; the others load the
	// device); "" is the first job.
	Measured string
}

// Presets returns the presets in the order `iolab presets` lists them: the
// scheduler write-up's three, then the engine and the scaling ones. Each
// call builds them afresh, so callers may change what they get.
func Presets() []Preset {
	// The blk-mq schedulers the scheduler write-up compares.
	schedulers := func() []Sweep {
		return []Sweep{{Axis: AxisScheduler, Values: []string{"none", "mq-deadline", "bfq", "kyber"}}}
	}
	return []Preset{
		{
			Name:        "sched-mixed",
			Description: "I/O schedulers on a 70/30 4 KiB random read/write at iodepth 8 (libaio, O_DIRECT, 30 s), caches dropped, 3 repeats per scheduler",
			Global: []string{
				"--ioengine=libaio", "--direct=1",
				"--rw=randrw", "--rwmixread=70", "--bs=4k", "--iodepth=8",
				"--runtime=30", "--time_based",
			},
			Jobs:       [][]string{{"--name=randrw-70-30"}},
			Sweeps:     schedulers(),
			Repeat:     3,
			DropCaches: true,
		},
		{
			Name:        "sched-seqwrite",
			Description: "I/O schedulers on a 1 MiB sequential write at iodepth 4 (libaio, O_DIRECT, 30 s), caches dropped, 3 repeats per scheduler",
			Global: []string{
				"--ioengine=libaio", "--direct=1",
				"--rw=write", "--bs=1m", "--iodepth=4",
				"--runtime=30", "--time_based",
			},
			Jobs:       [][]string{{"--name=seqwrite"}},
			Sweeps:     schedulers(),
			Repeat:     3,
			DropCaches: true,
		},
		{
			// The write-up's finding: bfq keeps the reader's latency about
			// 4× lower than the others, at ~20 % of the writer's throughput.
			Name:        "sched-fairness",
			Description: "I/O scheduler fairness: a background 1 MiB sequential writer (iodepth 16) and a foreground 4 KiB random reader (iodepth 1) at the same time (libaio, O_DIRECT, 30 s), caches dropped, 3 repeats per scheduler",
			Global: []string{
				"--ioengine=libaio", "--direct=1",
				"--runtime=30", "--time_based",
			},
			Jobs: [][]string{
				{"--name=bg-writer", "--rw=write", "--bs=1m", "--iodepth=16"},
				{"--name=fg-reader", "--rw=randread", "--bs=4k", "--iodepth=1"},
			},
			Sweeps:     schedulers(),
			Repeat:     3,
			DropCaches: true,
			Measured:   "fg-reader",
		},
		{
			// The base job holds the first value of each axis, so that it
			// is a valid run by itself; each step sets both.
			Name:        "engines-randwrite",
			Description: "libaio vs io_uring variants on 4 KiB random writes, iodepth 1…256 (O_DIRECT, 10 s ramp + 60 s), blkdiscard before each step, 3 repeats",
			Global: []string{
				"--ioengine=io_uring", "--direct=1",
				"--rw=randwrite", "--bs=4k", "--iodepth=1",
				"--ramp_time=10", "--runtime=60", "--time_based",
			},
			Jobs: [][]string{{"--name=randwrite"}},
			Sweeps: []Sweep{
				{Axis: AxisIODepth, Values: []string{"1", "2", "4", "8", "16", "32", "64", "128", "256"}},
				{Axis: AxisEngine, Values: []string{"io_uring", "io_uring+hipri", "io_uring+sqpoll", "io_uring+sqpoll+hipri", "libaio"}},
			},
			Repeat:  3,
			Discard: true,
		},
		{
			// group_reporting: the scaling table wants the aggregate of the
			// clones, as the write-up's "parallel clients" were.
			Name:        "numjobs-scaling",
			Description: "aggregate throughput as parallel jobs grow 1→32: 4 KiB random reads, io_uring at iodepth 8 per job (O_DIRECT, 30 s), 3 repeats",
			Global: []string{
				"--ioengine=io_uring", "--direct=1",
				"--rw=randread", "--bs=4k", "--iodepth=8",
				"--runtime=30", "--time_based",
				"--numjobs=1", "--group_reporting",
			},
			Jobs: [][]string{{"--name=scaling"}},
			Sweeps: []Sweep{
				{Axis: AxisNumJobs, Values: []string{"1", "2", "4", "8", "16", "32"}},
			},
			Repeat: 3,
		},
	}
}

// PresetByName returns the preset called name.
func PresetByName(name string) (Preset, error) {
	presets := Presets()
	var names []string
	for _, p := range presets {
		if p.Name == name {
			return p, nil
		}
		names = append(names, p.Name)
	}
	msg := fmt.Sprintf("unknown preset %q", name)
	if s := units.Closest(name, names); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return Preset{}, &bench.OptionError{Option: "preset", Value: name, Msg: msg + "; the presets are " + strings.Join(names, ", ")}
}

// Args builds the fio command line ParseArgs takes: --filename=filename,
// the preset's global options, its jobs, and the user's overrides.
//
// An override sets an option wherever the preset sets it (among the global
// options and in each job, so --iodepth=4 changes both jobs of
// sched-fairness), and is added to the global options when the preset
// does not set it. Option names match through fio's aliases (--blocksize
// overrides --bs), --opt value is read as --opt=value, and an override
// --filename replaces the target. From the first --name on, overrides are
// further jobs, appended after the preset's; other arguments are job
// files and go last, after "--".
func (p Preset) Args(filename string, overrides []string) []string {
	global := append([]string{"--filename=" + filename}, p.Global...)
	jobs := make([][]string, len(p.Jobs))
	for i, j := range p.Jobs {
		jobs[i] = slices.Clone(j)
	}
	options, files := splitOverrides(overrides)
	var extraJobs []string
	for i, o := range options {
		name, _ := overrideName(o)
		if name == "name" {
			extraJobs = options[i:]
			break
		}
		set := replaceOption(global, name, o)
		for _, j := range jobs {
			set = replaceOption(j, name, o) || set
		}
		if !set {
			global = append(global, o)
		}
	}
	args := global
	for _, j := range jobs {
		args = append(args, j...)
	}
	args = append(args, extraJobs...)
	if len(files) > 0 {
		args = append(append(args, "--"), files...)
	}
	return args
}

// splitOverrides separates options from job files, as ParseArgs tells them
// apart, and rewrites "--opt value" as "--opt=value" for the options that
// take a value, so that each option is one argument. ParseArgs reads the
// files after the command line's jobs wherever they stand, so moving them
// to the end changes nothing.
func splitOverrides(args []string) (options, files []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return options, append(files, args[i+1:]...)
		}
		name, isOption := overrideName(a)
		if !isOption {
			files = append(files, a)
			continue
		}
		if !strings.Contains(a, "=") && i+1 < len(args) && takesValue(name) {
			a += "=" + args[i+1]
			i++
		}
		options = append(options, a)
	}
	return options, files
}

// overrideName returns the fio name of the option arg sets (aliases
// resolved), and false for an argument that is not an option.
func overrideName(arg string) (string, bool) {
	if !strings.HasPrefix(arg, "-") || arg == "-" || arg == "--" {
		return "", false
	}
	name, _, _ := strings.Cut(strings.TrimPrefix(arg[1:], "-"), "=")
	if o, ok := fio.LookupOption(name); ok {
		return o.Name, true
	}
	return name, true
}

// takesValue reports whether ParseArgs reads the argument after --name
// (without '=') as its value.
func takesValue(name string) bool {
	switch name {
	case "name", "output", "output-format":
		return true
	}
	o, ok := fio.LookupOption(name)
	return ok && !o.Flag
}

// replaceOption sets every occurrence of option name in args to arg, and
// reports whether there was one.
func replaceOption(args []string, name, arg string) bool {
	found := false
	for i, a := range args {
		if n, ok := overrideName(a); ok && n == name && name != "name" {
			args[i] = arg
			found = true
		}
	}
	return found
}
