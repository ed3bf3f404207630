package fio

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"iolab/bench"
	"iolab/bench/units"
)

// maxPercents is fio's FIO_IO_U_LIST_MAX_LEN: the longest percentile_list.
const maxPercents = 20

// jobOptions are the general fio options iolab supports, in the order of
// fio's HOWTO where it has one (fio's options.c); each engine's own options
// are in its Engine (bench.Engine.Options).
var jobOptions = []bench.OptionSpec{
	{Name: "name", Example: "randread-qd32", Unit: "text", Help: "the job's name; on the command line, starts a new job",
		Set: func(j *bench.Job, v string) error {
			j.Name = v
			return nil
		}},
	{Name: "description", Example: "text", Unit: "text", Help: "a note on the job, shown with its results",
		Set: func(j *bench.Job, v string) error {
			j.Description = v
			return nil
		}},
	{Name: "filename", Example: "/dev/nvme0n1", Unit: "path", Help: "the device or file to do I/O on (several: a:b, \\: for a colon; default: jobname.jobnum.filenum)", Set: setFilename,
		Get: func(j *bench.Job) string { return j.Filename }},
	{Name: "rw", Aliases: []string{"readwrite"}, Example: "randread", Unit: "mode", Default: "read",
		Help: "read, write, randread, randwrite, rw (mixed sequential), randrw, trim, randtrim (discards: BLKDISCARD, or a punched hole), trimwrite or randtrimwrite (each block trimmed, then written)", Set: setRW,
		Get: func(j *bench.Job) string { return j.RW }},
	{Name: "rwmixread", Example: "70", Unit: "%", Default: "50", Help: "share of reads in rw and randrw",
		Set: bench.IntField(0, 100, func(j *bench.Job) *int { return &j.RWMixRead }),
		Get: func(j *bench.Job) string { return strconv.Itoa(j.RWMixRead) }},
	{Name: "rwmixwrite", Example: "30", Unit: "%", Default: "50", Help: "share of writes in rw and randrw (100 - rwmixread)",
		Set: func(j *bench.Job, v string) error {
			n, err := units.ParseInt(v, 0, 100)
			if err == nil {
				j.RWMixRead = 100 - n
			}
			return err
		}},
	{Name: "bs", Aliases: []string{"blocksize"}, Example: "4k", Unit: "size", Default: "4k", Help: "the size of each I/O (reads,writes: 4k,64k; reads,writes,trims: 4k,64k,1m)", Set: setBS,
		Get: getBS},
	{Name: "size", Example: "1g", Unit: "size", Help: "bytes of the files the job covers, divided among them, or N% of each (default: all of it from offset)",
		Set: setSize, Get: getSize},
	{Name: "io_size", Aliases: []string{"io_limit"}, Example: "10g", Unit: "size",
		Help: "bytes to move in all, over the region as many times as it takes (default: the region once)",
		Set:  bench.SizeField(func(j *bench.Job) *int64 { return &j.IOSize }),
		Get:  func(j *bench.Job) string { return units.FormatSize(j.IOSize) }},
	{Name: "offset", Aliases: []string{"fileoffset"}, Example: "1g", Unit: "size", Default: "0", Help: "where in each file the job's region starts (or N% into it)",
		Set: setOffset, Get: getOffset},
	{Name: "iodepth", Example: "32", Unit: "int", Default: "1", Help: "I/Os kept in flight (sync engines: 1)",
		Set: bench.IntField(1, bench.MaxIODepth, func(j *bench.Job) *int { return &j.IODepth }),
		Get: func(j *bench.Job) string { return strconv.Itoa(j.IODepth) }},
	{Name: "ioengine", Example: "io_uring", Unit: "engine", Default: "psync", Help: "how I/O is issued: " + strings.Join(bench.EngineNames(), ", "),
		Set: setEngine, Get: func(j *bench.Job) string { return j.IOEngine }},
	{Name: "direct", Example: "1", Unit: "bool", Default: "0", Help: "O_DIRECT: bypass the page cache",
		Set: bench.BoolField(func(j *bench.Job) *bool { return &j.Direct }), Get: bench.GetBool(func(j *bench.Job) *bool { return &j.Direct })},
	{Name: "runtime", Aliases: []string{"timeout"}, Example: "10s", Unit: "time", Help: "stop after this long (seconds unless a unit follows)",
		Set: bench.DurationField(func(j *bench.Job) *time.Duration { return &j.Runtime }),
		Get: func(j *bench.Job) string { return units.FormatDuration(j.Runtime) }},
	{Name: "time_based", Flag: true, Unit: "bool", Default: "0", Help: "run for runtime even when size is done, starting over",
		Set: bench.BoolField(func(j *bench.Job) *bool { return &j.TimeBased }), Get: bench.GetBool(func(j *bench.Job) *bool { return &j.TimeBased })},
	{Name: "ramp_time", Example: "2s", Unit: "time", Help: "run this long before measuring",
		Set: bench.DurationField(func(j *bench.Job) *time.Duration { return &j.RampTime }),
		Get: func(j *bench.Job) string { return units.FormatDuration(j.RampTime) }},
	{Name: "numjobs", Example: "4", Unit: "int", Default: "1", Help: "run this many copies of the job at once",
		Set: bench.IntField(1, bench.MaxNumJobs, func(j *bench.Job) *int { return &j.NumJobs }),
		Get: func(j *bench.Job) string { return strconv.Itoa(j.NumJobs) }},
	{Name: "group_reporting", Flag: true, Unit: "bool", Default: "0", Help: "report a group's jobs as one",
		Set: bench.BoolField(func(j *bench.Job) *bool { return &j.GroupReporting })},
	{Name: "stonewall", Aliases: []string{"wait_for_previous"}, Flag: true, Unit: "bool", Default: "0",
		Help: "wait for the jobs before this one; start a new reporting group",
		Set:  bench.BoolField(func(j *bench.Job) *bool { return &j.Stonewall })},
	{Name: "new_group", Flag: true, Unit: "bool", Default: "0", Help: "start a new reporting group without waiting",
		Set: bench.BoolField(func(j *bench.Job) *bool { return &j.NewGroup })},
	{Name: "randrepeat", Example: "0", Unit: "bool", Default: "1", Help: "the same random sequence on every run",
		Set: bench.BoolField(func(j *bench.Job) *bool { return &j.RandRepeat })},
	{Name: "randseed", Example: "1234", Unit: "int", Default: "137", Help: "the seed of the random sequence", Set: setRandSeed},
	{Name: "norandommap", Flag: true, Unit: "bool", Default: "0", Help: "pick random offsets without covering every block once",
		Set: bench.BoolField(func(j *bench.Job) *bool { return &j.NoRandomMap })},
	{Name: "cpus_allowed", Example: "0,2-3", Unit: "cpus", Help: "the CPUs the job's thread may run on",
		Set: func(j *bench.Job, v string) error {
			cpus, err := parseCPUList(v)
			if err == nil {
				j.CPUsAllowed = cpus
			}
			return err
		}},
	// fio's names are iodepth_batch and iodepth_batch_complete_min; the
	// HOWTO's iodepth_batch_submit and iodepth_batch_complete are aliases.
	{Name: "iodepth_batch", Aliases: []string{"iodepth_batch_submit"}, Example: "8", Unit: "int", Default: "1",
		Help: "I/Os submitted per call (0: iodepth)",
		Set:  bench.IntField(0, bench.MaxIODepth, func(j *bench.Job) *int { return &j.IODepthBatchSubmit })},
	{Name: "iodepth_batch_complete_min", Aliases: []string{"iodepth_batch_complete"}, Example: "1", Unit: "int", Default: "1",
		Help: "completions to wait for when reaping",
		Set:  bench.IntField(0, bench.MaxIODepth, func(j *bench.Job) *int { return &j.IODepthBatchCompleteMin })},
	{Name: "iodepth_batch_complete_max", Example: "8", Unit: "int", Help: "completions reaped at most per call (0: iodepth_batch_complete_min)",
		Set: bench.IntField(0, bench.MaxIODepth, func(j *bench.Job) *int { return &j.IODepthBatchCompleteMax })},
	{Name: "iodepth_low", Example: "4", Unit: "int", Help: "once the queue is full, reap down to this many in flight before queueing again (0: iodepth)",
		Set: bench.IntField(0, bench.MaxIODepth, func(j *bench.Job) *int { return &j.IODepthLow })},
	{Name: "io_submit_mode", Example: "offload", Unit: "mode", Default: "inline",
		Help: "inline: the job's thread submits and reaps its I/O; offload: iodepth submit workers do, one I/O each at a time, so a rate holds its schedule whatever the device does (not with io_uring)",
		Set: func(j *bench.Job, v string) error {
			switch v {
			case bench.SubmitInline, bench.SubmitOffload:
				j.IOSubmitMode = v
				return nil
			}
			return fmt.Errorf("%q is not one of inline, offload", v)
		}},
	{Name: "percentile_list", Example: "50:99:99.9", Unit: "list", Help: "the latency percentiles to report",
		Set: func(j *bench.Job, v string) error {
			p, err := parsePercentiles(v)
			if err == nil {
				j.PercentileList = p
			}
			return err
		}},
	{Name: "allow_mounted_write", Example: "1", Unit: "bool", Default: "0", Help: "write to a device even if it is mounted or in use",
		Set: bench.BoolField(func(j *bench.Job) *bool { return &j.AllowMountedWrite })},

	// Accepted without effect: each asks for what iolab does anyway.
	{Name: "thread", Flag: true, Unit: "bool", Help: "run jobs as threads (iolab always does; thread=0, processes, is refused)",
		Set: func(_ *bench.Job, v string) error {
			on, err := units.ParseFlag(v)
			if err == nil && !on {
				return fmt.Errorf("iolab runs every job as a thread; it cannot run jobs as processes (thread=0)")
			}
			return err
		}},
	{Name: "kb_base", Example: "1024", Unit: "int", Default: "1024", Help: "k, m, g are powers of 1024 (the only base iolab takes)",
		Set: func(_ *bench.Job, v string) error {
			if v != "1024" {
				return fmt.Errorf("%q: iolab reads k, m, g as powers of 1024 only (kb_base=1024, fio's default)", v)
			}
			return nil
		}},
}

// LookupOption finds a supported option by its fio name or alias: a
// general one, or one of an engine's own.
func LookupOption(name string) (*bench.OptionSpec, bool) {
	for _, f := range optionFamilies {
		for i := range *f.options {
			o := &(*f.options)[i]
			if o.Name == name || slices.Contains(o.Aliases, name) {
				return o, true
			}
		}
	}
	for _, e := range bench.Engines() {
		if o, ok := e.Option(name); ok {
			return o, true
		}
	}
	return nil, false
}

// AllOptions lists every option iolab takes: the general ones, then each
// engine's, for help.
func AllOptions() []bench.OptionSpec {
	var out []bench.OptionSpec
	for _, f := range optionFamilies {
		out = append(out, *f.options...)
	}
	for _, e := range bench.Engines() {
		out = append(out, e.Options...)
	}
	return out
}

// Bounds on an option's value, whatever brings it (the command line, a
// job file, the web form, an import): a run's page repeats a job's text
// in its plan, each step's config and each result.
const (
	MaxOptionValueLen = 4096 // a path at most (PATH_MAX)
	MaxDescriptionLen = 1024 // description=, a line of text
	MaxJobNameLen     = 200  // name=, as long as a run's name
)

// MaxValueLen is the longest value option name takes.
func MaxValueLen(name string) int {
	switch name {
	case "description":
		return MaxDescriptionLen
	case "name":
		return MaxJobNameLen
	}
	return MaxOptionValueLen
}

// ApplyOption sets one fio option on j, with fio's name (or alias) and
// value as written; value "" means the option was given without one. On
// success it appends the option to j.Options under fio's name (readwrite is
// recorded as rw, as fio records it). Checks that need several options
// (filename, engine-specific options) wait for FinishJob.
func ApplyOption(j *bench.Job, name, value string) error {
	o, ok := LookupOption(name)
	if !ok {
		return unknownOption(name, value)
	}
	fail := func(format string, args ...any) error {
		return &bench.OptionError{Option: name, Value: value, Msg: "option " + name + ": " + fmt.Sprintf(format, args...)}
	}
	if value == "" && !o.Flag && !o.OptionalValue {
		return fail("needs a value (e.g. %s=%s)", name, o.Example)
	}
	if max := MaxValueLen(o.Name); len(value) > max {
		return &bench.OptionError{Option: name, Msg: fmt.Sprintf("option %s: its value is %d bytes, at most %d", name, len(value), max)}
	}
	// A job file holds one option a line: a line break in a value would
	// be another option in the job file iolab writes (fio servers, the
	// plan's job file), a NUL the end of fio's string.
	if strings.ContainsAny(value, "\n\r\x00") {
		return &bench.OptionError{Option: name, Msg: fmt.Sprintf("option %s: its value %.60q holds a line break or NUL", name, value)}
	}
	if err := o.Set(j, value); err != nil {
		return fail("%s", err)
	}
	j.Options = append(j.Options, bench.Option{Name: o.Name, Value: value})
	return nil
}

// FinishJob checks what no single option can and applies fio's fix-ups
// that depend on several options (fixup_options in fio's init.c). Both
// parsers call it once a job's options are all known; the web form calls
// it after its ApplyOption calls.
func FinishJob(j *bench.Job) error {
	fail := func(option, format string, args ...any) error {
		return &bench.OptionError{Option: option, Msg: fmt.Sprintf("job %q: ", j.Name) + fmt.Sprintf(format, args...)}
	}
	eng := j.Engine()
	if eng == nil {
		return fail("ioengine", "ioengine %q is not supported by iolab (use one of %s)", j.IOEngine, strings.Join(bench.EngineNames(), ", "))
	}
	if eng.Has(bench.Diskless) && j.Size <= 0 {
		return fail("size", "ioengine=%s needs a size (e.g. size=1g): there is no file to take it from", eng.Name)
	}
	if j.TimeBased && j.Runtime == 0 {
		return fail("time_based", "time_based needs a runtime (e.g. runtime=30s)")
	}
	if eng.MaxDepth > 0 && j.IODepth > eng.MaxDepth {
		return fail("iodepth", "iodepth=%d: ioengine=%s takes at most %d I/Os in flight", j.IODepth, eng.Name, eng.MaxDepth)
	}
	// fio knows an engine's options only once that engine is loaded and
	// rejects them on any other.
	for _, other := range bench.Engines() {
		if other == eng {
			continue
		}
		for _, o := range other.Options {
			if _, shared := eng.Option(o.Name); shared || o.Get == nil || o.Get(j) == o.Default {
				continue
			}
			// Some are several engines' own (cmdprio_percentage: io_uring
			// and libaio): name them all.
			var owners []string
			for _, e := range bench.Engines() {
				if _, ok := e.Option(o.Name); ok {
					owners = append(owners, e.Name)
				}
			}
			return fail(o.Name, "%s is an %s option but the job uses ioengine=%s (set ioengine=%s or remove %s)", o.Name, strings.Join(owners, " and "), j.IOEngine, other.Name, o.Name)
		}
	}
	if opt, err := j.CheckPrio(); err != nil {
		return fail(opt, "%s", err)
	}
	if j.Offloaded() && eng.Has(bench.NoOffload) {
		// fio's ioengine_load (ioengines.c check_engine_ops): "can't be
		// used with offloaded submit. Use a sync engine".
		return fail("io_submit_mode", "io_submit_mode=offload: ioengine=%s can't be used with offloaded submit (as in fio); use a sync engine (psync, pvsync2, …) or libaio", eng.Name)
	}
	if err := checkPattern(j); err != nil {
		return fail("random_generator", "%s", err)
	}
	if j.SQThreadPollCPU >= 0 && !j.SQThreadPoll {
		return fail("sqthread_poll_cpu", "sqthread_poll_cpu has no effect without sqthread_poll (add sqthread_poll)")
	}
	if err := finishBuffers(j, fail); err != nil {
		return err
	}
	if j.IODepthBatchSubmit == 0 || j.IODepthBatchSubmit > j.IODepth {
		j.IODepthBatchSubmit = j.IODepth
	}
	if j.IODepthBatchCompleteMax > 0 && j.IODepthBatchCompleteMax < j.IODepthBatchCompleteMin {
		j.IODepthBatchCompleteMax = j.IODepthBatchCompleteMin
	}
	if err := j.CheckVerify(); err != nil {
		return fail("verify", "%s", err)
	}
	if err := finishTrims(j, fail); err != nil {
		return err
	}
	if err := finishFiles(j, fail); err != nil {
		return err
	}
	if err := finishFlow(j, fail); err != nil {
		return err
	}
	if err := finishNUMA(j, fail); err != nil {
		return err
	}
	return finishPacing(j, fail)
}

// setFilename keeps filename as written: fio separates several files with
// ':' and takes "\:" for a colon in a name (Job.FilePaths splits it).
func setFilename(j *bench.Job, v string) error {
	v = strings.TrimSpace(v)
	if len(bench.SplitFileList(v)) == 0 {
		return errors.New("names no file")
	}
	j.Filename = v
	return nil
}

var rwModes = []string{"read", "write", "randread", "randwrite", "rw", "randrw", "trim", "randtrim", "trimwrite", "randtrimwrite"}

func setRW(j *bench.Job, v string) error {
	mode, suffix, hasSuffix := strings.Cut(v, ":")
	if mode == "readwrite" {
		mode = "rw"
	}
	if !slices.Contains(rwModes, mode) {
		msg := fmt.Sprintf("%q is not one of %s", v, strings.Join(rwModes, ", "))
		if s := units.Closest(mode, rwModes); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		return errors.New(msg)
	}
	c := *j
	c.RW = mode
	c.RWSeqNr, c.RWSeqAdd = 0, 0
	if hasSuffix {
		if err := setRWModifier(&c, suffix); err != nil {
			return err
		}
	}
	j.RW, j.RWSeqNr, j.RWSeqAdd = c.RW, c.RWSeqNr, c.RWSeqAdd
	return nil
}

func setEngine(j *bench.Job, v string) error {
	if _, ok := bench.LookupEngine(v); !ok {
		return fmt.Errorf("%q is not supported by iolab (use one of %s)", v, strings.Join(bench.EngineNames(), ", "))
	}
	j.IOEngine = v
	return nil
}

func setRandSeed(j *bench.Job, v string) error {
	// fio parses randseed like a size (randseed=1k is 1024), into 64 bits.
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		s, serr := units.ParseSize(v)
		if serr != nil {
			return fmt.Errorf("%q is not a whole number (e.g. randseed=1234)", v)
		}
		n = uint64(s)
	}
	j.RandSeed, j.RandSeedSet = n, true // fio: a randseed overrides randrepeat
	return nil
}

// parseCPUList parses fio's cpus_allowed: CPU numbers and ranges separated
// by commas, e.g. "0,2-3". The result is sorted and without repeats.
// CheckCPUList says whether v is a CPU list cpus_allowed takes ("1",
// "0,2-3"), and if not, why.
func CheckCPUList(v string) error {
	_, err := parseCPUList(v)
	return err
}

func parseCPUList(v string) ([]int, error) {
	var cpus []int
	for item := range strings.SplitSeq(v, ",") {
		item = strings.TrimSpace(item)
		loS, hiS, isRange := strings.Cut(item, "-")
		lo, err := parseCPU(loS)
		if err != nil {
			return nil, fmt.Errorf("%q: %v (use e.g. 0,2-3)", v, err)
		}
		hi := lo
		if isRange {
			if hi, err = parseCPU(hiS); err != nil {
				return nil, fmt.Errorf("%q: %v (use e.g. 0,2-3)", v, err)
			}
			if hi < lo {
				return nil, fmt.Errorf("%q: range %s runs backwards (write %d-%d)", v, item, hi, lo)
			}
		}
		for c := lo; c <= hi; c++ {
			cpus = append(cpus, c)
		}
	}
	slices.Sort(cpus)
	return slices.Compact(cpus), nil
}

func parseCPU(s string) (int, error) {
	s = strings.TrimSpace(s)
	n, err := strconv.Atoi(s)
	if err != nil || s[0] == '+' || s[0] == '-' {
		return 0, fmt.Errorf("%q is not a CPU number", s)
	}
	if n >= bench.MaxCPU {
		return 0, fmt.Errorf("CPU %d is beyond Linux's %d CPUs", n, bench.MaxCPU)
	}
	return n, nil
}

// parsePercentiles parses fio's percentile_list: up to 20 numbers in
// (0, 100] separated by colons. The list is sorted, as fio sorts it before
// reporting.
func parsePercentiles(v string) ([]float64, error) {
	parts := strings.Split(v, ":")
	if len(parts) > maxPercents {
		return nil, fmt.Errorf("%q has %d percentiles; fio takes at most %d", v, len(parts), maxPercents)
	}
	list := make([]float64, 0, len(parts))
	for _, s := range parts {
		p, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(p) || math.IsInf(p, 0) {
			return nil, fmt.Errorf("%q: %q is not a number (use e.g. 50:99:99.9)", v, s)
		}
		if p <= 0 || p > 100 {
			return nil, fmt.Errorf("%q: %v is not a percentile (each must be above 0 and at most 100)", v, p)
		}
		list = append(list, p)
	}
	slices.Sort(list)
	return list, nil
}

// ParseArgs parses the arguments of `iolab run` the way fio parses its
// command line (parse_cmd_line in fio's init.c):
//
//   - --opt=value, or --opt value for options that need a value; options
//     that may go without one (time_based, ...) never take the next
//     argument. One leading dash works too, as with fio's getopt_long_only.
//   - Options before the first --name are defaults for every job after
//     them; each --name=X starts a job, and --name=global starts more
//     defaults.
//   - Other arguments are job files, parsed after the command line, their
//     jobs appended. As in fio, the command-line defaults apply to the first
//     job file only; every later file starts from fio's defaults and waits
//     for the jobs before it (an implied stonewall). Config.GlobalOptions
//     are, like fio's "global options", those of the last file (or of the
//     command line when there is no file).
//   - --output-format (normal, json, json+ or terse, with fio's aliases
//     minimal and csv, several joined by commas), --minimal,
//     --append-terse, --terse-version, --status-interval and --output=FILE
//     are taken as fio takes them; fio's other program options are
//     refused.
func ParseArgs(args []string) (*bench.Config, error) {
	cfg := &bench.Config{OutputFormat: "normal"}
	p := newJobParser("")
	var files []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			files = append(files, args[i+1:]...)
			break
		}
		if arg == "-" {
			return nil, &bench.OptionError{Msg: "iolab cannot read a job file from standard input; give its path"}
		}
		if !strings.HasPrefix(arg, "-") {
			files = append(files, arg)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(arg[1:], "-"), "=")
		// takeValue returns the option's value, from the next argument if
		// it was not given with '='.
		takeValue := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 >= len(args) {
				return "", &bench.OptionError{Option: name, Msg: fmt.Sprintf("option --%s needs a value (--%s=...)", name, name)}
			}
			i++
			return args[i], nil
		}
		switch name {
		case "parse-only":
			if hasValue {
				return nil, &bench.OptionError{Option: name, Value: value, Msg: "--parse-only takes no value, as in fio"}
			}
			cfg.ParseOnly = true
			continue
		case "output-format":
			v, err := takeValue()
			if err != nil {
				return nil, err
			}
			f, err := parseOutputFormats(v)
			if err != nil {
				return nil, &bench.OptionError{Option: name, Value: v, Msg: "option --output-format: " + err.Error()}
			}
			cfg.OutputFormat = f
			continue
		case "minimal":
			if hasValue {
				return nil, &bench.OptionError{Option: name, Value: value, Msg: "--minimal takes no value, as in fio"}
			}
			cfg.OutputFormat = "terse"
			continue
		case "append-terse":
			// fio's older spelling of ",terse": the terse lines are added to
			// the formats chosen so far (fio takes and ignores a value).
			f, _ := parseOutputFormats(cfg.OutputFormat + ",terse")
			cfg.OutputFormat = f
			continue
		case "terse-version":
			v, err := takeValue()
			if err != nil {
				return nil, err
			}
			n, err := strconv.Atoi(v)
			if err != nil || !slices.Contains(TerseVersions, n) {
				return nil, &bench.OptionError{Option: name, Value: v, Msg: fmt.Sprintf("option --terse-version: %q is not one of fio's terse versions 2, 3, 4, 5", v)}
			}
			cfg.TerseVersion = n
			continue
		case "status-interval":
			v, err := takeValue()
			if err != nil {
				return nil, err
			}
			d, err := ParseStatusInterval(v)
			if err != nil {
				return nil, &bench.OptionError{Option: name, Value: v, Msg: err.Error()}
			}
			cfg.StatusInterval = d
			continue
		case "output":
			v, err := takeValue()
			if err != nil {
				return nil, err
			}
			if v == "" {
				return nil, &bench.OptionError{Option: name, Msg: "option --output needs a file name (--output=FILE)"}
			}
			cfg.Output = v
			continue
		case "name":
			v, err := takeValue()
			if err != nil {
				return nil, err
			}
			if err := p.startSection(v, 0); err != nil {
				return nil, err
			}
			continue
		}
		if slices.Contains(fioProgramOptions, name) {
			return nil, &bench.OptionError{Option: name, Value: value, Msg: fmt.Sprintf("fio's --%s is not supported by iolab", name)}
		}
		o, ok := LookupOption(name)
		flag := ok && o.Flag
		if inert, isInert := lookupInert(name); isInert {
			ok, flag = true, inert.unit == "flag"
		}
		if !ok {
			return nil, unknownOption(name, value)
		}
		if !flag {
			v, err := takeValue()
			if err != nil {
				return nil, err
			}
			value = v
		}
		if err := p.apply(name, value, 0); err != nil {
			return nil, err
		}
	}
	if err := p.finishJob(); err != nil {
		return nil, err
	}

	for n, path := range files {
		if n > 0 {
			p.restart()
		}
		if err := parseJobFilePath(p, path); err != nil {
			return nil, err
		}
	}
	if len(p.jobs) == 0 {
		return nil, &bench.OptionError{Msg: "no jobs: start one with --name=NAME, or give a job file"}
	}
	cfg.Jobs = p.jobs
	cfg.Groups = bench.Expand(p.jobs)
	cfg.GlobalOptions = p.globals
	cfg.Notes = p.notes
	return cfg, nil
}

// CheckOption checks one option and its value alone, as the command line
// reads them, without the checks of a whole job (FinishJob): what can be
// said of one field of a form. An option that is right alone may still be
// wrong beside others (time_based without runtime); ParseArgs says that.
func CheckOption(name, value string) error {
	if slices.Contains(fioProgramOptions, name) {
		return &bench.OptionError{Option: name, Value: value, Msg: fmt.Sprintf("fio's --%s is not supported by iolab", name)}
	}
	if _, ok := LookupOption(name); !ok {
		if _, inert := lookupInert(name); !inert {
			return unknownOption(name, value)
		}
	}
	return newJobParser("").apply(name, value, 0)
}

func parseJobFilePath(p *jobParser, path string) error {
	f, err := os.Open(path)
	if err != nil {
		msg := "cannot read job file"
		if errors.Is(err, os.ErrNotExist) {
			msg = "no such job file (options start with --, e.g. --name=job)"
		}
		return &bench.OptionError{File: path, Msg: msg, Err: err}
	}
	defer f.Close()
	return p.parseFile(f, path)
}

// unknownOption is the error for an option iolab does not take: a typo
// (with the closest supported name), or a real fio option iolab does not
// support.
func unknownOption(name, value string) error {
	if err := deprecatedError(name, value); err != nil {
		return err
	}
	e := &bench.OptionError{Option: name, Value: value}
	if slices.Contains(strings.Fields(fioJobOptionNames), name) {
		e.Msg = fmt.Sprintf("option %q is not supported by iolab (remove it, or run this job with fio)", name)
		return e
	}
	var names []string
	for _, o := range AllOptions() {
		names = append(names, o.Name)
		names = append(names, o.Aliases...)
	}
	e.Msg = fmt.Sprintf("unknown option %q", name)
	if s := units.Closest(name, names); s != "" {
		e.Msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return e
}

// fioProgramOptions are fio's command-line options that are not job
// options (fio --help, fio 3.33). ParseArgs takes some of them (minimal,
// terse-version) before it refuses the others.
var fioProgramOptions = []string{
	"debug", "merge-blktrace-only", "bandwidth-log", "minimal",
	"terse-version", "version", "help", "cpuclock-test", "crctest", "cmdhelp",
	"enghelp", "showcmd", "eta", "eta-newline", "eta-interval",
	"status-interval", "readonly", "section", "alloc-size", "warnings-fatal",
	"max-jobs", "server", "daemonize", "client", "remote-config", "idle-prof",
	"inflate-log", "trigger-file", "trigger-timeout", "trigger",
	"trigger-remote", "aux-path", "append-terse", "latency-log",
}

// fioJobOptionNames are fio 3.33's job options and aliases (fio
// --cmdhelp=all) and the options of its io_uring and libaio engines (fio
// --enghelp=io_uring, --enghelp=libaio), so that an option iolab does not
// support is told apart from a typo.
const fioJobOptionNames = `
allow_file_create allow_mounted_write allrandrepeat atomic ba block_error_percentiles
blockalign blocksize blocksize_range blocksize_unaligned bs bs_unaligned bsrange
bssplit buffer_compress_chunk buffer_compress_percentage buffer_pattern buffered
bwavgtime cgroup cgroup_nodelete cgroup_weight clat_percentiles clocksource
cmd_type cmdprio cmdprio_bssplit cmdprio_class cmdprio_percentage
continue_on_error cpumask cpus_allowed cpus_allowed_policy create_fsync
create_on_open create_only create_serialize dedupe_global dedupe_mode
dedupe_percentage dedupe_working_set_percentage description direct directory
disable_bw disable_bw_measurement disable_clat disable_lat disable_slat disk_util
do_verify end_fsync error_dump exec_postrun exec_prerun exit_what exitall
exitall_on_error experimental_verify fadvise_hint fallocate fdatasync
file_append file_service_type fileoffset filename filename_format filesize
fill_device fill_fs fixedbufs flow flow_id flow_sleep force_async fsync
fsync_on_close gid group_reporting gtod_cpu gtod_reduce hipri ignore_error
ignore_zone_limits invalidate io_limit io_size io_submit_mode iodepth
iodepth_batch iodepth_batch_complete iodepth_batch_complete_max
iodepth_batch_complete_min iodepth_batch_submit iodepth_low ioengine iomem
iomem_align iopsavgtime ioscheduler job_max_open_zones kb_base lat_percentiles
latency_percentile latency_run latency_target latency_window lockfile lockmem
log_alternate_epoch log_alternate_epoch_clock_id log_avg_msec log_compression
log_compression_cpus log_entries log_hist_coarseness log_hist_msec
log_max_value log_offset log_prio log_store_compressed log_unix_epoch loops
max_latency max_open_zones mem mem_align merge_blktrace_file merge_blktrace_iters
merge_blktrace_scalars name new_group nice nonvectored norandommap nowait
nr_files nrfiles numa_cpu_nodes numa_mem_policy number_ios numjobs offset
offset_align offset_increment opendir openfiles overwrite per_job_logs
percentage_random percentile_list pre_read prio prioclass profile ramp_time
random_distribution random_generator randrepeat randseed rate rate_cycle
rate_ignore_thinktime rate_iops rate_iops_min rate_min rate_process ratecycle
ratemin read_beyond_wp read_iolog read_iolog_chunked readwrite refill_buffers
registerfiles replay_align replay_no_stall replay_redirect replay_scale
replay_skip replay_time_scale runtime rw rw_sequencer rwmixread rwmixwrite
scramble_buffers serialize_overlap significant_figures size slat_percentiles
sqthread_poll sqthread_poll_cpu ss ss_dur ss_ramp startdelay stats steadystate
steadystate_duration steadystate_ramp_time stonewall sync sync_file_range
thinktime thinktime_blocks thinktime_blocks_type thinktime_iotime
thinktime_spin thread time_based timeout trim_backlog trim_backlog_batch
trim_percentage trim_verify_zero uid uncached unified_rw_reporting
unique_filename unit_base unlink unlink_each_loop userspace_reap verify
verify_async verify_backlog verify_backlog_batch verify_dump verify_fatal
verify_interval verify_offset verify_only verify_pattern verify_state_load
verify_state_save wait_for wait_for_previous write_barrier write_bw_log
write_hint write_hist_log write_iolog write_iops_log write_lat_log
zero_buffers zone_reset_frequency zone_reset_threshold zonecapacity zonemode
zonerange zonesize zoneskip
`
