package handlers

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/png"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"iolab/bench/system"
)

// drawnSeries is what the browser drew of one chart: each series' name,
// type and colour.
type drawnSeries struct {
	Names  []string `json:"names"`
	Types  []string `json:"types"`
	Colors []string `json:"colors"`
}

// readSeries reads a chart's series from its echarts instance: the
// plotted ones (bars, boxes, lines), not whiskers or guide lines.
func readSeries(kind string) string {
	return `(() => {
  const c = window.iolabCharts && window.iolabCharts[` + strconv.Quote(kind) + `];
  if (!c) return null;
  const s = c.getOption().series.filter(s => s.type !== "custom" && !/ linear$/.test(s.name));
  return {names: s.map(s => s.name), types: s.map(s => s.type), colors: s.map(s => (s.itemStyle && s.itemStyle.color) || "")};
})()`
}

// tooltip shows the tooltip of one point of a chart and returns its text.
func tooltip(kind string, series, index int) string {
	return fmt.Sprintf(`(() => {
  const c = window.iolabCharts[%q];
  c.dispatchAction({type: "showTip", seriesIndex: %d, dataIndex: %d});
  const el = [...c.getDom().querySelectorAll("div")].find(d => d.querySelector(".tt"));
  return el ? el.innerText : "";
})()`, kind, series, index)
}

// exportPNG is a chart's PNG download, as the page makes it.
func exportPNG(t *testing.T, ctx context.Context, kind string) []byte {
	t.Helper()
	url, err := chromedp.Run(ctx, chromedp.Evaluate[string](`iolab.exportChart(document.querySelector(".chart[data-kind=`+kind+`]"), "png").url`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := base64.StdEncoding.DecodeString(url[strings.IndexByte(url, ',')+1:])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// screenshotOf is a PNG of the element sel, as the page shows it now.
func screenshotOf(t *testing.T, ctx context.Context, sel string) []byte {
	t.Helper()
	b, err := chromedp.Run(ctx, chromedp.Screenshot(sel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBrowserChartsReadable looks at the charts a storage engineer reads:
// a 3-engine × 8-iodepth × 3-repeat sweep, a numjobs sweep, a fairness
// run and two kernels compared. Each chart draws at most 8 series until
// a picker asks for more; an engine has one colour on every chart and on
// the compare page; tooltips carry units, three significant digits and
// the repeats; PNG downloads are twice the size on screen and SVG ones
// are vector. Screenshots of every page go to testdata/artifacts.
func TestBrowserChartsReadable(t *testing.T) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed; .ci/test installs it")
	}
	ts := newTestServer(t, Config{})
	hostA := system.HostInfo{Hostname: "lab-a", KernelRelease: "6.12.0-lab", CPUModel: "Lab CPU", CPUCount: 16, IOMMU: system.IOMMUInfo{Mode: "passthrough"}}
	hostA.Cmdline = "BOOT_IMAGE=/vmlinuz-6.12.0-lab root=UUID=5f0c9a52-8d7e-4a51-9f37-6b2b1c3e8a10 ro console=ttyS0,115200n8 console=tty0 intel_iommu=on iommu=pt nvme_core.io_timeout=4294967295 nvme.poll_queues=4 transparent_hugepage=never mitigations=off isolcpus=2-7 nohz_full=2-7 rcu_nocbs=2-7"
	hostB := hostA
	hostB.KernelRelease = "6.1.0-lab"
	hostB.Cmdline = strings.ReplaceAll(hostA.Cmdline, "6.12.0", "6.1.0")
	engines := seedEnginesLab(t, ts.store, "libaio vs io_uring", hostA, 1)
	older := seedEnginesLab(t, ts.store, "libaio vs io_uring, 6.1", hostB, 0.8)
	scaling := seedScalingLab(t, ts.store, hostA)
	fairness := seedFairnessLab(t, ts.store, hostA)
	hs := httptest.NewServer(ts.e)
	defer hs.Close()
	art := artifactsDir(t)
	ctx, cancel := browser(t, path)
	defer cancel()
	// A script error fails the test: a page that throws draws nothing.
	var mu sync.Mutex
	var scriptErrors []string
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	go func() {
		for m, err := range chromedp.Console(ctx) {
			if err != nil {
				return
			}
			if m.IsException() {
				mu.Lock()
				scriptErrors = append(scriptErrors, m.String())
				mu.Unlock()
			}
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, e := range scriptErrors {
			t.Errorf("script error: %s", e)
		}
	}()

	shoot := func(name string) {
		t.Helper()
		screenshot(t, ctx, art, name, 100)
	}
	open := func(u string, kinds ...string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(hs.URL+u), chromedp.WaitReady(`body`)); err != nil {
			t.Fatal(err)
		}
		for _, k := range kinds {
			if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!(window.iolabCharts && window.iolabCharts[`+strconv.Quote(k)+`])`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
				shoot("failed.png")
				t.Fatalf("%s: chart %s not drawn: %v", u, k, err)
			}
		}
	}
	series := func(kind string) drawnSeries {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[drawnSeries](readSeries(kind)))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	eval := func(js string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	// The engines sweep: every chart at most 8 series by default.
	runURL := fmt.Sprintf("/runs/%d", engines.ID)
	open(runURL, "iops", "latency", "distribution", "timeline", "cpu")
	shoot("run-engines.png")
	colors := map[string]string{}
	for _, kind := range []string{"iops", "latency", "distribution", "timeline", "cpu"} {
		s := series(kind)
		if len(s.Names) == 0 || len(s.Names) > 8 {
			t.Errorf("%s chart draws %d series by default (%q), want 1 to 8", kind, len(s.Names), s.Names)
		}
		for i, n := range s.Names {
			if strings.Contains(n, "run ") || strings.Contains(n, "6.12.0") {
				t.Errorf("%s legend %q repeats what every series shares", kind, n)
			}
			for _, eng := range []string{"libaio", "io_uring", "psync"} {
				if n == eng || strings.HasPrefix(n, eng+" ") {
					if c, ok := colors[eng]; ok && c != s.Colors[i] {
						t.Errorf("%s is %s on one chart and %s on the %s chart", eng, c, s.Colors[i], kind)
					}
					colors[eng] = s.Colors[i]
				}
			}
		}
	}
	if len(colors) != 3 || colors["libaio"] == colors["io_uring"] || colors["io_uring"] == colors["psync"] {
		t.Errorf("engine colours %v, want three different ones", colors)
	}
	// The latency chart: three engines, p50 and p99 by default; the
	// percentile picker adds p99.9.
	lat := series("latency")
	if !slices.Equal(lat.Names, []string{"libaio p50", "libaio p99", "io_uring p50", "io_uring p99", "psync p50", "psync p99"}) {
		t.Errorf("latency series %q", lat.Names)
	}

	// Tooltips: units, three significant digits, the repeats, and for a
	// latency point only its engine's percentiles.
	tip := eval(tooltip("iops", 1, 3))
	if !strings.Contains(tip, "3 repeats") || !strings.Contains(tip, "iodepth 8") || !strings.Contains(tip, "CV ") {
		t.Errorf("whisker tooltip %q: want the repeats, the iodepth, the CV", tip)
	}
	if m := regexp.MustCompile(`median (\d+(?:\.\d+)?)k IOPS\s+min–max (\d+(?:\.\d+)?)k IOPS – (\d+(?:\.\d+)?)k IOPS`).FindStringSubmatch(tip); m == nil {
		t.Errorf("whisker tooltip %q: want median and min–max in k IOPS, three digits", tip)
	} else {
		med, _ := strconv.ParseFloat(m[1], 64)
		lo, _ := strconv.ParseFloat(m[2], 64)
		hi, _ := strconv.ParseFloat(m[3], 64)
		if !(lo <= med && med <= hi && lo > 100) {
			t.Errorf("whisker tooltip %q: min %v, median %v, max %v", tip, lo, med, hi)
		}
	}
	writeArtifact(t, art, "tooltip-iops.png", screenshotOf(t, ctx, `figure[data-kind=iops]`))
	tip = eval(tooltip("latency", 2, 4))
	writeArtifact(t, art, "tooltip-latency.png", screenshotOf(t, ctx, `figure[data-kind=latency]`))
	// Its change from the first series is named, and the base is named
	// only there: none of libaio's lines is listed.
	lines, change, _ := strings.Cut(tip, "vs libaio (merged-histogram ratio, n=3 vs 3) ")
	if !strings.Contains(lines, "µs") || strings.Contains(lines, "libaio") || strings.Count(lines, "io_uring") != 2 || regexp.MustCompile(`\d\.\d{3,}`).MatchString(tip) {
		t.Errorf("latency tooltip %q: want io_uring's two percentiles in µs, three digits", tip)
	}
	if !regexp.MustCompile(`^[+−]\d+(\.\d+)? %`).MatchString(change) {
		t.Errorf("latency tooltip %q: want its change from libaio, named", tip)
	}

	// Each chart as its PNG download, for a closer look.
	for _, kind := range []string{"iops", "latency", "distribution", "timeline", "cpu"} {
		writeArtifact(t, art, "engines-"+kind+".png", exportPNG(t, ctx, kind))
	}

	// A picker writes the URL: p99.9 added to the latency chart.
	if err := chromedp.Do(ctx, chromedp.Click(`figure[data-kind=latency] fieldset[data-param=p] input[value="99.9"]`)); err != nil {
		t.Fatal(err)
	}
	var search string
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(search, "p=99.9") && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		search, _ = chromedp.Run(ctx, chromedp.Evaluate[string](`location.search`)) // fails while the page changes
	}
	if !strings.Contains(search, "p=99.9") {
		t.Fatalf("the percentile picker did not write the URL: %q", search)
	}
	open(runURL+search, "latency")
	if lat := series("latency"); !slices.Contains(lat.Names, "io_uring p99.9") {
		t.Errorf("after picking p99.9: series %q", lat.Names)
	}
	// The engine picker: io_uring alone, every percentile.
	u, _ := url.Parse(runURL)
	q := u.Query()
	q.Set("show", "io_uring")
	for _, p := range []string{"50", "90", "99", "99.9", "99.99"} {
		q.Add("p", p)
	}
	open(runURL+"?"+q.Encode(), "latency", "iops")
	if lat := series("latency"); len(lat.Names) != 5 || !slices.Equal(series("iops").Names, []string{"io_uring"}) {
		t.Errorf("show=io_uring: latency %q, iops %q", lat.Names, series("iops").Names)
	}

	// Downloads: PNG at 2×, SVG as vector.
	raw := exportPNG(t, ctx, "iops")
	img, err := png.DecodeConfig(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	width, _ := strconv.Atoi(eval(`String(document.querySelector(".chart[data-kind=iops]").clientWidth)`))
	if img.Width != 2*width || width < 1000 {
		t.Errorf("PNG is %d px wide, the chart %d px on screen: want twice, on a chart at least 1000 px wide", img.Width, width)
	}
	writeArtifact(t, art, "iops.png", raw)
	svg := eval(`iolab.exportChart(document.querySelector(".chart[data-kind=latency]"), "svg").svg`)
	if !strings.HasPrefix(svg, "<svg") || !strings.Contains(svg, "Latency percentiles") || !strings.Contains(svg, "<path") {
		t.Errorf("SVG download: %.200s", svg)
	}
	writeArtifact(t, art, "latency.svg", []byte(svg))

	// The open view: full width.
	open(fmt.Sprintf("/charts?kind=latency&run=%d", engines.ID), "latency")
	shoot("chart-latency.png")
	open(fmt.Sprintf("/charts?kind=timeline&run=%d&step=3", engines.ID), "timeline")
	shoot("chart-timeline-step.png")

	// Scaling, fairness.
	open(fmt.Sprintf("/runs/%d", scaling.ID), "scaling")
	shoot("run-scaling.png")
	// The scaling chart as drawn: numjobs on a log2 axis, the measured
	// IOPS spanning most of their axis, which linear scaling sets only
	// once its legend entry is clicked.
	extents := `(() => {
  const c = window.iolabCharts["scaling"], m = c.getModel(), line = c.getOption().series[0].data.map(d => d.value[1]);
  const ext = i => m.getComponent("yAxis", i).axis.scale.getExtent();
  return JSON.stringify({x: m.getComponent("xAxis", 0).axis.type, iops: ext(0), eff: ext(1), lo: Math.min(...line), hi: Math.max(...line)});
})()`
	var ext struct {
		X         string
		IOPS, Eff [2]float64
		Lo, Hi    float64
	}
	if err := json.Unmarshal([]byte(eval(extents)), &ext); err != nil {
		t.Fatal(err)
	}
	if fill := (ext.Hi - ext.Lo) / (ext.IOPS[1] - ext.IOPS[0]); ext.X != "log" || fill < 0.2 || ext.IOPS[1] > 2*ext.Hi || ext.Eff != [2]float64{0, 100} {
		t.Errorf("scaling chart: x %s, IOPS %v–%v on an axis %v (%.0f %%), efficiency axis %v", ext.X, ext.Lo, ext.Hi, ext.IOPS, 100*fill, ext.Eff)
	}
	// Tooltips: a point's IOPS with its growth and efficiency; an
	// efficiency point in %, not in IOPS.
	if tip := eval(tooltip("scaling", 0, 2)); !strings.Contains(tip, "numjobs 4") || !strings.Contains(tip, "IOPS") || !strings.Contains(tip, "reader · numjobs 4") || !strings.Contains(tip, "growth ") || !strings.Contains(tip, "efficiency") {
		t.Errorf("scaling IOPS tooltip %q: want numjobs, IOPS, growth, efficiency", tip)
	}
	if tip := eval(tooltip("scaling", 2, 2)); !regexp.MustCompile(`\d %`).MatchString(tip) || !strings.Contains(tip, "linear") {
		t.Errorf("scaling efficiency tooltip %q: want a percentage and linear scaling's IOPS", tip)
	}
	eval(`(window.iolabCharts["scaling"].dispatchAction({type: "legendSelect", name: "linear scaling"}), "")`)
	json.Unmarshal([]byte(eval(extents)), &ext)
	if ext.IOPS[1] < 20*ext.Lo {
		t.Errorf("linear scaling clicked on: the IOPS axis still ends at %v", ext.IOPS[1])
	}
	writeArtifact(t, art, "scaling-linear.png", screenshotOf(t, ctx, `figure[data-kind=scaling]`))
	writeArtifact(t, art, "scaling.png", exportPNG(t, ctx, "scaling"))
	open(fmt.Sprintf("/runs/%d", fairness.ID), "fairness")
	shoot("run-fairness-4-schedulers.png")
	writeArtifact(t, art, "fairness.png", exportPNG(t, ctx, "fairness"))

	// The compare page: the same engine, the same colour.
	open(fmt.Sprintf("/compare?run=%d&run=%d", engines.ID, older.ID), "iops")
	shoot("compare-engines.png")
	cmp := series("iops")
	writeArtifact(t, art, "compare-iops.png", exportPNG(t, ctx, "iops"))
	writeArtifact(t, art, "compare-latency.png", exportPNG(t, ctx, "latency"))
	for i, n := range cmp.Names {
		for eng, c := range colors {
			if strings.Contains(n, eng+" ") || strings.HasSuffix(n, eng) {
				if cmp.Colors[i] != c {
					t.Errorf("compare: %q is %s, %s is %s on the run page", n, cmp.Colors[i], eng, c)
				}
			}
		}
	}
	if len(cmp.Names) > 8 {
		t.Errorf("compare draws %d series: %q", len(cmp.Names), cmp.Names)
	}
	// The differences table fits the page: its last column is on screen.
	right := eval(`String(Math.round(document.querySelector("#diffs tr th:last-child").getBoundingClientRect().right))`)
	if r, _ := strconv.Atoi(right); r > 1400 {
		t.Errorf("the differences table ends at %s px, beyond the 1400 px window", right)
	}

	// The runs list: a label filter, a workload column, and a page that
	// fits a laptop even with long names and labels.
	if rec := ts.do(t, "PATCH", fmt.Sprintf("/api/runs/%d", older.ID), `{"name": "libaio vs io_uring on the previous LTS kernel, IOMMU in passthrough mode, after the firmware update",
		"labels": ["iommu=pt", "firmware=2.1.7", "kernel=lts"]}`); rec.Code != 200 {
		t.Fatalf("relabel: %d %s", rec.Code, rec.Body)
	}
	open("/runs")
	shoot("runs.png")
	if w, _ := strconv.Atoi(eval(`String(document.documentElement.scrollWidth)`)); w > 1400 {
		t.Errorf("the runs list is %d px wide, more than the 1400 px window", w)
	}
	// Choosing a label filters at once.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const s = document.querySelector("#run-filters select[name=label]");
  s.value = "iommu=pt"; return s.dispatchEvent(new Event("change")); })()`)); err != nil {
		t.Fatal(err)
	}
	var rows string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		rows, _ = chromedp.Run(ctx, chromedp.Evaluate[string](`document.readyState + " " + location.search + " " + document.querySelectorAll("table.runs tbody tr").length`))
		if strings.HasPrefix(rows, "complete ?label=") {
			break
		}
	}
	if rows != "complete ?label=iommu%3Dpt 1" {
		t.Errorf("label filter: %q, want label= in the URL and one run", rows)
	}
	if got := eval(`[...document.querySelectorAll("table.runs th")].map(th => th.textContent).join(",")`); !strings.Contains(got, "workload") {
		t.Errorf("runs list columns %s lack workload", got)
	}

	// The form says every wrong field at once, each beside its field.
	err = chromedp.Do(ctx,
		chromedp.Navigate(hs.URL+"/runs/new"),
		chromedp.WaitVisible(`form#new-run`),
		chromedp.SetValue(`input[name=target]`, "form.dat"),
		chromedp.SetValue(`input[name=size]`, "4m"),
		chromedp.SetValue(`input[name=bs]`, "4q"),
		chromedp.SetValue(`input[name=runtime]`, "ten"),
		chromedp.SetValue(`input[name=iodepth]`, "1,x"),
		chromedp.Click(`form#new-run button[type=submit]`),
		chromedp.WaitVisible(`.field-error`),
	)
	if err != nil {
		t.Fatal(err)
	}
	shoot("new-run-errors.png")
	if got := eval(`[...document.querySelectorAll(".field-error")].map(e => e.dataset.field).join(",")`); got != "bs,runtime,iodepth" {
		t.Errorf("field errors beside %q, want bs, runtime and iodepth", got)
	}
}
