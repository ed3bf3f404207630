package fio

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/system"
	"iolab/bench/units"
)

// Version is iolab's version, reported as "iolab version".
var Version = "iolab-0.1"

// NewReport turns a result into fio's JSON document; with plus (json+) the
// latency histograms' bins are included.
func NewReport(res *bench.Result, cfg *bench.Config, plus bool) Report {
	rep := Report{
		IolabVersion:  Version,
		Timestamp:     res.Start.Unix(),
		TimestampMS:   res.Start.UnixMilli(),
		Time:          res.Start.Format("Mon Jan _2 15:04:05 2006"),
		Hostname:      res.Host.Hostname,
		Kernel:        res.Host.KernelRelease,
		GlobalOptions: Options(cfg.GlobalOptions),
	}
	seen := map[string]bool{}
	for _, g := range res.Groups {
		var groupBW [2]float64
		for i := range g.Jobs {
			for d := range 2 {
				groupBW[d] += g.Jobs[i].BW(d)
			}
		}
		for i := range g.Jobs {
			rep.Jobs = append(rep.Jobs, jobReport(&g.Jobs[i], plus, groupBW))
		}
		for _, d := range g.Disks {
			if !seen[d.Name] {
				seen[d.Name] = true
				rep.DiskUtil = append(rep.DiskUtil, diskUtilReport(d))
			}
		}
	}
	return rep
}

func jobReport(r *bench.JobResult, plus bool, groupBW [2]float64) JobReport {
	jr := JobReport{
		JobName:    r.Name,
		GroupID:    r.GroupID,
		Elapsed:    int64(math.Round((r.Runtime + r.Job.RampTime).Seconds())),
		JobOptions: Options(r.Job.Options),
		JobRuntime: uint64(r.Runtime.Milliseconds()),
		Ctx:        r.Ctx,
		Majf:       r.MajFlt,
		Minf:       r.MinFlt,
	}
	if r.Error != "" {
		jr.Error = 1
	}
	if r.Runtime > 0 {
		jr.UsrCPU = 100 * r.UsrCPU.Seconds() / r.Runtime.Seconds()
		jr.SysCPU = 100 * r.SysCPU.Seconds() / r.Runtime.Seconds()
	}
	jr.Read = dirReport(r, bench.Read, plus, groupBW[bench.Read])
	jr.Write = dirReport(r, bench.Write, plus, groupBW[bench.Write])
	return jr
}

func dirReport(r *bench.JobResult, d int, plus bool, groupBW float64) DirReport {
	dr := &r.Dirs[d]
	out := DirReport{
		IOBytes:  dr.Bytes,
		IOKBytes: dr.Bytes / 1024,
		BWBytes:  uint64(r.BW(d)),
		BW:       uint64(r.BW(d) / 1024),
		IOPS:     r.IOPS(d),
		Runtime:  uint64(r.Runtime.Milliseconds()),
		TotalIOs: dr.IOs,
		ShortIOs: dr.Short,
		Slat:     LatReportFrom(&dr.Slat, nil, false),
		Clat:     LatReportFrom(&dr.Clat, r.Job.PercentileList, plus),
		Lat:      LatReportFrom(&dr.Lat, nil, false),
	}
	if dr.IOs == 0 {
		out.Runtime = 0
		return out
	}
	if groupBW > 0 {
		out.BWAgg = 100 * r.BW(d) / groupBW
	}
	bw := r.IntervalIOPS(d, true)
	out.BWMin, out.BWMax = uint64(bw.Min), uint64(bw.Max)
	out.BWMean, out.BWDev, out.BWSamples = bw.Mean, bw.Stddev, uint64(bw.N)
	iops := r.IntervalIOPS(d, false)
	out.IOPSMin, out.IOPSMax = uint64(iops.Min), uint64(iops.Max)
	out.IOPSMean, out.IOPSStddev, out.IOPSSamples = iops.Mean, iops.Stddev, uint64(iops.N)
	return out
}

func diskUtilReport(u system.DiskUtilization) DiskUtil {
	return DiskUtil{
		Name: u.Name, ReadIOs: u.ReadIOs, WriteIOs: u.WriteIOs,
		ReadMerges: u.ReadMerges, WriteMerges: u.WriteMerges,
		ReadTicks: u.ReadTicks, WriteTicks: u.WriteTicks,
		InQueue: u.InQueue, Util: u.Util,
		ReadsPerSec: u.ReadsPerSec, WritesPerSec: u.WritesPerSec,
		ReadKBPerSec: u.ReadKBPerSec, WriteKBPerSec: u.WriteKBPerSec,
		ReadMergesPerSec: u.ReadMergesPerSec, WriteMergesPerSec: u.WriteMergesPerSec,
		ReadAwait: u.ReadAwait, WriteAwait: u.WriteAwait, AvgQueueSize: u.AvgQueueSize,
	}
}

// WriteNormal prints res the way fio's normal output does: per job
// IOPS, bandwidth, latencies, clat percentiles, interval statistics and
// CPU; per group the run status; then the disks.
func WriteNormal(w io.Writer, res *bench.Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s on %s, kernel %s, %s\n", Version, res.Host.Hostname, res.Host.KernelRelease, res.Start.Format(time.RFC1123))
	for _, g := range res.Groups {
		for i := range g.Jobs {
			writeJobNormal(&b, &g.Jobs[i])
		}
	}
	for _, g := range res.Groups {
		fmt.Fprintf(&b, "\nRun status group %d (all jobs):\n", g.ID)
		for d, name := range []string{"READ", "WRITE"} {
			var bytes uint64
			var rt time.Duration
			minBW, maxBW := math.Inf(1), 0.0
			for i := range g.Jobs {
				r := &g.Jobs[i]
				if r.Dirs[d].IOs == 0 {
					continue
				}
				bytes += r.Dirs[d].Bytes
				rt = max(rt, r.Runtime)
				minBW = math.Min(minBW, r.BW(d))
				maxBW = math.Max(maxBW, r.BW(d))
			}
			if bytes == 0 || rt == 0 {
				continue
			}
			agg := float64(bytes) / rt.Seconds()
			fmt.Fprintf(&b, "  %5s: bw=%s (%s), %s-%s, io=%s (%s), run=%d-%dmsec\n", name,
				units.Rate(agg), units.DecimalRate(agg), units.Rate(minBW), units.Rate(maxBW),
				units.Bytes(float64(bytes)), units.DecimalBytes(float64(bytes)), rt.Milliseconds(), rt.Milliseconds())
		}
	}
	first := true
	for _, g := range res.Groups {
		for _, d := range g.Disks {
			if first {
				b.WriteString("\nDisk stats (read/write):\n")
				first = false
			}
			fmt.Fprintf(&b, "  %s: ios=%d/%d, merge=%d/%d, ticks=%d/%d, in_queue=%d, util=%.2f%%\n",
				d.Name, d.ReadIOs, d.WriteIOs, d.ReadMerges, d.WriteMerges, d.ReadTicks, d.WriteTicks, d.InQueue, d.Util)
			fmt.Fprintf(&b, "    iostat: r/s=%.1f w/s=%.1f rkB/s=%.1f wkB/s=%.1f rrqm/s=%.1f wrqm/s=%.1f r_await=%.3fms w_await=%.3fms aqu-sz=%.2f %%util=%.1f\n",
				d.ReadsPerSec, d.WritesPerSec, d.ReadKBPerSec, d.WriteKBPerSec, d.ReadMergesPerSec, d.WriteMergesPerSec, d.ReadAwait, d.WriteAwait, d.AvgQueueSize, d.Util)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeJobNormal(b *strings.Builder, r *bench.JobResult) {
	errno := 0
	if r.Error != "" {
		errno = 1
	}
	fmt.Fprintf(b, "%s: (groupid=%d, jobs=%d): err=%2d: %s (%s, iodepth=%d, bs=%s, %s)\n",
		r.Name, r.GroupID, r.Jobs, errno, r.Job.RW, r.Job.IOEngine, r.Job.IODepth, units.Bytes(float64(r.Job.BS)), r.Job.Filename)
	if r.Job.Description != "" {
		fmt.Fprintf(b, "  Description  : [%s]\n", r.Job.Description)
	}
	if r.Error != "" {
		fmt.Fprintf(b, "  error: %s\n", r.Error)
	}
	for d, name := range []string{"read", "write"} {
		dr := &r.Dirs[d]
		if dr.IOs == 0 {
			continue
		}
		fmt.Fprintf(b, "  %s: IOPS=%s, BW=%s (%s)(%s/%dmsec)\n", name,
			units.Count(r.IOPS(d)), units.Rate(r.BW(d)), units.DecimalRate(r.BW(d)), units.Bytes(float64(dr.Bytes)), r.Runtime.Milliseconds())
		writeLat(b, "slat", &dr.Slat)
		writeLat(b, "clat", &dr.Clat)
		writeLat(b, " lat", &dr.Lat)
		writePercentiles(b, &dr.Clat, r.Job.PercentileList)
		bw := r.IntervalIOPS(d, true)
		iops := r.IntervalIOPS(d, false)
		if bw.N > 0 {
			fmt.Fprintf(b, "   bw (  KiB/s): min=%.0f, max=%.0f, avg=%.2f, stdev=%.2f, samples=%d\n", bw.Min, bw.Max, bw.Mean, bw.Stddev, bw.N)
			fmt.Fprintf(b, "   iops        : min=%.0f, max=%.0f, avg=%.2f, stdev=%.2f, samples=%d\n", iops.Min, iops.Max, iops.Mean, iops.Stddev, iops.N)
		}
	}
	if r.Runtime > 0 {
		fmt.Fprintf(b, "  cpu          : usr=%.2f%%, sys=%.2f%%, ctx=%d, majf=%d, minf=%d\n",
			100*r.UsrCPU.Seconds()/r.Runtime.Seconds(), 100*r.SysCPU.Seconds()/r.Runtime.Seconds(), r.Ctx, r.MajFlt, r.MinFlt)
	}
}

// latUnit picks fio's display unit (stat.c display_lat): msec when min,
// max, mean and stddev all exceed a millisecond, usec when they all exceed
// a microsecond, else nsec.
func latUnit(s *hist.LatStat) (string, float64) {
	all := func(limit float64) bool {
		return float64(s.Min) > limit && float64(s.Max) > limit && s.Mean > limit && s.Stddev() > limit
	}
	switch {
	case all(1e6):
		return "msec", 1e6
	case all(1e3):
		return "usec", 1e3
	}
	return "nsec", 1
}

func writeLat(b *strings.Builder, name string, l *hist.Lat) {
	s := &l.Stat
	if s.N == 0 {
		return
	}
	unit, div := latUnit(s)
	fmt.Fprintf(b, "    %s (%s): min=%s, max=%s, avg=%.2f, stdev=%.2f\n", name, unit,
		trimFloat(float64(s.Min)/div), trimFloat(float64(s.Max)/div), s.Mean/div, s.Stddev()/div)
}

func writePercentiles(b *strings.Builder, l *hist.Lat, list []float64) {
	if l.Stat.N == 0 || len(list) == 0 {
		return
	}
	vals := l.Hist.Percentiles(list)
	// fio stat.c show_clat_percentiles scales by the smallest and largest
	// percentile shown.
	unit, div := "nsec", 1.0
	switch lo, hi := vals[0], vals[len(vals)-1]; {
	case lo > 2_000_000 && hi > 99_999_999:
		unit, div = "msec", 1e6
	case lo > 2000 && hi > 99_999:
		unit, div = "usec", 1e3
	}
	fmt.Fprintf(b, "    clat percentiles (%s):\n", unit)
	for i, p := range list {
		if i%4 == 0 {
			b.WriteString("     |")
		}
		fmt.Fprintf(b, " %5.2fth=[%5.0f]", p, float64(vals[i])/div)
		if i%4 == 3 || i == len(list)-1 {
			b.WriteString("\n")
		} else {
			b.WriteString(",")
		}
	}
}

func trimFloat(v float64) string {
	return fmt.Sprintf("%.0f", math.Trunc(v))
}
