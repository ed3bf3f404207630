package fio

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"iolab/bench"
)

// SteadyReport is fio's "steadystate" object (stat.c, fio 3.33): the
// criterion as given, the window's length in seconds, whether it was
// attained, the last criterion value, deviation and slope, and the
// window's samples, oldest first.
type SteadyReport struct {
	SS           string     `json:"ss"`
	Duration     int        `json:"duration"`
	Attained     int        `json:"attained"`
	Criterion    string     `json:"criterion"`
	MaxDeviation float64    `json:"max_deviation"`
	Slope        float64    `json:"slope"`
	Data         SteadyData `json:"data"`
}

// SteadyData is the window: IOPS and bandwidth (bytes/s) per second, and
// their integer means.
type SteadyData struct {
	BWMean   uint64   `json:"bw_mean"`
	IOPSMean uint64   `json:"iops_mean"`
	IOPS     []uint64 `json:"iops"`
	BW       []uint64 `json:"bw"`
}

// pctSign is fio's "%" after a limit or criterion in percent.
func pctSign(s *bench.SteadyResult) string {
	if s.Pct {
		return "%"
	}
	return ""
}

// steadyName is fio's "iops", "iops_slope", "bw" or "bw_slope".
func steadyName(s *bench.SteadyResult) string {
	if s.Slope {
		return s.Metric + "_slope"
	}
	return s.Metric
}

// latencyTarget is what fio reports of a job's latency target: the
// target (ns), its window (µs), its percentile and the depth its search
// ended at; without a target, zeros, 100 % and the depth the job ran at.
func latencyTarget(r *bench.JobResult) (target, window uint64, pct float64, depth int) {
	if r.Job.LatencyTarget <= 0 {
		return 0, 0, 100, latencyDepth(&r.Job)
	}
	return uint64(r.Job.LatencyTarget.Nanoseconds()), uint64(r.Job.LatencyWindow.Microseconds()), r.Job.Percentile(), r.LatencyDepth
}

// steadyReport fills the job's steady-state block as fio's
// show_thread_status_json does. fio prints floats through a C float,
// hence the float32 round trips.
func steadyReport(jr *JobReport, r *bench.JobResult) {
	s := r.Steady
	if s == nil {
		return
	}
	attained := 0
	if s.Attained {
		attained = 1
	}
	jr.Steadystate = &SteadyReport{
		SS:           fmt.Sprintf("%s:%f%s", steadyName(s), float32(s.Limit), pctSign(s)),
		Duration:     s.Dur,
		Attained:     attained,
		Criterion:    fmt.Sprintf("%f%s", float32(s.Criterion), pctSign(s)),
		MaxDeviation: s.MaxDeviation,
		Slope:        s.SlopeValue,
		Data:         SteadyData{BWMean: s.BWMean(), IOPSMean: s.IOPSMean(), IOPS: s.IOPS, BW: s.BW},
	}
}

// writeSteadyNormal writes the end of fio's per-job normal output: the
// latency target line (show_thread_status_normal) and the steady-state
// line (show_ss_normal).
func writeSteadyNormal(b *strings.Builder, r *bench.JobResult) {
	target, window, pct, depth := latencyTarget(r)
	fmt.Fprintf(b, "     latency   : target=%d, window=%d, percentile=%.2f%%, depth=%d\n", target, window, pct, depth)
	s := r.Steady
	if s == nil {
		return
	}
	sig := r.Job.SignificantFigures()
	bw := s.BWMean() / 1024
	attained, crit := "no", " mean dev"
	if s.Attained {
		attained = "yes"
	}
	if s.Slope {
		crit = " slope"
	}
	fmt.Fprintf(b, "  steadystate  : attained=%s, bw=%s (%s), iops=%s, %s%s=%.3f%s\n", attained,
		num2str(bw, sig, 1024, true, "B/s"), num2str(bw, sig, 1024, false, "B/s"), num2str(s.IOPSMean(), sig, 1, false, ""),
		s.Metric, crit, s.Criterion, pctSign(s))
}

// importSteady reads fio's latency target result and steadystate block
// back into r. fio does not say when the window's samples were taken:
// the newest is placed at the end of the job's window, where fio's check
// that attained it ended the job.
func importSteady(jr *JobReport, r *bench.JobResult) {
	if jr.LatencyTarget > 0 {
		r.LatencyDepth = jr.LatencyDepth
	}
	ss := jr.Steadystate
	if ss == nil {
		return
	}
	name, limit, _ := strings.Cut(ss.SS, ":")
	metric, slope := strings.CutSuffix(name, "_slope")
	s := &bench.SteadyResult{Metric: metric, Slope: slope, Pct: strings.HasSuffix(limit, "%"), Dur: ss.Duration,
		Attained: ss.Attained != 0, MaxDeviation: ss.MaxDeviation, SlopeValue: ss.Slope,
		IOPS: ss.Data.IOPS, BW: ss.Data.BW, Last: r.Runtime}
	s.Limit, _ = strconv.ParseFloat(strings.TrimSuffix(limit, "%"), 64)
	s.Criterion, _ = strconv.ParseFloat(strings.TrimSuffix(ss.Criterion, "%"), 64)
	// fio leaves zeros where the window never filled.
	s.Full = s.Attained || (len(s.IOPS) > 0 && !slices.Contains(s.IOPS, 0))
	r.Steady = s
}
