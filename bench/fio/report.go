package fio

import (
	"math"
	"time"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/system"
)

// Version is iolab's version, reported as "iolab version".
var Version = "iolab-0.1"

// NewReport turns a result into fio's JSON document; with plus (json+) the
// latency histograms' bins are included. Numbers follow fio's
// show_thread_status_json: runtimes in whole milliseconds rounded up (fio's
// update_runtime), bandwidth and IOPS over them, CPU shares over the summed
// runtimes of a group's jobs, and "timestamp", "time" and "elapsed" at the
// end of the run, when fio writes them.
func NewReport(res *bench.Result, cfg *bench.Config, plus bool) Report {
	end := runEnd(res)
	rep := Report{
		IolabVersion:  Version,
		Timestamp:     end.Unix(),
		TimestampMS:   end.UnixMilli(),
		Time:          end.Format("Mon Jan _2 15:04:05 2006"),
		Hostname:      res.Host.Hostname,
		Kernel:        res.Host.KernelRelease,
		GlobalOptions: Options(cfg.GlobalOptions),
	}
	// fio's elapsed is the whole run's, in seconds rounded up; its eta
	// stays at INT_MAX until 3 s have passed, 0 after.
	elapsed := int64((end.Sub(res.Start) + time.Second - 1) / time.Second)
	eta := int64(0)
	if elapsed < 3 {
		eta = math.MaxInt32
	}
	for _, g := range res.Groups {
		gs := newGroupStats(&g)
		for i := range g.Jobs {
			jr := jobReport(&g.Jobs[i], plus, &gs)
			jr.ETA, jr.Elapsed = eta, elapsed
			rep.Jobs = append(rep.Jobs, jr)
		}
	}
	for _, d := range runDisks(res, cfg) {
		rep.DiskUtil = append(rep.DiskUtil, diskUtilReport(d))
	}
	return rep
}

// runDisks are the disks over the whole run, as fio's disk_util counts
// them: each disk once, its counters summed over the run's phases (the
// groups that ran one after another). The groups of one phase share its
// disks' counters; a group that waits (stonewall) starts the next phase.
// Without cfg, each disk is shown as the first phase saw it.
func runDisks(res *bench.Result, cfg *bench.Config) []system.DiskUtilization {
	type sum struct {
		delta   system.DiskStat
		elapsed time.Duration
	}
	var names []string
	sums := map[string]*sum{}
	for gi, g := range res.Groups {
		newPhase := gi == 0 || cfg != nil && gi < len(cfg.Groups) && cfg.Groups[gi].Wait
		for _, d := range g.Disks {
			s, ok := sums[d.Name]
			if !ok {
				s = &sum{}
				sums[d.Name] = s
				names = append(names, d.Name)
			} else if !newPhase || cfg == nil {
				continue
			}
			s.delta.ReadIOs += d.ReadIOs
			s.delta.WriteIOs += d.WriteIOs
			s.delta.ReadMerges += d.ReadMerges
			s.delta.WriteMerges += d.WriteMerges
			s.delta.ReadSectors += d.ReadSectors
			s.delta.WriteSectors += d.WriteSectors
			s.delta.ReadTicks += d.ReadTicks
			s.delta.WriteTicks += d.WriteTicks
			s.delta.IOTicks += d.IOTicks
			s.delta.TimeInQueue += d.InQueue
			s.elapsed += time.Duration(d.ElapsedMs * float64(time.Millisecond))
		}
	}
	out := make([]system.DiskUtilization, len(names))
	for i, name := range names {
		out[i] = system.DiskDelta(system.DiskStat{}, sums[name].delta, sums[name].elapsed)
		out[i].Name = name
	}
	return out
}

// runEnd is when the last job's window ended: when fio prints its
// report.
func runEnd(res *bench.Result) time.Time {
	end := res.Start
	for _, g := range res.Groups {
		for i := range g.Jobs {
			r := &g.Jobs[i]
			if e := r.Start.Add(r.Runtime); !r.Start.IsZero() && e.After(end) {
				end = e
			}
		}
	}
	return end
}

// runtimeMS is fio's runtime of a direction: its window in milliseconds,
// rounded up.
func runtimeMS(d time.Duration) uint64 {
	return uint64((d + time.Millisecond - 1) / time.Millisecond)
}

// groupStats is fio's group_run_stats for one reporting group: per
// direction the bytes moved, the shortest and longest runtime, the least
// and most bandwidth of its jobs (bytes/s) and the aggregate bandwidth.
type groupStats struct {
	bytes          [3]uint64
	minRun, maxRun [3]uint64 // ms
	minBW, maxBW   [3]uint64
	agg            [3]uint64
	hasIO          [3]bool
	// sigFigs is the group's significant_figures: fio takes its first
	// job's for the run status lines.
	sigFigs int
}

func newGroupStats(g *bench.GroupResult) groupStats {
	gs := groupStats{sigFigs: 4}
	if len(g.Jobs) > 0 {
		gs.sigFigs = g.Jobs[0].Job.SignificantFigures()
	}
	for i := range g.Jobs {
		r := &g.Jobs[i]
		for d := range r.Dirs {
			dr, runtime := r.ReportedDir(d)
			if dr.IOs == 0 {
				continue
			}
			rt := runtimeMS(runtime)
			if rt == 0 {
				continue
			}
			bw := dr.Bytes * 1000 / rt
			if !gs.hasIO[d] {
				gs.minRun[d], gs.minBW[d] = rt, bw
			}
			gs.hasIO[d] = true
			gs.minRun[d] = min(gs.minRun[d], rt)
			gs.maxRun[d] = max(gs.maxRun[d], rt)
			gs.minBW[d] = min(gs.minBW[d], bw)
			gs.maxBW[d] = max(gs.maxBW[d], bw)
			gs.bytes[d] += dr.Bytes
		}
	}
	for d := range gs.agg {
		if gs.maxRun[d] > 0 {
			gs.agg[d] = gs.bytes[d] * 1000 / gs.maxRun[d]
		}
	}
	return gs
}

// aggShare is fio's convert_agg_kbytes_percent: a job's mean interval
// bandwidth (KiB/s, truncated as fio passes it) as a share of the group's
// aggregate, at most 100 %.
func (gs *groupStats) aggShare(d int, meanKiB float64) float64 {
	if gs.agg[d] <= 1024 {
		return 100
	}
	return min(100, float64(int64(meanKiB))*100/(float64(gs.agg[d])/1024))
}

func jobReport(r *bench.JobResult, plus bool, gs *groupStats) JobReport {
	jr := JobReport{
		JobName:    r.Name,
		GroupID:    r.GroupID,
		Error:      errnoOf(r),
		JobOptions: Options(r.Job.Options),
		JobRuntime: uint64(r.TotalRuntime().Milliseconds()),
		Ctx:        r.Ctx,
		Majf:       r.MajFlt,
		Minf:       r.MinFlt,
	}
	jr.UsrCPU, jr.SysCPU = cpuShares(r)
	jr.Read = dirReport(r, bench.Read, plus, gs)
	jr.Write = dirReport(r, bench.Write, plus, gs)
	jr.Trim = dirReport(r, bench.Trim, plus, gs)
	jr.Sync = syncReport(r, plus)
	dist := distShares(&r.Dist)
	jr.IODepthLevel, jr.IODepthSubmit, jr.IODepthComplete = dist.level, dist.submit, dist.complete
	jr.LatencyNS, jr.LatencyUS, jr.LatencyMS = dist.latN, dist.latU, dist.latM
	jr.TotalErr, jr.FirstError = errorCounts(r)
	jr.LatencyTarget, jr.LatencyWindow, jr.LatencyPercentile, jr.LatencyDepth = latencyTarget(r)
	jr.Desc = r.Job.Description
	jr.IOLab = iolabReport(r, plus)
	steadyReport(&jr, r)
	return jr
}

// errnoOf is the job's fio error number: its errno, or 1 for an error
// that has none (a failure iolab found itself); under continue_on_error,
// for a job that went on after its errors, the first one's (fio's
// sum_thread_stats reports it as the job's error).
func errnoOf(r *bench.JobResult) int {
	switch {
	case r.Errno != 0:
		return r.Errno
	case r.Error != "":
		return 1
	case r.Job.ContinueOnError != 0:
		return r.FirstError
	}
	return 0
}

// errorCounts are fio's total_err and first_error, which its JSON has
// whenever continue_on_error is set; nil without it.
func errorCounts(r *bench.JobResult) (*uint64, *int) {
	if r.Job.ContinueOnError == 0 {
		return nil, nil
	}
	total, first := r.TotalErr, r.FirstError
	return &total, &first
}

// cpuShares are fio's usr_cpu and sys_cpu: CPU time over the summed
// runtimes of the job (or the group's jobs), in %.
func cpuShares(r *bench.JobResult) (usr, sys float64) {
	rt := r.TotalRuntime()
	if rt <= 0 {
		return 0, 0
	}
	return 100 * float64(r.UsrCPU) / float64(rt), 100 * float64(r.SysCPU) / float64(rt)
}

// latencyDepth is fio's latency_depth when no latency_target is set: the
// depth the job runs at — iodepth rounded up where the engine rounds it
// (io_uring), iodepth as given for a sync engine (fio caps the queue, not
// the option).
func latencyDepth(j *bench.Job) int {
	e := j.Engine()
	if e == nil || e.Has(bench.SyncIO) {
		return j.IODepth
	}
	return e.Depth(j.IODepth)
}

func dirReport(r *bench.JobResult, d int, plus bool, gs *groupStats) DirReport {
	dr, runtime := r.ReportedDir(d)
	out := DirReport{
		IOBytes:  dr.Bytes,
		IOKBytes: dr.Bytes >> 10,
		TotalIOs: dr.IOs,
		ShortIOs: dr.Short,
		// fio prints percentiles, and json+ their bins, of the latencies
		// clat_percentiles, lat_percentiles and slat_percentiles ask for.
		Slat:  latReport(&dr.Slat, r.Job.SlatPercentiles, r.Job.PercentileList, plus),
		Clat:  latReport(&dr.Clat, r.Job.ClatPercentiles, r.Job.PercentileList, plus),
		Lat:   latReport(&dr.Lat, r.Job.LatPercentiles, r.Job.PercentileList, plus),
		Prios: prioReports(dr, &r.Job, plus),
	}
	if dr.IOs == 0 {
		return out
	}
	out.Runtime = runtimeMS(runtime)
	if out.Runtime > 0 {
		out.BWBytes = dr.Bytes * 1000 / out.Runtime
		out.BW = out.BWBytes / 1024
		out.IOPS = 1000 * float64(dr.IOs) / float64(out.Runtime)
	}
	bw := r.IntervalIOPS(d, true)
	if bw.N > 0 {
		out.BWMin, out.BWMax = uint64(bw.Min), uint64(bw.Max)
		out.BWAgg = gs.aggShare(d, bw.Mean)
		out.BWMean, out.BWDev, out.BWSamples = bw.Mean, bw.Stddev, uint64(bw.N)
	}
	iops := r.IntervalIOPS(d, false)
	out.IOPSMin, out.IOPSMax = uint64(iops.Min), uint64(iops.Max)
	out.IOPSMean, out.IOPSStddev, out.IOPSSamples = iops.Mean, iops.Stddev, uint64(iops.N)
	return out
}

// latReport is fio's add_ddir_lat_json: percentiles (and with json+ the
// bins) only where they are asked for.
func latReport(l *hist.Lat, percentiles bool, list []float64, plus bool) LatReport {
	if !percentiles {
		return LatReportFrom(l, nil, false)
	}
	return LatReportFrom(l, list, plus)
}

func diskUtilReport(u system.DiskUtilization) DiskUtil {
	return DiskUtil{
		Name: u.Name, ReadIOs: u.ReadIOs, WriteIOs: u.WriteIOs,
		ReadMerges: u.ReadMerges, WriteMerges: u.WriteMerges,
		ReadTicks: u.ReadTicks, WriteTicks: u.WriteTicks,
		InQueue: u.InQueue, Util: min(u.Util, 100),
		ReadsPerSec: u.ReadsPerSec, WritesPerSec: u.WritesPerSec,
		ReadKBPerSec: u.ReadKBPerSec, WriteKBPerSec: u.WriteKBPerSec,
		ReadMergesPerSec: u.ReadMergesPerSec, WriteMergesPerSec: u.WriteMergesPerSec,
		ReadAwait: u.ReadAwait, WriteAwait: u.WriteAwait, AvgQueueSize: u.AvgQueueSize,
	}
}
