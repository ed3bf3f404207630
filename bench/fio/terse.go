package fio

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"iolab/bench"
)

// TerseVersions are the terse versions iolab writes: all of fio 3.33's
// (--terse-version=2..5; 3 is fio's default).
var TerseVersions = []int{2, 3, 4, 5}

// DefaultTerseVersion is fio's terse_version when --terse-version is not
// given.
const DefaultTerseVersion = 3

// terseListLen is fio's FIO_IO_U_LIST_MAX_LEN: the terse line always has
// this many percentile fields, the ones past the job's list written "0%=0".
const terseListLen = 20

// WriteTerse prints res the way fio 3.33's --output-format=terse does
// (stat.c show_thread_status_terse_all, show_ddir_status_terse,
// print_disk_util): one ';'-separated line per job (per reporting group
// with group_reporting), in version ver. Its numbers are those of the
// JSON report (NewReport), so the two always agree. Where fio writes its
// version string, iolab writes its own. iolab has no slaves' aggregate
// for a disk (fio's ";slaves;…" after an md or dm device).
func WriteTerse(w io.Writer, res *bench.Result, cfg *bench.Config, ver int) error {
	if ver < 2 || ver > 5 {
		return fmt.Errorf("fio: terse version %d: not one of 2, 3, 4, 5", ver)
	}
	rep := NewReport(res, cfg, false)
	var results []*bench.JobResult
	for gi := range res.Groups {
		for i := range res.Groups[gi].Jobs {
			results = append(results, &res.Groups[gi].Jobs[i])
		}
	}
	var b strings.Builder
	for i := range rep.Jobs {
		writeTerseJob(&b, &rep.Jobs[i], results[i], rep.DiskUtil, ver)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTerseJob is show_thread_status_terse_all.
func writeTerseJob(b *strings.Builder, jr *JobReport, r *bench.JobResult, disks []DiskUtil, ver int) {
	if ver == 2 {
		fmt.Fprintf(b, "2;%s;%d;%d", jr.JobName, jr.GroupID, jr.Error)
	} else {
		fmt.Fprintf(b, "%d;%s;%s;%d;%d", ver, Version, jr.JobName, jr.GroupID, jr.Error)
	}
	list := terseList(&r.Job)
	// iolab has no unified_rw_reporting: read, write and (but in version
	// 3) trim, each on its own.
	writeTerseDir(b, &jr.Read, list, ver)
	writeTerseDir(b, &jr.Write, list, ver)
	if ver != 3 {
		writeTerseDir(b, &jr.Trim, list, ver)
	}
	fmt.Fprintf(b, ";%s%%;%s%%;%d;%d;%d", cf(jr.UsrCPU), cf(jr.SysCPU), jr.Ctx, jr.Majf, jr.Minf)
	// Seven queue depth levels, then the µs buckets (fio adds the ns
	// buckets to the first, "to keep the terse format unaltered") and
	// the ms buckets.
	for i := range 7 {
		fmt.Fprintf(b, ";%3.1f%%", distAt(jr.IODepthLevel, i))
	}
	var ns float64
	for _, v := range jr.LatencyNS {
		ns += v.Percent
	}
	for i := range 10 {
		v := distAt(jr.LatencyUS, i)
		if i == 0 {
			v += ns
		}
		fmt.Fprintf(b, ";%3.2f%%", v)
	}
	for i := range 12 {
		fmt.Fprintf(b, ";%3.2f%%", distAt(jr.LatencyMS, i))
	}
	if ver >= 3 {
		for _, d := range disks {
			fmt.Fprintf(b, ";%s;%d;%d;%d;%d;%d;%d;%d;%3.2f%%", d.Name, d.ReadIOs, d.WriteIOs,
				d.ReadMerges, d.WriteMerges, d.ReadTicks, d.WriteTicks, d.InQueue, d.Util)
		}
	}
	if jr.TotalErr != nil && jr.FirstError != nil {
		fmt.Fprintf(b, ";%d;%d", *jr.TotalErr, *jr.FirstError)
	}
	if jr.Desc != "" {
		if ver == 2 {
			b.WriteString("\n")
		}
		b.WriteString(";" + jr.Desc)
	}
	b.WriteString("\n")
}

// terseList is the job's percentile list as fio's terse line uses it: the
// lat percentiles with lat_percentiles, else clat's, else none. Unlike the
// JSON, the line lists them (at 0) when the direction had no I/O.
func terseList(j *bench.Job) []float64 {
	if !j.LatPercentiles && !j.ClatPercentiles {
		return nil
	}
	return j.PercentileList
}

// writeTerseDir is show_ddir_status_terse: bytes, bandwidth and IOPS (in
// whole KiB/s and I/Os per second over the runtime), slat, clat, the
// percentiles, lat (in µs), the bandwidth's interval statistics and, in
// version 5, their sample count and IOPS's.
func writeTerseDir(b *strings.Builder, d *DirReport, list []float64, ver int) {
	var bw, iops uint64
	if d.Runtime > 0 {
		bw = 1000 * d.IOBytes / d.Runtime / 1024
		iops = 1000 * d.TotalIOs / d.Runtime
	}
	fmt.Fprintf(b, ";%d;%d;%d;%d", d.IOBytes>>10, bw, iops, d.Runtime)
	writeTerseLat(b, &d.Slat)
	writeTerseLat(b, &d.Clat)
	pct := d.Clat.Percentile
	if len(d.Lat.Percentile) > 0 {
		pct = d.Lat.Percentile
	}
	for i := range terseListLen {
		if i >= len(list) {
			b.WriteString(";0%=0")
			continue
		}
		v, _ := pct.Get(list[i])
		fmt.Fprintf(b, ";%s%%=%d", cf(list[i]), v/1000)
	}
	writeTerseLat(b, &d.Lat)
	if d.BWSamples > 0 {
		fmt.Fprintf(b, ";%d;%d;%s%%;%s;%s", d.BWMin, d.BWMax, cf(d.BWAgg), cf(d.BWMean), cf(d.BWDev))
	} else {
		b.WriteString(";0;0;0.000000%;0.000000;0.000000")
	}
	if ver == 5 {
		fmt.Fprintf(b, ";%d", d.BWSamples)
		if d.IOPSSamples > 0 {
			fmt.Fprintf(b, ";%d;%d;%s;%s;%d", d.IOPSMin, d.IOPSMax, cf(d.IOPSMean), cf(d.IOPSStddev), d.IOPSSamples)
		} else {
			b.WriteString(";0;0;0.000000;0.000000;0")
		}
	}
}

// writeTerseLat writes min, max, mean and stddev in µs (min and max
// truncated, as fio divides them as integers).
func writeTerseLat(b *strings.Builder, l *LatReport) {
	if l.N == 0 {
		b.WriteString(";0;0;0.000000;0.000000")
		return
	}
	fmt.Fprintf(b, ";%d;%d;%s;%s", l.Min/1000, l.Max/1000, cf(l.Mean/1000), cf(l.Stddev/1000))
}

// cf is C's "%f".
func cf(v float64) string {
	return strconv.FormatFloat(v, 'f', 6, 64)
}

func distAt(d Dist, i int) float64 {
	if i < len(d) {
		return d[i].Percent
	}
	return 0
}
