// Package joblog writes a job's log files as fio 3.33 writes them, for
// its write_bw_log, write_iops_log, write_lat_log and write_hist_log
// options: the entries of stat.c (add_log_sample, __add_stat_to_log,
// add_clat_sample's histogram window, __add_samples for averaged bandwidth
// and IOPS) in the format of iolog.c (flush_samples, flush_hist_samples),
// named as init.c's gen_log_name names them. Each line is
//
//	time, value, direction, bs[, offset], priority
//
// with time in ms since the job's measured window began (or Unix ms with
// log_unix_epoch). fio keeps samples in memory and writes them when the
// job ends; iolab formats each entry into a chunk and writes the chunk
// out as it fills, so that a long run needs no memory per I/O and the loop
// allocates nothing per I/O. The first StoredMax bytes of each file are
// kept with the job's result for the store (Log).
//
// bench's job loop drives a Writer (its loop_logs_linux.go); the options
// stay on bench's Job (LogOptions), which hands them over as Options
// (Job.LogParams). joblog imports nothing of bench.
package joblog

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"iolab/bench/hist"
)

// Options are what a Writer needs of its job: fio's log options (bench's
// LogOptions, field for field) and the job's name and the measurements it
// turns off, which decide which logs there are and what they hold.
type Options struct {
	// The job's name: the prefix of a log whose own prefix is "".
	Name string

	WriteBWLog   bool
	BWLogFile    string
	WriteIOPSLog bool
	IOPSLogFile  string
	WriteLatLog  bool // slat, clat and lat logs
	LatLogFile   string
	WriteHistLog bool // clat histogram log
	HistLogFile  string

	LogAvgMsec        int  // 0: one entry per I/O
	LogMax            bool // log_max_value: a window's largest value, not its mean
	LogHistMsec       int
	LogHistCoarseness int
	LogOffset         bool
	LogPrio           bool
	PerJobLogs        bool
	LogUnixEpoch      bool

	// DisableLat, DisableClat and DisableSlat leave out the latency logs
	// of what is not measured; DisableBW (disable_bw_measurement) logs
	// per-I/O bandwidth as 0, and GtodReduce, which times no I/O, logs
	// neither per-I/O bandwidth nor IOPS.
	DisableLat, DisableClat, DisableSlat, DisableBW, GtodReduce bool
}

// writes reports whether the job writes any log file.
func (o *Options) writes() bool {
	return o.WriteBWLog || o.WriteIOPSLog || o.WriteLatLog || o.WriteHistLog
}

// read is the read direction as bench numbers them (fio's DDIR_READ);
// writes are 1.
const read = 0

// rtClass reports whether an I/O priority's class is the real-time one
// (fio's ioprio_value_is_class_rt): the class is the value's top three
// bits (IOPRIO_CLASS_SHIFT 13), IOPRIO_CLASS_RT is 1. bench's
// IOPrioClassOf and IOPrioClassRT say the same; its tests hold the two
// to agreeing.
func rtClass(prio uint16) bool { return prio>>13 == 1 }

// Kind is one kind of log file.
type Kind int

// The log kinds, with fio's file name infixes (kindNames).
const (
	BW Kind = iota
	IOPS
	Slat
	Clat
	Lat
	ClatHist
	nKinds
)

var kindNames = [nKinds]string{"bw", "iops", "slat", "clat", "lat", "clat_hist"}

func (k Kind) String() string { return kindNames[k] }

// ParseKind is the kind of a log by fio's name for it.
func ParseKind(s string) (Kind, bool) {
	for k, n := range kindNames {
		if n == s {
			return Kind(k), true
		}
	}
	return 0, false
}

// Bounds on what is kept with a result: each log's first StoredMax
// bytes, whole lines, and no more than StoredJobMax for a job's logs,
// shared evenly.
const (
	StoredMax    = 2 << 20
	StoredJobMax = 6 << 20
)

// Log is one log file of a job as kept with its result.
type Log struct {
	Kind Kind   `json:"kind"`
	File string `json:"file"` // the name fio gives the file (PREFIX_bw.1.log)
	// Data is the file's text, its first lines when Truncated.
	Data      []byte `json:"-"`
	Lines     int64  `json:"lines"` // lines in the whole file
	Truncated bool   `json:"truncated,omitempty"`
}

// FileName is fio's gen_log_name: PREFIX_KIND.N.log with per_job_logs
// (N is the job's thread_number, 1-based over the run), else
// PREFIX_KIND.log.
func FileName(prefix string, k Kind, thread int, perJob bool) string {
	if perJob {
		return fmt.Sprintf("%s_%s.%d.log", prefix, kindNames[k], thread)
	}
	return fmt.Sprintf("%s_%s.log", prefix, kindNames[k])
}

// logChunk is how much text gathers before it is written out: a few
// hundred lines, one write system call.
const logChunk = 128 << 10

// histLineMax is the longest line of a histogram log: 1856 counts of up
// to 20 digits and their separators, and the three leading columns.
const histLineMax = hist.HistBuckets*22 + 64

// logFile is one open log.
type logFile struct {
	Log
	f    *os.File // nil: kept with the result only
	buf  []byte
	keep int // bytes still allowed into Data
	err  error
}

func (lf *logFile) room(n int) {
	if len(lf.buf)+n > cap(lf.buf) {
		lf.flush()
	}
}

// flush writes the chunk out and keeps it with the result while there is
// room; a chunk ends at a line's end, so what is kept is whole lines.
func (lf *logFile) flush() {
	if len(lf.buf) == 0 {
		return
	}
	if lf.f != nil && lf.err == nil {
		_, lf.err = lf.f.Write(lf.buf)
	}
	if !lf.Truncated {
		if len(lf.buf) <= lf.keep {
			lf.Data = append(lf.Data, lf.buf...)
			lf.keep -= len(lf.buf)
		} else {
			lf.Truncated = true
		}
	}
	lf.buf = lf.buf[:0]
}

// avgWindow is fio's io_stat as a log's averaging window uses it: a
// running mean (add_stat_sample's Welford update) and the largest value.
type avgWindow struct {
	n    uint64
	mean float64
	max  uint64
}

func (w *avgWindow) add(v uint64) {
	w.n++
	w.mean += (float64(v) - w.mean) / float64(w.n)
	w.max = max(w.max, v)
}

// logMsecSlack is fio's LOG_MSEC_SLACK: how early a bandwidth or IOPS
// window may close.
const logMsecSlack = 1

// Writer is one job's logs and their windows. bench's loop calls it
// per I/O, a direct call on this concrete type, only when the job has
// logs (Open returns nil without them).
type Writer struct {
	o     Options
	files [nKinds]*logFile
	// fio logs per-I/O bandwidth unless disable_bw_measurement (as 0
	// under gtod_reduce, which times no I/O), and per-I/O IOPS unless
	// gtod_reduce.
	noBW, gtodReduce bool

	epoch int64 // loop time (ns) the measured window began
	alt   int64 // ms added to every time: the Unix time of epoch with log_unix_epoch

	avgMsec int64
	avgLast [nKinds][2]int64 // ms: where each averaging window began
	win     [nKinds][2]avgWindow

	// Averaged bandwidth and IOPS logs take a rate every log_avg_msec, as
	// fio's helper thread does (calc_log_samples).
	tickLast         int64 // ms
	moved, ios       [2]uint64
	tickMoved, tickN [2]uint64

	histMsec int64
	histLast [2]int64
	before   [2][]uint64 // the clat histogram at the last histogram line
	stride   int
}

// Open opens the job's logs; thread is its 1-based place among the
// run's jobs (fio's thread_number). With toFiles false nothing is written
// to disk: the logs are only kept with the result (the dashboard's runs).
func Open(o *Options, thread int, toFiles bool) (*Writer, error) {
	if !o.writes() {
		return nil, nil
	}
	jl := &Writer{o: *o, noBW: o.DisableBW, gtodReduce: o.GtodReduce, avgMsec: int64(o.LogAvgMsec), histMsec: int64(o.LogHistMsec), stride: 1 << o.LogHistCoarseness}
	prefix := func(p string) string {
		if p == "" {
			return o.Name
		}
		return p
	}
	var kinds []Kind
	var prefixes []string
	add := func(on bool, p string, ks ...Kind) {
		if on {
			for _, k := range ks {
				kinds = append(kinds, k)
				prefixes = append(prefixes, prefix(p))
			}
		}
	}
	// fio's setup order (init.c add_job): lat, slat, clat each unless
	// disabled, then the histogram, bandwidth and IOPS logs.
	if o.WriteLatLog {
		add(!o.DisableLat, o.LatLogFile, Lat)
		add(!o.DisableSlat, o.LatLogFile, Slat)
		add(!o.DisableClat, o.LatLogFile, Clat)
	}
	add(o.WriteHistLog, o.HistLogFile, ClatHist)
	add(o.WriteBWLog, o.BWLogFile, BW)
	add(o.WriteIOPSLog, o.IOPSLogFile, IOPS)
	// The job's share of the store is split evenly among its logs.
	keep := StoredMax
	if len(kinds) > 0 {
		keep = min(keep, StoredJobMax/len(kinds))
	}
	var errs []error
	for i, k := range kinds {
		name := FileName(prefixes[i], k, thread, o.PerJobLogs)
		size := logChunk
		if k == ClatHist {
			size = 2 * histLineMax
			jl.before = [2][]uint64{make([]uint64, hist.HistBuckets), make([]uint64, hist.HistBuckets)}
		}
		lf := &logFile{Log: Log{Kind: k, File: name}, buf: make([]byte, 0, size), keep: keep}
		if toFiles {
			// fio truncates a job's own file and appends to one that
			// jobs share (per_job_logs=0), as its flush_log does.
			flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
			if !o.PerJobLogs {
				flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
			}
			f, err := os.OpenFile(name, flags, 0o644)
			if err != nil {
				errs = append(errs, fmt.Errorf("job %q: log file: %w", o.Name, err))
				continue
			}
			lf.f = f
		}
		jl.files[k] = lf
	}
	if err := errors.Join(errs...); err != nil {
		jl.Close()
		return nil, err
	}
	return jl, nil
}

// Start begins the logs' time at loop time t, the start of the measured
// window (fio's set_epoch_time in reset_all_stats after ramp_time), whose
// Unix time in ms is unixMs.
func (jl *Writer) Start(t, unixMs int64) {
	jl.epoch = t
	if jl.o.LogUnixEpoch {
		jl.alt = unixMs
	}
	jl.avgLast = [nKinds][2]int64{}
	jl.win = [nKinds][2]avgWindow{}
	jl.tickLast = 0
	jl.moved, jl.ios, jl.tickMoved, jl.tickN = [2]uint64{}, [2]uint64{}, [2]uint64{}, [2]uint64{}
	jl.histLast = [2]int64{}
	for d := range jl.before {
		clear(jl.before[d])
	}
}

func (jl *Writer) ms(t int64) int64 { return (t - jl.epoch) / int64(time.Millisecond) }

// entry writes one line as flush_samples formats it; prio is the I/O's
// priority (0 for a window's mean).
func (jl *Writer) entry(lf *logFile, ms int64, val uint64, d int, bs, off uint64, prio uint16) {
	lf.room(128)
	b := lf.buf
	b = strconv.AppendUint(b, uint64(ms+jl.alt), 10)
	b = append(b, ", "...)
	b = strconv.AppendInt(b, int64(val), 10)
	b = append(b, ", "...)
	b = strconv.AppendUint(b, uint64(d), 10)
	b = append(b, ", "...)
	b = strconv.AppendUint(b, bs, 10)
	if jl.o.LogOffset {
		b = append(b, ", "...)
		b = strconv.AppendUint(b, off, 10)
	}
	// log_prio: the whole value as "0x%04x"; else 1 for the real-time
	// class, 0 for any other (ioprio_value_is_class_rt).
	switch {
	case jl.o.LogPrio:
		b = append(b, ", 0x"...)
		for shift := 12; shift >= 0; shift -= 4 {
			b = append(b, "0123456789abcdef"[prio>>shift&0xf])
		}
		b = append(b, '\n')
	case rtClass(prio):
		b = append(b, ", 1\n"...)
	default:
		b = append(b, ", 0\n"...)
	}
	lf.buf = b
	lf.Lines++
}

// sample is fio's add_log_sample: one entry per sample, or with
// log_avg_msec the window's mean (or max) once the window has passed —
// latency logs exactly at its end, bandwidth and IOPS logs up to
// logMsecSlack ms early.
func (jl *Writer) sample(k Kind, ms int64, val uint64, d int, bs, off uint64, prio uint16) {
	lf := jl.files[k]
	if jl.avgMsec == 0 {
		jl.entry(lf, ms, val, d, bs, off, prio)
		return
	}
	jl.win[k][d].add(val)
	last := jl.avgLast[k][d]
	if ms < last {
		return
	}
	if this := ms - last; this < jl.avgMsec {
		inline := k == Slat || k == Clat || k == Lat
		if inline || jl.avgMsec-this > logMsecSlack {
			return
		}
	}
	jl.closeWindow(k, d, ms)
	jl.avgLast[k][d] = ms - ms%jl.avgMsec
}

// closeWindow is fio's __add_stat_to_log: the window's mean, rounded, or
// its max, when it holds any sample.
func (jl *Writer) closeWindow(k Kind, d int, ms int64) {
	w := &jl.win[k][d]
	if w.n > 0 {
		v := uint64(w.mean + 0.50)
		if jl.o.LogMax {
			v = w.max
		}
		jl.entry(jl.files[k], ms, v, d, 0, 0, 0)
	}
	*w = avgWindow{}
}

// Slat logs an I/O's submission latency (fio's add_slat_sample), of
// priority prio.
func (jl *Writer) Slat(t int64, d int, ns uint64, bs uint32, off int64, prio uint16) {
	if jl.files[Slat] != nil {
		jl.sample(Slat, jl.ms(t), ns, d, uint64(bs), uint64(off), prio)
	}
}

// Completed logs a completed I/O as fio's account_io_completion does: lat,
// clat and the histogram window, then per-I/O bandwidth and IOPS; or,
// with log_avg_msec, their rates once a window has passed. clat is 0 when
// it was not measured; lat < 0 when lat was not. prio is the I/O's
// priority.
func (jl *Writer) Completed(t int64, d int, clat uint64, lat int64, moved uint32, off int64, clats *hist.Histogram, haveClat bool, prio uint16) {
	ms := jl.latencies(t, d, clat, lat, moved, off, clats, haveClat, prio)
	jl.moved[d] += uint64(moved)
	jl.ios[d]++
	if jl.avgMsec == 0 {
		jl.perIO(ms, d, clat, moved, off, prio)
		return
	}
	if ms-jl.tickLast >= jl.avgMsec-logMsecSlack {
		jl.tick(ms)
	}
}

// Verified logs a verify phase's read as fio does one of its io_pieces
// (IO_U_F_VER_LIST): in the latency logs, the histogram and the per-I/O
// bandwidth and IOPS logs, but not in the averaged rates, which count
// only the job's own I/O (this_io_bytes).
func (jl *Writer) Verified(t int64, clat uint64, lat int64, moved uint32, off int64, clats *hist.Histogram, prio uint16) {
	ms := jl.latencies(t, read, clat, lat, moved, off, clats, true, prio)
	if jl.avgMsec == 0 {
		jl.perIO(ms, read, clat, moved, off, prio)
	}
}

// latencies logs an I/O's lat and clat and its histogram window; it
// returns the I/O's time in the logs.
func (jl *Writer) latencies(t int64, d int, clat uint64, lat int64, moved uint32, off int64, clats *hist.Histogram, haveClat bool, prio uint16) int64 {
	ms := jl.ms(t)
	bs, o := uint64(moved), uint64(off)
	if lat >= 0 && jl.files[Lat] != nil {
		jl.sample(Lat, ms, uint64(lat), d, bs, o, prio)
	}
	if haveClat {
		if jl.files[Clat] != nil {
			jl.sample(Clat, ms, clat, d, bs, o, prio)
		}
		if jl.files[ClatHist] != nil && jl.histMsec > 0 {
			jl.histWindow(ms, d, bs, clats)
		}
	}
	return ms
}

// perIO writes an I/O's own bandwidth and IOPS lines, without
// log_avg_msec.
func (jl *Writer) perIO(ms int64, d int, clat uint64, moved uint32, off int64, prio uint16) {
	bs, o := uint64(moved), uint64(off)
	if lf := jl.files[BW]; lf != nil && !jl.noBW {
		var rate uint64 // fio's add_bw_sample: bytes × 10^6 / clat in ns
		if clat > 0 && !jl.gtodReduce {
			rate = uint64(moved) * 1000000 / clat
		}
		jl.entry(lf, ms, rate, d, bs, o, prio)
	}
	if lf := jl.files[IOPS]; lf != nil && !jl.gtodReduce {
		jl.entry(lf, ms, 1, d, bs, o, prio)
	}
}

// tick takes each direction's bandwidth (KiB/s) and IOPS since the last
// tick, as fio's __add_samples does for the averaged logs.
func (jl *Writer) tick(ms int64) {
	spent := ms - jl.tickLast
	for d := range 2 {
		if delta := jl.moved[d] - jl.tickMoved[d]; delta > 0 && jl.files[BW] != nil {
			var rate uint64
			if spent > 0 {
				rate = delta * 1000 / uint64(spent) / 1024
			}
			jl.sample(BW, ms, rate, d, 0, 0, 0)
		}
		if delta := jl.ios[d] - jl.tickN[d]; delta > 0 && jl.files[IOPS] != nil {
			var rate uint64
			if spent > 0 {
				rate = delta * 1000 / uint64(spent)
			}
			jl.sample(IOPS, ms, rate, d, 0, 0, 0)
		}
		jl.tickMoved[d], jl.tickN[d] = jl.moved[d], jl.ios[d]
	}
	jl.tickLast = ms
}

// histWindow is add_clat_sample's histogram log: once log_hist_msec has
// passed, a line of how many clats fell in each bucket (in groups of
// 2^log_hist_coarseness) since the last line.
func (jl *Writer) histWindow(ms int64, d int, bs uint64, clats *hist.Histogram) {
	if jl.histLast[d] == 0 {
		jl.histLast[d] = ms
	}
	this := ms - jl.histLast[d]
	if this < jl.histMsec {
		return
	}
	lf := jl.files[ClatHist]
	lf.room(histLineMax)
	b := lf.buf
	b = strconv.AppendUint(b, uint64(ms+jl.alt), 10)
	b = append(b, ", "...)
	b = strconv.AppendUint(b, uint64(d), 10)
	b = append(b, ", "...)
	b = strconv.AppendUint(b, bs, 10)
	before := jl.before[d]
	for i := 0; i < hist.HistBuckets; i += jl.stride {
		var sum uint64
		for k := i; k < i+jl.stride; k++ {
			sum += clats.Counts[k] - before[k]
		}
		b = append(b, ", "...)
		b = strconv.AppendUint(b, sum, 10)
	}
	b = append(b, '\n')
	lf.buf = b
	lf.Lines++
	copy(before, clats.Counts[:])
	jl.histLast[d] = ms - (this - jl.histMsec)
}

// Finish closes the latency logs' open windows at loop time t (fio's
// finalize_logs), writes out what is left and closes the files. It
// returns the logs as kept with the result.
func (jl *Writer) Finish(t int64) ([]Log, error) {
	if jl.avgMsec > 0 {
		ms := jl.ms(t)
		for _, k := range []Kind{Clat, Slat, Lat, BW, IOPS} {
			if jl.files[k] != nil {
				for d := range 2 {
					jl.closeWindow(k, d, ms)
				}
			}
		}
	}
	return jl.Close()
}

// Close writes out what is left and closes the files, without closing
// the averaging windows as Finish does (a job that never ran: its files,
// still empty). It returns the logs as kept with the result.
func (jl *Writer) Close() ([]Log, error) {
	var out []Log
	var errs []error
	for _, lf := range jl.files {
		if lf == nil {
			continue
		}
		lf.flush()
		if lf.f != nil {
			if err := lf.f.Close(); lf.err == nil {
				lf.err = err
			}
			lf.f = nil
		}
		if lf.err != nil {
			errs = append(errs, fmt.Errorf("log %s: %w", lf.File, lf.err))
		}
		out = append(out, lf.Log)
	}
	return out, errors.Join(errs...)
}
