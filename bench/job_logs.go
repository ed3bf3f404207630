package bench

import "iolab/bench/joblog"

// LogOptions are fio's options for its log files (fio's HOWTO, "Measurements
// and reporting"): per-I/O or time-averaged bandwidth, IOPS and latency
// logs, and clat histogram logs, written as fio 3.33 writes them
// (iolog.c flush_samples and flush_hist_samples). bench/joblog writes them.
type LogOptions struct {
	// WriteBWLog and the others turn a log on; its file names start with
	// the matching *File prefix, or the job's name when that is "" (fio's
	// make_log_name).
	WriteBWLog   bool   `json:"write_bw_log,omitempty"`
	BWLogFile    string `json:"bw_log_file,omitempty"`
	WriteIOPSLog bool   `json:"write_iops_log,omitempty"`
	IOPSLogFile  string `json:"iops_log_file,omitempty"`
	WriteLatLog  bool   `json:"write_lat_log,omitempty"` // slat, clat and lat logs
	LatLogFile   string `json:"lat_log_file,omitempty"`
	WriteHistLog bool   `json:"write_hist_log,omitempty"` // clat histogram log
	HistLogFile  string `json:"hist_log_file,omitempty"`

	// LogAvgMsec averages the entries of a log over windows of this many
	// ms (0: one entry per I/O). LogMax logs the window's largest value
	// instead of its mean.
	LogAvgMsec int  `json:"log_avg_msec,omitempty"`
	LogMax     bool `json:"log_max_value,omitempty"`
	// LogHistMsec is how often the histogram log takes a line; each line
	// groups 2^LogHistCoarseness of fio's 1856 buckets together.
	LogHistMsec       int `json:"log_hist_msec,omitempty"`
	LogHistCoarseness int `json:"log_hist_coarseness,omitempty"`

	LogOffset bool `json:"log_offset,omitempty"` // a column with each I/O's offset
	LogPrio   bool `json:"log_prio,omitempty"`   // the priority column as the full value, in hex
	// PerJobLogs names the files PREFIX_bw.N.log with the job's number
	// (fio's default); off, every job appends to PREFIX_bw.log.
	PerJobLogs bool `json:"per_job_logs"`
	// LogUnixEpoch writes times as Unix milliseconds instead of ms since
	// the job's measured window began (log_alternate_epoch is the same
	// with fio's default clock, CLOCK_REALTIME).
	LogUnixEpoch bool `json:"log_unix_epoch,omitempty"`
}

// defaultLogOptions is fio's defaults for the log options.
func defaultLogOptions() LogOptions { return LogOptions{PerJobLogs: true} }

// LogParams are what the job's log writer needs (bench/joblog's Options):
// the log options, copied field for field, the job's name and the
// measurements it turns off. Job keeps the options where they have
// always been in its JSON, so this copies them out rather than embedding
// joblog.Options.
func (j *Job) LogParams() *joblog.Options {
	o := &j.LogOptions
	return &joblog.Options{Name: j.Name,
		WriteBWLog: o.WriteBWLog, BWLogFile: o.BWLogFile, WriteIOPSLog: o.WriteIOPSLog, IOPSLogFile: o.IOPSLogFile,
		WriteLatLog: o.WriteLatLog, LatLogFile: o.LatLogFile, WriteHistLog: o.WriteHistLog, HistLogFile: o.HistLogFile,
		LogAvgMsec: o.LogAvgMsec, LogMax: o.LogMax, LogHistMsec: o.LogHistMsec, LogHistCoarseness: o.LogHistCoarseness,
		LogOffset: o.LogOffset, LogPrio: o.LogPrio, PerJobLogs: o.PerJobLogs, LogUnixEpoch: o.LogUnixEpoch,
		DisableLat: j.DisableLat, DisableClat: j.DisableClat, DisableSlat: j.DisableSlat, DisableBW: j.DisableBW, GtodReduce: j.GtodReduce}
}
