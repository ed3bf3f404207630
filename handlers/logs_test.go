package handlers

import (
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"iolab/db"
)

// A dashboard run with fio's log options keeps its logs in the store, not
// in files, and its run page's timeline is drawn from the IOPS log: a
// point per log_avg_msec window. The run page lists the log, and its link
// gives back fio's file, which fio2gnuplot reads.
func TestRunLogsDrawnOnTimeline(t *testing.T) {
	ts := newTestServer(t, Config{})
	wd, _ := os.Getwd()
	id := launchRun(t, ts, `{"name":"logged","options":{"filename":"logged.dat","size":"1m","rw":"randread",
		"ioengine":"psync","runtime":"600ms","time_based":1,"write_iops_log":"logged","log_avg_msec":"100"}}`)
	waitStatus(t, ts.store, id, db.StatusDone)
	for _, dir := range []string{wd, ts.dataDir} {
		if m, _ := filepath.Glob(filepath.Join(dir, "logged_*")); len(m) > 0 {
			t.Errorf("a dashboard run wrote %v", m)
		}
	}
	rec := ts.do(t, "GET", fmt.Sprintf("/charts/export.csv?kind=timeline&run=%d", id), "")
	if rec.Code != 200 {
		t.Fatalf("timeline CSV: %d %s", rec.Code, rec.Body)
	}
	lines := strings.Split(strings.TrimSpace(rec.Body.String()), "\n")
	var times []float64
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		v, err := strconv.ParseFloat(f[2], 64) // step, job, time_s, …
		if err != nil {
			t.Fatalf("line %q", l)
		}
		times = append(times, v)
	}
	// 600 ms in 100 ms windows: about 6 points, 0.1 s apart (the 1 s
	// samples would give none: the job is shorter than one).
	if len(times) < 4 || len(times) > 8 || times[1]-times[0] > 0.2 {
		t.Errorf("timeline points at %v; want one every ~0.1 s from the IOPS log\n%s", times, rec.Body)
	}
	page := ts.do(t, "GET", fmt.Sprintf("/charts?kind=timeline&run=%d", id), "")
	if !strings.Contains(page.Body.String(), "IOPS logs") {
		t.Errorf("the timeline does not say it is drawn from the IOPS logs")
	}

	// The file, from the run page's link.
	body := ts.do(t, "GET", fmt.Sprintf("/runs/%d", id), "").Body.String()
	link := regexp.MustCompile(`<a href="(/runs/\d+/log\?[^"]+)" download>logged_iops\.1\.log</a> <span class="muted small">(\d+) lines</span>`).FindStringSubmatch(body)
	if link == nil {
		t.Fatalf("the run page does not list logged_iops.1.log:\n%s", body)
	}
	rec = ts.do(t, "GET", html.UnescapeString(link[1]), "")
	data := rec.Body.String()
	if rec.Code != 200 || strconv.Itoa(strings.Count(data, "\n")) != link[2] || !strings.Contains(rec.Header().Get("Content-Disposition"), `filename=logged_iops.1.log`) {
		t.Fatalf("the log's link: %d, %q, %d lines (the page says %s)", rec.Code, rec.Header().Get("Content-Disposition"), strings.Count(data, "\n"), link[2])
	}
	var count int
	var sum float64
	for l := range strings.SplitSeq(strings.TrimSpace(data), "\n") {
		f := strings.Split(l, ", ")
		v, err := strconv.ParseFloat(f[1], 64)
		if len(f) != 5 || err != nil {
			t.Fatalf("line %q: want fio's 5 columns", l)
		}
		if f[0] != "0" { // fio2gnuplot skips time 0
			count++
			sum += v
		}
	}
	script, err := exec.LookPath("fio2gnuplot")
	if err != nil {
		t.Fatal("fio2gnuplot is not installed (Debian's fio package has it)")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "logged_iops.1.log"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/usr/bin/python3", script, "-k", "-p", "logged_iops.1.log")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fio2gnuplot: %v\n%s", err, out)
	}
	global, err := os.ReadFile(filepath.Join(dir, "logged_iops.1.global"))
	if want := fmt.Sprintf("values_count=%d\n", count); err != nil || !strings.Contains(string(global), want) ||
		!strings.Contains(string(global), "avg="+strconv.FormatFloat(sum/float64(count), 'f', 2, 64)+"\n") {
		t.Errorf("fio2gnuplot's statistics of the downloaded log (%v):\n%s\nwant %s", err, global, want)
	}

	for _, bad := range []struct {
		query string
		code  int
	}{{"step=2&file=logged_iops.1.log", 404}, {"step=1&file=nope.log", 404}, {"step=0&file=logged_iops.1.log", 400}, {"step=1", 400}} {
		if rec := ts.do(t, "GET", fmt.Sprintf("/runs/%d/log?%s", id, bad.query), ""); rec.Code != bad.code {
			t.Errorf("log?%s: %d, want %d", bad.query, rec.Code, bad.code)
		}
	}
}
