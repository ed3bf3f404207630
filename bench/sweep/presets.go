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
	// in one preset run at the same time, unless Sequential.
	Jobs [][]string
	// Sequential presets run their jobs one after the other (each after
	// the first sets stonewall): phases of one experiment, such as
	// preconditioning a device before it is measured.
	Sequential bool
	Sweeps     []Sweep
	Repeat     int
	// Before each step.
	Discard, DropCaches bool
	// SLO is the latency objective of a QoS curve preset (ParseSLO).
	SLO string
	// Measured is the job the experiment measures, which charts draw
	// first (the foreground reader of sched-fairness; the others load the
	// device); "" is the first job.
	Measured string
	// TraceBlock traces the block layer where the target and this
	// process allow it (Plan.TraceBlockWhereAble): the time split explains
	// the preset's finding — queue time per scheduler, submit and
	// completion time per engine.
	TraceBlock bool
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
			Description: "I/O schedulers on a 70/30 4 KiB random read/write at iodepth 8 (libaio, O_DIRECT, 30 s), caches dropped, 5 repeats per scheduler; the block layer traced where it can (queue time per scheduler)",
			Global: []string{
				"--ioengine=libaio", "--direct=1",
				"--rw=randrw", "--rwmixread=70", "--bs=4k", "--iodepth=8",
				"--runtime=30", "--time_based",
			},
			Jobs:       [][]string{{"--name=randrw-70-30"}},
			Sweeps:     schedulers(),
			Repeat:     5,
			DropCaches: true,
			TraceBlock: true,
		},
		{
			Name:        "sched-seqwrite",
			Description: "I/O schedulers on a 1 MiB sequential write at iodepth 4 (libaio, O_DIRECT, 30 s), caches dropped, 5 repeats per scheduler; the block layer traced where it can (queue time per scheduler)",
			Global: []string{
				"--ioengine=libaio", "--direct=1",
				"--rw=write", "--bs=1m", "--iodepth=4",
				"--runtime=30", "--time_based",
			},
			Jobs:       [][]string{{"--name=seqwrite"}},
			Sweeps:     schedulers(),
			Repeat:     5,
			DropCaches: true,
			TraceBlock: true,
		},
		{
			// The write-up's finding: bfq keeps the reader's latency about
			// 4× lower than the others, at ~20 % of the writer's throughput.
			Name:        "sched-fairness",
			Description: "I/O scheduler fairness: a background 1 MiB sequential writer (iodepth 16) and a foreground 4 KiB random reader (iodepth 1) at the same time (libaio, O_DIRECT, 30 s), caches dropped, 5 repeats per scheduler; the block layer traced where it can (queue time per scheduler)",
			Global: []string{
				"--ioengine=libaio", "--direct=1",
				"--runtime=30", "--time_based",
			},
			Jobs: [][]string{
				{"--name=bg-writer", "--rw=write", "--bs=1m", "--iodepth=16"},
				{"--name=fg-reader", "--rw=randread", "--bs=4k", "--iodepth=1"},
			},
			Sweeps:     schedulers(),
			Repeat:     5,
			DropCaches: true,
			Measured:   "fg-reader",
			TraceBlock: true,
		},
		{
			// The base job holds the first value of each axis, so that it
			// is a valid run by itself; each step sets both.
			Name:        "engines-randwrite",
			Description: "libaio vs io_uring variants on 4 KiB random writes, iodepth 1…256 (O_DIRECT, 10 s ramp + 60 s), blkdiscard before each step, 5 repeats; the block layer traced where it can (submit and completion time per engine)",
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
			Repeat:     5,
			Discard:    true,
			TraceBlock: true,
		},
		{
			// group_reporting: the scaling table wants the aggregate of the
			// clones, as the write-up's "parallel clients" were.
			Name:        "numjobs-scaling",
			Description: "aggregate throughput as parallel jobs grow 1→32: 4 KiB random reads, io_uring at iodepth 8 per job (O_DIRECT, 30 s), 5 repeats",
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
			Repeat: 5,
		},
		{
			// Issue 13: latency against achieved IOPS, open loop. The
			// first step runs without a rate (max); the others at a
			// share of what it achieved.
			Name:        "qos-curve",
			Description: "latency under load: 4 KiB random reads at 10 %…100 % of the IOPS a first unpaced step achieves (rate_iops, libaio, iodepth 32, O_DIRECT, 30 s), p50/p99/p99.9 from each I/O's intended start against achieved IOPS, knee at p99<1ms",
			Global: []string{
				"--ioengine=libaio", "--direct=1",
				"--rw=randread", "--bs=4k", "--iodepth=32",
				"--runtime=30", "--time_based",
			},
			Jobs: [][]string{{"--name=qos"}},
			Sweeps: []Sweep{
				{Axis: AxisRateIOPS, Values: []string{"max", "10%", "20%", "30%", "40%", "50%", "60%", "70%", "80%", "90%", "100%"}},
			},
			Repeat: 1,
			SLO:    DefaultSLO.String(),
		},
		{
			// SNIA's Solid State Storage Performance Test Specification
			// (PTS) preconditions a device before measuring it: purged
			// (blkdiscard), then workload-independent preconditioning —
			// the whole device written twice with 128 KiB sequential
			// writes — then workload-dependent preconditioning, the test's
			// own 4 KiB random writes, until steady state. SNIA's window is
			// five one-minute rounds whose excursion stays within 20 % of
			// their mean; fio's closest criterion holds every one-second
			// sample within 10 % of the window's mean (an excursion of at
			// most 20 %) over 5 minutes.
			Name:        "pts-precondition",
			Description: "SNIA PTS-style preconditioning: blkdiscard, the device written sequentially twice (128 KiB, iodepth 32), then 4 KiB random writes (iodepth 32) until their IOPS hold within 10 % of the mean over 5 minutes, at most 6 hours (libaio, O_DIRECT)",
			Global: []string{
				"--ioengine=libaio", "--direct=1", "--iodepth=32",
			},
			Jobs: [][]string{
				{"--name=seq-fill", "--rw=write", "--bs=128k", "--loops=2"},
				{"--name=steady-randwrite", "--stonewall", "--rw=randwrite", "--bs=4k", "--norandommap",
					"--runtime=6h", "--time_based", "--ss=iops:10%", "--ss_dur=5m", "--ss_ramp=1m"},
			},
			Sequential: true,
			Repeat:     1,
			Discard:    true,
			Measured:   "steady-randwrite",
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
