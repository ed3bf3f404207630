package chart

import (
	"bytes"
	"slices"
	"strconv"
	"time"

	"iolab/bench"
	"iolab/bench/joblog"
	"iolab/bench/summary"
)

// A step whose jobs all kept an IOPS log (write_iops_log) is drawn from
// the logs: finer than the samples, as fio's users plot them. An averaged
// log (log_avg_msec) gives a point per window; a per-I/O log is counted
// in logBucket steps. A log cut short for the store (joblog.Log.Truncated)
// would end the line early: the step is drawn from its samples instead.

// logBucket is how per-I/O log entries are counted into IOPS.
const logBucket = 100 * time.Millisecond

// iopsLog is a job's IOPS log when it can be drawn.
func iopsLog(r *summary.JobView) (*joblog.Log, bool) {
	for i := range r.Logs {
		if l := &r.Logs[i]; l.Kind == joblog.IOPS {
			return l, !l.Truncated && l.Lines > 0 && int64(bytes.Count(l.Data, []byte("\n"))) == l.Lines
		}
	}
	return nil, false
}

// logWindow is the step's log interval, when every job's IOPS log can be
// drawn: an averaged log's window (the median gap between its times), or
// logBucket for per-I/O logs.
func logWindow(res *summary.ResultView) (time.Duration, bool) {
	var w time.Duration
	n := 0
	for _, g := range res.Groups {
		for k := range g.Jobs {
			l, ok := iopsLog(&g.Jobs[k])
			if !ok {
				return 0, false
			}
			if n == 0 {
				w = logBucket
				if e := parseIOPSLog(l); e.avg {
					w = e.window()
				}
			}
			n++
		}
	}
	return w, n > 0
}

// iopsEntry is one line of an IOPS log.
type iopsEntry struct {
	ms  int64
	v   float64
	dir int
}

// iopsEntries are a log's lines; avg when it is averaged (log_avg_msec):
// fio writes bs 0 on averaged lines, the I/O's size on per-I/O ones. The
// job result as the charts read it has no options to ask.
type iopsEntries struct {
	lines []iopsEntry
	avg   bool
}

func parseIOPSLog(l *joblog.Log) iopsEntries {
	var e iopsEntries
	for line := range bytes.SplitSeq(bytes.TrimSuffix(l.Data, []byte("\n")), []byte("\n")) {
		f := bytes.SplitN(line, []byte(", "), 5)
		if len(f) < 4 {
			continue
		}
		ms, err1 := strconv.ParseInt(string(f[0]), 10, 64)
		v, err2 := strconv.ParseFloat(string(f[1]), 64)
		d, err3 := strconv.Atoi(string(f[2]))
		if err1 != nil || err2 != nil || err3 != nil || d < 0 || d > 1 {
			continue
		}
		if len(e.lines) == 0 {
			e.avg = string(f[3]) == "0"
		}
		e.lines = append(e.lines, iopsEntry{ms, v, d})
	}
	return e
}

// window is the median gap between an averaged log's times.
func (e iopsEntries) window() time.Duration {
	var gaps []int64
	for i := 1; i < len(e.lines); i++ {
		if g := e.lines[i].ms - e.lines[i-1].ms; g > 0 {
			gaps = append(gaps, g)
		}
	}
	if len(gaps) == 0 {
		return logBucket
	}
	slices.Sort(gaps)
	return time.Duration(gaps[len(gaps)/2]) * time.Millisecond
}

// logIntervals reads a job's IOPS log (time ms, value, direction, …) into
// intervals: an averaged log's lines at their times, the two directions'
// lines of a window together; a per-I/O log's I/Os counted in each
// logBucket, the last bucket kept when at least half full, as the
// samples' last interval is. Times in Unix ms (log_unix_epoch) are taken
// from the job's start.
func logIntervals(r *summary.JobView) []interval {
	l, _ := iopsLog(r)
	e := parseIOPSLog(l)
	var base int64
	if len(e.lines) > 0 && e.lines[0].ms > 1e12 && !r.Start.IsZero() {
		base = r.Start.UnixMilli()
	}
	var out []interval
	var counts [][2]float64
	for _, x := range e.lines {
		at := time.Duration(max(x.ms-base, 0)) * time.Millisecond
		if e.avg {
			if n := len(out); n > 0 && out[n-1].at == at && out[n-1].iops[x.dir] == 0 {
				out[n-1].iops[x.dir] = x.v
				continue
			}
			iv := interval{at: at}
			iv.iops[x.dir] = x.v
			out = append(out, iv)
			continue
		}
		b := int(at / logBucket)
		if b > 1<<20 {
			continue // beyond any run iolab takes
		}
		for len(counts) <= b {
			counts = append(counts, [2]float64{})
		}
		counts[b][x.dir]++
	}
	if e.avg {
		return out
	}
	end := r.Runtime
	for b, c := range counts {
		from, to := time.Duration(b)*logBucket, time.Duration(b+1)*logBucket
		if end > from && end < to {
			to = end
		}
		if to-from < logBucket/2 {
			continue
		}
		secs := (to - from).Seconds()
		out = append(out, interval{at: to, iops: [bench.Trim + 1]float64{c[0] / secs, c[1] / secs}})
	}
	return out
}
