package handlers

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"iolab/handlers/report"
)

// reportFigure is what the browser found in one of a report's figures.
type reportFigure struct {
	Kind  string  `json:"kind"`
	SVG   bool    `json:"svg"`
	W     float64 `json:"w"`
	H     float64 `json:"h"`
	Paths int     `json:"paths"`
	Text  string  `json:"text"`
	Error string  `json:"error"`
}

// readReportFigures reads every chart of a report as the browser laid it
// out: its SVG's size on the page, how many shapes it has, its text.
const readReportFigures = `[...document.querySelectorAll("figure.chart-box")].map(f => {
  const s = f.querySelector("svg"), e = f.querySelector(".error"), r = s ? s.getBoundingClientRect() : {width: 0, height: 0};
  return {kind: f.dataset.kind, svg: !!s, w: r.width, h: r.height,
    paths: s ? s.querySelectorAll("path, line, rect, circle, polyline").length : 0,
    text: s ? [...s.querySelectorAll("text")].map(t => t.textContent).join("|") : "", error: e ? e.textContent : ""};
})`

// external finds what would make a page fetch something: scripts, style
// sheets, images, frames, imports and url()s other than to its own
// elements (echarts clips through url(#id)).
var external = regexp.MustCompile(`(?i)<script|<link|<img|<iframe|<object|<embed|@import|url\(\s*['"]?[^#'"\s]|\ssrc=|href="(https?:)?//`)

// TestBrowserReport: the HTML report of an engines run, of a compare of
// two engines runs and of a QoS run (its knee, the QoS and latency over
// time charts) is one file that references nothing outside it,
// opens in headless chromium with no network (a proxy nobody listens
// on), and has every chart drawn: each figure holds an SVG laid out at
// its size, with shapes, its title and its series' names.
func TestBrowserReport(t *testing.T) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed; .ci/test installs it")
	}
	ts := newTestServer(t, Config{})
	ha, hb := compareHosts()
	r1 := seedEnginesLab(t, ts.store, "engines", ha, 1)
	r2 := seedEnginesLab(t, ts.store, "engines again", hb, 0.8)
	r3 := seedQoSLab(t, ts.store, ha)
	dir, art := t.TempDir(), artifactsDir(t)

	// No network: a proxy nobody listens on.
	ctx, cancel := browser(t, path, chromedp.WindowSize(1200, 1600), chromedp.ProxyServer("127.0.0.1:9"),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"))
	defer cancel()

	for _, tc := range []struct {
		name string
		ids  []int64
		// kinds are charts the report must have; series names each
		// chart's text must include.
		kinds  []string
		series []string
		text   []string // in the page
	}{
		{"engines", []int64{r1.ID}, []string{"iops", "latency", "cpu"}, []string{"libaio", "io_uring", "psync"},
			[]string{"Statistical diff", "io_uring against libaio (the base)", "As a fio job file", "Steps"}},
		{"compare", []int64{r1.ID, r2.ID}, []string{"iops"}, []string{"lab-a", "lab-b"},
			[]string{"Before comparing", "IOMMU mode", "Differences", "run " + strconv.FormatInt(r2.ID, 10) + " against run " + strconv.FormatInt(r1.ID, 10) + " (the base)", "too few repeats to tell"}},
		{"qos", []int64{r3.ID}, []string{"qos", "lattime"}, []string{"p99", "p50"},
			[]string{"Latency under load", "IOPS at p99<1ms — iodepth=32"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := report.Build(context.Background(), ts.store, tc.ids, report.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := rep.WriteHTML(&b); err != nil {
				t.Fatal(err)
			}
			if m := external.Find(b.Bytes()); m != nil {
				t.Fatalf("the report references something outside it: %q", m)
			}
			file := filepath.Join(dir, tc.name+".html")
			if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := chromedp.Do(ctx, chromedp.Navigate("file://"+file)); err != nil {
				t.Fatal(err)
			}
			figs, err := chromedp.Run(ctx, chromedp.Evaluate[[]reportFigure](readReportFigures))
			if err != nil {
				t.Fatal(err)
			}
			text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
			if err != nil {
				t.Fatal(err)
			}
			resources, err := chromedp.Run(ctx, chromedp.Evaluate[int](`performance.getEntriesByType("resource").length`))
			if err != nil {
				t.Fatal(err)
			}
			if resources != 0 {
				t.Errorf("the page fetched %d resources", resources)
			}
			if len(figs) != len(rep.Charts) || len(figs) < len(tc.kinds) {
				t.Fatalf("%d figures in the page, %d charts in the report", len(figs), len(rep.Charts))
			}
			for i, f := range figs {
				if !f.SVG || f.Error != "" || f.W < 600 || f.H < 250 || f.Paths < 10 {
					t.Errorf("chart %s not drawn: %+v", f.Kind, f)
					continue
				}
				if !strings.Contains(f.Text, rep.Charts[i].Title) {
					t.Errorf("chart %s lacks its title %q: %s", f.Kind, rep.Charts[i].Title, f.Text)
				}
			}
			for _, k := range tc.kinds {
				i := slices.IndexFunc(figs, func(f reportFigure) bool { return f.Kind == k })
				if i < 0 {
					t.Errorf("no %s chart among %d", k, len(figs))
					continue
				}
				for _, s := range tc.series {
					if !strings.Contains(figs[i].Text, s) {
						t.Errorf("%s chart lacks series %q: %s", k, s, figs[i].Text)
					}
				}
			}
			for _, s := range tc.text {
				if !strings.Contains(text, s) {
					t.Errorf("the report lacks %q", s)
				}
			}
			screenshot(t, ctx, art, "report-"+tc.name+".jpg", 80)
			writeArtifact(t, art, "report-"+tc.name+".html", b.Bytes())
		})
	}
}
