package fio

import (
	"fmt"
	"strconv"

	"iolab/bench"
)

// logOptions are fio's options for its log files: bandwidth, IOPS,
// latency and clat histogram logs, per I/O or averaged over time, in fio
// 3.33's format and names (bench/joblog writes them).
var logOptions = []bench.OptionSpec{
	logFileOption("write_bw_log", "bandwidth", "PREFIX_bw.N.log", "per I/O bytes × 10^6 / clat ns; KiB/s per log_avg_msec window",
		func(j *bench.Job) (*bool, *string) { return &j.WriteBWLog, &j.BWLogFile }),
	logFileOption("write_iops_log", "I/Os", "PREFIX_iops.N.log", "1 per I/O; IOPS per log_avg_msec window",
		func(j *bench.Job) (*bool, *string) { return &j.WriteIOPSLog, &j.IOPSLogFile }),
	logFileOption("write_lat_log", "latencies", "PREFIX_slat.N.log, _clat and _lat", "ns per I/O; the mean per log_avg_msec window",
		func(j *bench.Job) (*bool, *string) { return &j.WriteLatLog, &j.LatLogFile }),
	logFileOption("write_hist_log", "clat histograms", "PREFIX_clat_hist.N.log", "every log_hist_msec, the clats in each of fio's 1856 buckets",
		func(j *bench.Job) (*bool, *string) { return &j.WriteHistLog, &j.HistLogFile }),
	{Name: "log_avg_msec", Example: "1000", Unit: "ms", Default: "0",
		Help: "average log entries over this many ms, one line per direction per window (0: a line per I/O)",
		Set:  bench.IntField(0, maxLogMsec, func(j *bench.Job) *int { return &j.LogAvgMsec }),
		Get:  func(j *bench.Job) string { return strconv.Itoa(j.LogAvgMsec) }},
	{Name: "log_hist_msec", Example: "1000", Unit: "ms", Default: "0",
		Help: "write a histogram log line every this many ms (0: none)",
		Set:  bench.IntField(0, maxLogMsec, func(j *bench.Job) *int { return &j.LogHistMsec }),
		Get:  func(j *bench.Job) string { return strconv.Itoa(j.LogHistMsec) }},
	{Name: "log_hist_coarseness", Example: "4", Unit: "int", Default: "0",
		Help: "merge 2^N of the histogram log's buckets into one column (0 to 6)",
		Set:  bench.IntField(0, 6, func(j *bench.Job) *int { return &j.LogHistCoarseness }),
		Get:  func(j *bench.Job) string { return strconv.Itoa(j.LogHistCoarseness) }},
	boolOption("log_max_value", nil, "0", "with log_avg_msec, log each window's largest value instead of its mean",
		func(j *bench.Job) *bool { return &j.LogMax }),
	boolOption("log_offset", nil, "0", "add each I/O's offset as a column before the priority",
		func(j *bench.Job) *bool { return &j.LogOffset }),
	boolOption("log_prio", nil, "0", "write the priority column as the I/O's whole priority in hex (class << 13 | level: 0x2000 real-time level 0; 0x0000 without prio, prioclass or cmdprio) instead of 1 for real-time, 0 else",
		func(j *bench.Job) *bool { return &j.LogPrio }),
	{Name: "per_job_logs", Example: "0", Unit: "bool", Default: "1",
		Help: "name log files PREFIX_bw.N.log with the job's number; 0: every job appends to PREFIX_bw.log",
		Set:  bench.BoolField(func(j *bench.Job) *bool { return &j.PerJobLogs }), Get: bench.GetBool(func(j *bench.Job) *bool { return &j.PerJobLogs })},
	boolOption("log_unix_epoch", []string{"log_alternate_epoch"}, "0", "log times as Unix ms instead of ms since the job's measured window began",
		func(j *bench.Job) *bool { return &j.LogUnixEpoch }),
}

// maxLogMsec bounds log_avg_msec and log_hist_msec: a day.
const maxLogMsec = 24 * 3600 * 1000

// logFileOption is one of fio's write_*_log options: the value is the
// files' prefix; given without one (in a job file), the job's name.
// Like fio's, any value turns the log on, "0" included.
func logFileOption(name, what, files, values string, field func(*bench.Job) (*bool, *string)) bench.OptionSpec {
	return bench.OptionSpec{Name: name, Example: "PREFIX", Unit: "text", OptionalValue: true,
		Help: fmt.Sprintf("log %s to %s: %s (N: the job's number; a job file may leave out PREFIX: the job's name)", what, files, values),
		Set: func(j *bench.Job, v string) error {
			on, file := field(j)
			if len(v) > maxLogPrefix {
				return fmt.Errorf("the prefix is %d bytes; iolab takes at most %d", len(v), maxLogPrefix)
			}
			*on, *file = true, v
			return nil
		},
		Get: func(j *bench.Job) string {
			on, file := field(j)
			if !*on {
				return ""
			}
			if *file == "" {
				return j.Name
			}
			return *file
		}}
}

// maxLogPrefix leaves room in a file name's 255 bytes for _clat_hist.N.log.
const maxLogPrefix = 200
