package fio

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"iolab/bench"
	"iolab/bench/joblog"
)

// The log family's effect probes: each option changes which log files a
// job writes, their names, their lines or their columns.

// jobLog is the log of kind k kept with r's first job, as lines of
// columns; it fails the test if there is none.
func jobLog(t *testing.T, r *bench.Result, k joblog.Kind) [][]string {
	t.Helper()
	for _, l := range job(r).Logs {
		if l.Kind == k {
			out := logColumns(l.Data)
			if int64(len(out)) != l.Lines {
				t.Fatalf("%s: %d lines kept of %d", l.File, len(out), l.Lines)
			}
			return out
		}
	}
	t.Fatalf("the job kept no %s log (it has %d)", k, len(job(r).Logs))
	return nil
}

// logsJob is a psync job of 64 I/Os on a fresh file.
func logsJob(t *testing.T, extra ...string) []string {
	return append([]string{"--filename=" + file(t, 256<<10), "--ioengine=psync", "--name=l"}, extra...)
}

// timedLogsJob runs for 300 ms.
func timedLogsJob(t *testing.T, extra ...string) []string {
	return logsJob(t, append([]string{"--time_based", "--runtime=300ms"}, extra...)...)
}

func init() {
	perIO := func(opt string, kinds ...joblog.Kind) effect {
		return func(t *testing.T) {
			dir := t.TempDir()
			r := runLogs(t, logsJob(t, "--"+opt+"="+filepath.Join(dir, "x"))...)
			if len(job(r).Logs) != len(kinds) {
				t.Fatalf("%s kept %d logs, want %d", opt, len(job(r).Logs), len(kinds))
			}
			for _, k := range kinds {
				name := joblog.FileName(filepath.Join(dir, "x"), k, 1, true)
				b, err := os.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				want := int(ios(r))
				if k == joblog.Slat {
					want = 0 // psync: no slat, as in fio
				}
				if n := strings.Count(string(b), "\n"); n != want {
					t.Errorf("%s: %d lines, want one per I/O (%d)", filepath.Base(name), n, want)
				}
			}
		}
	}
	effects["write_bw_log"] = perIO("write_bw_log", joblog.BW)
	effects["write_iops_log"] = perIO("write_iops_log", joblog.IOPS)
	effects["write_lat_log"] = perIO("write_lat_log", joblog.Lat, joblog.Slat, joblog.Clat)
	effects["write_hist_log"] = func(t *testing.T) {
		dir := t.TempDir()
		r := runLogs(t, timedLogsJob(t, "--write_hist_log="+filepath.Join(dir, "h"), "--log_hist_msec=50")...)
		if l := jobLog(t, r, joblog.ClatHist); len(l) < 2 || len(l[0]) != 3+1856 {
			t.Errorf("%d histogram lines of %d columns, want a few of 1859", len(l), len(l[0]))
		}
		if _, err := os.Stat(filepath.Join(dir, "h_clat_hist.1.log")); err != nil {
			t.Error(err)
		}
	}
	effects["log_hist_msec"] = func(t *testing.T) {
		// Without it fio writes no histogram line at all.
		if l := jobLog(t, run(t, timedLogsJob(t, "--write_hist_log=h")...), joblog.ClatHist); len(l) != 0 {
			t.Errorf("%d histogram lines without log_hist_msec", len(l))
		}
		if l := jobLog(t, run(t, timedLogsJob(t, "--write_hist_log=h", "--log_hist_msec=100")...), joblog.ClatHist); len(l) < 1 || len(l) > 3 {
			t.Errorf("%d histogram lines in 300 ms every 100 ms", len(l))
		}
	}
	effects["log_hist_coarseness"] = func(t *testing.T) {
		l := jobLog(t, run(t, timedLogsJob(t, "--write_hist_log=h", "--log_hist_msec=50", "--log_hist_coarseness=3")...), joblog.ClatHist)
		if len(l) == 0 || len(l[0]) != 3+1856/8 {
			t.Errorf("histogram lines of %d columns, want %d", len(l[0]), 3+1856/8)
		}
	}
	effects["log_avg_msec"] = func(t *testing.T) {
		r := run(t, timedLogsJob(t, "--write_iops_log=x", "--log_avg_msec=100")...)
		l := jobLog(t, r, joblog.IOPS)
		if len(l) < 2 || len(l) > 4 || ios(r) < 100 {
			t.Fatalf("%d lines for %d I/Os in 300 ms averaged over 100 ms", len(l), ios(r))
		}
		// The IOPS of the windows add up to about the job's.
		var sum float64
		for _, e := range l {
			v, _ := strconv.ParseFloat(e[1], 64)
			sum += v
		}
		if err := within("IOPS", sum/float64(len(l)), job(r).IOPS(bench.Read), 0.5); err != nil {
			t.Error(err)
		}
	}
	effects["log_max_value"] = func(t *testing.T) {
		// The largest window maximum is the largest clat; window means
		// stay below it.
		top := func(r *bench.Result) uint64 {
			var m uint64
			for _, e := range jobLog(t, r, joblog.Clat) {
				v, _ := strconv.ParseUint(e[1], 10, 64)
				m = max(m, v)
			}
			return m
		}
		r := run(t, timedLogsJob(t, "--write_lat_log=x", "--log_avg_msec=50", "--log_max_value=1")...)
		if got, want := top(r), job(r).Dirs[bench.Read].Clat.Stat.Max; got != want {
			t.Errorf("largest logged clat %d, want the job's max %d", got, want)
		}
		r = run(t, timedLogsJob(t, "--write_lat_log=x", "--log_avg_msec=50")...)
		if got, m := top(r), job(r).Dirs[bench.Read].Clat.Stat.Max; got >= m {
			t.Errorf("largest window mean %d, not below the max %d", got, m)
		}
	}
	effects["log_offset"] = func(t *testing.T) {
		l := jobLog(t, run(t, logsJob(t, "--write_iops_log=x", "--log_offset=1", "--rw=read")...), joblog.IOPS)
		if len(l[0]) != 6 || l[1][4] != "4096" {
			t.Errorf("line %q, %q: want the offset as a fifth column", l[0], l[1])
		}
	}
	effects["log_prio"] = func(t *testing.T) {
		l := jobLog(t, run(t, logsJob(t, "--write_iops_log=x", "--log_prio=1")...), joblog.IOPS)
		if l[0][4] != "0x0000" {
			t.Errorf("line %q: want the priority as 0x0000", l[0])
		}
	}
	effects["per_job_logs"] = func(t *testing.T) {
		dir := t.TempDir()
		p := filepath.Join(dir, "x")
		r := runLogs(t, logsJob(t, "--write_iops_log="+p, "--per_job_logs=0", "--numjobs=2")...)
		b, err := os.ReadFile(p + "_iops.log")
		if err != nil {
			t.Fatal(err)
		}
		var all uint64
		for _, j := range r.Groups[0].Jobs {
			all += j.Dirs[bench.Read].IOs
		}
		if n := strings.Count(string(b), "\n"); uint64(n) != all {
			t.Errorf("x_iops.log has %d lines, want both jobs' %d", n, all)
		}
	}
	effects["log_unix_epoch"] = func(t *testing.T) {
		l := jobLog(t, run(t, logsJob(t, "--write_iops_log=x", "--log_unix_epoch=1")...), joblog.IOPS)
		if at, _ := strconv.ParseInt(l[0][0], 10, 64); at < 1_600_000_000_000 {
			t.Errorf("time %d: want Unix ms", at)
		}
	}
}

// As in fio: in a job file a write_*_log without a value names the files
// after the job; on the command line the option takes the next argument.
func TestLogOptionValues(t *testing.T) {
	cfg, err := ParseJobFile(strings.NewReader("[global]\nfilename=/dev/null\n[mine]\nwrite_iops_log\nwrite_bw_log=pre\n"), "j.fio")
	if err != nil {
		t.Fatal(err)
	}
	j := cfg.Jobs[0]
	if !j.WriteIOPSLog || j.IOPSLogFile != "" || !j.WriteBWLog || j.BWLogFile != "pre" || j.WriteLatLog {
		t.Errorf("job file: %+v", j.LogOptions)
	}
	cfg, err = ParseArgs([]string{"--name=a", "--filename=/dev/null", "--write_lat_log", "x", "--log_hist_coarseness=7"})
	if err == nil || !strings.Contains(err.Error(), "log_hist_coarseness") {
		t.Errorf("log_hist_coarseness=7 (fio's limit is 6): %v", err)
	}
	cfg, err = ParseArgs([]string{"--name=a", "--filename=/dev/null", "--write_lat_log", "x"})
	if err != nil || cfg.Jobs[0].LatLogFile != "x" {
		t.Errorf("--write_lat_log x: %v, %+v", err, cfg)
	}
}
