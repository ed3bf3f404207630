package bench

import (
	"encoding/json"
	"math"
	"time"

	"iolab/bench/hist"
	"iolab/bench/joblog"
	"iolab/bench/system"
)

// Directions, indexing JobResult.Dirs: fio's DDIR_READ, DDIR_WRITE and
// DDIR_TRIM (io_ddir.h).
const (
	Read  = 0
	Write = 1
	Trim  = 2
)

// DirResult is what one job did in one direction over the measured window.
type DirResult struct {
	IOs   uint64   `json:"ios"`
	Bytes uint64   `json:"bytes"`
	Short uint64   `json:"short"` // I/Os that moved fewer bytes than asked
	Slat  hist.Lat `json:"slat"`  // empty for sync and SQPOLL engines, as in fio
	Clat  hist.Lat `json:"clat"`
	Lat   hist.Lat `json:"lat"`
	// Intended is the latency from each I/O's intended start (qos.go):
	// only for a direction paced by rate or rate_iops, else empty.
	Intended hist.Lat `json:"intended_lat"`
	// Prios is the latency per priority (result_prio.go), the job's own
	// first: where cmdprio gives some I/Os a priority of their own, or a
	// group's jobs ran at different ones; else nil.
	Prios []PrioLat `json:"prios,omitempty"`
	// Block is where the I/Os' time went in the block layer, with
	// --trace-block (result_block.go); nil without.
	Block *BlockTime `json:"block,omitempty"`
}

// DirResults are a job's results per direction, indexed by Read, Write
// and Trim (fio's DDIR_RWDIR_CNT of them). Its JSON leaves the trims out
// when the job trimmed nothing: a run without trims reads as runs did
// before iolab trimmed, and those (two directions) load as they are.
type DirResults [3]DirResult

// MarshalJSON writes reads and writes, and trims when there were any.
func (d DirResults) MarshalJSON() ([]byte, error) {
	if d[Trim].IOs == 0 && d[Trim].Bytes == 0 && d[Trim].Short == 0 {
		return json.Marshal([2]DirResult{d[Read], d[Write]})
	}
	return json.Marshal([3]DirResult(d))
}

// Counts are each direction's I/Os and bytes.
func (d *DirResults) Counts() (ios, bytes DirCounts) {
	for i := range d {
		ios[i], bytes[i] = d[i].IOs, d[i].Bytes
	}
	return ios, bytes
}

// DirCounts are a count per direction, as DirResults: its JSON leaves the
// trims' out when it is 0.
type DirCounts [3]uint64

// MarshalJSON writes reads' and writes' counts, and trims' unless 0.
func (c DirCounts) MarshalJSON() ([]byte, error) {
	if c[Trim] == 0 {
		return json.Marshal([2]uint64{c[Read], c[Write]})
	}
	return json.Marshal([3]uint64(c))
}

// Sample is the cumulative I/O count of a job at the end of one interval.
type Sample struct {
	At    time.Duration `json:"at_ns"` // since the measured window began
	IOs   DirCounts     `json:"ios"`
	Bytes DirCounts     `json:"bytes"`
	// Lat is the interval's own latency (qos.go); nil when latencies are
	// off or nothing completed in it.
	Lat *IntervalLat `json:"lat,omitempty"`
}

// JobResult is one job's (or, merged, one reporting group's) outcome.
type JobResult struct {
	Name    string `json:"name"`
	GroupID int    `json:"group_id"`
	Job     Job    `json:"job"`
	Error   string `json:"error"` // "" when the job succeeded
	// Errno is the error's errno when it has one (fio's err=), else 0.
	Errno int `json:"errno,omitempty"`
	// TotalErr counts the I/O errors the job went on after
	// (continue_on_error; fio's total_err_count), FirstError is the
	// first one's errno and FirstErrorMsg its words where fio keeps them
	// (loop_errors_linux.go).
	TotalErr      uint64 `json:"total_err,omitempty"`
	FirstError    int    `json:"first_error,omitempty"`
	FirstErrorMsg string `json:"first_error_msg,omitempty"`
	// TID is the job thread's id (fio prints its job process's pid).
	TID int `json:"tid,omitempty"`

	Start   time.Time     `json:"start"`      // when the measured window began
	Runtime time.Duration `json:"runtime_ns"` // the measured window
	Dirs    DirResults    `json:"dirs"`
	// Dist is fio's I/O depth and latency distributions over the window.
	Dist IODist `json:"dist"`
	// RuntimeSum, with group_reporting, is the sum of the merged jobs'
	// windows (fio's total_run_time, the base of its CPU shares); 0 for
	// one job, whose sum is Runtime (TotalRuntime).
	RuntimeSum time.Duration `json:"runtime_sum_ns,omitempty"`
	Sync       SyncResult    `json:"sync"` // fsync=N and fdatasync=N
	// Verify is the job's data verification, apart from the measured
	// I/O (bench/verify_linux.go); nil when it does not verify.
	Verify *VerifyResult `json:"verify,omitempty"`

	Interval time.Duration `json:"interval_ns"`
	Samples  []Sample      `json:"samples"`

	UsrCPU time.Duration `json:"usr_cpu_ns"` // the job thread's own CPU time
	SysCPU time.Duration `json:"sys_cpu_ns"`
	Ctx    uint64        `json:"ctx"` // voluntary + involuntary context switches
	MinFlt uint64        `json:"minflt"`
	MajFlt uint64        `json:"majflt"`

	// Jobs is how many jobs were merged into this result (group_reporting).
	Jobs int `json:"jobs"`

	// Moved is every byte the job moved, per direction, ramp and the
	// in-flight I/O drained after the window included: what its disk must
	// have done for it (DiskUtilization.JobBytes).
	Moved [2]uint64 `json:"moved_bytes"`

	// Steady is the steady-state window, with ss_dur; with
	// group_reporting, the group's.
	Steady *SteadyResult `json:"steady,omitempty"`
	// LatencyDepth is the queue depth a latency_target search ended at
	// (0 without a target).
	LatencyDepth int `json:"latency_depth,omitempty"`
	// EngineSetup is how the job's engine was set up where the kernel
	// or the machine chooses (io_uring: the setup flags it took, ring
	// sizes, what is registered, whether waits spin; libaio: whether
	// waits spin); "" for engines without such choices.
	EngineSetup string `json:"engine_setup,omitempty"`
	// Clock is the clock the job's loop read (ClockTSC, ClockMonotonic,
	// ClockWall): the default's (HostInfo.Clock) or the clocksource
	// option's.
	Clock string `json:"clock,omitempty"`

	// Logs are the job's log files (write_bw_log, …), each's first
	// joblog.StoredMax bytes; the store keeps them apart from the result.
	Logs []joblog.Log `json:"-"`

	// ClockReads is how often the job's loop read the clock: the tests
	// keep it near one per I/O.
	ClockReads uint64 `json:"-"`
}

// SaturatedCPU is the share of a core a job thread may use before iolab
// flags the load generator itself as the bottleneck.
const SaturatedCPU = 0.90

// CPUShare is the share of one core each of the result's job threads used
// over the window (user + system time over runtime, per merged job).
func (r *JobResult) CPUShare() float64 { return CPUShareOf(r.UsrCPU, r.SysCPU, r.Runtime, r.Jobs) }

// CPUShareOf is the share of one core each of jobs threads used: user +
// system time over runtime, per job; 0 without a runtime. JobResult's
// CPUShare and the summaries' are this.
func CPUShareOf(usr, sys, runtime time.Duration, jobs int) float64 {
	if runtime <= 0 {
		return 0
	}
	return float64(usr+sys) / float64(runtime) / float64(max(jobs, 1))
}

// Saturated reports whether the job's thread was busy above SaturatedCPU
// of a core: the numbers may measure iolab, not the device.
func (r *JobResult) Saturated() bool { return r.CPUShare() > SaturatedCPU }

// IOPS returns the I/Os per second of direction d over the window.
func (r *JobResult) IOPS(d int) float64 { return PerSecond(r.Dirs[d].IOs, r.Runtime) }

// BW returns bytes per second of direction d over the window.
func (r *JobResult) BW(d int) float64 { return PerSecond(r.Dirs[d].Bytes, r.Runtime) }

// PerSecond is n over runtime, per second; 0 without a runtime. A job's
// IOPS and bandwidth, JobResult's and the summaries', are this.
func PerSecond(n uint64, runtime time.Duration) float64 {
	if runtime <= 0 {
		return 0
	}
	return float64(n) / runtime.Seconds()
}

// IntervalStats are fio's iops_min…iops_stddev (or bw_…) over a job's
// per-interval samples.
type IntervalStats struct {
	Min, Max, Mean, Stddev float64
	N                      int
}

// IntervalIOPS summarises direction d's per-interval IOPS (scale 1) or
// bandwidth in KiB/s (bytes true), like fio's iops_*/bw_* fields.
func (r *JobResult) IntervalIOPS(d int, bytes bool) IntervalStats {
	var st IntervalStats
	var prev Sample
	var prevAt time.Duration
	var sum, sumsq float64
	for _, s := range r.Samples {
		dt := (s.At - prevAt).Seconds()
		if dt <= 0 {
			continue
		}
		var v float64
		if bytes {
			v = float64(s.Bytes[d]-prev.Bytes[d]) / 1024 / dt
		} else {
			v = float64(s.IOs[d]-prev.IOs[d]) / dt
		}
		prev, prevAt = s, s.At
		if st.N == 0 || v < st.Min {
			st.Min = v
		}
		if v > st.Max {
			st.Max = v
		}
		sum += v
		sumsq += v * v
		st.N++
	}
	if st.N > 0 {
		st.Mean = sum / float64(st.N)
	}
	if st.N > 1 {
		st.Stddev = math.Sqrt(math.Max(0, (sumsq-sum*sum/float64(st.N))/float64(st.N-1)))
	}
	return st
}

// TotalRuntime is the window summed over the merged jobs (fio's
// total_run_time): Runtime for one job.
func (r *JobResult) TotalRuntime() time.Duration {
	if r.RuntimeSum > 0 {
		return r.RuntimeSum
	}
	return r.Runtime
}

// merge adds o into d: counts and histograms add.
func (d *DirResult) merge(o *DirResult) {
	d.IOs += o.IOs
	d.Bytes += o.Bytes
	d.Short += o.Short
	d.Slat.Merge(&o.Slat)
	d.Clat.Merge(&o.Clat)
	d.Lat.Merge(&o.Lat)
	d.Intended.Merge(&o.Intended)
	if o.Block != nil { // a new one: d's may be another job's (MergeJobs)
		b := &BlockTime{}
		if d.Block != nil {
			b.Merge(d.Block)
		}
		b.Merge(o.Block)
		d.Block = b
	}
}

// Merge adds o into r for group_reporting: counts and histograms add, the
// window is the longest, samples add interval by interval.
func (r *JobResult) Merge(o *JobResult) {
	r.RuntimeSum = r.TotalRuntime() + o.TotalRuntime()
	r.Logs = append(r.Logs, o.Logs...)
	r.Dist.Merge(&o.Dist)
	for d := range r.Dirs {
		r.Dirs[d].merge(&o.Dirs[d])
	}
	r.Sync.merge(&o.Sync)
	r.Verify = mergeVerify(r.Verify, o.Verify)
	r.Runtime = max(r.Runtime, o.Runtime)
	for i := range min(len(r.Samples), len(o.Samples)) {
		for d := range r.Samples[i].IOs {
			r.Samples[i].IOs[d] += o.Samples[i].IOs[d]
			r.Samples[i].Bytes[d] += o.Samples[i].Bytes[d]
		}
		r.Samples[i].Lat = r.Samples[i].Lat.merge(o.Samples[i].Lat)
	}
	r.Samples = r.Samples[:min(len(r.Samples), len(o.Samples))]
	r.UsrCPU += o.UsrCPU
	r.SysCPU += o.SysCPU
	r.Ctx += o.Ctx
	r.MinFlt += o.MinFlt
	r.MajFlt += o.MajFlt
	r.Moved[Read] += o.Moved[Read]
	r.Moved[Write] += o.Moved[Write]
	r.ClockReads += o.ClockReads
	// fio's sum_thread_stats: the group's error is its first job's that
	// has one to report — an error, or under continue_on_error the first
	// it went on after (kept as Errno, with no Error: the job went on);
	// total_err adds up, and first_error is the last job's.
	if r.Error == "" && r.Errno == 0 {
		if r.Job.ContinueOnError != 0 && r.FirstError != 0 {
			r.Errno = r.FirstError
		} else {
			r.Error, r.Errno, r.FirstErrorMsg = o.Error, o.Errno, o.FirstErrorMsg
		}
	}
	r.TotalErr += o.TotalErr
	r.FirstError = o.FirstError
	r.Jobs += o.Jobs
	if o.LatencyDepth != 0 {
		r.LatencyDepth = o.LatencyDepth // fio's group takes its last job's
	}
}

// MergeJobs is a group_reporting group's one result: the first job's,
// with every other job merged into it. jobs are left as they were.
func MergeJobs(jobs []JobResult) JobResult {
	merged := jobs[0]
	merged.Samples = append([]Sample(nil), merged.Samples...)
	for i := range merged.Samples {
		merged.Samples[i].Lat = merged.Samples[i].Lat.clone()
	}
	merged.Logs = append([]joblog.Log(nil), merged.Logs...)
	for i := 1; i < len(jobs); i++ {
		merged.Merge(&jobs[i])
	}
	prios := groupPrios(jobs) // reads and writes: trims have no priorities of their own
	for d := range prios {
		merged.Dirs[d].Prios = prios[d]
	}
	return merged
}

// ReportEntries merges a group's results into fio's entries (Group.
// JoinsEntry): each result whose job has group_reporting joins the one
// before it.
func ReportEntries(jobs []JobResult) []JobResult {
	var out []JobResult
	for start := 0; start < len(jobs); {
		end := start + 1
		for end < len(jobs) && jobs[end].Job.GroupReporting {
			end++
		}
		if end-start == 1 {
			out = append(out, jobs[start])
		} else {
			out = append(out, MergeJobs(jobs[start:end]))
		}
		start = end
	}
	return out
}

// GroupResult is one reporting group: its jobs' results, or with
// group_reporting a single merged one.
type GroupResult struct {
	ID        int                      `json:"id"`
	Reporting bool                     `json:"reporting"`
	Jobs      []JobResult              `json:"jobs"`
	Disks     []system.DiskUtilization `json:"disks"`
	// Schedulers are the I/O schedulers jobs' ioscheduler switched disks
	// to while the group ran: disk → scheduler.
	Schedulers map[string]string `json:"schedulers,omitempty"`
	// Trace is what the block-layer trace saw beside the jobs' I/Os, with
	// --trace-block; nil without.
	Trace *BlockTrace `json:"block_trace,omitempty"`
}

// Totals are the result's IOPS and bytes/s summed over its jobs (or
// groups' merged results) and directions; zero for a nil result.
func (res *Result) Totals() (iops, bw float64) {
	if res == nil {
		return 0, 0
	}
	for _, g := range res.Groups {
		for i := range g.Jobs {
			for d := range g.Jobs[i].Dirs {
				iops += g.Jobs[i].IOPS(d)
				bw += g.Jobs[i].BW(d)
			}
		}
	}
	return iops, bw
}

// Result is everything one `iolab run` measured.
type Result struct {
	Start  time.Time       `json:"start"`
	Host   system.HostInfo `json:"host"`
	Groups []GroupResult   `json:"groups"`
}
