package fio

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"iolab/bench"
	"iolab/bench/units"
)

// maxSteadyDur bounds ss_dur: one sample a second is kept for the window.
const maxSteadyDur = 24 * time.Hour

// steadyOptions are fio's options that end a job on what it measures:
// steady state (options.c "steadystate" and its children) and the latency
// target (FIO_OPT_G_LATPROF).
var steadyOptions = []bench.OptionSpec{
	{Name: "steadystate", Aliases: []string{"ss"}, Example: "iops_slope:0.1%", Unit: "criterion", Default: "iops_slope:0.01%",
		Help: "with ss_dur, end the job once this holds over the window: iops or bw (largest deviation from the mean), iops_slope or bw_slope (slope of a fitted line, per second), below a limit in % of the mean or absolute (IOPS, bytes/s)",
		Set:  setSteadyState, Get: getSteadyState},
	{Name: "steadystate_duration", Aliases: []string{"ss_dur"}, Example: "30s", Unit: "time", Default: "0",
		Help: "the steady-state window, one sample a second (whole seconds; seconds unless a unit follows); 0: off",
		Set: func(j *bench.Job, v string) error {
			d, err := units.ParseDuration(v)
			switch {
			case err != nil:
				return err
			case d%time.Second != 0:
				return fmt.Errorf("%q: steady state samples once a second; give whole seconds", v)
			case d > maxSteadyDur:
				return fmt.Errorf("%q is longer than iolab keeps a window (%s)", v, units.FormatDuration(maxSteadyDur))
			}
			j.SSDur = d
			return nil
		},
		Get: func(j *bench.Job) string { return units.FormatDuration(j.SSDur) }},
	{Name: "steadystate_ramp_time", Aliases: []string{"ss_ramp"}, Example: "10s", Unit: "time", Default: "0",
		Help: "collect steady-state samples only from a second after this (seconds unless a unit follows)",
		Set:  bench.DurationField(func(j *bench.Job) *time.Duration { return &j.SSRamp }),
		Get:  func(j *bench.Job) string { return units.FormatDuration(j.SSRamp) }},
	{Name: "latency_target", Example: "2000", Unit: "µs", Default: "0",
		Help: "search for the deepest queue, up to iodepth, at which latency_percentile % of I/Os complete within this (µs unless a unit follows), then run a window there and end",
		Set:  microsField(func(j *bench.Job) *time.Duration { return &j.LatencyTarget }),
		Get:  getMicros(func(j *bench.Job) time.Duration { return j.LatencyTarget })},
	{Name: "latency_window", Example: "5s", Unit: "µs", Default: "0",
		Help: "how long each depth is tried under latency_target (µs unless a unit follows)",
		Set:  microsField(func(j *bench.Job) *time.Duration { return &j.LatencyWindow }),
		Get:  getMicros(func(j *bench.Job) time.Duration { return j.LatencyWindow })},
	{Name: "latency_percentile", Example: "99.9", Unit: "%", Default: "100",
		Help: "the share of a window's I/Os that must meet latency_target",
		Set: func(j *bench.Job, v string) error {
			p, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(p) || p < 0 || p > 100 {
				return fmt.Errorf("%q is not a percentage (0 to 100)", v)
			}
			j.LatencyPercentile = p
			return nil
		},
		Get: func(j *bench.Job) string { return strconv.FormatFloat(j.Percentile(), 'f', -1, 64) }},
	boolOption("latency_run", nil, "0", "keep adjusting the depth to latency_target for the whole run instead of ending once found",
		func(j *bench.Job) *bool { return &j.LatencyRun }),
}

// setSteadyState reads ss as fio's str_steadystate_cb does: a criterion,
// a colon and a limit, in % when it ends so, else IOPS or (bw) bytes/s
// with k/m/g suffixes.
func setSteadyState(j *bench.Job, v string) error {
	name, limit, ok := strings.Cut(v, ":")
	if !ok || limit == "" {
		return fmt.Errorf("%q: give a criterion and its limit (iops:10%%, iops_slope:0.1%%, bw:20m, bw_slope:1%%)", v)
	}
	metric, slope := bench.SteadyIOPS, false
	switch name {
	case "iops":
	case "iops_slope":
		slope = true
	case "bw":
		metric = bench.SteadyBW
	case "bw_slope":
		metric, slope = bench.SteadyBW, true
	default:
		return fmt.Errorf("%q is not a steady-state criterion (iops, iops_slope, bw, bw_slope)", name)
	}
	var val float64
	pct := strings.HasSuffix(limit, "%")
	if pct || metric == bench.SteadyIOPS {
		f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(limit, "%")), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			return fmt.Errorf("%q is not a steady-state limit (a number ≥ 0, or a percentage)", limit)
		}
		val = f
	} else {
		n, err := units.ParseSize(limit)
		if err != nil {
			return fmt.Errorf("%q is not a bandwidth limit: %w", limit, err)
		}
		val = float64(n)
	}
	j.SSMetric, j.SSSlope, j.SSPct, j.SSLimit = metric, slope, pct, val
	return nil
}

func getSteadyState(j *bench.Job) string {
	s := j.SteadyName() + ":" + strconv.FormatFloat(j.SSLimit, 'f', -1, 64)
	if j.SSPct {
		s += "%"
	}
	return s
}
