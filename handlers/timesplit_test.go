package handlers

import (
	"context"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"
	"iolab/handlers/report"
)

// seedTracedFairnessLab is the fairness lab run traced (--trace-block):
// the reader's lat split into its block-layer parts, mostly queueing
// behind the writer under none and mq-deadline, little under bfq; kyber's
// steps were not traced; under mq-deadline a fifth of the reads merged,
// and bfq's trace lost events.
func seedTracedFairnessLab(t testing.TB, store *db.Store, host system.HostInfo) *db.Run {
	preset, err := sweep.PresetByName("sched-fairness")
	if err != nil {
		t.Fatal(err)
	}
	plan := labPlan(t, "sched-fairness traced", preset.Args("/dev/nvme1n1", nil), 2,
		sweep.Sweep{Axis: sweep.AxisScheduler, Values: []string{"none", "mq-deadline", "bfq", "kyber"}})
	plan.Preset = preset.Name
	readerLat := map[string]float64{"none": 4000, "mq-deadline": 3400, "bfq": 950, "kyber": 2100} // µs
	split := map[string][4]float64{"none": {0.02, 0.72, 0.24, 0.02}, "mq-deadline": {0.02, 0.66, 0.30, 0.02}, "bfq": {0.06, 0.22, 0.66, 0.06}}
	return seedLab(t, store, plan, host, func(st sweep.Step, job int, rng *rand.Rand) labStep {
		s := st.Scheduler
		var f labStep
		if st.Config.Groups[0].Jobs[job].RW == "randread" {
			lat := readerLat[s] * (1 + 0.05*rng.NormFloat64())
			f = labStep{iops: 1e6 / lat, median: time.Duration(lat * 1e3), spread: 0.3, intervals: true}
			if sp, ok := split[s]; ok {
				f.split, f.oneToOne = &sp, map[string]float64{"mq-deadline": 0.8}[s]
				if f.oneToOne == 0 {
					f.oneToOne = 0.99
				}
			}
		} else {
			iops := 1800 * (1 + 0.05*rng.NormFloat64())
			f = labStep{iops: iops, median: time.Duration(16 / iops * 1e9), spread: 0.25, intervals: true}
			if s != "kyber" {
				f.split, f.oneToOne = &[4]float64{0.01, 0.1, 0.88, 0.01}, 1
			}
		}
		if s == "bfq" {
			f.lost = 6
		}
		return f
	})
}

// TestTimeSplitPages: a traced run's page and the compare page offer
// the time split, its chart page draws it for stat=p50 and p99 and
// refuses another statistic, and its CSV holds each scheduler's parts;
// an untraced run offers none.
func TestTimeSplitPages(t *testing.T) {
	ts := newTestServer(t, Config{})
	host := system.HostInfo{Hostname: "lab-a", KernelRelease: "6.12.0-lab", CPUCount: 16}
	run := seedTracedFairnessLab(t, ts.store, host)
	plain := seedFairnessLab(t, ts.store, host)
	id, pid := strconv.FormatInt(run.ID, 10), strconv.FormatInt(plain.ID, 10)
	for _, tc := range []struct {
		name, url string
		code      int
		want      []string
		not       []string
	}{
		{"run page", "/runs/" + id, 200, []string{`data-kind="timesplit"`, "queue p50 / p99</th>", "% timed</span>", "--trace-block", "the block-layer trace lost 12 events (12 dropped, 0 missed)"}, nil},
		{"untraced run page", "/runs/" + pid, 200, []string{`data-kind="fairness"`}, []string{`data-kind="timesplit"`, "queue p50 / p99", "% timed"}},
		{"steps csv", "/runs/" + id + "/steps.csv", 200, []string{
			",outcomes,disturbed,error,submit p50 (µs),submit p99 (µs),queue p50 (µs),queue p99 (µs),device p50 (µs),device p99 (µs),completion p50 (µs),completion p99 (µs),timed (%)\n"}, nil},
		// An untraced run's CSV is as it always was: no column more.
		{"untraced steps csv", "/runs/" + pid + "/steps.csv", 200, []string{",outcomes,disturbed,error\n"}, []string{"queue"}},
		{"steps csv of queue", "/runs/" + id + "/steps.csv?lat=queue", 200, []string{",queue p50 (µs),queue p50 reliable,"}, nil},
		{"compare", "/compare?run=" + id + "&run=" + pid, 200, []string{`data-kind="timesplit"`}, nil},
		{"chart", "/charts?kind=timesplit&run=" + id, 200, []string{"Time split in the block layer per scheduler", "not traced: kyber"}, nil},
		{"p99", "/charts?kind=timesplit&stat=p99&run=" + id + "&job=bg-writer", 200, []string{"the timed I/Os at lat&#39;s p99, split"}, nil},
		{"report", "/report?run=" + id, 200, []string{"Time split in the block layer per scheduler", "<svg", "queue p50 / p99</th>", "% timed</span>"}, nil},
		{"untraced report", "/report?run=" + pid, 200, []string{"<svg"}, []string{"Time split", "queue p50 / p99"}},
		{"bad stat", "/charts?kind=timesplit&stat=p90&run=" + id, 400, []string{"use p50 or p99"}, nil},
		{"csv", "/charts/export.csv?kind=timesplit&run=" + id, 200, []string{
			"job,scheduler,repeats,traced,failed,submit_p50_us,queue_p50_us,device_p50_us,completion_p50_us,lat_p50_us,timed_pct",
			"fg-reader,mq-deadline,2,2,0,", "fg-reader,kyber,2,0,0,,,,,,,,,,,,,\n"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := ts.do(t, http.MethodGet, tc.url, "")
			body := rec.Body.String()
			if rec.Code != tc.code {
				t.Fatalf("%s: %d, want %d\n%.2000s", tc.url, rec.Code, tc.code, body)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("%s does not say %q:\n%.3000s", tc.url, w, body)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(body, w) {
					t.Errorf("%s says %q", tc.url, w)
				}
			}
		})
	}
	// The steps CSV: a traced reader's parts, kyber's untraced ones
	// empty, never zeros.
	steps := strings.Split(ts.do(t, http.MethodGet, "/runs/"+id+"/steps.csv", "").Body.String(), "\n")
	var reader, untraced int
	for _, line := range steps {
		cells := strings.Split(line, ",")
		if len(cells) < 37 || cells[3] != "fg-reader" {
			continue
		}
		if strings.Contains(cells[1], "kyber") {
			untraced++
			if strings.Join(cells[28:], "") != "" {
				t.Errorf("untraced kyber step has parts: %q", cells[28:])
			}
			continue
		}
		reader++
		q50, _ := strconv.ParseFloat(cells[30], 64)
		lat50, _ := strconv.ParseFloat(cells[9], 64)
		if q50 < 0.1*lat50 || q50 > lat50 {
			t.Errorf("%s: queue p50 %v µs of clat p50 %v", cells[1], q50, lat50)
		}
	}
	if reader != 6 || untraced != 2 {
		t.Errorf("%d traced reader rows, %d untraced; want 6 and 2", reader, untraced)
	}
	// The flags: mq-deadline's reads about 80 % one-to-one, bfq's trace
	// lost 12 events a step.
	rows := ts.do(t, http.MethodGet, "/charts/export.csv?kind=timesplit&run="+id, "").Body.String()
	for _, want := range []string{"% timed\n", ",24,0,24 events lost\n"} {
		if !strings.Contains(rows, want) {
			t.Errorf("the CSV does not flag %q:\n%s", want, rows)
		}
	}
}

// TestBrowserTimeSplit draws the time split of the traced fairness run
// in Chromium: four stacked parts per traced scheduler, their labels and
// flags readable. Screenshots go to testdata/artifacts.
func TestBrowserTimeSplit(t *testing.T) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed; .ci/test installs it")
	}
	ts := newTestServer(t, Config{})
	run := seedTracedFairnessLab(t, ts.store, system.HostInfo{Hostname: "lab-a", KernelRelease: "6.12.0-lab", CPUCount: 16})
	hs := httptest.NewServer(ts.e)
	defer hs.Close()
	art := artifactsDir(t)
	ctx, cancel := browser(t, path)
	defer cancel()
	for _, u := range []string{fmt.Sprintf("/charts?kind=timesplit&run=%d", run.ID), fmt.Sprintf("/runs/%d", run.ID)} {
		if err := chromedp.Do(ctx, chromedp.Navigate(hs.URL+u), chromedp.WaitReady(`body`)); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!(window.iolabCharts && window.iolabCharts.timesplit)`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
			t.Fatalf("%s: time split not drawn: %v", u, err)
		}
		name := "timesplit-chart.png"
		if strings.HasPrefix(u, "/runs/") {
			name = "timesplit-run.png"
		}
		writeArtifact(t, art, name, screenshotOf(t, ctx, `figure[data-kind=timesplit]`))
	}
	writeArtifact(t, art, "timesplit-steps.png", screenshotOf(t, ctx, `#run-steps`))
	bars, err := chromedp.Run(ctx, chromedp.Evaluate[[]struct {
		Name string  `json:"name"`
		H    float64 `json:"h"`
	}](barHeights("timesplit")))
	if err != nil {
		t.Fatal(err)
	}
	if len(bars) != 4*3 { // 4 parts × the 3 traced schedulers
		t.Errorf("%d bars drawn, want 12", len(bars))
	}
	cats, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.iolabCharts.timesplit.getOption().xAxis[0].data.map(d => typeof d === "object" ? d.value : d)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(cats) != 3 || cats[0] != "none" || !strings.Contains(cats[1], "% timed") || !strings.Contains(cats[2], "24 events lost") {
		t.Errorf("categories %q", cats)
	}
	// The fairness chart of the traced run: each job's queue part beside
	// its latency.
	if err := chromedp.Do(ctx, chromedp.Navigate(hs.URL+fmt.Sprintf("/charts?kind=fairness&run=%d", run.ID)), chromedp.WaitReady(`body`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!(window.iolabCharts && window.iolabCharts.fairness)`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("fairness not drawn: %v", err)
	}
	writeArtifact(t, art, "timesplit-fairness.png", screenshotOf(t, ctx, `figure[data-kind=fairness]`))
	names, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.iolabCharts.fairness.getOption().series.map(s => s.name)`))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(names, "queue p99") {
		t.Errorf("the traced run's fairness chart draws %q", names)
	}
	// Every chart of the traced run's page read as TestBrowserReadable
	// reads the experiments': the time split, the fairness chart's queue
	// bars, no text over another, a value one colour.
	got, err := readPage(ctx, hs.URL+fmt.Sprintf("/runs/%d", run.ID), []string{"none", "mq-deadline", "bfq", "kyber"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got.Kinds, "timesplit") || len(got.Violations) > 0 {
		t.Errorf("charts %q; readability violations:\n%s", got.Kinds, strings.Join(got.Violations, "\n"))
	}
}

// TestTimeSplitStatDiff: the statistical diff compares a block-layer
// part as it compares clat (lat=queue: "queue p99" rows, a significant
// cut under bfq), its CSV too, and the compare page's latency switch
// offers the parts of a traced run; its charts that draw no part keep
// their default.
func TestTimeSplitStatDiff(t *testing.T) {
	ts := newTestServer(t, Config{})
	host := system.HostInfo{Hostname: "lab-a", KernelRelease: "6.12.0-lab", CPUCount: 16}
	run := seedTracedFairnessLab(t, ts.store, host)
	id := strconv.FormatInt(run.ID, 10)
	body := ts.do(t, http.MethodGet, "/compare?run="+id+"&lat=queue", "").Body.String()
	for _, want := range []string{"<td>fg-reader</td><td>queue p99</td>", "queue (in the block layer)", `data-kind="timesplit"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the compare page of lat=queue lacks %q", want)
		}
	}
	if strings.Contains(body, `<p class="error">`) {
		t.Errorf("a chart of the compare page refused lat=queue")
	}
	rec := ts.do(t, http.MethodGet, "/compare/export.csv?table=stats&lat=queue&run="+id, "")
	rows, err := csv.NewReader(rec.Body).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("stats csv: %v, %d rows", err, len(rows))
	}
	col := func(name string) int { return slices.Index(rows[0], name) }
	var seen bool
	for _, r := range rows[1:] {
		if r[col("job")] != "fg-reader" || r[col("figure")] != "queue p99" || !strings.Contains(strings.Join(r, ","), "bfq") {
			continue
		}
		seen = true
		change, _ := strconv.ParseFloat(r[col("change_pct")], 64)
		// The reader's queue p99 under bfq: 22 % of ~1 ms, against 72 % of
		// ~4 ms under none: about −92 % (two repeats a side: too few to
		// call significant).
		if change > -85 || change < -98 || r[col("verdict")] == "" {
			t.Errorf("reader's queue p99 under bfq: %q", r)
		}
	}
	if !seen {
		t.Errorf("no reader queue p99 row for bfq in:\n%q", rows)
	}
	// Against an untraced run, a part has nothing to compare, and says
	// why.
	plain := seedFairnessLab(t, ts.store, host)
	body = ts.do(t, http.MethodGet, "/compare?run="+strconv.FormatInt(plain.ID, 10)+"&run="+id+"&lat=queue", "").Body.String()
	if !strings.Contains(body, "no traced repeat in the base") {
		t.Errorf("the diff against an untraced run does not say it was not traced")
	}
	// The run page takes lat=queue for its table and its charts that
	// draw a part, the others keeping theirs.
	body = ts.do(t, http.MethodGet, "/runs/"+id+"?lat=queue", "").Body.String()
	if !strings.Contains(body, "queue p50</th>") || !strings.Contains(body, `data-kind="lattime"`) || strings.Contains(body, `<p class="error">`) {
		t.Errorf("the run page of lat=queue: its table is not of queue, or a chart refused it")
	}
}

// TestTimeSplitReportBundle: a traced run's report bundle (iolab report
// DIR) has the time split's chart and CSV, its README's step table the
// parts, each row as wide as its head, and its steps CSV the parts'
// columns.
func TestTimeSplitReportBundle(t *testing.T) {
	ts := newTestServer(t, Config{})
	run := seedTracedFairnessLab(t, ts.store, system.HostInfo{Hostname: "lab-a", KernelRelease: "6.12.0-lab", CPUCount: 16})
	ctx := context.Background()
	rep, err := report.Build(ctx, ts.store, []int64{run.ID}, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := rep.WriteBundle(ctx, dir, report.BundleOptions{Chromium: "no-such-chromium"}); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := string(raw)
	if !strings.Contains(md, "| queue p50 / p99 |") || !strings.Contains(md, "timesplit") || !strings.Contains(md, "% timed)") {
		t.Errorf("README.md lacks the parts or the time split:\n%s", md)
	}
	cols := 0
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "|") {
			cols = 0
			continue
		}
		if got := len(splitCells(line)); cols == 0 {
			cols = got
		} else if got != cols {
			t.Errorf("%d cells, its table %d: %s", got, cols, line)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	steps := fmt.Sprintf("run-%d-steps.csv", run.ID)
	if !slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, "timesplit") && strings.HasSuffix(n, ".svg") }) ||
		!slices.Contains(names, steps) {
		t.Fatalf("bundle files %q", names)
	}
	csvText, err := os.ReadFile(filepath.Join(dir, steps))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(csvText), ",queue p50 (µs),queue p99 (µs),") {
		t.Errorf("the bundle's steps CSV has no parts: %.300s", csvText)
	}
}
