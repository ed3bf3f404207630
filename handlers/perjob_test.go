package handlers

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"
)

// seedFairnessRun stores a finished sched-fairness run as the preset
// makes it — a 1 MiB writer at iodepth 16 and a 4 KiB reader at iodepth
// 1 in every step, under none and bfq, 3 repeats — with what its numbers
// must be read with: bfq's reader swings from 208 to 4.2k IOPS (noisy),
// the reader's few I/Os under none cannot vouch for its p99, the writer's
// thread saturates a core once, and another process disturbs one step.
func seedFairnessRun(t testing.TB, store *db.Store) *db.Run {
	t.Helper()
	ctx := context.Background()
	preset, err := sweep.PresetByName("sched-fairness")
	if err != nil {
		t.Fatal(err)
	}
	args := preset.Args("/dev/loop7", []string{"--runtime=1"})
	cfg, err := fio.ParseArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	plan := &sweep.Plan{Name: preset.Name, Preset: preset.Name, Args: args, Base: *cfg, Repeat: 3, DropCaches: true,
		Sweeps: []sweep.Sweep{{Axis: sweep.AxisScheduler, Values: []string{"none", "bfq"}}}}
	steps, err := plan.Steps()
	if err != nil {
		t.Fatal(err)
	}
	run := &db.Run{Name: preset.Name, Status: db.StatusRunning, Plan: *plan,
		Host:    system.HostInfo{Hostname: "lab", KernelRelease: "6.12.0", CPUCount: 8, CPUModel: "Test CPU"},
		Targets: []system.Target{{Path: "/dev/loop7", Disk: "loop7", Scheduler: "none", Schedulers: []string{"none", "bfq"}}}}
	if _, err := store.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Hour).Truncate(time.Second)
	readerIOPS := map[string][3]uint64{"none": {250, 260, 270}, "bfq": {208, 4230, 3000}}
	writerIOPS := map[string][3]uint64{"none": {500, 520, 480}, "bfq": {400, 410, 390}}
	for _, st := range steps {
		sched := st.Scheduler
		res := sweep.StepResult{Step: st, Status: sweep.StepDone, Start: start, End: start.Add(time.Second),
			Schedulers: map[string]string{"loop7": sched},
			CPU:        system.CPUBreakdown{User: 12, System: 6, IRQ: 1, SoftIRQ: 2, IOWait: 20, Idle: 59},
			Proc:       system.ProcCPU{User: 30 * time.Millisecond, System: 70 * time.Millisecond}}
		disk := system.DiskUtilization{Name: "loop7", ReadsPerSec: 300, WritesPerSec: 500, Util: 90}
		var jobs []bench.JobResult
		for _, job := range st.Config.Groups[0].Jobs {
			jr := bench.JobResult{Name: job.Name, Job: job, Start: start, Runtime: time.Second, Jobs: 1, Interval: 250 * time.Millisecond}
			d, n, lat := bench.Read, readerIOPS[sched][st.Repeat], 4*time.Millisecond
			if sched == "bfq" {
				lat = time.Millisecond
			}
			if job.RW == "write" {
				d, n, lat = bench.Write, writerIOPS[sched][st.Repeat], 30*time.Millisecond
				if sched == "bfq" && st.Repeat == 0 {
					jr.UsrCPU, jr.SysCPU = 400*time.Millisecond, 560*time.Millisecond
				}
			}
			dr := &jr.Dirs[d]
			dr.IOs, dr.Bytes = n, n*uint64(job.BS)
			for k := range n {
				v := uint64(lat) + k%97*uint64(lat)/100 // a spread of a few bins
				dr.Clat.Add(v)
				dr.Lat.Add(v + 2000)
			}
			for s := range uint64(4) {
				var sm bench.Sample
				sm.At = time.Duration(s+1) * 250 * time.Millisecond
				sm.IOs[d], sm.Bytes[d] = n*(s+1)/4, n*(s+1)/4*uint64(job.BS)
				jr.Samples = append(jr.Samples, sm)
			}
			jr.Moved[d] = dr.Bytes
			disk.JobBytes += dr.Bytes
			jobs = append(jobs, jr)
		}
		disk.ReadSectors, disk.WriteSectors = jobs[1].Dirs[bench.Read].Bytes/512, jobs[0].Dirs[bench.Write].Bytes/512
		if sched == "none" && st.Repeat == 1 {
			disk.WriteSectors += disk.JobBytes / 512 / 10 // 10 % more than the jobs: disturbed
		}
		res.Result = &bench.Result{Start: start, Groups: []bench.GroupResult{{ID: 0, Jobs: jobs, Disks: []system.DiskUtilization{disk}}}}
		if err := store.SaveStep(ctx, run.ID, &res); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.SetRunStatus(ctx, run.ID, db.StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	return run
}

// The run page of a sched-fairness run: each step a row per job with its
// own options and never a total; the charts draw the reader, which the
// preset measures, until a link picks the writer.
func TestRunPagePerJob(t *testing.T) {
	ts := newTestServer(t, Config{})
	run := seedFairnessRun(t, ts.store)
	id := strconv.FormatInt(run.ID, 10)
	rec := ts.do(t, http.MethodGet, "/runs/"+id, "")
	if rec.Code != http.StatusOK {
		t.Fatalf("run page: %d %.1000s", rec.Code, rec.Body)
	}
	body := rec.Body.String()
	for _, want := range []string{
		`<strong>bg-writer</strong> <span class="muted">write 1m iodepth 16</span>`,
		`<strong>fg-reader</strong> <span class="muted">randread 4k iodepth 1</span>`,
		`id="chart-jobs"`, `href="/runs/` + id + `?job=bg-writer"`,
		`class="current" aria-current="true">fg-reader</a> <span class="muted small">(measured)</span>`,
		`class="num unreliable" title="from 250 I/Os: p99 needs 1000`, `>saturated</span>`, `>disturbed</span>`,
		"job fg-reader", // the charts say which job they draw
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the run page lacks %s", want)
		}
	}
	if strings.Contains(body, "<strong>total</strong>") {
		t.Error("the run page adds the writer to the reader")
	}
	if n := strings.Count(body, `<td class="job">`); n != 2*6 {
		t.Errorf("%d job rows, want 2 per step", n)
	}

	// The writer's charts, at its own iodepth.
	body = ts.do(t, http.MethodGet, "/runs/"+id+"?job=bg-writer", "").Body.String()
	if !strings.Contains(body, "job bg-writer") || !strings.Contains(body, "job=bg-writer&amp;run="+id) || strings.Contains(body, "job fg-reader") {
		t.Error("?job=bg-writer does not draw the writer")
	}
	if rec := ts.do(t, http.MethodGet, "/runs/"+id+"?job=nope", ""); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "bg-writer, fg-reader") {
		t.Errorf("?job=nope: %d, want 400 naming the run's jobs", rec.Code)
	}

	// steps.csv: a row per job, with its options and how far its
	// percentiles and thread can be trusted.
	rows := readCSV(t, ts.do(t, http.MethodGet, "/runs/"+id+"/steps.csv", "").Body.String())
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	if len(rows) != 1+2*6 {
		t.Fatalf("steps.csv: %d rows, want a header and 2 per step", len(rows))
	}
	w, r := rows[3], rows[4] // step 2: bfq, repeat 1
	if w[col["job"]] != "bg-writer" || w[col["bs"]] != "1m" || w[col["iodepth"]] != "16" || w[col["saturated"]] != "true" ||
		r[col["job"]] != "fg-reader" || r[col["iodepth"]] != "1" || r[col["IOPS"]] != "208" || r[col["clat p99 reliable"]] != "false" ||
		r[col["saturated"]] != "false" {
		t.Errorf("steps.csv step 2:\n%q\n%q", w, r)
	}
}

// The run page of a sched-fairness run as a browser shows it: the
// reader's charts first, then the writer's, and the step table a row per
// job. Screenshots go to testdata/artifacts.
func TestBrowserFairnessRunPage(t *testing.T) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed; .ci/test installs it")
	}
	ts := newTestServer(t, Config{})
	run := seedFairnessRun(t, ts.store)
	hs := httptest.NewServer(ts.e)
	defer hs.Close()
	art := artifactsDir(t)
	ctx, cancel := browser(t, path)
	defer cancel()

	if err := chromedp.Do(ctx, chromedp.Navigate(hs.URL+"/runs/"+strconv.FormatInt(run.ID, 10)), chromedp.WaitVisible(`div.chart[data-kind=iops]`)); err != nil {
		t.Fatal(err)
	}
	drawn, err := chromedp.Run(ctx, chromedp.Poll[drawnChart](readIOPSChart, chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	// One iodepth: the schedulers side by side, bars with whiskers, at
	// the reader's iodepth 1.
	if !slices.Equal(drawn.Categories, []string{"none", "bfq"}) || len(drawn.Names) == 0 || drawn.Names[0] != "iodepth 1" {
		t.Errorf("reader's IOPS chart: categories %q, series %q; want a bar per scheduler at iodepth 1", drawn.Categories, drawn.Names)
	}
	screenshot(t, ctx, art, "run-fairness.png", 100)
	rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("table.steps td.job strong")].map(e => e.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 12 || rows[0] != "bg-writer" || rows[1] != "fg-reader" || slices.Contains(rows, "total") {
		t.Errorf("step table jobs = %q, want bg-writer and fg-reader in every step", rows)
	}

	// The writer's link: its charts, at iodepth 16.
	if err := chromedp.Do(ctx, chromedp.Click(`#chart-jobs a[href$="job=bg-writer"]`), chromedp.WaitVisible(`div.chart[data-kind=iops]`)); err != nil {
		t.Fatal(err)
	}
	drawn, err = chromedp.Run(ctx, chromedp.Poll[drawnChart](readIOPSChart+` && (window.iolabCharts.iops.getOption().series[0].name == "iodepth 16" ? `+readIOPSChart+` : null)`,
		chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(drawn.Categories, []string{"none", "bfq"}) {
		t.Errorf("writer's IOPS chart: categories %q, want the schedulers at its iodepth 16", drawn.Categories)
	}
	screenshot(t, ctx, art, "run-fairness-writer.png", 100)
}
