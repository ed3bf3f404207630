package handlers

import (
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"iolab/bench/sweep"
	"iolab/bench/system"
)

// barHeights are the heights on screen (px) of every bar of a chart,
// by series name and category, as echarts places them.
func barHeights(kind string) string {
	return `(() => {
  const c = window.iolabCharts[` + strconv.Quote(kind) + `], o = c.getOption(), out = [];
  o.series.forEach((s, i) => {
    if (s.type !== "bar") return;
    s.data.forEach((d, k) => {
      const v = d && typeof d === "object" ? d.value : d;
      if (typeof v !== "number") return;
      const at = {xAxisIndex: s.xAxisIndex || 0, yAxisIndex: s.yAxisIndex || 0};
      const top = c.convertToPixel(at, [k, v]), base = c.convertToPixel(at, [k, 0]);
      out.push({name: (d.name || s.name), h: base[1] - top[1], label: (d.label && d.label.formatter) || ""});
    });
  });
  return out;
})()`
}

// The fairness lab run as a reader sees it: every bar of the fairness
// chart (a 4 KiB reader's few MiB/s beside a 1 MiB writer's GiB/s, its
// latency in ms beside the writer's) rises at least 10 px and carries
// its value. Screenshots go to testdata/artifacts.
func TestBrowserFairnessReadable(t *testing.T) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed; .ci/test installs it")
	}
	ts := newTestServer(t, Config{})
	host := system.HostInfo{Hostname: "lab-a", KernelRelease: "6.12.0-lab", CPUCount: 16}
	run := seedFairnessLab(t, ts.store, host)
	// The same sweep with each interval's latency kept, for the latency
	// timeline.
	preset, err := sweep.PresetByName("sched-fairness")
	if err != nil {
		t.Fatal(err)
	}
	plan := labPlan(t, "sched-fairness", preset.Args("/dev/nvme1n1", nil), 3,
		sweep.Sweep{Axis: sweep.AxisScheduler, Values: []string{"none", "mq-deadline", "bfq", "kyber"}})
	plan.Preset = preset.Name
	withLat := seedLab(t, ts.store, plan, host, func(st sweep.Step, job int, rng *rand.Rand) labStep {
		lat := map[string]float64{"none": 4000, "mq-deadline": 3400, "bfq": 950, "kyber": 2100}[st.Scheduler] * (1 + 0.1*rng.NormFloat64())
		return labStep{iops: 1e6 / lat, median: time.Duration(lat * 1e3), spread: 0.35, intervals: true}
	})
	hs := httptest.NewServer(ts.e)
	defer hs.Close()
	art := artifactsDir(t)
	ctx, cancel := browser(t, path)
	defer cancel()
	open := func(u string, kinds ...string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(hs.URL+u), chromedp.WaitReady(`body`)); err != nil {
			t.Fatal(err)
		}
		for _, k := range kinds {
			if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!(window.iolabCharts && window.iolabCharts[`+strconv.Quote(k)+`])`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
				t.Fatalf("%s: chart %s not drawn: %v", u, k, err)
			}
		}
	}

	open(fmt.Sprintf("/charts?kind=fairness&run=%d", run.ID), "fairness")
	writeArtifact(t, art, "fairness-chart.png", screenshotOf(t, ctx, `figure[data-kind=fairness]`))
	bars, err := chromedp.Run(ctx, chromedp.Evaluate[[]struct {
		Name  string  `json:"name"`
		H     float64 `json:"h"`
		Label string  `json:"label"`
	}](barHeights("fairness")))
	if err != nil {
		t.Fatal(err)
	}
	if len(bars) != 4*4*2 { // 4 schedulers × (p50, mean, p99, bandwidth) × 2 jobs
		t.Errorf("%d bars drawn, want 32", len(bars))
	}
	for _, b := range bars {
		if b.H < 10 || b.Label == "" {
			t.Errorf("%s: %.1f px high, labelled %q", b.Name, b.H, b.Label)
		}
	}
	open(fmt.Sprintf("/runs/%d", run.ID), "fairness")
	writeArtifact(t, art, "fairness-run.png", screenshotOf(t, ctx, `figure[data-kind=fairness]`))

	// The timelines: each step's measured window labelled with its
	// scheduler and repeat, its discard and ramp shaded apart.
	for _, kind := range []string{"timeline", "lattime"} {
		open(fmt.Sprintf("/charts?kind=%s&run=%d", kind, withLat.ID), kind)
		writeArtifact(t, art, "fairness-"+kind+".png", screenshotOf(t, ctx, `figure[data-kind=`+kind+`]`))
		labels, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.iolabCharts[`+strconv.Quote(kind)+`].getOption().series[0].markLine.data.map(d => d.label.formatter)`))
		if err != nil {
			t.Fatal(err)
		}
		if len(labels) != 12 || labels[0] != "scheduler=none" || labels[11] != "scheduler=kyber #3" {
			t.Errorf("%s: steps labelled %q", kind, labels)
		}
	}
}
