package summary

import (
	"fmt"
	"strconv"
	"time"

	"iolab/bench"
	"iolab/bench/units"
	"iolab/bench/verify"
)

// A job's long-run options end in a verdict its IOPS and latencies do
// not show: its data was read back intact (and what that cost), its
// steady state held or not, its latency target was met at some depth.
// The run page, its CSV and `iolab show` write them beside the job's
// figures, one line each.

// outcomes are the verdicts of a job's results (its clones'), for the
// options it ran with (nil: not known, then the results' own).
func outcomes(job *bench.Job, results []*JobView) []string {
	var out []string
	if s := verifyOutcome(results); s != "" {
		out = append(out, s)
	}
	for _, r := range results {
		if r.Steady != nil {
			// One per job, or per group with group_reporting: the first
			// clone's speaks for the group's window.
			end := "; the job ran " + units.Duration(r.Runtime) + " without it"
			if r.Steady.Attained {
				end = "; it ended the job after " + units.Duration(r.Runtime)
			}
			out = append(out, SteadyText(r.Steady)+end)
			break
		}
	}
	if s := latencyTargetOutcome(job, results); s != "" {
		out = append(out, s)
	}
	return out
}

// verifyOutcome says what the job's verification read back and how long
// that took, apart from the measured I/O as fio reports it: "verify
// crc32c: 4096 blocks (16.0MiB) read back intact in 81.0ms (198MiB/s)",
// with the blocks trim_percentage trimmed, if any;
// for a job whose own reads verify, "verify meta: every read checked,
// intact". "" when the job does not verify.
func verifyOutcome(results []*JobView) string {
	var method string
	var ios, bytes, reads uint64
	var took time.Duration
	var stopped bool
	var failed *verify.Error
	var threads int
	var threadCPU time.Duration
	var trimmed uint64
	trimmedRead := false
	for _, r := range results {
		v := r.Verify
		if v == nil {
			continue
		}
		method = v.Method
		ios += v.ReadIOs
		bytes += v.ReadBytes
		reads += r.Dirs[bench.Read].IOs
		took = max(took, v.Runtime) // clones verify at the same time
		stopped = stopped || v.Stopped
		threads += v.Threads
		threadCPU += v.ThreadCPU
		trimmed += v.Trimmed
		trimmedRead = trimmedRead || v.TrimmedRead
		if failed == nil {
			failed = v.Failed
		}
	}
	switch {
	case method == "":
		return ""
	case failed != nil:
		return fmt.Sprintf("verify %s: failed at %s offset %d", method, failed.File, failed.Offset)
	case ios == 0 && reads > 0:
		return fmt.Sprintf("verify %s: every read checked, intact", method) + asyncText(threads, threadCPU)
	case ios == 0:
		return fmt.Sprintf("verify %s: nothing read back", method)
	}
	s := fmt.Sprintf("verify %s: %d blocks (%s) read back intact in %s", method, ios, units.Bytes(float64(bytes)), units.Duration(took))
	if took > 0 {
		s += " (" + units.Rate(float64(bytes)/took.Seconds()) + ")"
	}
	if stopped {
		s += ", up to the verify state's last write"
	}
	switch {
	case trimmed > 0 && trimmedRead:
		s += fmt.Sprintf(", %d of them trimmed after their write and read as zeros", trimmed)
	case trimmed > 0:
		s += fmt.Sprintf("; %d blocks trimmed after their write, not read back", trimmed)
	}
	return s + asyncText(threads, threadCPU)
}

// asyncText says where verify_async checked the blocks: "; checked on 2
// verify_async threads (12.0ms of CPU)"; "" without them.
func asyncText(threads int, cpu time.Duration) string {
	if threads == 0 {
		return ""
	}
	return fmt.Sprintf("; checked on %d verify_async threads (%s of CPU)", threads, units.Duration(cpu))
}

// SteadyText says how a steady-state window ended: "steady state
// attained: iops mean deviation 3.66%, within ±10%, over 5 s".
func SteadyText(s *bench.SteadyResult) string {
	if !s.Full {
		return fmt.Sprintf("steady state not attained: the %d s window never filled", s.Dur)
	}
	unit := ""
	if s.Pct {
		unit = "%"
	}
	verdict, within := "not attained", "outside"
	if s.Attained {
		verdict, within = "attained", "within"
	}
	what := "mean deviation"
	if s.Slope {
		what = "slope"
	}
	return fmt.Sprintf("steady state %s: %s %s %.3g%s, %s ±%g%s, over %d s", verdict, s.Metric, what, s.Criterion, unit, within, s.Limit, unit, s.Dur)
}

// latencyTargetOutcome says where the job's latency_target search
// ended: "latency_target 2.00ms at p99: depth 4 of iodepth 64" ("depth
// 4–8" when its clones ended apart); "" without a target.
func latencyTargetOutcome(job *bench.Job, results []*JobView) string {
	var d [2]int
	for _, r := range results {
		d, _ = latencyDepths(d, job, r)
	}
	if d[0] == 0 {
		return ""
	}
	if job == nil {
		job = &results[0].Job
	}
	depth := strconv.Itoa(d[0])
	if d[1] > d[0] {
		depth += "–" + strconv.Itoa(d[1])
	}
	return fmt.Sprintf("latency_target %s at p%g: depth %s of iodepth %d", units.Duration(job.LatencyTarget), job.Percentile(), depth, job.IODepth)
}
