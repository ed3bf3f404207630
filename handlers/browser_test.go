package handlers

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/chromedp"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/db"
)

// artifactsDir is where browser tests leave their artifacts
// ($IOLAB_ARTIFACTS, else handlers/testdata/artifacts); screenshots only
// when $IOLAB_ARTIFACTS is set (screenshot).
func artifactsDir(t *testing.T) string {
	dir := os.Getenv("IOLAB_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("testdata", "artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browser starts a headless Debian chromium with its own profile: a fresh
// browser context, sharing nothing with any other; extra options follow
// the defaults.
func browser(t *testing.T, path string, extra ...chromedp.ExecAllocatorOption) (context.Context, context.CancelFunc) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1800),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		// The charts drawn without animations (app.js): nothing waits
		// for them, and a dozen charts animating for a second each is
		// CPU the tests' other work needs.
		chromedp.Flag("force-prefers-reduced-motion", true),
	)
	opts = append(opts, extra...)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	failOnCSPViolations(t, ctx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	return ctx, func() { cancelTimeout(); cancelCtx(); cancelAlloc() }
}

// failOnCSPViolations makes the test fail if a page the browser of ctx
// shows breaks the server's Content-Security-Policy: a script, a style or
// an image the policy blocked is a part of the dashboard that no longer
// works.
func failOnCSPViolations(t *testing.T, ctx context.Context) {
	var mu sync.Mutex
	var blocked []string
	err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*cdplog.EventEntryAdded); ok && strings.Contains(e.Entry.Text, "Content Security Policy") {
			mu.Lock()
			blocked = append(blocked, e.Entry.URL+": "+e.Entry.Text)
			mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, b := range blocked {
			t.Errorf("the page broke its Content-Security-Policy: %s", b)
		}
	})
}

type drawnChart struct {
	Categories []string          `json:"categories"`
	Series     []json.RawMessage `json:"series"`
	Names      []string          `json:"names"`
}

// readIOPSChart reads the whisker chart's echarts instance: its x
// categories and its series, as the browser drew them.
const readIOPSChart = `(() => {
  const c = window.iolabCharts && window.iolabCharts.iops;
  if (!c) return null;
  const o = c.getOption();
  return {categories: o.xAxis[0].data.map(String), series: o.series.map(s => s.data), names: o.series.map(s => s.name)};
})()`

// TestBrowserLaunchWatchShare drives the dashboard in headless chromium:
// fill the new-run form with a small sweep on a file target, submit, watch
// live progress, read the finished run's whisker chart from its echarts
// instance, compare the chart's CSV with the API's numbers, and open the
// chart's URL in a fresh browser to see the same series.
func TestBrowserLaunchWatchShare(t *testing.T) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed; .ci/test installs it")
	}
	ts := newTestServer(t, Config{ProgressEvery: 100 * time.Millisecond})
	hs := httptest.NewServer(ts.e)
	defer hs.Close()
	art := artifactsDir(t)

	ctx, cancel := browser(t, path)
	defer cancel()
	err = chromedp.Do(ctx,
		chromedp.Navigate(hs.URL+"/runs/new"),
		chromedp.WaitVisible(`form#new-run`),
		chromedp.SetValue(`input[name=target]`, "browser.dat"),
		chromedp.SetValue(`input[name=size]`, "4m"),
		chromedp.SetValue(`select[name=rw]`, "randread"),
		chromedp.SetValue(`input[name=runtime]`, "400ms"),
		chromedp.SetValue(`input[name=iodepth]`, "1,4"),
		chromedp.SetValue(`input[name=ioengine]`, "io_uring,libaio"),
		chromedp.SetValue(`input[name=repeat]`, "2"),
	)
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, art, "new-run.png", 100)

	// Submit, and watch the live step line while the run goes.
	if err := chromedp.Do(ctx, chromedp.Click(`form#new-run button[type=submit]`), chromedp.WaitVisible(`#run-status`)); err != nil {
		t.Fatal(err)
	}
	runURL, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(runURL, "/runs/") {
		t.Fatalf("landed on %s, not a run page", runURL)
	}
	id, err := strconv.ParseInt(runURL[strings.LastIndex(runURL, "/")+1:], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	sawProgress := false
	deadline := time.Now().Add(60 * time.Second)
	for {
		status, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.getElementById("run-status")||{}).textContent||""`))
		if err != nil {
			t.Fatal(err)
		}
		step, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(document.getElementById("live-step")||{}).textContent||""`))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(step, "step ") {
			sawProgress = true
		}
		if status == db.StatusDone {
			break
		}
		if status == db.StatusFailed || time.Now().After(deadline) {
			t.Fatalf("run %d: status %q, step %q", id, status, step)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !sawProgress {
		t.Fatal("the run page never showed a live step")
	}

	// Steps this short are sampled every 100 ms, not each second: a
	// timeline, not a point (a loaded machine may lose an interval or two
	// of a 400 ms step).
	for _, st := range fetchRunDoc(t, hs.URL, id).Steps {
		for _, g := range st.Result.Groups {
			for _, j := range g.Jobs {
				if j.Interval != 100*time.Millisecond || len(j.Samples) < 2 {
					t.Errorf("step %d job %s: interval %v, %d samples; want 100ms and several", st.Step.Seq+1, j.Name, j.Interval, len(j.Samples))
				}
			}
		}
	}

	// The finished run's whisker chart: one box per iodepth and engine.
	if err := chromedp.Do(ctx, chromedp.Navigate(runURL), chromedp.WaitVisible(`div.chart[data-kind=iops]`)); err != nil {
		t.Fatal(err)
	}
	drawn, err := chromedp.Run(ctx, chromedp.Poll[drawnChart](readIOPSChart, chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, art, "run.png", 100)
	if !slices.Equal(drawn.Categories, []string{"1", "4"}) {
		t.Fatalf("x categories %v, want iodepth 1 and 4", drawn.Categories)
	}
	names := slices.Clone(drawn.Names)
	slices.Sort(names)
	if !slices.Equal(names, []string{"io_uring", "libaio"}) {
		t.Fatalf("series %v, want io_uring and libaio", drawn.Names)
	}
	for i, s := range drawn.Series {
		var boxes []json.RawMessage
		if err := json.Unmarshal(s, &boxes); err != nil || len(boxes) != 2 {
			t.Fatalf("series %s: %d boxes (%v), want one per iodepth", drawn.Names[i], len(boxes), err)
		}
	}

	// The chart's CSV against the API's numbers.
	want := medianIOPS(t, hs.URL, id)
	chartLink, err := chromedp.Run(ctx, chromedp.AttributeValue(`figure:has(div.chart[data-kind=iops]) figcaption a:first-of-type`, "href"))
	if err != nil {
		t.Fatal(err)
	}
	csvLink, err := chromedp.Run(ctx, chromedp.AttributeValue(`figure:has(div.chart[data-kind=iops]) figcaption a:last-of-type`, "href"))
	if err != nil {
		t.Fatal(err)
	}
	chartURL, csvURL := chartLink.Value, csvLink.Value
	rows := fetchCSV(t, hs.URL+csvURL)
	header := rows[0]
	col := func(name string) int {
		i := slices.Index(header, name)
		if i < 0 {
			t.Fatalf("CSV header %v lacks %s", header, name)
		}
		return i
	}
	qd, eng, med := col("iodepth"), col("ioengine"), col("iops_median")
	if len(rows)-1 != len(want) {
		t.Fatalf("CSV has %d rows, the API %d cells", len(rows)-1, len(want))
	}
	for _, r := range rows[1:] {
		got, err := strconv.ParseFloat(r[med], 64)
		if err != nil {
			t.Fatal(err)
		}
		w, ok := want[r[qd]+"/"+r[eng]]
		if !ok || fmt.Sprintf("%.3f", got) != fmt.Sprintf("%.3f", w) {
			t.Fatalf("CSV iodepth=%s %s: median IOPS %v, API says %v", r[qd], r[eng], got, w)
		}
	}

	// The copied chart URL, in a browser that has seen nothing before.
	ctx2, cancel2 := browser(t, path)
	defer cancel2()
	if err := chromedp.Do(ctx2, chromedp.Navigate(hs.URL+chartURL)); err != nil {
		t.Fatal(err)
	}
	again, err := chromedp.Run(ctx2, chromedp.Poll[drawnChart](readIOPSChart, chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again.Categories, drawn.Categories) || !slices.Equal(again.Names, drawn.Names) {
		t.Fatalf("shared chart shows %v %v, the run page %v %v", again.Names, again.Categories, drawn.Names, drawn.Categories)
	}
	for i := range again.Series {
		if string(again.Series[i]) != string(drawn.Series[i]) {
			t.Fatalf("series %s differs in the shared chart:\n%s\n%s", again.Names[i], again.Series[i], drawn.Series[i])
		}
	}
}

// medianIOPS computes, from the API's export document, the median over
// repeats of each (iodepth, engine) step's total IOPS.
func medianIOPS(t *testing.T, base string, id int64) map[string]float64 {
	t.Helper()
	doc := fetchRunDoc(t, base, id)
	cells := map[string][]float64{}
	for _, s := range doc.Steps {
		var iops float64
		for _, g := range s.Result.Groups {
			for i := range g.Jobs {
				iops += g.Jobs[i].IOPS(bench.Read) + g.Jobs[i].IOPS(bench.Write)
			}
		}
		k := s.Step.Value(sweep.AxisIODepth) + "/" + s.Step.Value(sweep.AxisEngine)
		cells[k] = append(cells[k], iops)
	}
	out := map[string]float64{}
	for k, v := range cells {
		slices.Sort(v)
		m := v[len(v)/2]
		if len(v)%2 == 0 {
			m = (v[len(v)/2-1] + v[len(v)/2]) / 2
		}
		out[k] = m
	}
	return out
}

// fetchRunDoc is run id's document from the API.
func fetchRunDoc(t *testing.T, base string, id int64) *db.Export {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("%s/api/runs/%d", base, id))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc db.Export
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return &doc
}

func fetchCSV(t *testing.T, url string) [][]string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	rows, err := csv.NewReader(resp.Body).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("CSV: %d rows, %v", len(rows), err)
	}
	return rows
}

func writeArtifact(t *testing.T, dir, name string, b []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", filepath.Join(dir, name))
}

// screenshot saves a full-page screenshot of what ctx's browser shows as
// name in dir (quality 100: PNG, else JPEG at that quality), when
// $IOLAB_ARTIFACTS asks for the artifacts: a screenshot is for a person
// to look at, and a long page's takes a second or two that a run of the
// suite no one looks at need not spend.
func screenshot(t *testing.T, ctx context.Context, dir, name string, quality int) {
	t.Helper()
	if os.Getenv("IOLAB_ARTIFACTS") == "" {
		return
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(quality))
	if err != nil {
		t.Fatal(err)
	}
	writeArtifact(t, dir, name, shot)
}

// waitVisibleAcrossReloads waits for sel to be visible, again when the
// page navigates meanwhile: a run page reloads itself as its run ends,
// and a short run's (eight steps of 100 ms) may do so while the wait
// runs, which chromedp ends with "Inspected target navigated or closed"
// (two CI runs).
func waitVisibleAcrossReloads(ctx context.Context, sel string) error {
	var err error
	for range 5 {
		if err = chromedp.Do(ctx, chromedp.WaitVisible(sel)); err == nil || !strings.Contains(err.Error(), "navigated or closed") {
			return err
		}
	}
	return err
}
