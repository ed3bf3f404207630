package chart

import (
	"sort"
	"time"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/joblog"
	"iolab/bench/summary"
)

// The latency timeline's lat and slat. Each interval of a job keeps one
// histogram, of its headline latency (bench.IntervalLat: clat, or from
// the intended start for a paced job). A job run with fio's
// write_lat_log also kept each I/O's slat, clat and lat in its logs
// (bench/joblog), stored with its result up to joblog.StoredMax: those
// the timeline reads for lat= total or slat, each sample interval's I/Os
// into a histogram of their own. A log averaged over log_avg_msec
// windows holds means, not I/Os, and a job without the logs has nothing:
// the picker says so, and the chart refuses rather than draw clat under
// their name.

// logState is what a step's drawn job logged of a latency kind.
type logState uint8

const (
	notLogged   logState = iota // no write_lat_log, or the kind not measured
	logAveraged                 // log_avg_msec: a mean (or max) per window
	logPerIO                    // an entry per I/O
)

// logKind is the joblog kind of a latency kind.
func logKind(k LatKind) joblog.Kind {
	switch k {
	case LatTotal:
		return joblog.Lat
	case LatSlat:
		return joblog.Slat
	}
	return joblog.Clat
}

// LatLogs are the log kinds a query's chart reads beyond what a run's
// summaries hold (db.Store.Summaries): the latency timeline's lat or
// slat log, when lat= asks for one; nil for any other query.
func (q Query) LatLogs() []joblog.Kind {
	if q.kind() != LatencyTimeline || q.Lat == "" || q.Lat == LatClat {
		return nil
	}
	return []joblog.Kind{logKind(q.Lat)}
}

// stepLogs is what step st's job called job (its first, when none is)
// logged of kind k, by the options in the step's config.
func stepLogs(st *summary.StepView, job string, k LatKind) logState {
	var j *bench.Job
	for g := range st.Step.Config.Groups {
		for i := range st.Step.Config.Groups[g].Jobs {
			if c := &st.Step.Config.Groups[g].Jobs[i]; j == nil || (c.Name == job && j.Name != job) {
				j = c
			}
		}
	}
	switch {
	case j == nil || !j.WriteLatLog || j.GtodReduce || (k == LatTotal && j.DisableLat) || (k == LatSlat && j.DisableSlat):
		return notLogged
	case j.LogAvgMsec > 0:
		return logAveraged
	}
	return logPerIO
}

// logIntervalLats are job result jr's latencies of log kind k in
// direction d (both when d < 0) over each interval of its samples, read
// from its per-I/O log: one per sample, nil where no logged I/O
// completed. found is false when the result holds no such log (not
// read); truncated when the store kept only its start.
func logIntervalLats(jr *summary.JobView, k joblog.Kind, d int) (lats []*bench.IntervalLat, found, truncated bool) {
	var l *joblog.Log
	for i := range jr.Logs {
		if jr.Logs[i].Kind == k {
			l = &jr.Logs[i]
		}
	}
	if l == nil {
		return nil, false, false
	}
	e := parseIOPSLog(l) // time ms, value (ns), direction, bs, …
	var base int64
	if len(e.lines) > 0 && e.lines[0].ms > 1e12 && !jr.Start.IsZero() {
		base = jr.Start.UnixMilli() // log_unix_epoch
	}
	ends := make([]time.Duration, len(jr.Samples))
	for i, s := range jr.Samples {
		ends[i] = s.At
	}
	hs := make([]*hist.Histogram, len(ends))
	maxes := make([]uint64, len(ends))
	for _, x := range e.lines {
		if d >= 0 && x.dir != d {
			continue
		}
		at := time.Duration(x.ms-base) * time.Millisecond
		// The interval that ends at or after at: (ends[i-1], ends[i]].
		i := sort.Search(len(ends), func(i int) bool { return ends[i] >= at })
		if i == len(ends) || x.v < 0 {
			continue
		}
		if hs[i] == nil {
			hs[i] = new(hist.Histogram)
		}
		hs[i].Add(uint64(x.v))
		maxes[i] = max(maxes[i], uint64(x.v))
	}
	lats = make([]*bench.IntervalLat, len(ends))
	for i, h := range hs {
		if h == nil {
			continue
		}
		ps := h.Percentiles([]float64{50, 99})
		lats[i] = &bench.IntervalLat{N: h.N(), P50: ps[0], P99: ps[1], Max: maxes[i]}
	}
	return lats, true, l.Truncated
}
