package handlers

import (
	"fmt"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"iolab/bench/system"
)

// TestBrowserPickersKeepPlace ticks a picker as a reader does, scrolled
// down to the latency chart: the page's URL takes the pick
// (location.search), the page is not loaded again (a marker set on its
// window survives), it stays where it was scrolled (window.scrollY),
// and the chart draws the pick. Ticking past the 8 lines a chart draws
// shows the note naming what it leaves out. Screenshots picker-*.png.
func TestBrowserPickersKeepPlace(t *testing.T) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed; .ci/test installs it")
	}
	ts := newTestServer(t, Config{})
	host := system.HostInfo{Hostname: "lab-a", KernelRelease: "6.12.0-lab", CPUModel: "Lab CPU", CPUCount: 16}
	engines := seedEnginesLab(t, ts.store, "libaio vs io_uring", host, 1)
	hs := httptest.NewServer(ts.e)
	defer hs.Close()
	art := artifactsDir(t)
	ctx, cancel := browser(t, path)
	defer cancel()

	eval := func(js string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	waitFor := func(js, what string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
			shot, _ := chromedp.Run(ctx, chromedp.FullScreenshot(100))
			writeArtifact(t, art, "picker-failed.png", shot)
			t.Fatalf("%s: %v", what, err)
		}
	}
	latencyNames := `JSON.stringify(window.iolabCharts.latency.getOption().series.map(s => s.name))`

	if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/runs/%d", hs.URL, engines.ID)), chromedp.WaitReady("body")); err != nil {
		t.Fatal(err)
	}
	waitFor(`!!(window.iolabCharts && window.iolabCharts.latency)`, "latency chart drawn")
	// Scrolled so that the latency chart's pickers are at the top.
	eval(`window.iolabMarker = "still here";
window.scrollTo(0, document.querySelector("figure[data-kind=latency]").getBoundingClientRect().top + window.scrollY - 40);
String(window.scrollY)`)
	y := eval(`String(window.scrollY)`)
	if n, _ := strconv.Atoi(y); n < 100 {
		t.Fatalf("scrollY %s: the page is too short to tell whether it keeps its place", y)
	}

	for _, step := range []struct {
		p      string // the percentile ticked
		series string // a series it draws
		note   string // the note under the pickers, "" for none
	}{
		// p50, p99, p99.9 of 3 engines is 9 lines: psync is left out,
		// and said (it was left out unsaid before).
		{"99.9", "io_uring p99.9", "Not drawn (2 series of 3 lines at most, 6 in all): psync."},
		{"90", "libaio p90", "Not drawn (2 series of 4 lines at most, 8 in all): psync."},
	} {
		y := eval(`String(window.scrollY)`) // a screenshot may have scrolled
		if err := chromedp.Do(ctx, chromedp.Click(`figure[data-kind=latency] fieldset[data-param=p] input[value="`+step.p+`"]`)); err != nil {
			t.Fatal(err)
		}
		waitFor(`location.search.includes("p=`+step.p+`") && `+latencyNames+`.includes(`+strconv.Quote(step.series)+`)`, "p="+step.p+" drawn")
		if m := eval(`String(window.iolabMarker)`); m != "still here" {
			t.Errorf("p=%s: the page loaded again (marker %q)", step.p, m)
		}
		if now := eval(`String(window.scrollY)`); now != y {
			t.Errorf("p=%s: scrollY %s, was %s", step.p, now, y)
		}
		note := eval(`(document.querySelector("figure[data-kind=latency] .chart-hidden") || {}).textContent || ""`)
		if !strings.HasPrefix(note, step.note) || (step.note == "") != (note == "") {
			t.Errorf("p=%s: note %q, want %q", step.p, note, step.note)
		}
		if step.note != "" && !strings.Contains(note, "Tick them under ioengine") {
			t.Errorf("p=%s: note %q does not name the picker that draws psync", step.p, note)
		}
		writeArtifact(t, art, "picker-p"+step.p+".png", screenshotOf(t, ctx, `figure[data-kind=latency]`))
	}
	// The share URL reproduces the view: the page opened afresh at it
	// draws what the picks drew.
	search := eval(`location.search`)
	drawn := eval(latencyNames)
	if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/runs/%d%s", hs.URL, engines.ID, search)), chromedp.WaitReady("body")); err != nil {
		t.Fatal(err)
	}
	waitFor(`!!(window.iolabCharts && window.iolabCharts.latency)`, "latency chart drawn at the shared URL")
	if again := eval(latencyNames); again != drawn {
		t.Errorf("the shared URL %s draws %s, the picks drew %s", search, again, drawn)
	}
	if m := eval(`String(window.iolabMarker)`); m != "undefined" {
		t.Errorf("marker %q on a page opened afresh", m)
	}
}

// TestBrowserTablesFit: at 1600 px no table scrolls sideways (its box's
// scrollWidth within its clientWidth), every column still there: the run
// pages' steps tables, the runs list, the compare pages' tables and a
// chart page's. It leaves fit-1600-*.png, and order-*.png of each run's
// first charts.
func TestBrowserTablesFit(t *testing.T) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed; .ci/test installs it")
	}
	ts := newTestServer(t, Config{})
	host := system.HostInfo{Hostname: "lab-a", KernelRelease: "6.12.0-lab", CPUModel: "Lab CPU", CPUCount: 16}
	engines := seedEnginesLab(t, ts.store, "libaio vs io_uring", host, 1)
	fairness := seedFairnessLab(t, ts.store, host)
	scaling := seedScalingLab(t, ts.store, host)
	hostB := host
	hostB.KernelRelease = "6.1.0-lab"
	older := seedEnginesLab(t, ts.store, "libaio vs io_uring, 6.1", hostB, 0.8)
	hs := httptest.NewServer(ts.e)
	defer hs.Close()
	art := artifactsDir(t)
	ctx, cancel := browser(t, path, chromedp.WindowSize(1600, 1000))
	defer cancel()
	eval := func(js string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, tc := range []struct {
		name, url, box string
	}{
		{"engines-steps", fmt.Sprintf("/runs/%d", engines.ID), "#run-steps .scroll"},
		{"fairness-steps", fmt.Sprintf("/runs/%d", fairness.ID), "#run-steps .scroll"},
		{"scaling-steps", fmt.Sprintf("/runs/%d", scaling.ID), "#run-steps .scroll"},
		{"runs", "/runs", "main"},
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(hs.URL+tc.url), chromedp.WaitReady("body")); err != nil {
			t.Fatal(err)
		}
		type fit struct {
			Scroll, Client, Columns, Inner int
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[fit](`(() => {
  const box = document.querySelector(`+strconv.Quote(tc.box)+`), table = box.querySelector("table");
  return {Scroll: box.scrollWidth, Client: box.clientWidth, Columns: table.querySelectorAll("thead th").length, Inner: window.innerWidth};
})()`))
		if err != nil {
			t.Fatal(err)
		}
		if got.Inner < 1580 {
			t.Fatalf("%s: window %d px wide, want 1600", tc.name, got.Inner)
		}
		if got.Scroll > got.Client {
			t.Errorf("%s: %d px of table in a %d px box: it scrolls sideways", tc.name, got.Scroll, got.Client)
		}
		if strings.HasSuffix(tc.name, "steps") && got.Columns != 18 {
			t.Errorf("%s: %d columns, want all 18", tc.name, got.Columns)
		}
		writeArtifact(t, art, "fit-1600-"+tc.name+".png", screenshotOf(t, ctx, tc.box))
		if !strings.HasSuffix(tc.name, "steps") {
			continue
		}
		// The first charts, to look at: the swept axis' chart, then IOPS
		// and latency (side by side by scheduler on the fairness run).
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!(window.iolabCharts && window.iolabCharts.iops && window.iolabCharts.latency)`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
			t.Fatalf("%s: charts not drawn: %v", tc.name, err)
		}
		if tc.name == "fairness-steps" {
			// A bar's tooltip: the one x value and the bar's scheduler,
			// its median, min and max, and its repeats.
			tip := eval(tooltip("iops", 0, 2))
			for _, want := range []string{"iodepth 1 · scheduler bfq", " IOPS", "min ", "max ", "3 repeats"} {
				if !strings.Contains(tip, want) {
					t.Errorf("IOPS bar tooltip %q lacks %q", tip, want)
				}
			}
		}
		for _, k := range []string{"iops", "latency"} {
			writeArtifact(t, art, "order-"+tc.name+"-"+k+".png", screenshotOf(t, ctx, `figure[data-kind=`+k+`]`))
		}
	}
	// Every table of the compare pages (differences, statistical diff,
	// max IOPS, the scheduler tables) and of a chart's own page.
	for _, tc := range []struct{ name, url, shoot string }{
		{"compare-engines", fmt.Sprintf("/compare?run=%d&run=%d", engines.ID, older.ID), "#diffs"},
		{"compare-fairness", fmt.Sprintf("/compare?run=%d", fairness.ID), "table.sched-jobs"},
		{"chart-latency", fmt.Sprintf("/charts?kind=latency&run=%d", engines.ID), "#chart-table thead"},
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(hs.URL+tc.url), chromedp.WaitReady("body")); err != nil {
			t.Fatal(err)
		}
		wide := eval(`JSON.stringify([...document.querySelectorAll(".scroll")].filter(b => b.scrollWidth > b.clientWidth).map(b => (b.querySelector("table").id || b.querySelector("table").className) + ": " + b.scrollWidth + " in " + b.clientWidth))`)
		if n := eval(`String(document.querySelectorAll(".scroll table").length)`); n == "0" {
			t.Errorf("%s: no table", tc.name)
		}
		if wide != "[]" {
			t.Errorf("%s: tables that scroll sideways at 1600 px: %s", tc.name, wide)
		}
		writeArtifact(t, art, "fit-1600-"+tc.name+".png", screenshotOf(t, ctx, tc.shoot))
	}
}
