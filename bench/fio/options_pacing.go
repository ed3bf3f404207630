package fio

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"iolab/bench"
	"iolab/bench/units"
)

// pacingOptions are fio's options for the when I/Os are issued and how jobs run together: rates, think time, start delays, CPU policy, statistics.
var pacingOptions = []bench.OptionSpec{
	{Name: "rate", Example: "10m", Unit: "size,size", Help: "cap each direction's bandwidth in bytes/s (read,write; one value caps both)",
		Set: perDir(units.ParseSize, func(j *bench.Job) *[2]int64 { return &j.Rate }), Get: getPerDir(func(j *bench.Job) [2]int64 { return j.Rate })},
	{Name: "rate_min", Aliases: []string{"ratemin"}, Example: "1m", Unit: "size,size",
		Help: "end the job with an error when a direction's bandwidth falls below this (bytes/s, checked every rate_cycle after 2 s)",
		Set:  perDir(units.ParseSize, func(j *bench.Job) *[2]int64 { return &j.RateMin }), Get: getPerDir(func(j *bench.Job) [2]int64 { return j.RateMin })},
	{Name: "rate_iops", Example: "500", Unit: "int,int", Help: "cap each direction's I/Os per second (read,write; one value caps both)",
		Set: perDir(parseIOPS, func(j *bench.Job) *[2]int64 { return &j.RateIOPS }), Get: getPerDir(func(j *bench.Job) [2]int64 { return j.RateIOPS })},
	{Name: "rate_iops_min", Example: "100", Unit: "int,int",
		Help: "end the job with an error when a direction's IOPS fall below this (checked every rate_cycle after 2 s)",
		Set:  perDir(parseIOPS, func(j *bench.Job) *[2]int64 { return &j.RateIOPSMin }), Get: getPerDir(func(j *bench.Job) [2]int64 { return j.RateIOPSMin })},
	{Name: "rate_process", Example: "poisson", Unit: "mode", Default: bench.RateLinear,
		Help: "how rated I/Os are spaced: linear (evenly) or poisson (exponential gaps, the same mean)",
		Set:  oneOf(func(j *bench.Job) *string { return &j.RateProcess }, bench.RateLinear, bench.RatePoisson),
		Get:  func(j *bench.Job) string { return j.RateProcess }},
	{Name: "rate_cycle", Aliases: []string{"ratecycle"}, Example: "500", Unit: "ms", Default: "1000",
		Help: "the window, in ms, over which rate_min and rate_iops_min are checked",
		Set: func(j *bench.Job, v string) error {
			n, err := units.ParseSize(v)
			if err == nil && (n < 1 || n > 1<<31) {
				err = fmt.Errorf("%s is out of range (1 to %d ms)", v, 1<<31)
			}
			if err == nil {
				j.RateCycle = time.Duration(n) * time.Millisecond
			}
			return err
		},
		Get: func(j *bench.Job) string { return strconv.FormatInt(j.RateCycle.Milliseconds(), 10) }},
	{Name: "thinktime", Example: "100", Unit: "µs", Default: "0", Help: "pause this long after every thinktime_blocks I/Os (µs unless a unit follows)",
		Set: microsField(func(j *bench.Job) *time.Duration { return &j.Thinktime }), Get: getMicros(func(j *bench.Job) time.Duration { return j.Thinktime })},
	{Name: "thinktime_spin", Example: "10", Unit: "µs", Default: "0", Help: "spend this much of thinktime spinning on the CPU instead of sleeping (µs unless a unit follows)",
		Set: microsField(func(j *bench.Job) *time.Duration { return &j.ThinktimeSpin }), Get: getMicros(func(j *bench.Job) time.Duration { return j.ThinktimeSpin })},
	{Name: "thinktime_blocks", Example: "8", Unit: "int", Default: "1", Help: "the I/Os between two think times",
		Set: bench.IntField(0, 1<<31-1, func(j *bench.Job) *int { return &j.ThinktimeBlocks }),
		Get: func(j *bench.Job) string { return strconv.Itoa(j.ThinktimeBlocks) }},
	{Name: "thinktime_blocks_type", Example: "issue", Unit: "mode", Default: "complete",
		Help: "count thinktime_blocks as I/Os complete (complete) or as they are issued (issue)",
		Set:  oneOf(func(j *bench.Job) *string { return &j.ThinktimeBlocksType }, "complete", "issue"),
		Get:  func(j *bench.Job) string { return j.ThinktimeBlocksType }},
	{Name: "startdelay", Example: "2s", Unit: "time range", Default: "0",
		Help: "start the job this long after the run starts; a range (1-5) draws a delay for each job (seconds unless a unit follows)",
		Set:  setStartDelay,
		Get: func(j *bench.Job) string {
			if j.StartDelayHigh > j.StartDelay {
				return units.FormatDuration(j.StartDelay) + "-" + units.FormatDuration(j.StartDelayHigh)
			}
			return units.FormatDuration(j.StartDelay)
		}},
	{Name: "cpus_allowed_policy", Example: "split", Unit: "mode", Default: "shared",
		Help: "shared: every job may use all of cpus_allowed; split: each job gets one of them, in turn",
		Set:  oneOf(func(j *bench.Job) *string { return &j.CPUsAllowedPolicy }, "shared", "split"),
		Get:  func(j *bench.Job) string { return j.CPUsAllowedPolicy }},
	{Name: "clocksource", Example: "clock_gettime", Unit: "clock",
		Help: "the clock I/O is timed with, for the whole run (the last job's that gives one): cpu (the TSC), clock_gettime, gettimeofday (whole microseconds); by default the TSC where fio would read it, else clock_gettime",
		Set: func(j *bench.Job, v string) error {
			if v == "cpu" && !bench.HaveTSC() {
				return errors.New("cpu: this CPU has no time-stamp counter iolab can read; use clock_gettime")
			}
			return oneOf(func(j *bench.Job) *string { return &j.ClockSource }, bench.ClockSources...)(j, v)
		},
		Get: func(j *bench.Job) string { return j.ClockSource }},
	{Name: "gtod_reduce", Example: "1", Unit: "bool", Default: "0",
		Help: "measure no latencies (sets disable_lat, disable_clat, disable_slat, disable_bw_measurement): fewer clock reads",
		Set: func(j *bench.Job, v string) error {
			on, err := units.ParseFlag(v)
			if err != nil {
				return err
			}
			j.GtodReduce = on
			// fio's str_gtod_reduce_cb: setting it sets the others, which
			// later options may set back; clearing it changes nothing.
			if on {
				j.DisableLat, j.DisableClat, j.DisableSlat, j.DisableBW = true, true, true, true
				j.ClatPercentiles, j.LatPercentiles, j.SlatPercentiles = false, false, false
			}
			return nil
		},
		Get: bench.GetBool(func(j *bench.Job) *bool { return &j.GtodReduce })},
	boolOption("disable_lat", nil, "0", "do not measure total latency (lat)", func(j *bench.Job) *bool { return &j.DisableLat }),
	boolOption("disable_clat", nil, "0", "do not measure completion latency (clat)", func(j *bench.Job) *bool { return &j.DisableClat }),
	boolOption("disable_slat", nil, "0", "do not measure submission latency (slat)", func(j *bench.Job) *bool { return &j.DisableSlat }),
	boolOption("disable_bw_measurement", []string{"disable_bw"}, "0",
		"with disable_clat and disable_slat: no clock read when I/Os are submitted", func(j *bench.Job) *bool { return &j.DisableBW }),
	boolOption("clat_percentiles", nil, "1", "report completion latency percentiles", func(j *bench.Job) *bool { return &j.ClatPercentiles }),
	boolOption("lat_percentiles", nil, "0", "report total latency percentiles", func(j *bench.Job) *bool { return &j.LatPercentiles }),
	boolOption("slat_percentiles", nil, "0", "report submission latency percentiles", func(j *bench.Job) *bool { return &j.SlatPercentiles }),
	{Name: "significant_figures", Example: "6", Unit: "int", Default: "4", Help: "digits of the normal output's IOPS and bandwidth figures (1 to 10)",
		Set: bench.IntField(1, 10, func(j *bench.Job) *int { return &j.SigFigs }),
		Get: func(j *bench.Job) string { return strconv.Itoa(j.SigFigs) }},
	{Name: "exitall", Flag: true, Unit: "bool", Default: "0", Help: "when a job finishes, stop others: those its exit_what names (set on any job, it applies to all)",
		Set: func(j *bench.Job, v string) error {
			on, err := units.ParseFlag(v)
			if err == nil && !on {
				// fio's str_exitall_cb ignores the value.
				return errors.New(`fio turns exitall on whatever its value, even 0; leave it out to keep jobs running`)
			}
			j.ExitAll = on
			return err
		}},
	{Name: "exit_what", Example: "stonewall", Unit: "mode", Default: bench.ExitGroup,
		Help: "what a job's end stops under exitall: group (its group's jobs), stonewall (the running jobs of its phase; the next phase follows) or all (the run)",
		Set:  oneOf(func(j *bench.Job) *string { return &j.ExitWhat }, bench.ExitGroup, bench.ExitStonewall, bench.ExitEverything),
		Get:  func(j *bench.Job) string { return j.ExitWhat }},
	{Name: "exitall_on_error", Flag: true, Unit: "bool", Default: "0", Help: "when this job ends on an error, stop others as exitall would (those its exit_what names)",
		Set: bench.BoolField(func(j *bench.Job) *bool { return &j.ExitAllOnError }), Get: bench.GetBool(func(j *bench.Job) *bool { return &j.ExitAllOnError })},
	{Name: "wait_for", Example: "writer", Unit: "job", Help: "start only when every copy of the named job, defined before this one, has finished",
		Set: func(j *bench.Job, v string) error {
			j.WaitFor = v
			return nil
		},
		Get: func(j *bench.Job) string { return j.WaitFor }},
	{Name: "ioscheduler", Example: "mq-deadline", Unit: "name", Help: "switch the target's disk to this I/O scheduler while the job runs, and back afterwards",
		Set: func(j *bench.Job, v string) error {
			if v == "" || strings.ContainsAny(v, "/ \t\n[]") {
				return fmt.Errorf("%q is not an I/O scheduler name (e.g. none, mq-deadline, bfq, kyber)", v)
			}
			j.IOScheduler = v
			return nil
		},
		Get: func(j *bench.Job) string { return j.IOScheduler }},
}

func boolOption(name string, aliases []string, def, help string, field func(*bench.Job) *bool) bench.OptionSpec {
	return bench.OptionSpec{Name: name, Aliases: aliases, Example: "1", Unit: "bool", Default: def, Help: help,
		Set: bench.BoolField(field), Get: bench.GetBool(field)}
}

func oneOf(field func(*bench.Job) *string, values ...string) func(*bench.Job, string) error {
	return func(j *bench.Job, v string) error {
		for _, w := range values {
			if v == w {
				*field(j) = v
				return nil
			}
		}
		return fmt.Errorf("%q is not one of %s", v, strings.Join(values, ", "))
	}
}

// perDir sets a per-direction option the way fio's parser stores one with
// off1, off2 (read, write; trim, which iolab never does, third): one
// value sets every direction, "r,w" each, and an empty one keeps what the
// direction had ("rate=,1m" caps writes only). A trailing comma is
// dropped, as fio drops it.
func perDir(parse func(string) (int64, error), field func(*bench.Job) *[2]int64) func(*bench.Job, string) error {
	return func(j *bench.Job, v string) error {
		parts := strings.Split(strings.TrimSuffix(v, ","), ",")
		if len(parts) > 3 {
			return fmt.Errorf("%q has %d values; fio takes read,write,trim", v, len(parts))
		}
		dst := field(j)
		vals := *dst
		for i, p := range parts[:min(len(parts), 2)] {
			if p == "" {
				continue
			}
			n, err := parse(p)
			if err != nil {
				return err
			}
			vals[i] = n
			if len(parts) == 1 {
				vals[bench.Write] = n
			}
		}
		if len(parts) == 3 && parts[2] != "" {
			if _, err := parse(parts[2]); err != nil {
				return err
			}
		}
		*dst = vals
		return nil
	}
}

// parseIOPS reads rate_iops as fio does, like a size (1k is 1024), into
// 32 bits.
func parseIOPS(v string) (int64, error) {
	n, err := units.ParseSize(v)
	if err == nil && n > 1<<32-1 {
		err = fmt.Errorf("%s is out of range (0 to %d)", v, uint32(1<<32-1))
	}
	return n, err
}

func getPerDir(get func(*bench.Job) [2]int64) func(*bench.Job) string {
	return func(j *bench.Job) string {
		v := get(j)
		if v[0] == v[1] {
			return strconv.FormatInt(v[0], 10)
		}
		return strconv.FormatInt(v[0], 10) + "," + strconv.FormatInt(v[1], 10)
	}
}

// microsField sets a time given in µs unless a unit follows (fio's
// FIO_OPT_INT with is_time and not is_seconds: thinktime).
func microsField(field func(*bench.Job) *time.Duration) func(*bench.Job, string) error {
	return func(j *bench.Job, v string) error {
		d, err := parseMicros(v)
		if err == nil {
			*field(j) = d
		}
		return err
	}
}

func parseMicros(v string) (time.Duration, error) {
	if v != "" && strings.Trim(v, "0123456789") == "" {
		v += "us"
	}
	d, err := units.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%q is not a time (µs unless a unit follows: 100, 100us, 2ms, 1s)", strings.TrimSuffix(v, "us"))
	}
	return d, nil
}

func getMicros(get func(*bench.Job) time.Duration) func(*bench.Job) string {
	return func(j *bench.Job) string { return strconv.FormatInt(get(j).Microseconds(), 10) }
}

// setStartDelay reads startdelay: a time, seconds unless a unit follows,
// or a range lo-hi (fio splits the value at ',', ':' or '-').
func setStartDelay(j *bench.Job, v string) error {
	lo, hi, isRange := v, v, false
	for _, sep := range []string{",", ":", "-"} {
		if a, b, ok := strings.Cut(v, sep); ok {
			lo, hi, isRange = a, b, true
			break
		}
	}
	l, err := units.ParseDuration(lo)
	if err != nil {
		return err
	}
	h := l
	if isRange {
		if h, err = units.ParseDuration(hi); err != nil {
			return err
		}
		if h < l {
			return fmt.Errorf("%q: the range runs backwards (write %s-%s)", v, hi, lo)
		}
	}
	j.StartDelay, j.StartDelayHigh = l, h
	return nil
}

// finishPacing is fixup_options' part for these options (fio's init.c).
func finishPacing(j *bench.Job, fail func(option, format string, args ...any) error) error {
	sum := func(v [2]int64) int64 { return v[0] + v[1] }
	if (sum(j.Rate) > 0 && sum(j.RateIOPS) > 0) || (sum(j.RateMin) > 0 && sum(j.RateIOPSMin) > 0) {
		return fail("rate", "rate and rate_iops are mutually exclusive (and so are rate_min and rate_iops_min): cap bytes or I/Os, not both")
	}
	for d, dir := range []string{"read", "write"} {
		if (j.Rate[d] > 0 && j.Rate[d] < j.RateMin[d]) || (j.RateIOPS[d] > 0 && j.RateIOPS[d] < j.RateIOPSMin[d]) {
			return fail("rate_min", "the minimum %s rate exceeds the %s rate", dir, dir)
		}
		if j.RateProcess == bench.RatePoisson && j.Rate[d] > 0 && j.Rate[d] < j.BS {
			// fio divides by zero there: its poisson process works in I/Os.
			return fail("rate_process", "rate_process=poisson needs a %s rate of at least one block (bs=%d) per second", dir, j.BS)
		}
	}
	j.ThinktimeSpin = min(j.ThinktimeSpin, j.Thinktime)
	if j.DisableLat {
		j.LatPercentiles = false
	}
	if j.DisableClat {
		j.ClatPercentiles = false
	}
	if j.DisableSlat {
		j.SlatPercentiles = false
	}
	return nil
}

// checkJobOrder checks what a job's options say about the jobs before it
// (earlier, numjobs not expanded): wait_for and lat_percentiles.
func checkJobOrder(j *bench.Job, earlier []bench.Job) error {
	if err := checkWaitFor(j, earlier); err != nil {
		return err
	}
	var prev *bench.Job
	if len(earlier) > 0 {
		prev = &earlier[len(earlier)-1]
	}
	return checkGroupPercentiles(j, prev)
}

// checkWaitFor is fio's wait_for_ok: the job waited for must be one job,
// defined before (earlier holds the jobs before, numjobs not expanded),
// and not the job itself.
func checkWaitFor(j *bench.Job, earlier []bench.Job) error {
	if j.WaitFor == "" {
		return nil
	}
	fail := func(format string, args ...any) error {
		return &bench.OptionError{Option: "wait_for", Value: j.WaitFor, Msg: fmt.Sprintf("job %q: ", j.Name) + fmt.Sprintf(format, args...)}
	}
	if j.WaitFor == j.Name {
		return fail("a job cannot wait for itself (wait_for=%s)", j.WaitFor)
	}
	n := 0
	for _, e := range earlier {
		if e.Name == j.WaitFor {
			n++
		}
	}
	switch {
	case n == 0:
		return fail("wait_for=%s: no job of that name before this one (the job waited for must come first)", j.WaitFor)
	case n > 1:
		return fail("wait_for=%s: %d jobs have that name; give the one to wait for a name of its own", j.WaitFor, n)
	}
	return nil
}

// checkGroupPercentiles is fio's verify_per_group_options: the jobs of a
// reporting group agree on lat_percentiles. prev is the job before j, if
// any.
func checkGroupPercentiles(j, prev *bench.Job) error {
	if prev == nil || j.Stonewall || j.NewGroup || j.LatPercentiles == prev.LatPercentiles {
		return nil
	}
	return &bench.OptionError{Option: "lat_percentiles", Msg: fmt.Sprintf("job %q: lat_percentiles differs from job %q of its group (set it the same in both, or start a new group)", j.Name, prev.Name)}
}
