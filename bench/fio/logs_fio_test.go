package fio

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/system"
)

// fio's log files, side by side with fio 3.33: the same job gives the same
// files, the same number of lines in each (per-I/O logs) or about the same
// (averaged ones), the same columns, and Debian's fio package reads them.

// runLogs runs args with iolab in this process, log files allowed, and
// returns the result.
func runLogs(t *testing.T, args ...string) *bench.Result {
	t.Helper()
	cfg, err := ParseArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&bench.Runner{Sys: system.FS{}, LogFiles: true}).Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// runFioLogs runs args with fio.
func runFioLogs(t *testing.T, args ...string) {
	t.Helper()
	fio, err := exec.LookPath("fio")
	if err != nil {
		t.Fatal("fio is not installed (the test command installs it)")
	}
	if b, err := exec.Command(fio, append(args, "--output-format=terse", "--output=/dev/null")...).CombinedOutput(); err != nil {
		t.Fatalf("fio %v: %v\n%s", args, err, b)
	}
}

// logLines reads a log file's lines, each split into its columns.
func logLines(t *testing.T, path string) [][]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return logColumns(b)
}

// logColumns splits a log's text into lines, each split into its
// columns.
func logColumns(b []byte) [][]string {
	var out [][]string
	for l := range strings.SplitSeq(strings.TrimSuffix(string(b), "\n"), "\n") {
		if l != "" {
			out = append(out, strings.Split(l, ", "))
		}
	}
	return out
}

// logNames are the names of the log files in dir.
func logNames(t *testing.T, dir string) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	slices.Sort(m)
	return m
}

// offsetPrios are a log's offset and priority columns, line by line,
// sorted.
func offsetPrios(lines [][]string) []string {
	var out []string
	for _, l := range lines {
		out = append(out, l[4]+" "+l[5])
	}
	slices.Sort(out)
	return out
}

// column is column c of every line, sorted.
func column(lines [][]string, c int) []string {
	var out []string
	for _, l := range lines {
		out = append(out, l[c])
	}
	slices.Sort(out)
	return out
}

// A size-bound job logging every I/O: the same files, and in each the
// same number of lines with the same columns, block sizes, directions
// and offsets as fio's.
func TestLogsPerIOLikeFio(t *testing.T) {
	for _, c := range []struct {
		name string
		args []string
	}{
		{"libaio randread, 2 jobs, offsets", []string{"--ioengine=libaio", "--iodepth=4", "--rw=randread", "--numjobs=2", "--log_offset=1"}},
		{"psync write, shared files, log_prio", []string{"--ioengine=psync", "--rw=write", "--bs=16k", "--numjobs=2", "--per_job_logs=0", "--log_prio=1"}},
		{"io_uring randrw", []string{"--ioengine=io_uring", "--iodepth=8", "--rw=randrw", "--log_offset=1"}},
		// Each I/O's own priority: the same I/Os carry cmdprio's as fio's.
		{"libaio cmdprio, offsets, log_prio", []string{"--ioengine=libaio", "--iodepth=4", "--rw=randread", "--prioclass=3", "--cmdprio_percentage=40", "--log_offset=1", "--log_prio=1"}},
		{"io_uring cmdprio", []string{"--ioengine=io_uring", "--iodepth=4", "--rw=randread", "--cmdprio_percentage=40", "--log_offset=1"}},
		// The verify phase's reads are the job's reads in fio's logs.
		{"libaio randwrite, then verify", []string{"--ioengine=libaio", "--iodepth=4", "--rw=randwrite", "--verify=crc32c",
			"--verify_state_save=0", "--log_offset=1"}},
		// gtod_reduce: no latency logs at all, empty bandwidth and IOPS logs.
		{"gtod_reduce", []string{"--ioengine=psync", "--rw=read", "--gtod_reduce=1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			target := file(t, 1<<20)
			fioDir, ourDir := t.TempDir(), t.TempDir()
			args := func(dir string) []string {
				p := filepath.Join(dir, "p")
				return append([]string{"--name=j", "--filename=" + target, "--size=1m",
					"--write_bw_log=" + p, "--write_iops_log=" + p, "--write_lat_log=" + p}, c.args...)
			}
			runFioLogs(t, args(fioDir)...)
			runLogs(t, args(ourDir)...)
			names := logNames(t, fioDir)
			if got := logNames(t, ourDir); !slices.Equal(got, names) || len(names) == 0 {
				t.Fatalf("iolab wrote %v, fio %v", got, names)
			}
			for _, n := range names {
				theirs, ours := logLines(t, filepath.Join(fioDir, n)), logLines(t, filepath.Join(ourDir, n))
				if len(ours) != len(theirs) {
					t.Errorf("%s: %d lines, fio's %d", n, len(ours), len(theirs))
					continue
				}
				if len(ours) == 0 {
					continue // psync's slat: fio measures none for a sync engine
				}
				if w, g := len(theirs[0]), len(ours[0]); g != w {
					t.Errorf("%s: %d columns, fio's %d (%q vs %q)", n, g, w, ours[0], theirs[0])
					continue
				}
				for _, col := range []int{3, len(ours[0]) - 1} { // bs, priority
					if g, w := column(ours, col), column(theirs, col); !slices.Equal(g, w) {
						t.Errorf("%s: column %d differs from fio's: %v… vs %v…", n, col+1, g[:3], w[:3])
					}
				}
				// A mixed job's directions come from the rwmix draw, which
				// is not fio's sequence yet (its totals differ from fio's too).
				if !strings.Contains(c.name, "randrw") && !slices.Equal(column(ours, 2), column(theirs, 2)) {
					t.Errorf("%s: directions differ from fio's", n)
				}
				if len(ours[0]) == 6 && !slices.Equal(column(ours, 4), column(theirs, 4)) {
					t.Errorf("%s: offsets differ from fio's", n)
				}
				if len(ours[0]) == 6 && strings.Contains(c.name, "cmdprio") && !slices.Equal(offsetPrios(ours), offsetPrios(theirs)) {
					t.Errorf("%s: other offsets carry cmdprio's priority than fio's", n)
				}
			}
		})
	}
}

// A runtime-bound job averaging over 100 ms: about as many lines as fio
// writes (the windows close on fio's helper thread's ticks, iolab's on
// completions), with the same columns; log_unix_epoch times are now.
func TestLogsAveragedLikeFio(t *testing.T) {
	target := file(t, 4<<20)
	fioDir, ourDir := t.TempDir(), t.TempDir()
	args := func(dir string) []string {
		p := filepath.Join(dir, "p")
		return []string{"--name=j", "--filename=" + target, "--ioengine=psync", "--rw=randrw", "--time_based", "--runtime=1s",
			"--log_avg_msec=100", "--log_unix_epoch=1", "--write_bw_log=" + p, "--write_iops_log=" + p, "--write_lat_log=" + p}
	}
	before := time.Now().UnixMilli()
	runFioLogs(t, args(fioDir)...)
	runLogs(t, args(ourDir)...)
	after := time.Now().UnixMilli()
	names := logNames(t, fioDir)
	if got := logNames(t, ourDir); !slices.Equal(got, names) {
		t.Fatalf("iolab wrote %v, fio %v", got, names)
	}
	for _, n := range names {
		theirs, ours := logLines(t, filepath.Join(fioDir, n)), logLines(t, filepath.Join(ourDir, n))
		if n == "p_slat.1.log" {
			if len(ours)+len(theirs) != 0 {
				t.Errorf("%s: %d lines, fio's %d; psync has no slat", n, len(ours), len(theirs))
			}
			continue
		}
		// 1 s in 100 ms windows, a line per direction: about 20.
		if d := math.Abs(float64(len(ours) - len(theirs))); d > max(4, 0.25*float64(len(theirs))) || len(ours) < 10 {
			t.Errorf("%s: %d lines, fio's %d", n, len(ours), len(theirs))
		}
		for _, l := range ours {
			at, _ := strconv.ParseInt(l[0], 10, 64)
			if len(l) != len(theirs[0]) || at < before || at > after || l[3] != "0" {
				t.Errorf("%s: line %q; want fio's %d columns, a Unix time in ms within the run, bs 0 (fio's %q)", n, l, len(theirs[0]), theirs[0])
				break
			}
		}
	}
}

// Debian's fio2gnuplot reads iolab's bandwidth, IOPS and latency logs:
// its statistics over them are those of the values logged after time 0
// (fio2gnuplot skips time 0).
func TestLogsReadByFio2gnuplot(t *testing.T) {
	script, err := exec.LookPath("fio2gnuplot")
	if err != nil {
		t.Fatal("fio2gnuplot is not installed (Debian's fio package has it; the test command installs it)")
	}
	target := file(t, 4<<20)
	dir := t.TempDir()
	runLogs(t, "--filename="+target, "--ioengine=psync", "--rw=randread", "--time_based", "--runtime=300ms",
		"--name=each", "--write_bw_log="+filepath.Join(dir, "each"), "--write_iops_log="+filepath.Join(dir, "each"), "--write_lat_log="+filepath.Join(dir, "each"),
		"--name=avg", "--log_avg_msec=50", "--write_bw_log="+filepath.Join(dir, "avg"), "--write_iops_log="+filepath.Join(dir, "avg"))
	for _, n := range []string{"each_bw.1.log", "each_iops.1.log", "each_clat.1.log", "each_lat.1.log", "avg_bw.2.log", "avg_iops.2.log"} {
		var sum float64
		var count int
		for _, l := range logLines(t, filepath.Join(dir, n)) {
			if l[0] != "0" {
				v, _ := strconv.ParseFloat(l[1], 64)
				sum += v
				count++
			}
		}
		if count == 0 {
			t.Fatalf("%s: no line after time 0", n)
		}
		cmd := exec.Command("/usr/bin/python3", script, "-k", "-p", n)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("fio2gnuplot -p %s: %v\n%s", n, err, b)
		}
		global, err := os.ReadFile(filepath.Join(dir, strings.TrimSuffix(n, ".log")+".global"))
		if err != nil {
			t.Fatal(err)
		}
		want := "values_count=" + strconv.Itoa(count) + "\n"
		avg := "avg=" + strconv.FormatFloat(sum/float64(count), 'f', 2, 64) + "\n"
		if !strings.Contains(string(global), want) || !strings.Contains(string(global), avg) {
			t.Errorf("fio2gnuplot's statistics of %s:\n%s\nwant %s and %s", n, global, strings.TrimSpace(want), strings.TrimSpace(avg))
		}
	}
}

// The histogram log has fio's columns (time, direction, bs and 1856
// buckets, fewer with log_hist_coarseness), like fio's for the same job,
// and Debian's fiologparser_hist.py reads it: the samples it counts are
// the clats the job measured.
func TestHistLogLikeFio(t *testing.T) {
	target := file(t, 4<<20)
	fioDir, ourDir := t.TempDir(), t.TempDir()
	args := func(dir string, coarse int) []string {
		return []string{"--name=j", "--filename=" + target, "--ioengine=psync", "--rw=randread", "--time_based", "--runtime=600ms",
			"--write_hist_log=" + filepath.Join(dir, "c"+strconv.Itoa(coarse)), "--log_hist_msec=50", "--log_hist_coarseness=" + strconv.Itoa(coarse)}
	}
	var res *bench.Result
	for _, coarse := range []int{0, 4} {
		runFioLogs(t, args(fioDir, coarse)...)
		res = runLogs(t, args(ourDir, coarse)...)
		n := "c" + strconv.Itoa(coarse) + "_clat_hist.1.log"
		theirs, ours := logLines(t, filepath.Join(fioDir, n)), logLines(t, filepath.Join(ourDir, n))
		if len(ours) < 3 || len(theirs) < 3 {
			t.Fatalf("%s: %d lines, fio's %d; want a few in 600 ms", n, len(ours), len(theirs))
		}
		if w := 3 + 1856>>coarse; len(ours[0]) != w || len(theirs[0]) != w {
			t.Errorf("%s: %d columns, fio's %d, want %d", n, len(ours[0]), len(theirs[0]), w)
		}
		if d := math.Abs(float64(len(ours) - len(theirs))); d > max(2, 0.3*float64(len(theirs))) {
			t.Errorf("%s: %d lines, fio's %d", n, len(ours), len(theirs))
		}
	}

	// fiologparser_hist.py, from the package's documentation, needs numpy
	// and pandas (the test command installs them).
	src := "/usr/share/doc/fio/fiologparser_hist.py.gz"
	if _, err := os.Stat(src); err != nil {
		t.Fatalf("%s: %v (Debian's fio package has it)", src, err)
	}
	parser := filepath.Join(t.TempDir(), "fiologparser_hist.py")
	b, err := exec.Command("sh", "-c", "zcat "+src+" > "+parser).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	logPath := filepath.Join(ourDir, "c4_clat_hist.1.log")
	var logged uint64
	for _, l := range logLines(t, logPath) {
		for _, v := range l[3:] {
			n, _ := strconv.ParseUint(v, 10, 64)
			logged += n
		}
	}
	out, err := exec.Command("/usr/bin/python3", parser, "--noweight", logPath).CombinedOutput()
	if err != nil {
		t.Fatalf("fiologparser_hist.py: %v\n%s", err, out)
	}
	var counted float64
	rows := 0
	for l := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(l, ", ")
		if len(f) < 3 || f[0] == "end-time" {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(f[1]), 64)
		if err != nil {
			t.Fatalf("fiologparser_hist.py's line %q", l)
		}
		counted += v
		rows++
	}
	clats := job(res).Dirs[bench.Read].Clat.Stat.N
	if rows == 0 || uint64(math.Round(counted)) != logged || logged == 0 || logged > clats {
		t.Errorf("fiologparser_hist.py counted %.0f samples in %d rows; the log holds %d of the job's %d clats\n%s", counted, rows, logged, clats, out)
	}
}
