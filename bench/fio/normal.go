package fio

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"strings"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/system"
)

// WriteNormal prints res the way fio 3.33's normal output does (stat.c
// show_thread_status_normal, show_group_stats, show_disk_util; the job
// lines of init.c add_job and the "Starting" line of backend.c): with
// cfg, each job's line and the thread count first; per job its header,
// IOPS, bandwidth, latencies, clat percentiles, interval statistics,
// latency buckets, CPU, queue depths and issued I/Os; per group the run
// status; then the disks. Where fio prints its version, iolab prints its
// own with the host and kernel; pid= is the job thread's id; after each
// disk's line, an iostat -x line of iolab's.
func WriteNormal(w io.Writer, res *bench.Result, cfg *bench.Config) error {
	if err := WriteNormalHead(w, res, cfg); err != nil {
		return err
	}
	return WriteNormalStats(w, res, cfg)
}

// WriteNormalHead prints what fio prints before a run starts: each job's
// line, the version and the thread count. With several formats fio prints
// it first, before the terse lines and the JSON (WriteNormalStats prints
// the rest of the normal output after them).
func WriteNormalHead(w io.Writer, res *bench.Result, cfg *bench.Config) error {
	var b strings.Builder
	threads := 0
	if cfg != nil {
		for _, g := range cfg.Groups {
			threads += writeJobLines(&b, g)
		}
	}
	fmt.Fprintf(&b, "%s on %s, kernel %s\n", Version, res.Host.Hostname, res.Host.KernelRelease)
	if cfg != nil {
		fmt.Fprintf(&b, "Starting %d thread%s\n", threads, plural(threads))
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteNormalStats prints the normal output's statistics: the jobs, the
// groups' run status and the disks.
func WriteNormalStats(w io.Writer, res *bench.Result, cfg *bench.Config) error {
	var b strings.Builder
	when := runEnd(res).Format("Mon Jan _2 15:04:05 2006")
	stats := make([]groupStats, len(res.Groups))
	for gi := range res.Groups {
		g := &res.Groups[gi]
		stats[gi] = newGroupStats(g)
		for i := range g.Jobs {
			writeJobNormal(&b, &g.Jobs[i], &stats[gi], when)
		}
	}
	for gi := range res.Groups {
		writeGroupStats(&b, res.Groups[gi].ID, &stats[gi])
		writeBlockTrace(&b, res.Groups[gi].Trace)
	}
	writeDisks(&b, runDisks(res, cfg))
	_, err := io.WriteString(w, b.String())
	return err
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// writeJobLines prints fio's line for each job of g as it sets it up:
// one line, then "..." when numjobs clones follow (bench.Expand puts them
// right after it). It returns how many jobs g runs.
func writeJobLines(b *strings.Builder, g bench.Group) int {
	for i := 0; i < len(g.Jobs); i += max(g.Jobs[i].NumJobs, 1) {
		j := &g.Jobs[i]
		// fio's min_bs and max_bs of each direction (init.c).
		var bs [6]any
		for d := range bench.Trim + 1 {
			lo, hi := j.BlockSizes(d)
			bs[2*d] = num2str(uint64(lo), j.SignificantFigures(), 1, true, "B")
			bs[2*d+1] = num2str(uint64(hi), j.SignificantFigures(), 1, true, "B")
		}
		fmt.Fprintf(b, "%s: (g=%d): rw=%s, bs=(R) %s-%s, (W) %s-%s, (T) %s-%s, ioengine=%s, iodepth=%d\n",
			append(append([]any{j.Name, g.ID, j.RW}, bs[:]...), j.IOEngine, j.IODepth)...)
		if j.NumJobs > 1 {
			b.WriteString("...\n")
		}
	}
	return len(g.Jobs)
}

var dirNames = [3]string{"read", "write", "trim"} // fio's io_ddir_name

func writeJobNormal(b *strings.Builder, r *bench.JobResult, gs *groupStats, when string) {
	if rd, _ := r.ReportedDir(bench.Read); rd.IOs+r.Dirs[bench.Write].IOs+r.Dirs[bench.Trim].IOs == 0 && r.Error == "" {
		return // fio prints nothing of a job that did nothing
	}
	errno := errnoOf(r)
	if errno == 0 {
		fmt.Fprintf(b, "%s: (groupid=%d, jobs=%d): err=%2d: pid=%d: %s\n", r.Name, r.GroupID, r.Jobs, errno, r.TID, when)
	} else {
		// A job that went on after its errors has the first one's
		// words, where fio keeps them (bench.JobResult.FirstErrorMsg).
		fmt.Fprintf(b, "%s: (groupid=%d, jobs=%d): err=%2d (%s): pid=%d: %s\n", r.Name, r.GroupID, r.Jobs, errno, cmp.Or(r.Error, r.FirstErrorMsg), r.TID, when)
	}
	if r.Job.Description != "" {
		fmt.Fprintf(b, "  Description  : [%s]\n", r.Job.Description)
	}
	for d := range r.Dirs {
		if dr, _ := r.ReportedDir(d); dr.Bytes > 0 {
			writeDirNormal(b, r, d, gs)
		}
	}
	dist := distShares(&r.Dist)
	writeLatBuckets(b, "nsec", dist.latN)
	writeLatBuckets(b, "usec", dist.latU)
	writeLatBuckets(b, "msec", dist.latM)
	writeSyncNormal(b, r)
	usr, sys := cpuShares(r)
	fmt.Fprintf(b, "  cpu          : usr=%3.2f%%, sys=%3.2f%%, ctx=%d, majf=%d, minf=%d\n", usr, sys, r.Ctx, r.MajFlt, r.MinFlt)
	fmt.Fprintf(b, "  IO depths    : %s\n", distLine(dist.level))
	fmt.Fprintf(b, "     submit    : %s\n", distLine(dist.submit))
	fmt.Fprintf(b, "     complete  : %s\n", distLine(dist.complete))
	rd, _ := r.ReportedDir(bench.Read) // a write job's verify reads are its reads
	fmt.Fprintf(b, "     issued rwts: total=%d,%d,%d,%d short=%d,%d,%d,0 dropped=0,0,0,0\n",
		rd.IOs, r.Dirs[bench.Write].IOs, r.Dirs[bench.Trim].IOs, r.Sync.Fsyncs, rd.Short, r.Dirs[bench.Write].Short, r.Dirs[bench.Trim].Short)
	if total, first := errorCounts(r); total != nil {
		fmt.Fprintf(b, "     errors    : total=%d, first_error=%d/<%s>\n", *total, *first, bench.Strerror(*first))
	}
	writeSteadyNormal(b, r)
}

// distLine is one of fio's "IO depths", "submit" or "complete" lines.
func distLine(d Dist) string {
	parts := make([]string, len(d))
	for i, v := range d {
		parts[i] = fmt.Sprintf("%s=%3.1f%%", v.Key, v.Percent)
	}
	return strings.Join(parts, ", ")
}

// writeLatBuckets is fio's show_lat: the non-empty buckets of one unit,
// five to a line.
func writeLatBuckets(b *strings.Builder, unit string, d Dist) {
	n := 0
	for _, v := range d {
		if v.Percent <= 0 {
			continue
		}
		switch {
		case n%5 == 0 && n > 0:
			b.WriteString("\n")
			fallthrough
		case n == 0:
			fmt.Fprintf(b, "  lat (%s)   : ", unit)
		default:
			b.WriteString(", ")
		}
		fmt.Fprintf(b, "%s=%3.2f%%", v.Key, v.Percent)
		n++
	}
	if n > 0 {
		b.WriteString("\n")
	}
}

// writeDirNormal is fio's show_ddir_status for one direction.
func writeDirNormal(b *strings.Builder, r *bench.JobResult, d int, gs *groupStats) {
	dr, runtime := r.ReportedDir(d)
	runt := runtimeMS(runtime)
	if runt == 0 {
		runt = 1 // a window under a millisecond: fio would print nothing
	}
	bw := dr.Bytes * 1000 / runt
	post := ""
	if d == bench.Write {
		post = "; 0 zone resets" // fio's zbd_write_status, on every write line
	}
	sig := r.Job.SignificantFigures()
	fmt.Fprintf(b, "  %s: IOPS=%s, BW=%s (%s)(%s/%dmsec)%s\n", dirNames[d],
		num2str(dr.IOs*1000/runt, sig, 1, false, ""),
		num2str(bw, sig, 1, true, "B/s"), num2str(bw, sig, 1, false, "B/s"),
		num2str(dr.Bytes, sig, 1, true, "B"), runtimeMS(runtime), post)
	writeLat(b, "slat", &dr.Slat.Stat)
	writeLat(b, "clat", &dr.Clat.Stat)
	writeLat(b, " lat", &dr.Lat.Stat)
	writePrioLats(b, dr, &r.Job)
	writeBlock(b, dr.Block)
	// fio prints the percentiles slat_percentiles, clat_percentiles and
	// lat_percentiles ask for, in that order.
	if r.Job.SlatPercentiles {
		writePercentiles(b, "slat", &dr.Slat, r.Job.PercentileList)
	}
	if r.Job.ClatPercentiles {
		writePercentiles(b, "clat", &dr.Clat, r.Job.PercentileList)
	}
	if r.Job.LatPercentiles {
		writePercentiles(b, "lat", &dr.Lat, r.Job.PercentileList)
	}
	writePrioPercentiles(b, dr, &r.Job)
	if bws := r.IntervalIOPS(d, true); bws.N > 0 {
		unit := "KiB"
		minV, maxV, mean, dev := uint64(bws.Min), uint64(bws.Max), bws.Mean, bws.Stddev
		per := gs.aggShare(d, mean)
		if mean > 1024*1024 {
			minV, maxV, mean, dev = minV/1024, maxV/1024, mean/1024, dev/1024
			unit = "MiB"
		}
		fmt.Fprintf(b, "   bw (%5s/s): min=%5d, max=%5d, per=%3.2f%%, avg=%5.02f, stdev=%5.02f, samples=%d\n",
			unit, minV, maxV, per, mean, dev, bws.N)
	}
	if iops := r.IntervalIOPS(d, false); iops.N > 0 {
		fmt.Fprintf(b, "   iops        : min=%5d, max=%5d, avg=%5.02f, stdev=%5.02f, samples=%d\n",
			uint64(iops.Min), uint64(iops.Max), iops.Mean, iops.Stddev, iops.N)
	}
}

// writeLat is fio's display_lat: msec when min, max and stddev are all
// large enough (min > 2 ms, max > 100 ms, stddev > 1 ms), else usec by the
// same rule a thousand times smaller, else nsec; min and max with six
// significant digits.
func writeLat(b *strings.Builder, name string, s *hist.LatStat) {
	if s.N == 0 {
		return
	}
	lo, hi, mean, dev := s.Min, s.Max, s.Mean, s.Stddev()
	unit := "nsec"
	switch {
	case lo > 2_000_000 && hi > 99_999_999 && dev > 1e6:
		lo, hi, mean, dev, unit = lo/1_000_000, hi/1_000_000, mean/1e6, dev/1e6, "msec"
	case lo > 2000 && hi > 99_999 && dev > 1000:
		lo, hi, mean, dev, unit = lo/1000, hi/1000, mean/1e3, dev/1e3, "usec"
	}
	fmt.Fprintf(b, "    %s (%s): min=%s, max=%s, avg=%5.02f, stdev=%5.02f\n", name, unit,
		num2str(lo, 6, 1, false, ""), num2str(hi, 6, 1, false, ""), mean, dev)
}

// writePercentiles is fio's show_clat_percentiles: the unit from the
// smallest and largest value shown, values rounded up into it, as many
// to a line as fit 80 columns, each followed by a comma but the last.
func writePercentiles(b *strings.Builder, name string, l *hist.Lat, list []float64) {
	if l.Stat.N == 0 || len(list) == 0 {
		return
	}
	vals := l.Hist.Percentiles(list)
	lo, hi := slicesMinMax(vals)
	unit, scale := "nsec", 0
	switch {
	case lo > 2_000_000 && hi > 99_999_999:
		unit, scale = "msec", 2
	case lo > 2000 && hi > 99_999:
		unit, scale = "usec", 1
	}
	divisor := uint64(math.Pow10(3 * scale))
	width := max(5, int(math.Log10(float64(hi/divisor))+1))
	const precision = 2
	perLine := (80 - 7) / (precision + 10 + width)
	fmt.Fprintf(b, "    %s percentiles (%s):\n     |", name, unit)
	for i, p := range list {
		if i != 0 && i%perLine == 0 {
			b.WriteString("     |")
		}
		v := vals[i]
		for range scale {
			v = (v + 999) / 1000
		}
		sep := byte(',')
		if i == len(list)-1 {
			sep = '\n'
		}
		fmt.Fprintf(b, " %5.2fth=[%*d]%c", p, width, v, sep)
		if i == len(list)-1 {
			break
		}
		if i%perLine == perLine-1 {
			b.WriteString("\n")
		}
	}
}

func slicesMinMax(v []uint64) (lo, hi uint64) {
	lo = math.MaxUint64
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

// writeGroupStats is fio's show_group_stats.
func writeGroupStats(b *strings.Builder, id int, gs *groupStats) {
	fmt.Fprintf(b, "\nRun status group %d (all jobs):\n", id)
	for d, name := range [3]string{"   READ", "  WRITE", "   TRIM"} {
		if gs.maxRun[d] == 0 {
			continue
		}
		sig := gs.sigFigs
		rate := func(v uint64) (string, string) {
			return num2str(v, sig, 1, true, "B/s"), num2str(v, sig, 1, false, "B/s")
		}
		agg, aggAlt := rate(gs.agg[d])
		lo, loAlt := rate(gs.minBW[d])
		hi, hiAlt := rate(gs.maxBW[d])
		fmt.Fprintf(b, "%s: bw=%s (%s), %s-%s (%s-%s), io=%s (%s), run=%d-%dmsec\n", name,
			agg, aggAlt, lo, hi, loAlt, hiAlt,
			num2str(gs.bytes[d], sig, 1, true, "B"), num2str(gs.bytes[d], sig, 1, false, "B"),
			gs.minRun[d], gs.maxRun[d])
	}
}

// writeDisks is fio's show_disk_util, and iolab's iostat line after
// each disk.
func writeDisks(b *strings.Builder, disks []system.DiskUtilization) {
	if len(disks) > 0 {
		b.WriteString("\nDisk stats (read/write):\n")
	}
	for _, d := range disks {
		fmt.Fprintf(b, "  %s: ios=%d/%d, merge=%d/%d, ticks=%d/%d, in_queue=%d, util=%3.2f%%\n",
			d.Name, d.ReadIOs, d.WriteIOs, d.ReadMerges, d.WriteMerges, d.ReadTicks, d.WriteTicks, d.InQueue, d.Util)
		fmt.Fprintf(b, "    iostat: r/s=%.1f w/s=%.1f rkB/s=%.1f wkB/s=%.1f rrqm/s=%.1f wrqm/s=%.1f r_await=%.3fms w_await=%.3fms aqu-sz=%.2f %%util=%.1f\n",
			d.ReadsPerSec, d.WritesPerSec, d.ReadKBPerSec, d.WriteKBPerSec, d.ReadMergesPerSec, d.WriteMergesPerSec, d.ReadAwait, d.WriteAwait, d.AvgQueueSize, d.Util)
	}
}
