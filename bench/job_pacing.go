package bench

import "time"

// PacingOptions are the job options for when I/Os are issued and how jobs run together: rates, think time, start delays, CPU policy, which latencies are measured and reported.
type PacingOptions struct {
	// Rate and RateIOPS cap each direction (Read, Write) in bytes/s and
	// I/Os per second, 0 for no cap: fio's rate and rate_iops. RateMin and
	// RateIOPSMin end the job with an error when a direction falls below
	// them over RateCycle, after a 2 s settling period (fio's rate_min and
	// rate_iops_min).
	Rate        [2]int64 `json:"rate"`
	RateIOPS    [2]int64 `json:"rate_iops"`
	RateMin     [2]int64 `json:"rate_min"`
	RateIOPSMin [2]int64 `json:"rate_iops_min"`
	// RateProcess is fio's rate_process: RateLinear (I/Os evenly spaced)
	// or RatePoisson (exponential gaps between I/Os, the same mean).
	RateProcess string        `json:"rate_process"`
	RateCycle   time.Duration `json:"rate_cycle_ns"` // the window rate_min is checked over; default 1 s

	// Thinktime is a pause after every ThinktimeBlocks I/Os (counted as
	// they complete, or as they are issued with ThinktimeBlocksType
	// "issue"), its first ThinktimeSpin spent spinning on the CPU.
	Thinktime           time.Duration `json:"thinktime_ns"`
	ThinktimeSpin       time.Duration `json:"thinktime_spin_ns"`
	ThinktimeBlocks     int           `json:"thinktime_blocks"`      // default 1
	ThinktimeBlocksType string        `json:"thinktime_blocks_type"` // complete (default) or issue

	// StartDelay delays the job's start, counted from the start of the
	// run; with StartDelayHigh above it, each job (and clone) draws its
	// delay uniformly from [StartDelay, StartDelayHigh].
	StartDelay     time.Duration `json:"startdelay_ns"`
	StartDelayHigh time.Duration `json:"startdelay_high_ns"`

	// CPUsAllowedPolicy is shared (every job gets all of cpus_allowed) or
	// split (each job one CPU of it, by its number in the run).
	CPUsAllowedPolicy string `json:"cpus_allowed_policy"`

	// ClockSource is fio's clocksource: the clock the job loop times I/O
	// with — "cpu" (the TSC), "clock_gettime", "gettimeofday", or ""
	// for fio's default (bench.ClockSource). fio keeps one clock for the
	// whole run: the value of the last job that gives one.
	ClockSource string `json:"clocksource,omitempty"`

	// What is measured: gtod_reduce sets every Disable* and clears the
	// percentiles; DisableBW with DisableClat and DisableSlat stops the
	// clock read at submission.
	GtodReduce  bool `json:"gtod_reduce"`
	DisableLat  bool `json:"disable_lat"`
	DisableClat bool `json:"disable_clat"`
	DisableSlat bool `json:"disable_slat"`
	DisableBW   bool `json:"disable_bw_measurement"`

	// Which latencies the report shows percentiles of (fio's default:
	// clat only).
	ClatPercentiles bool `json:"clat_percentiles"`
	LatPercentiles  bool `json:"lat_percentiles"`
	SlatPercentiles bool `json:"slat_percentiles"`
	// SigFigs is fio's significant_figures: the digits of the normal
	// output's IOPS and bandwidth figures (1 to 10, default 4).
	SigFigs int `json:"significant_figures"`

	// ExitAll makes every job's end stop others (fio's exitall, which
	// fio applies to every job once any job sets it); ExitAllOnError does
	// so for this job when it ends on an error. ExitWhat, of the job that
	// ends, says which: ExitGroup, ExitStonewall or ExitEverything.
	ExitAll        bool   `json:"exitall"`
	ExitAllOnError bool   `json:"exitall_on_error,omitempty"`
	ExitWhat       string `json:"exit_what,omitempty"`
	// WaitFor names a job defined before this one: this job starts when
	// every copy of it has finished.
	WaitFor string `json:"wait_for,omitempty"`
	// IOScheduler switches the job's disk to this I/O scheduler while its
	// group runs, and back afterwards.
	IOScheduler string `json:"ioscheduler,omitempty"`
	// IOSubmitMode is fio's io_submit_mode: SubmitInline (the job's thread
	// submits and reaps) or SubmitOffload (iodepth submit workers do, each
	// one I/O at a time, so submissions keep their schedule whatever the
	// device does; offload_linux.go).
	IOSubmitMode string `json:"io_submit_mode,omitempty"`
}

// The submit modes (fio's io_submit_mode).
const (
	SubmitInline  = "inline"
	SubmitOffload = "offload"
)

// Offloaded reports whether the job hands its I/Os to submit workers
// (io_submit_mode=offload).
func (p *PacingOptions) Offloaded() bool { return p.IOSubmitMode == SubmitOffload }

// What a job's end stops under exitall (fio's exit_what: TERMINATE_GROUP,
// TERMINATE_STONEWALL, TERMINATE_ALL in fio.h).
const (
	// ExitGroup stops the other jobs of its reporting group, started or
	// not; the default.
	ExitGroup = "group"
	// ExitStonewall stops every job of its phase that is running (past
	// its start delay, wait_for and ramp); the rest start and run, and
	// the next stonewalled phase follows.
	ExitStonewall = "stonewall"
	// ExitEverything stops every job of the run: later phases never
	// start.
	ExitEverything = "all"
)

// The rate processes (fio's rate_process).
const (
	RateLinear  = "linear"
	RatePoisson = "poisson"
)

// defaultPacing is fio's defaults for the pacing options.
func defaultPacing() PacingOptions {
	return PacingOptions{
		RateProcess:         RateLinear,
		RateCycle:           time.Second,
		ThinktimeBlocks:     1,
		ThinktimeBlocksType: "complete",
		CPUsAllowedPolicy:   "shared",
		ExitWhat:            ExitGroup,
		ClatPercentiles:     true,
		SigFigs:             4,
	}
}

// Rated reports whether the job paces its I/O or checks a minimum rate
// (fio's TD_F_CHECK_RATE).
func (p *PacingOptions) Rated() bool {
	for d := range 2 {
		if p.Rate[d] > 0 || p.RateIOPS[d] > 0 || p.RateMin[d] > 0 || p.RateIOPSMin[d] > 0 {
			return true
		}
	}
	return false
}

// SignificantFigures is SigFigs, with fio's 4 for a job stored before
// the option existed.
func (p *PacingOptions) SignificantFigures() int {
	if p.SigFigs <= 0 {
		return 4
	}
	return p.SigFigs
}
