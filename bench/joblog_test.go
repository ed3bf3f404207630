package bench

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench/hist"
)

// logJob is a job with logs named under dir.
func logJob(dir string, o LogOptions) *Job {
	j := NewJob()
	j.Name = "j"
	o.PerJobLogs = true
	j.LogOptions = o
	if j.BWLogFile == "" {
		j.BWLogFile = filepath.Join(dir, "p")
	}
	j.IOPSLogFile, j.LatLogFile, j.HistLogFile = j.BWLogFile, j.BWLogFile, j.BWLogFile
	return &j
}

const ms = int64(time.Millisecond)

// The lines are fio 3.33's, formatted by flush_samples from the samples
// stat.c would take; the expected texts follow fio's code by hand.
func TestJobLogFormat(t *testing.T) {
	var h hist.Histogram
	cases := []struct {
		name string
		o    LogOptions
		feed func(jl *jobLogs)
		kind LogKind
		want string
	}{
		{"per-I/O bandwidth", LogOptions{WriteBWLog: true}, func(jl *jobLogs) {
			jl.completed(3*ms+5, Read, 200000, 250000, 4096, 8192, &h, true, 0)
			jl.completed(7*ms, Write, 0, 1000, 512, 0, &h, true, 0)
		}, LogBW, "3, 20480, 0, 4096, 0\n7, 0, 1, 512, 0\n"},
		{"per-I/O IOPS with offsets", LogOptions{WriteIOPSLog: true, LogOffset: true}, func(jl *jobLogs) {
			jl.completed(1*ms, Write, 5, 9, 4096, 1<<40, &h, true, 0)
		}, LogIOPS, "1, 1, 1, 4096, 1099511627776, 0\n"},
		{"log_prio writes the value in hex", LogOptions{WriteLatLog: true, LogPrio: true}, func(jl *jobLogs) {
			jl.completed(2*ms, Read, 5, 9, 4096, 0, &h, true, 0)
			jl.completed(3*ms, Read, 5, 9, 4096, 0, &h, true, IOPrioValue(IOPrioClassIdle, 7))
		}, LogLat, "2, 9, 0, 4096, 0x0000\n3, 9, 0, 4096, 0x6007\n"},
		// Without log_prio: 1 for the real-time class, 0 for the others.
		{"priority class", LogOptions{WriteLatLog: true}, func(jl *jobLogs) {
			jl.completed(2*ms, Read, 5, 9, 4096, 0, &h, true, IOPrioValue(IOPrioClassRT, 3))
			jl.completed(3*ms, Read, 5, 9, 4096, 0, &h, true, IOPrioValue(IOPrioClassBE, 0))
		}, LogLat, "2, 9, 0, 4096, 1\n3, 9, 0, 4096, 0\n"},
		{"slat", LogOptions{WriteLatLog: true, LogOffset: true, LogPrio: true}, func(jl *jobLogs) {
			jl.slat(0, Write, 1234, 65536, 4096, IOPrioValue(IOPrioClassRT, 0))
		}, LogSlat, "0, 1234, 1, 65536, 4096, 0x2000\n"},
		// Averaged latency: a window closes at the first sample at or past
		// its end with the mean rounded (fio's mean + 0.5), bs and offset
		// 0; the next starts at the end rounded down to log_avg_msec.
		{"averaged clat", LogOptions{WriteLatLog: true, LogAvgMsec: 100}, func(jl *jobLogs) {
			jl.completed(10*ms, Read, 100, 0, 4096, 0, &h, true, 0)
			jl.completed(50*ms, Read, 201, 0, 4096, 0, &h, true, 0)
			jl.completed(99*ms, Write, 7, 0, 4096, 0, &h, true, 0)
			jl.completed(130*ms, Read, 300, 0, 4096, 0, &h, true, 0) // closes read's [0, 100): mean(100, 201, 300) = 200.33
			jl.completed(150*ms, Read, 1, 0, 4096, 0, &h, true, 0)   // read's window [100, 200) open
			jl.finish(160 * ms)                                      // closes both
		}, LogClat, "130, 200, 0, 0, 0\n160, 1, 0, 0, 0\n160, 7, 1, 0, 0\n"},
		{"log_max_value", LogOptions{WriteLatLog: true, LogAvgMsec: 100, LogMax: true}, func(jl *jobLogs) {
			jl.completed(10*ms, Read, 100, 0, 4096, 0, &h, true, 0)
			jl.completed(120*ms, Read, 50, 0, 4096, 0, &h, true, 0)
		}, LogClat, "120, 100, 0, 0, 0\n"},
		// Averaged bandwidth: a rate per direction every log_avg_msec (up
		// to 1 ms early), in KiB/s, as fio's helper thread takes them.
		{"averaged bandwidth", LogOptions{WriteBWLog: true, LogAvgMsec: 100}, func(jl *jobLogs) {
			for i := range int64(10) {
				jl.completed(i*10*ms, Read, 5, 9, 4096, 0, &h, true, 0)
			}
			jl.completed(99*ms, Read, 5, 9, 4096, 0, &h, true, 0)   // 11 I/Os of 4 KiB in 99 ms
			jl.completed(150*ms, Write, 5, 9, 1024, 0, &h, true, 0) // not yet a window
		}, LogBW, "99, 444, 0, 0, 0\n"},
		{"averaged IOPS", LogOptions{WriteIOPSLog: true, LogAvgMsec: 50}, func(jl *jobLogs) {
			jl.completed(20*ms, Write, 5, 9, 4096, 0, &h, true, 0)
			jl.completed(49*ms, Write, 5, 9, 4096, 0, &h, true, 0)
			jl.completed(60*ms, Read, 5, 9, 4096, 0, &h, true, 0)
			jl.completed(100*ms, Read, 5, 9, 4096, 0, &h, true, 0)
		}, LogIOPS, "49, 40, 1, 0, 0\n100, 39, 0, 0, 0\n"},
		// The verify phase's reads (fio's io_pieces): per-I/O lines like
		// the job's own, no part of the averaged rates, which count only
		// this_io_bytes.
		{"verify reads, per I/O", LogOptions{WriteIOPSLog: true}, func(jl *jobLogs) {
			jl.completed(20*ms, Write, 5, 9, 4096, 0, &h, true, 0)
			jl.verified(30*ms, 5, 9, 4096, 0, &h, 0)
		}, LogIOPS, "20, 1, 1, 4096, 0\n30, 1, 0, 4096, 0\n"},
		{"verify reads, averaged IOPS", LogOptions{WriteIOPSLog: true, LogAvgMsec: 50}, func(jl *jobLogs) {
			jl.completed(20*ms, Write, 5, 9, 4096, 0, &h, true, 0)
			jl.completed(49*ms, Write, 5, 9, 4096, 0, &h, true, 0)
			for i := range int64(10) {
				jl.verified((60+10*i)*ms, 5, 9, 4096, 0, &h, 0)
			}
		}, LogIOPS, "49, 40, 1, 0, 0\n"},
		{"verify reads, averaged clat", LogOptions{WriteLatLog: true, LogAvgMsec: 50}, func(jl *jobLogs) {
			jl.completed(20*ms, Write, 7, 9, 4096, 0, &h, true, 0)
			jl.verified(30*ms, 100, 120, 4096, 0, &h, 0)
			jl.verified(60*ms, 300, 320, 4096, 0, &h, 0)
		}, LogClat, "60, 200, 0, 0, 0\n0, 7, 1, 0, 0\n"}, // the write's window closes at finish
		{"unix epoch", LogOptions{WriteIOPSLog: true, LogUnixEpoch: true}, func(jl *jobLogs) {
			jl.alt = 1700000000000
			jl.completed(5*ms, Read, 5, 9, 4096, 0, &h, true, 0)
		}, LogIOPS, "1700000000005, 1, 0, 4096, 0\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			j := logJob(dir, c.o)
			jl, err := openJobLogs(j, 3, true)
			if err != nil {
				t.Fatal(err)
			}
			jl.start(0, time.Now().UnixMilli())
			c.feed(jl)
			logs, err := jl.finish(0)
			if err != nil {
				t.Fatal(err)
			}
			name := LogFileName(filepath.Join(dir, "p"), c.kind, 3, j.PerJobLogs)
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != c.want {
				t.Errorf("%s:\n%s\nwant:\n%s", filepath.Base(name), b, c.want)
			}
			for _, l := range logs {
				if l.Kind == c.kind && (string(l.Data) != c.want || l.Lines != int64(strings.Count(c.want, "\n"))) {
					t.Errorf("kept with the result: %q (%d lines), want the file's text", l.Data, l.Lines)
				}
			}
		})
	}
}

// The histogram log: each line the counts since the line before, in
// buckets of 2^coarseness, once log_hist_msec has passed since the last.
func TestJobLogHistogram(t *testing.T) {
	dir := t.TempDir()
	j := logJob(dir, LogOptions{WriteHistLog: true, LogHistMsec: 10, LogHistCoarseness: 6})
	jl, err := openJobLogs(j, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	jl.start(0, time.Now().UnixMilli())
	var h hist.Histogram
	done := func(at int64, clat uint64) {
		h.Add(clat)
		jl.completed(at, Read, clat, 0, 4096, 0, &h, true, 0)
	}
	done(1*ms, 100)    // the window starts here (fio's hist_last)
	done(5*ms, 100)    // bucket 100: column 1 of 29
	done(11*ms, 5000)  // 10 ms passed: a line with all three
	done(12*ms, 100)   // the next window began at 11 ms
	done(25*ms, 1<<40) // the last bucket
	if _, err := jl.finish(30 * ms); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(LogFileName(filepath.Join(dir, "p"), LogClatHist, 1, true))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	cols := func(counts map[int]int) string {
		c := make([]string, hist.HistBuckets>>6)
		for i := range c {
			c[i] = "0"
		}
		for i, n := range counts {
			c[i] = strconv.Itoa(n)
		}
		return strings.Join(c, ", ")
	}
	g5000 := hist.BucketIndex(5000) >> 6
	want := []string{
		"11, 0, 4096, " + cols(map[int]int{1: 2, g5000: 1}),
		"25, 0, 4096, " + cols(map[int]int{1: 1, 28: 1}),
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), b)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d:\n%s\nwant\n%s", i+1, lines[i], want[i])
		}
	}
}

// Names: fio's gen_log_name.
func TestLogFileName(t *testing.T) {
	for _, c := range []struct {
		prefix string
		k      LogKind
		n      int
		per    bool
		want   string
	}{
		{"job", LogBW, 1, true, "job_bw.1.log"},
		{"/tmp/x", LogClatHist, 12, true, "/tmp/x_clat_hist.12.log"},
		{"job", LogSlat, 3, false, "job_slat.log"},
	} {
		if got := LogFileName(c.prefix, c.k, c.n, c.per); got != c.want {
			t.Errorf("LogFileName(%q, %v, %d, %v) = %q, want %q", c.prefix, c.k, c.n, c.per, got, c.want)
		}
	}
}

// What is kept with the result is bounded, in whole lines, while the file
// gets everything.
func TestJobLogKeptBounded(t *testing.T) {
	dir := t.TempDir()
	j := logJob(dir, LogOptions{WriteIOPSLog: true, LogOffset: true})
	jl, err := openJobLogs(j, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	jl.start(0, time.Now().UnixMilli())
	var h hist.Histogram
	n := StoredLogMax/20 + 1000 // more than fits: each line is over 20 bytes
	for i := range n {
		jl.completed(int64(i)*ms, Read, 5, 9, 4096, int64(i)*4096, &h, true, 0)
	}
	logs, err := jl.finish(int64(n) * ms)
	if err != nil {
		t.Fatal(err)
	}
	l := logs[0]
	if !l.Truncated || len(l.Data) > StoredLogMax || len(l.Data) == 0 || l.Data[len(l.Data)-1] != '\n' || l.Lines != int64(n) {
		t.Errorf("kept %d bytes (truncated %v, %d lines), want at most %d in whole lines of %d", len(l.Data), l.Truncated, l.Lines, StoredLogMax, n)
	}
	b, _ := os.ReadFile(LogFileName(filepath.Join(dir, "p"), LogIOPS, 1, true))
	if got := strings.Count(string(b), "\n"); got != n {
		t.Errorf("the file has %d lines, want %d", got, n)
	}
	// Without files (the dashboard), only the kept copy.
	jl, err = openJobLogs(logJob(t.TempDir(), LogOptions{WriteIOPSLog: true}), 1, false)
	if err != nil || jl.files[LogIOPS].f != nil {
		t.Fatalf("toFiles=false opened a file (%v)", err)
	}
}
