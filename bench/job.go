package bench

import (
	"slices"
	"time"

	"iolab/bench/hist"
)

// Option is one option as the user wrote it, kept in order for fio's
// "job options" and "global options" JSON objects.
type Option struct {
	Name  string `json:"name"`
	Value string `json:"value"` // "" for value-less options such as time_based
}

// Arg writes the option as a command-line argument: --name=value, or
// --name for a value-less one.
func (o Option) Arg() string {
	if o.Value == "" {
		return "--" + o.Name
	}
	return "--" + o.Name + "=" + o.Value
}

// Line writes the option as a job-file line: name=value, or name.
func (o Option) Line() string {
	if o.Value == "" {
		return o.Name
	}
	return o.Name + "=" + o.Value
}

// Job is one fio job, with options in fio's names and already converted to
// their units. Zero values are not defaults: NewJob returns fio's defaults,
// and the parsers start from it.
type Job struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Filename    string `json:"filename"`

	// RW is fio's rw: read, write, randread, randwrite, rw (readwrite is
	// normalised to rw), randrw, trim, randtrim, trimwrite or
	// randtrimwrite.
	RW        string `json:"rw"`
	RWMixRead int    `json:"rwmixread"` // percentage of reads for rw/randrw; rwmixwrite=N sets 100-N

	BS     int64 `json:"bs"`     // bytes
	Size   int64 `json:"size"`   // bytes; 0 means the whole file or device
	Offset int64 `json:"offset"` // bytes
	// IOSize is fio's io_size (io_limit): the bytes a size-based job moves,
	// over its region as many times as it takes; 0: the region once.
	IOSize int64 `json:"io_size,omitempty"`

	IODepth  int    `json:"iodepth"`
	IOEngine string `json:"ioengine"` // io_uring, libaio, psync, null
	Direct   bool   `json:"direct"`

	Runtime   time.Duration `json:"runtime_ns"` // 0 means no limit (then Size ends the job)
	TimeBased bool          `json:"time_based"`
	RampTime  time.Duration `json:"ramp_time_ns"`

	NumJobs        int  `json:"numjobs"`
	GroupReporting bool `json:"group_reporting"`
	Stonewall      bool `json:"stonewall"`
	NewGroup       bool `json:"new_group"`

	Hipri           bool `json:"hipri"`
	SQThreadPoll    bool `json:"sqthread_poll"`
	SQThreadPollCPU int  `json:"sqthread_poll_cpu"` // -1: not set
	FixedBufs       bool `json:"fixedbufs"`
	RegisterFiles   bool `json:"registerfiles"`

	RandRepeat  bool   `json:"randrepeat"` // default true: the same random sequence on every run
	RandSeed    uint64 `json:"randseed"`   // fio's default is 0x89
	NoRandomMap bool   `json:"norandommap"`

	CPUsAllowed []int `json:"cpus_allowed"` // nil: no affinity

	IODepthBatchSubmit      int  `json:"iodepth_batch_submit"`       // default 1
	IODepthBatchCompleteMin int  `json:"iodepth_batch_complete_min"` // default 1
	IODepthBatchCompleteMax int  `json:"iodepth_batch_complete_max"` // default 0: same as iodepth_batch_complete_min
	IODepthLow              int  `json:"iodepth_low,omitempty"`      // default 0: same as IODepth
	UserspaceReap           bool `json:"userspace_reap,omitempty"`   // libaio: reap from the user ring when not waiting

	PercentileList []float64 `json:"percentile_list"` // default fio's list

	AllowMountedWrite bool `json:"allow_mounted_write"`

	// The option families, each in its own file (job_*.go); their fields
	// sit at the top level of the job's JSON.
	FileOptions
	PatternOptions
	PacingOptions
	FlowOptions
	NUMAOptions
	BufferOptions
	VerifyOptions
	SteadyOptions
	LogOptions
	PrioOptions
	ErrorOptions

	// Options are the options set in this job's own section (or, on the
	// command line, after its --name), as written.
	Options []Option `json:"options"`
}

// NewJob returns a job holding fio's defaults.
func NewJob() Job {
	return Job{
		RW:                      "read",
		RWMixRead:               50,
		BS:                      4096,
		IODepth:                 1,
		IOEngine:                "psync",
		NumJobs:                 1,
		SQThreadPollCPU:         -1,
		RandRepeat:              true,
		RandSeed:                0x89,
		IODepthBatchSubmit:      1,
		IODepthBatchCompleteMin: 1,
		PercentileList:          hist.DefaultPercentiles(),
		FileOptions:             defaultFileOptions(),
		BufferOptions:           DefaultBufferOptions(),
		PacingOptions:           defaultPacing(),
		VerifyOptions:           defaultVerify(),
		SteadyOptions:           defaultSteady(),
		LogOptions:              defaultLogOptions(),
	}
}

// Random reports whether the job's offsets are random.
func (j *Job) Random() bool {
	switch j.RW {
	case "randread", "randwrite", "randrw", "randtrim", "randtrimwrite":
		return true
	}
	return false
}

// Trims reports whether the job trims (discards) blocks: rw=trim,
// randtrim, trimwrite or randtrimwrite (fio's td_trim).
func (j *Job) Trims() bool {
	switch j.RW {
	case "trim", "randtrim", "trimwrite", "randtrimwrite":
		return true
	}
	return false
}

// TrimWrite reports whether the job writes each block it has just trimmed
// (rw=trimwrite, randtrimwrite: fio's td_trimwrite).
func (j *Job) TrimWrite() bool { return j.RW == "trimwrite" || j.RW == "randtrimwrite" }

// Modifies reports whether the job changes its target's data: it writes
// or trims. The write guard's rules are for such jobs.
func (j *Job) Modifies() bool { return j.Writes() || j.Trims() }

// Reads reports whether the job reads at all.
func (j *Job) Reads() bool {
	switch j.RW {
	case "read", "randread":
		return true
	case "rw", "randrw":
		return j.RWMixRead > 0
	}
	return false
}

// Writes reports whether the job writes at all.
func (j *Job) Writes() bool {
	switch j.RW {
	case "write", "randwrite", "trimwrite", "randtrimwrite":
		return true
	case "rw", "randrw":
		return j.RWMixRead < 100
	}
	return false
}

// Group is a set of jobs that run at the same time and report together: a
// job with stonewall or new_group starts a new one.
type Group struct {
	ID int `json:"id"`
	// Wait is true when the group waits for every earlier job to finish
	// before it starts (stonewall); otherwise it starts with the one before.
	Wait bool `json:"wait"`
	// Reporting is group_reporting on some job of the group: its results
	// are merged into entries (JoinsEntry).
	Reporting bool `json:"reporting"`
	// Jobs, numjobs already expanded: clones keep their job's name.
	Jobs []Job `json:"jobs"`
}

// Limits iolab puts on job values. fio's own are looser (fio parses
// iodepth=65537 and numjobs=0 without complaint) or live elsewhere
// (--max-jobs).
const (
	MaxIODepth = 65536
	MaxNumJobs = 4096 // fio's REAL_MAX_JOBS, the default of --max-jobs
	MaxCPU     = 8192 // Linux's largest CONFIG_NR_CPUS
)

// Config is what one `iolab run` does: its groups and the program-level
// options that are not job options.
type Config struct {
	// Jobs are the jobs as parsed, before numjobs and grouping: what a
	// sweep changes before expanding them again into Groups.
	Jobs         []Job   `json:"jobs,omitempty"`
	Groups       []Group `json:"groups"`
	OutputFormat string  `json:"output_format"` // normal, json, json+, terse, or several joined by commas in fio's order (fio.OutputFormats)
	// TerseVersion is fio's --terse-version (2 to 5) for terse output;
	// 0 is fio's default, 3.
	TerseVersion int `json:"terse_version,omitempty"`
	// StatusInterval is fio's --status-interval: a complete report of
	// the running jobs every so often, before the final one; 0: none.
	StatusInterval time.Duration `json:"status_interval_ns,omitempty"`
	Output         string        `json:"output"` // file to write the report to; "" is stdout
	GlobalOptions  []Option      `json:"global_options"`
	// Notes are what the parser has to say that is not an error: options
	// fio takes and ignores (bench/fio's inert options), each with why.
	Notes []string `json:"notes,omitempty"`
	// ParseOnly is fio's --parse-only: check the options, run nothing.
	ParseOnly bool `json:"-"`
	// TraceBlock is --trace-block: each job's measured I/Os joined with
	// the block layer's bios on its targets' devices, their time there
	// in parts (DirResult.Block; blocktrace_linux.go).
	TraceBlock bool `json:"trace_block,omitempty"`
}

// Expand turns jobs, in order, into groups the way fio's add_job numbers
// them: a job with stonewall or new_group starts a new group unless the
// current one is still empty; a group started by stonewall waits for every
// job before it. numjobs=N puts N copies of the job in its group (fio's
// clones keep the name); group_reporting on any job of a group makes the
// group report as one.
func Expand(jobs []Job) []Group {
	var groups []Group
	for _, j := range jobs {
		if len(groups) == 0 || ((j.Stonewall || j.NewGroup) && len(groups[len(groups)-1].Jobs) > 0) {
			groups = append(groups, Group{ID: len(groups), Wait: j.Stonewall && len(groups) > 0})
		}
		g := &groups[len(groups)-1]
		for n := range max(j.NumJobs, 1) {
			c := j.Clone()
			if n > 0 {
				// As in fio, the clones run alongside the first copy;
				// fio's add_job numbers them numjobs-1 down to 1.
				c.Stonewall, c.NewGroup = false, false
				c.JobNum = j.NumJobs - n
			}
			g.Jobs = append(g.Jobs, c)
		}
		g.Reporting = g.Reporting || j.GroupReporting
	}
	return groups
}

// Clone returns a copy of j that shares no slices with it.
func (j Job) Clone() Job {
	j.CPUsAllowed = slices.Clone(j.CPUsAllowed)
	j.PercentileList = slices.Clone(j.PercentileList)
	j.Options = slices.Clone(j.Options)
	j.BSSplit = [2][]BSSplit{slices.Clone(j.BSSplit[0]), slices.Clone(j.BSSplit[1])}
	j.PatternOptions = j.PatternOptions.clone()
	j.BufferPattern = slices.Clone(j.BufferPattern)
	j.VerifyPattern = slices.Clone(j.VerifyPattern)
	j.VerifyAsyncCPUs = slices.Clone(j.VerifyAsyncCPUs)
	j.CmdprioBSSplit = [2][]PrioSplit{slices.Clone(j.CmdprioBSSplit[0]), slices.Clone(j.CmdprioBSSplit[1])}
	j.ErrorOptions = j.ErrorOptions.clone()
	return j
}

// Args is the command line the config's jobs amount to: its global
// options, then each job's, as ParseArgs reads them back.
func (c *Config) Args() []string {
	var args []string
	for _, o := range c.GlobalOptions {
		args = append(args, o.Arg())
	}
	for _, j := range c.Jobs {
		args = append(args, "--name="+j.Name)
		for _, o := range j.Options {
			if o.Name == "name" {
				continue // a job file's name= in its section: --name above says it, and again would start a job
			}
			args = append(args, o.Arg())
		}
	}
	return args
}

// JoinsEntry reports whether the group's i-th job reports in the entry of
// the job before it, as fio's __show_run_stats (stat.c) makes a group's
// entries: in order, a job with group_reporting joins the entry before it
// — even that of a job without group_reporting — and any other job starts
// an entry of its own. With group_reporting on every job (in [global], as
// it is nearly always), the group is one entry.
func (g *Group) JoinsEntry(i int) bool { return i > 0 && g.Jobs[i].GroupReporting }
