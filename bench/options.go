package bench

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// OptionError is an option iolab cannot take: unknown, known to fio but not
// supported by iolab, given a bad value, or a job that is incomplete. main
// exits with status 2 on it, like on any usage error.
type OptionError struct {
	Option string // as the user wrote it; "" when the problem is a whole job or file
	Value  string
	// Msg says what is wrong and what to write instead, without the
	// file:line prefix that Error adds.
	Msg  string
	File string // job file; "" on the command line and in the web form
	Line int    // 1-based line in File; 0 when the error is about the whole file
	Err  error  // underlying error, e.g. from opening the job file
}

func (e *OptionError) Error() string {
	switch {
	case e.File == "":
		return e.Msg
	case e.Line == 0:
		return e.File + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

func (e *OptionError) Unwrap() error { return e.Err }

// Limits iolab puts on option values. fio's own limits are looser (fio
// parses iodepth=65537 and numjobs=0 without complaint) or live elsewhere
// (--max-jobs).
const (
	maxIODepth  = 65536
	maxNumJobs  = 4096 // fio's REAL_MAX_JOBS, the default of --max-jobs
	maxCPU      = 8192 // Linux's largest CONFIG_NR_CPUS
	maxPercents = 20   // fio's FIO_IO_U_LIST_MAX_LEN
)

// optionSpec is one fio job option iolab takes.
type optionSpec struct {
	name    string   // fio's name: what Job.Options records, as fio's "job options" does
	aliases []string // fio's aliases (readwrite for rw, ...)
	// flag options may be given without a value, which means 1: fio's
	// FIO_OPT_STR_SET. fio's bool options (direct, randrepeat,
	// allow_mounted_write) need a value, and so do they here.
	flag    bool
	example string // a valid value, for error messages
	set     func(j *Job, value string) error
}

// jobOptions are the fio options iolab supports, in the order of fio's
// HOWTO where it has one. fio's definitions are in options.c and, for the
// io_uring engine options, engines/io_uring.c.
var jobOptions = []optionSpec{
	{name: "name", example: "randread-qd32", set: func(j *Job, v string) error {
		j.Name = v
		return nil
	}},
	{name: "description", example: "text", set: func(*Job, string) error {
		return nil // only a label; fio prints it before the job starts
	}},
	{name: "filename", example: "/dev/nvme0n1", set: setFilename},
	{name: "rw", aliases: []string{"readwrite"}, example: "randread", set: setRW},
	{name: "rwmixread", example: "70", set: intOption(0, 100, func(j *Job) *int { return &j.RWMixRead })},
	{name: "rwmixwrite", example: "30", set: func(j *Job, v string) error {
		n, err := parseInt(v, 0, 100)
		if err == nil {
			j.RWMixRead = 100 - n
		}
		return err
	}},
	{name: "bs", aliases: []string{"blocksize"}, example: "4k", set: setBS},
	{name: "size", example: "1g", set: sizeOption(func(j *Job) *int64 { return &j.Size })},
	{name: "offset", example: "1g", set: sizeOption(func(j *Job) *int64 { return &j.Offset })},
	{name: "iodepth", example: "32", set: intOption(1, maxIODepth, func(j *Job) *int { return &j.IODepth })},
	{name: "ioengine", example: "io_uring", set: setEngine},
	{name: "direct", example: "1", set: boolOption(func(j *Job) *bool { return &j.Direct })},
	{name: "runtime", example: "10s", set: durationOption(func(j *Job) *time.Duration { return &j.Runtime })},
	{name: "time_based", flag: true, set: boolOption(func(j *Job) *bool { return &j.TimeBased })},
	{name: "ramp_time", example: "2s", set: durationOption(func(j *Job) *time.Duration { return &j.RampTime })},
	{name: "numjobs", example: "4", set: intOption(1, maxNumJobs, func(j *Job) *int { return &j.NumJobs })},
	{name: "group_reporting", flag: true, set: boolOption(func(j *Job) *bool { return &j.GroupReporting })},
	{name: "stonewall", aliases: []string{"wait_for_previous"}, flag: true, set: boolOption(func(j *Job) *bool { return &j.Stonewall })},
	{name: "new_group", flag: true, set: boolOption(func(j *Job) *bool { return &j.NewGroup })},
	{name: "hipri", flag: true, set: boolOption(func(j *Job) *bool { return &j.Hipri })},
	{name: "sqthread_poll", flag: true, set: boolOption(func(j *Job) *bool { return &j.SQThreadPoll })},
	{name: "sqthread_poll_cpu", example: "3", set: intOption(0, maxCPU-1, func(j *Job) *int { return &j.SQThreadPollCPU })},
	{name: "fixedbufs", flag: true, set: boolOption(func(j *Job) *bool { return &j.FixedBufs })},
	{name: "registerfiles", flag: true, set: boolOption(func(j *Job) *bool { return &j.RegisterFiles })},
	{name: "randrepeat", example: "0", set: boolOption(func(j *Job) *bool { return &j.RandRepeat })},
	{name: "randseed", example: "1234", set: setRandSeed},
	{name: "norandommap", flag: true, set: boolOption(func(j *Job) *bool { return &j.NoRandomMap })},
	{name: "cpus_allowed", example: "0,2-3", set: func(j *Job, v string) error {
		cpus, err := parseCPUList(v)
		if err == nil {
			j.CPUsAllowed = cpus
		}
		return err
	}},
	// fio's names are iodepth_batch and iodepth_batch_complete_min; the
	// HOWTO's iodepth_batch_submit and iodepth_batch_complete are aliases.
	{name: "iodepth_batch", aliases: []string{"iodepth_batch_submit"}, example: "8",
		set: intOption(0, maxIODepth, func(j *Job) *int { return &j.IODepthBatchSubmit })},
	{name: "iodepth_batch_complete_min", aliases: []string{"iodepth_batch_complete"}, example: "1",
		set: intOption(0, maxIODepth, func(j *Job) *int { return &j.IODepthBatchCompleteMin })},
	{name: "iodepth_batch_complete_max", example: "8",
		set: intOption(0, maxIODepth, func(j *Job) *int { return &j.IODepthBatchCompleteMax })},
	{name: "percentile_list", example: "50:99:99.9", set: func(j *Job, v string) error {
		p, err := parsePercentiles(v)
		if err == nil {
			j.PercentileList = p
		}
		return err
	}},
	{name: "allow_mounted_write", example: "1", set: boolOption(func(j *Job) *bool { return &j.AllowMountedWrite })},

	// Accepted without effect: each asks for what iolab does anyway.
	{name: "thread", flag: true, set: func(_ *Job, v string) error {
		_, err := parseFlag(v) // iolab always runs jobs as threads
		return err
	}},
	{name: "kb_base", example: "1024", set: func(_ *Job, v string) error {
		if v != "1024" {
			return fmt.Errorf("%q: iolab reads k, m, g as powers of 1024 only (kb_base=1024, fio's default)", v)
		}
		return nil
	}},
	{name: "verify", example: "0", set: func(_ *Job, v string) error {
		if v != "0" {
			return fmt.Errorf("%q: iolab does not verify data (only verify=0 is accepted); run this job with fio", v)
		}
		return nil
	}},
}

// lookupOption finds a supported option by its fio name or alias.
func lookupOption(name string) (*optionSpec, bool) {
	for i := range jobOptions {
		o := &jobOptions[i]
		if o.name == name || slices.Contains(o.aliases, name) {
			return o, true
		}
	}
	return nil, false
}

// ApplyOption sets one fio option on j, with fio's name (or alias) and
// value as written; value "" means the option was given without one. On
// success it appends the option to j.Options under fio's name (readwrite is
// recorded as rw, as fio records it). Checks that need several options
// (filename, engine-specific options) wait for FinishJob.
func ApplyOption(j *Job, name, value string) error {
	o, ok := lookupOption(name)
	if !ok {
		return unknownOption(name, value)
	}
	fail := func(format string, args ...any) error {
		return &OptionError{Option: name, Value: value, Msg: "option " + name + ": " + fmt.Sprintf(format, args...)}
	}
	if value == "" && !o.flag {
		return fail("needs a value (e.g. %s=%s)", name, o.example)
	}
	if err := o.set(j, value); err != nil {
		return fail("%s", err)
	}
	j.Options = append(j.Options, Option{Name: o.name, Value: value})
	return nil
}

// FinishJob checks what no single option can and applies fio's fix-ups
// that depend on several options (fixup_options in fio's init.c). Both
// parsers call it once a job's options are all known; the web form calls
// it after its ApplyOption calls.
func FinishJob(j *Job) error {
	fail := func(option, format string, args ...any) error {
		return &OptionError{Option: option, Msg: fmt.Sprintf("job %q: ", j.Name) + fmt.Sprintf(format, args...)}
	}
	if j.Filename == "" && j.IOEngine != "null" {
		// fio would make up a file named after the job in the current
		// directory; iolab wants the target named.
		return fail("filename", "no filename (set filename= to a device or file, in the job or in [global]; only ioengine=null needs none)")
	}
	if j.IOEngine == "null" && j.Size <= 0 {
		return fail("size", "ioengine=null needs a size (e.g. size=1g): there is no file to take it from")
	}
	if j.TimeBased && j.Runtime == 0 {
		return fail("time_based", "time_based needs a runtime (e.g. runtime=30s)")
	}
	if j.IOEngine != "io_uring" {
		// fio knows these only once ioengine=io_uring is loaded and
		// rejects them otherwise.
		for _, o := range []struct {
			name string
			set  bool
		}{
			{"hipri", j.Hipri},
			{"sqthread_poll", j.SQThreadPoll},
			{"sqthread_poll_cpu", j.SQThreadPollCPU >= 0},
			{"fixedbufs", j.FixedBufs},
			{"registerfiles", j.RegisterFiles},
		} {
			if o.set {
				return fail(o.name, "%s is an io_uring option but the job uses ioengine=%s (set ioengine=io_uring or remove %s)", o.name, j.IOEngine, o.name)
			}
		}
	}
	if j.SQThreadPollCPU >= 0 && !j.SQThreadPoll {
		return fail("sqthread_poll_cpu", "sqthread_poll_cpu has no effect without sqthread_poll (add sqthread_poll)")
	}
	if j.IODepthBatchSubmit == 0 || j.IODepthBatchSubmit > j.IODepth {
		j.IODepthBatchSubmit = j.IODepth
	}
	if j.IODepthBatchCompleteMax > 0 && j.IODepthBatchCompleteMax < j.IODepthBatchCompleteMin {
		j.IODepthBatchCompleteMax = j.IODepthBatchCompleteMin
	}
	return nil
}

func setFilename(j *Job, v string) error {
	// fio separates several files with ':' and takes "\:" for a colon
	// in a name.
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		switch {
		case v[i] == '\\' && i+1 < len(v) && v[i+1] == ':':
			b.WriteByte(':')
			i++
		case v[i] == ':':
			return fmt.Errorf("%q names several files; iolab takes one file per job (write \\: for a colon in the name)", v)
		default:
			b.WriteByte(v[i])
		}
	}
	j.Filename = b.String()
	return nil
}

var rwModes = []string{"read", "write", "randread", "randwrite", "rw", "randrw"}

func setRW(j *Job, v string) error {
	mode, suffix, hasSuffix := strings.Cut(v, ":")
	if mode == "readwrite" {
		mode = "rw"
	}
	if !slices.Contains(rwModes, mode) {
		msg := fmt.Sprintf("%q is not one of %s", v, strings.Join(rwModes, ", "))
		switch mode {
		case "trim", "randtrim", "trimwrite", "randtrimwrite":
			msg = fmt.Sprintf("%q: iolab does not trim; use one of %s", v, strings.Join(rwModes, ", "))
		default:
			if s := closest(mode, rwModes); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
		}
		return errors.New(msg)
	}
	if hasSuffix {
		return fmt.Errorf("%q: iolab does not support fio's :%s offset modifier (use rw=%s)", v, suffix, mode)
	}
	j.RW = mode
	return nil
}

func setBS(j *Job, v string) error {
	if strings.ContainsAny(v, ",/") {
		return fmt.Errorf("%q: iolab uses one block size for reads and writes (e.g. bs=4k)", v)
	}
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	if n == 0 {
		return errors.New("0 is not a block size (use e.g. 4k)")
	}
	j.BS = n
	return nil
}

func setEngine(j *Job, v string) error {
	if !slices.Contains(Engines, v) {
		return fmt.Errorf("%q is not supported by iolab (use one of %s)", v, strings.Join(Engines, ", "))
	}
	j.IOEngine = v
	return nil
}

func setRandSeed(j *Job, v string) error {
	// fio parses randseed like a size (randseed=1k is 1024), into 64 bits.
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		s, serr := parseSize(v)
		if serr != nil {
			return fmt.Errorf("%q is not a whole number (e.g. randseed=1234)", v)
		}
		n = uint64(s)
	}
	j.RandSeed = n
	return nil
}

func intOption(lo, hi int, field func(*Job) *int) func(*Job, string) error {
	return func(j *Job, v string) error {
		n, err := parseInt(v, lo, hi)
		if err == nil {
			*field(j) = n
		}
		return err
	}
}

func sizeOption(field func(*Job) *int64) func(*Job, string) error {
	return func(j *Job, v string) error {
		n, err := parseSize(v)
		if err == nil {
			*field(j) = n
		}
		return err
	}
}

func durationOption(field func(*Job) *time.Duration) func(*Job, string) error {
	return func(j *Job, v string) error {
		d, err := parseDuration(v)
		if err == nil {
			*field(j) = d
		}
		return err
	}
}

// boolOption serves both fio's bool options (value required, checked by
// ApplyOption) and its flags (value optional).
func boolOption(field func(*Job) *bool) func(*Job, string) error {
	return func(j *Job, v string) error {
		b, err := parseFlag(v)
		if err == nil {
			*field(j) = b
		}
		return err
	}
}

// parseFlag parses a flag's value: none means set; fio's check_int takes a
// number, and iolab takes 0 or 1 — fio accepts neither true nor false.
func parseFlag(v string) (bool, error) {
	switch v {
	case "", "1":
		return true, nil
	case "0":
		return false, nil
	}
	return false, fmt.Errorf("%q is not 0 or 1 (fio's booleans are 0 and 1)", v)
}

// parseInt parses a whole number, decimal or 0x hexadecimal like fio, and
// checks it lies in [lo, hi].
func parseInt(v string, lo, hi int) (int, error) {
	if strings.ContainsAny(v, "$(") {
		return 0, fmt.Errorf("%q: iolab does not expand fio's $keywords or (expressions); write the number", v)
	}
	n, err := parseWhole(v, 64)
	if errors.Is(err, strconv.ErrRange) || (err == nil && (n < int64(lo) || n > int64(hi))) {
		return 0, fmt.Errorf("%s is out of range (%d to %d)", v, lo, hi)
	}
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number", v)
	}
	return int(n), nil
}

// parseWhole parses decimal or 0x hexadecimal, as fio's check_int does;
// not octal, nor Go's underscores, which strconv's base 0 would allow.
func parseWhole(v string, bits int) (int64, error) {
	if len(v) > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X') {
		return strconv.ParseInt(v[2:], 16, bits)
	}
	return strconv.ParseInt(v, 10, bits)
}

// parseSize parses a byte count the way fio does with its default
// kb_base=1024: a whole number, optionally 0x hexadecimal, with an optional
// suffix k, m, g, t or p (powers of 1024, any case, optionally followed by
// b). fio's own parser takes almost anything (4q is 4 bytes, 1.5m is 1);
// iolab refuses what fio would misread.
func parseSize(v string) (int64, error) {
	bad := fmt.Errorf("%q is not a size (use e.g. 4k, 1m)", v)
	if strings.HasSuffix(v, "%") {
		return 0, fmt.Errorf("%q: iolab does not take percentages; give bytes (e.g. 10g)", v)
	}
	if strings.ContainsAny(v, "$(") {
		return 0, fmt.Errorf("%q: iolab does not expand fio's $keywords or (expressions); write the size", v)
	}
	if len(v) > 2 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X') {
		n, err := strconv.ParseUint(v[2:], 16, 63)
		if err != nil || strings.Contains(v, "_") {
			return 0, bad
		}
		return int64(n), nil
	}
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, bad
	}
	n, err := strconv.ParseInt(v[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is too large", v)
	}
	suffix := strings.ToLower(v[i:])
	var shift uint
	switch strings.TrimSuffix(suffix, "b") {
	case "":
	case "k":
		shift = 10
	case "m":
		shift = 20
	case "g":
		shift = 30
	case "t":
		shift = 40
	case "p":
		shift = 50
	case "ki", "mi", "gi", "ti", "pi":
		// With kb_base=1024 fio reads 1KiB as 1000 bytes (HOWTO, "int");
		// fio 3.33 even reads 1ki as 1024 but 1kib as 1000.
		return 0, fmt.Errorf("%q: fio does not read the %s suffix as a power of 1024 (with kb_base=1024, 1KiB is 1000 bytes); write %s%s for powers of 1024, or the bytes",
			v, v[i:], v[:i], suffix[:1])
	default:
		return 0, bad
	}
	if n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("%q is too large", v)
	}
	return n << shift, nil
}

// parseDuration parses a time the way fio does (get_mult_time in parse.c):
// a whole number, in seconds unless a unit follows: us or usec, ms or msec,
// s, m, h, d, in any case.
func parseDuration(v string) (time.Duration, error) {
	bad := fmt.Errorf("%q is not a duration (use e.g. 10, 10s, 500ms, 2m)", v)
	if strings.ContainsAny(v, "$(") {
		return 0, fmt.Errorf("%q: iolab does not expand fio's $keywords or (expressions); write the time", v)
	}
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, bad
	}
	if i < len(v) && v[i] == '.' {
		// fio drops the fraction: runtime=1.5 runs for 1 s.
		return 0, fmt.Errorf("%q: fio ignores fractions of a unit; use a smaller unit (e.g. 1500ms)", v)
	}
	n, err := strconv.ParseInt(v[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is too long", v)
	}
	var unit time.Duration
	switch u := strings.ToLower(v[i:]); u {
	case "", "s":
		unit = time.Second
	case "us", "usec":
		unit = time.Microsecond
	case "ms", "msec":
		unit = time.Millisecond
	case "m":
		unit = time.Minute
	case "h":
		unit = time.Hour
	case "d":
		unit = 24 * time.Hour
	case "sec", "secs", "min", "mins":
		// fio 3.33 matches none of these and reads them as microseconds.
		return 0, fmt.Errorf("%q: fio reads the unit %q as microseconds; write %d%s", v, v[i:], n, u[:1])
	default:
		return 0, bad
	}
	if n > int64(math.MaxInt64/unit) {
		return 0, fmt.Errorf("%q is too long", v)
	}
	return time.Duration(n) * unit, nil
}

// parseCPUList parses fio's cpus_allowed: CPU numbers and ranges separated
// by commas, e.g. "0,2-3". The result is sorted and without repeats.
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
	if n >= maxCPU {
		return 0, fmt.Errorf("CPU %d is beyond Linux's %d CPUs", n, maxCPU)
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
//   - --output-format (normal, json or json+) and --output=FILE are
//     iolab's; fio's other program options are refused.
func ParseArgs(args []string) (*Config, error) {
	cfg := &Config{OutputFormat: "normal"}
	p := newJobParser("")
	var files []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			files = append(files, args[i+1:]...)
			break
		}
		if arg == "-" {
			return nil, &OptionError{Msg: "iolab cannot read a job file from standard input; give its path"}
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
				return "", &OptionError{Option: name, Msg: fmt.Sprintf("option --%s needs a value (--%s=...)", name, name)}
			}
			i++
			return args[i], nil
		}
		switch name {
		case "output-format":
			v, err := takeValue()
			if err != nil {
				return nil, err
			}
			switch v {
			case "normal", "json", "json+":
				cfg.OutputFormat = v
			default:
				msg := fmt.Sprintf("option --output-format: %q is not one of normal, json, json+", v)
				if strings.Contains(v, ",") {
					msg = fmt.Sprintf("option --output-format: %q: iolab writes one format per run (normal, json or json+)", v)
				}
				return nil, &OptionError{Option: name, Value: v, Msg: msg}
			}
			continue
		case "output":
			v, err := takeValue()
			if err != nil {
				return nil, err
			}
			if v == "" {
				return nil, &OptionError{Option: name, Msg: "option --output needs a file name (--output=FILE)"}
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
			return nil, &OptionError{Option: name, Value: value, Msg: fmt.Sprintf("fio's --%s is not supported by iolab", name)}
		}
		o, ok := lookupOption(name)
		if !ok {
			return nil, unknownOption(name, value)
		}
		if !o.flag {
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
		return nil, &OptionError{Msg: "no jobs: start one with --name=NAME, or give a job file"}
	}
	cfg.Jobs = p.jobs
	cfg.Groups = Expand(p.jobs)
	cfg.GlobalOptions = p.globals
	return cfg, nil
}

func parseJobFilePath(p *jobParser, path string) error {
	f, err := os.Open(path)
	if err != nil {
		msg := "cannot read job file"
		if errors.Is(err, os.ErrNotExist) {
			msg = "no such job file (options start with --, e.g. --name=job)"
		}
		return &OptionError{File: path, Msg: msg, Err: err}
	}
	defer f.Close()
	return p.parseFile(f, path)
}

// unknownOption is the error for an option iolab does not take: a typo
// (with the closest supported name), or a real fio option iolab does not
// support.
func unknownOption(name, value string) error {
	e := &OptionError{Option: name, Value: value}
	if slices.Contains(strings.Fields(fioJobOptionNames), name) {
		e.Msg = fmt.Sprintf("option %q is not supported by iolab (remove it, or run this job with fio)", name)
		return e
	}
	var names []string
	for _, o := range jobOptions {
		names = append(names, o.name)
		names = append(names, o.aliases...)
	}
	e.Msg = fmt.Sprintf("unknown option %q", name)
	if s := closest(name, names); s != "" {
		e.Msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return e
}

// closest returns the candidate nearest to s by edit distance, ignoring
// case (fio's names are lower case, and case-sensitive), or "" when none is
// near enough: fio's string_distance_ok allows up to half of the length of
// what was typed.
func closest(s string, candidates []string) string {
	best, bestDist := "", (len(s)+1)/2+1
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(s), c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			sub := prev[j-1]
			if a[i-1] != b[j-1] {
				sub++
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, sub)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// fioProgramOptions are fio's command-line options that are not job
// options (fio --help, fio 3.33).
var fioProgramOptions = []string{
	"debug", "parse-only", "merge-blktrace-only", "bandwidth-log", "minimal",
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
iopsavgtime ioscheduler job_max_open_zones kb_base lat_percentiles
latency_percentile latency_run latency_target latency_window lockfile lockmem
log_alternate_epoch log_alternate_epoch_clock_id log_avg_msec log_compression
log_compression_cpus log_entries log_hist_coarseness log_hist_msec
log_max_value log_offset log_prio log_store_compressed log_unix_epoch loops
max_latency max_open_zones mem merge_blktrace_file merge_blktrace_iters
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
