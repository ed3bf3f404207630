package joblog

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench/hist"
)

// logJob is a job's options with logs named under dir.
func logJob(dir string, o Options) *Options {
	o.Name = "j"
	o.PerJobLogs = true
	if o.BWLogFile == "" {
		o.BWLogFile = filepath.Join(dir, "p")
	}
	o.IOPSLogFile, o.LatLogFile, o.HistLogFile = o.BWLogFile, o.BWLogFile, o.BWLogFile
	return &o
}

const ms = int64(time.Millisecond)

// The directions and I/O priorities as bench passes them: fio's ddirs,
// and ioprio values of class<<13 | level (bench's IOPrioValue).
const write = 1

const (
	classRT   = 1
	classBE   = 2
	classIdle = 3
)

func ioprio(class, level int) uint16 { return uint16(class<<13 | level) }

// The lines are fio 3.33's, formatted by flush_samples from the samples
// stat.c would take; the expected texts follow fio's code by hand.
func TestJobLogFormat(t *testing.T) {
	var h hist.Histogram
	cases := []struct {
		name string
		o    Options
		feed func(jl *Writer)
		kind Kind
		want string
	}{
		{"per-I/O bandwidth", Options{WriteBWLog: true}, func(jl *Writer) {
			jl.Completed(3*ms+5, read, 200000, 250000, 4096, 8192, &h, true, 0)
			jl.Completed(7*ms, write, 0, 1000, 512, 0, &h, true, 0)
		}, BW, "3, 20480, 0, 4096, 0\n7, 0, 1, 512, 0\n"},
		{"per-I/O IOPS with offsets", Options{WriteIOPSLog: true, LogOffset: true}, func(jl *Writer) {
			jl.Completed(1*ms, write, 5, 9, 4096, 1<<40, &h, true, 0)
		}, IOPS, "1, 1, 1, 4096, 1099511627776, 0\n"},
		{"log_prio writes the value in hex", Options{WriteLatLog: true, LogPrio: true}, func(jl *Writer) {
			jl.Completed(2*ms, read, 5, 9, 4096, 0, &h, true, 0)
			jl.Completed(3*ms, read, 5, 9, 4096, 0, &h, true, ioprio(classIdle, 7))
		}, Lat, "2, 9, 0, 4096, 0x0000\n3, 9, 0, 4096, 0x6007\n"},
		// Without log_prio: 1 for the real-time class, 0 for the others.
		{"priority class", Options{WriteLatLog: true}, func(jl *Writer) {
			jl.Completed(2*ms, read, 5, 9, 4096, 0, &h, true, ioprio(classRT, 3))
			jl.Completed(3*ms, read, 5, 9, 4096, 0, &h, true, ioprio(classBE, 0))
		}, Lat, "2, 9, 0, 4096, 1\n3, 9, 0, 4096, 0\n"},
		{"slat", Options{WriteLatLog: true, LogOffset: true, LogPrio: true}, func(jl *Writer) {
			jl.Slat(0, write, 1234, 65536, 4096, ioprio(classRT, 0))
		}, Slat, "0, 1234, 1, 65536, 4096, 0x2000\n"},
		// Averaged latency: a window closes at the first sample at or past
		// its end with the mean rounded (fio's mean + 0.5), bs and offset
		// 0; the next starts at the end rounded down to log_avg_msec.
		{"averaged clat", Options{WriteLatLog: true, LogAvgMsec: 100}, func(jl *Writer) {
			jl.Completed(10*ms, read, 100, 0, 4096, 0, &h, true, 0)
			jl.Completed(50*ms, read, 201, 0, 4096, 0, &h, true, 0)
			jl.Completed(99*ms, write, 7, 0, 4096, 0, &h, true, 0)
			jl.Completed(130*ms, read, 300, 0, 4096, 0, &h, true, 0) // closes read's [0, 100): mean(100, 201, 300) = 200.33
			jl.Completed(150*ms, read, 1, 0, 4096, 0, &h, true, 0)   // read's window [100, 200) open
			jl.Finish(160 * ms)                                      // closes both
		}, Clat, "130, 200, 0, 0, 0\n160, 1, 0, 0, 0\n160, 7, 1, 0, 0\n"},
		{"log_max_value", Options{WriteLatLog: true, LogAvgMsec: 100, LogMax: true}, func(jl *Writer) {
			jl.Completed(10*ms, read, 100, 0, 4096, 0, &h, true, 0)
			jl.Completed(120*ms, read, 50, 0, 4096, 0, &h, true, 0)
		}, Clat, "120, 100, 0, 0, 0\n"},
		// Averaged bandwidth: a rate per direction every log_avg_msec (up
		// to 1 ms early), in KiB/s, as fio's helper thread takes them.
		{"averaged bandwidth", Options{WriteBWLog: true, LogAvgMsec: 100}, func(jl *Writer) {
			for i := range int64(10) {
				jl.Completed(i*10*ms, read, 5, 9, 4096, 0, &h, true, 0)
			}
			jl.Completed(99*ms, read, 5, 9, 4096, 0, &h, true, 0)   // 11 I/Os of 4 KiB in 99 ms
			jl.Completed(150*ms, write, 5, 9, 1024, 0, &h, true, 0) // not yet a window
		}, BW, "99, 444, 0, 0, 0\n"},
		{"averaged IOPS", Options{WriteIOPSLog: true, LogAvgMsec: 50}, func(jl *Writer) {
			jl.Completed(20*ms, write, 5, 9, 4096, 0, &h, true, 0)
			jl.Completed(49*ms, write, 5, 9, 4096, 0, &h, true, 0)
			jl.Completed(60*ms, read, 5, 9, 4096, 0, &h, true, 0)
			jl.Completed(100*ms, read, 5, 9, 4096, 0, &h, true, 0)
		}, IOPS, "49, 40, 1, 0, 0\n100, 39, 0, 0, 0\n"},
		// The verify phase's reads (fio's io_pieces): per-I/O lines like
		// the job's own, no part of the averaged rates, which count only
		// this_io_bytes.
		{"verify reads, per I/O", Options{WriteIOPSLog: true}, func(jl *Writer) {
			jl.Completed(20*ms, write, 5, 9, 4096, 0, &h, true, 0)
			jl.Verified(30*ms, 5, 9, 4096, 0, &h, 0)
		}, IOPS, "20, 1, 1, 4096, 0\n30, 1, 0, 4096, 0\n"},
		{"verify reads, averaged IOPS", Options{WriteIOPSLog: true, LogAvgMsec: 50}, func(jl *Writer) {
			jl.Completed(20*ms, write, 5, 9, 4096, 0, &h, true, 0)
			jl.Completed(49*ms, write, 5, 9, 4096, 0, &h, true, 0)
			for i := range int64(10) {
				jl.Verified((60+10*i)*ms, 5, 9, 4096, 0, &h, 0)
			}
		}, IOPS, "49, 40, 1, 0, 0\n"},
		{"verify reads, averaged clat", Options{WriteLatLog: true, LogAvgMsec: 50}, func(jl *Writer) {
			jl.Completed(20*ms, write, 7, 9, 4096, 0, &h, true, 0)
			jl.Verified(30*ms, 100, 120, 4096, 0, &h, 0)
			jl.Verified(60*ms, 300, 320, 4096, 0, &h, 0)
		}, Clat, "60, 200, 0, 0, 0\n0, 7, 1, 0, 0\n"}, // the write's window closes at finish
		{"unix epoch", Options{WriteIOPSLog: true, LogUnixEpoch: true}, func(jl *Writer) {
			jl.alt = 1700000000000
			jl.Completed(5*ms, read, 5, 9, 4096, 0, &h, true, 0)
		}, IOPS, "1700000000005, 1, 0, 4096, 0\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			j := logJob(dir, c.o)
			jl, err := Open(j, 3, true)
			if err != nil {
				t.Fatal(err)
			}
			jl.Start(0, time.Now().UnixMilli())
			c.feed(jl)
			logs, err := jl.Finish(0)
			if err != nil {
				t.Fatal(err)
			}
			name := FileName(filepath.Join(dir, "p"), c.kind, 3, j.PerJobLogs)
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
	j := logJob(dir, Options{WriteHistLog: true, LogHistMsec: 10, LogHistCoarseness: 6})
	jl, err := Open(j, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	jl.Start(0, time.Now().UnixMilli())
	var h hist.Histogram
	done := func(at int64, clat uint64) {
		h.Add(clat)
		jl.Completed(at, read, clat, 0, 4096, 0, &h, true, 0)
	}
	done(1*ms, 100)    // the window starts here (fio's hist_last)
	done(5*ms, 100)    // bucket 100: column 1 of 29
	done(11*ms, 5000)  // 10 ms passed: a line with all three
	done(12*ms, 100)   // the next window began at 11 ms
	done(25*ms, 1<<40) // the last bucket
	if _, err := jl.Finish(30 * ms); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(FileName(filepath.Join(dir, "p"), ClatHist, 1, true))
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
		k      Kind
		n      int
		per    bool
		want   string
	}{
		{"job", BW, 1, true, "job_bw.1.log"},
		{"/tmp/x", ClatHist, 12, true, "/tmp/x_clat_hist.12.log"},
		{"job", Slat, 3, false, "job_slat.log"},
	} {
		if got := FileName(c.prefix, c.k, c.n, c.per); got != c.want {
			t.Errorf("FileName(%q, %v, %d, %v) = %q, want %q", c.prefix, c.k, c.n, c.per, got, c.want)
		}
	}
}

// What is kept with the result is bounded, in whole lines, while the file
// gets everything.
func TestJobLogKeptBounded(t *testing.T) {
	dir := t.TempDir()
	j := logJob(dir, Options{WriteIOPSLog: true, LogOffset: true})
	jl, err := Open(j, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	jl.Start(0, time.Now().UnixMilli())
	var h hist.Histogram
	n := StoredMax/20 + 1000 // more than fits: each line is over 20 bytes
	for i := range n {
		jl.Completed(int64(i)*ms, read, 5, 9, 4096, int64(i)*4096, &h, true, 0)
	}
	logs, err := jl.Finish(int64(n) * ms)
	if err != nil {
		t.Fatal(err)
	}
	l := logs[0]
	if !l.Truncated || len(l.Data) > StoredMax || len(l.Data) == 0 || l.Data[len(l.Data)-1] != '\n' || l.Lines != int64(n) {
		t.Errorf("kept %d bytes (truncated %v, %d lines), want at most %d in whole lines of %d", len(l.Data), l.Truncated, l.Lines, StoredMax, n)
	}
	b, _ := os.ReadFile(FileName(filepath.Join(dir, "p"), IOPS, 1, true))
	if got := strings.Count(string(b), "\n"); got != n {
		t.Errorf("the file has %d lines, want %d", got, n)
	}
	// Without files (the dashboard), only the kept copy.
	jl, err = Open(logJob(t.TempDir(), Options{WriteIOPSLog: true}), 1, false)
	if err != nil || jl.files[IOPS].f != nil {
		t.Fatalf("toFiles=false opened a file (%v)", err)
	}
}
