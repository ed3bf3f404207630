package handlers

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"iolab/bench/sweep"
	"iolab/bench/system"
)

// drawnLook is one series as the browser drew it: its name, colour, dash
// and symbol, read from its chart's echarts instance.
type drawnLook struct {
	Chart  string `json:"chart"`
	Name   string `json:"name"`
	Color  string `json:"color"`
	Dash   string `json:"dash"`
	Symbol string `json:"symbol"`
}

// readLooks reads every drawn chart's series through
// echarts.getInstanceByDom(el).getOption(), as a reader's eye would: not
// whiskers or guide lines.
const readLooks = `(() => {
  const out = [];
  for (const el of document.querySelectorAll(".chart[data-kind]")) {
    const c = echarts.getInstanceByDom(el);
    if (!c) continue;
    const seen = new Set();
    for (const s of c.getOption().series) {
      if (s.type === "custom" || !s.name || seen.has(s.name) || / linear$/.test(s.name)) continue;
      seen.add(s.name);
      const d = (s.data && s.data[0] && s.data[0].itemStyle) || {};
      out.push({chart: el.dataset.kind, name: s.name,
        color: String((s.itemStyle && s.itemStyle.color) || (s.lineStyle && s.lineStyle.color) || "").toLowerCase(),
        dash: String((s.lineStyle && s.lineStyle.type) || d.borderType || "solid"),
        symbol: s.type === "line" ? String(s.symbol || "") : ""});
    }
  }
  return out;
})()`

// TestBrowserColourIsTheValue opens the run pages of an engines ×
// iodepth sweep and of a numjobs × iodepth one and reads every chart's
// series as drawn: no two series of a chart look alike, and an engine (a
// numjobs value) has one colour on every chart of its page, no two
// values the same. Screenshots go to testdata/artifacts (colour-*.png).
func TestBrowserColourIsTheValue(t *testing.T) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed; .ci/test installs it")
	}
	ts := newTestServer(t, Config{})
	host := system.HostInfo{Hostname: "lab-a", KernelRelease: "6.12.0-lab", CPUModel: "Lab CPU", CPUCount: 16}
	engines := seedEnginesLab(t, ts.store, "libaio vs io_uring", host, 1)
	plan := labPlan(t, "numjobs × iodepth", []string{"--name=reader", "--filename=/dev/nvme1n1", "--rw=randread", "--bs=4k", "--direct=1", "--ioengine=io_uring"}, 2,
		sweep.Sweep{Axis: sweep.AxisIODepth, Values: []string{"1", "8", "32"}},
		sweep.Sweep{Axis: sweep.AxisNumJobs, Values: []string{"1", "2", "4", "8", "16", "32"}})
	numjobs := seedLab(t, ts.store, plan, host, func(st sweep.Step, _ int, rng *rand.Rand) labStep {
		n, _ := strconv.ParseFloat(st.Value(sweep.AxisNumJobs), 64)
		qd, _ := strconv.ParseFloat(st.Value(sweep.AxisIODepth), 64)
		iops := 700e3 * (1 - math.Exp(-n*qd*12e3/700e3)) * (1 + 0.04*rng.NormFloat64())
		return labStep{iops: iops / n, median: time.Duration(qd * n / iops * 1e9), spread: 0.2}
	})
	hs := httptest.NewServer(ts.e)
	defer hs.Close()
	art := artifactsDir(t)
	ctx, cancel := browser(t, path)
	defer cancel()

	for _, tc := range []struct {
		name   string
		id     int64
		values []string
	}{
		{"engines", engines.ID, []string{"libaio", "io_uring", "psync"}},
		{"numjobs", numjobs.ID, []string{"numjobs=1", "numjobs=2", "numjobs=4", "numjobs=8", "numjobs=16", "numjobs=32"}},
	} {
		if err := chromedp.Do(ctx, chromedp.Navigate(hs.URL+fmt.Sprintf("/runs/%d", tc.id)), chromedp.WaitReady(`body`)); err != nil {
			t.Fatal(err)
		}
		// Every chart of the page drawn.
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const els = document.querySelectorAll(".chart[data-kind]");
  return els.length > 0 && [...els].every(el => echarts.getInstanceByDom(el)); })()`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			t.Fatalf("%s: charts not drawn: %v", tc.name, err)
		}
		looks, err := chromedp.Run(ctx, chromedp.Evaluate[[]drawnLook](readLooks))
		if err != nil {
			t.Fatal(err)
		}
		colour := map[string]string{}
		charts := map[string]bool{}
		seen := map[[4]string]string{}
		for _, l := range looks {
			k := [4]string{l.Chart, l.Color, l.Dash, l.Symbol}
			if w, ok := seen[k]; ok {
				t.Errorf("%s %s: %q and %q both %s %s %s", tc.name, l.Chart, w, l.Name, l.Color, l.Dash, l.Symbol)
			}
			seen[k] = l.Name
			if l.Chart == "fairness" || l.Chart == "latency_timeline" {
				continue
			}
			for _, w := range strings.Fields(l.Name) {
				for _, v := range tc.values {
					if w != v {
						continue
					}
					charts[l.Chart] = true
					if was, ok := colour[v]; ok && was != l.Color {
						t.Errorf("%s %s: %s in %s, %s on another chart", tc.name, l.Chart, v, l.Color, was)
					}
					colour[v] = l.Color
				}
			}
		}
		if len(colour) != len(tc.values) || len(charts) < 2 {
			t.Errorf("%s: values drawn %q on charts %v: want each of %q on two charts at least", tc.name, colour, charts, tc.values)
		}
		byColour := map[string]string{}
		for v, c := range colour {
			if w, ok := byColour[c]; ok {
				t.Errorf("%s: %s and %s both in %s", tc.name, w, v, c)
			}
			byColour[c] = v
		}
		t.Logf("%s: %d series on %v, colours %v", tc.name, len(looks), charts, colour)
		screenshot(t, ctx, art, "colour-"+tc.name+".png", 100)
	}
}
