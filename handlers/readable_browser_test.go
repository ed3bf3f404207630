package handlers

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"
)

// seedQoSRateLab is a QoS curve by rate: io_uring, libaio and psync each
// probed at full speed, then paced at 20 %…90 % of it; the latency from
// each I/O's intended start stays near the device's service time until
// the rate nears the probe's, then climbs (queueing: 1/(1-ρ)).
func seedQoSRateLab(t testing.TB, store *db.Store, name string, host system.HostInfo, speed float64) *db.Run {
	plan := labPlan(t, name, []string{"--name=reader", "--filename=/dev/nvme1n1", "--rw=randread", "--bs=4k", "--direct=1", "--ioengine=io_uring", "--iodepth=32"}, 1,
		sweep.Sweep{Axis: sweep.AxisEngine, Values: []string{"io_uring", "libaio", "psync"}},
		sweep.Sweep{Axis: sweep.AxisRateIOPS, Values: []string{"max", "20%", "40%", "60%", "80%", "90%"}})
	slo, err := sweep.ParseSLO("p99<1ms")
	if err != nil {
		t.Fatal(err)
	}
	plan.SLO = &slo
	probe := map[string]float64{"io_uring": 610e3, "libaio": 420e3, "psync": 12.5e3}
	service := map[string]float64{"io_uring": 60, "libaio": 75, "psync": 80} // µs
	return seedLab(t, store, plan, host, func(st sweep.Step, _ int, rng *rand.Rand) labStep {
		eng := st.Value(sweep.AxisEngine)
		full := speed * probe[eng]
		v := st.Value(sweep.AxisRateIOPS)
		if v == "max" {
			return labStep{iops: full * (1 + 0.02*rng.NormFloat64()), median: time.Duration(32 / full * 1e9), spread: 0.3, intervals: true}
		}
		pct, _ := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
		rate := full * pct / 100
		lat := service[eng] / (1 - 0.97*pct/100) * (1 + 0.05*rng.NormFloat64())
		return labStep{iops: rate * (1 + 0.005*rng.NormFloat64()), median: time.Duration(lat * 1e3), spread: 0.3, rate: int64(rate), intervals: true}
	})
}

// seedEnginesSQPollLab is the third write-up's sweep with io_uring's
// SQPOLL mode beside the plain engines: random 4 KiB writes over iodepth
// 1…128, 3 repeats, SQPOLL's poller thread costing it most of its IOPS
// on a machine with few cores.
func seedEnginesSQPollLab(t testing.TB, store *db.Store, host system.HostInfo) *db.Run {
	plan := labPlan(t, "libaio vs io_uring vs sqpoll", []string{"--name=randwrite", "--filename=/dev/nvme1n1", "--rw=randwrite", "--bs=4k", "--direct=1", "--ioengine=io_uring"}, 3,
		sweep.Sweep{Axis: sweep.AxisIODepth, Values: []string{"1", "4", "16", "64", "128"}},
		sweep.Sweep{Axis: sweep.AxisEngine, Values: []string{"io_uring", "io_uring+sqpoll", "libaio", "psync"}})
	base := map[string]float64{"libaio": 14e3, "io_uring": 16e3, "io_uring+sqpoll": 9e3, "psync": 12e3}
	ceiling := map[string]float64{"libaio": 420e3, "io_uring": 610e3, "io_uring+sqpoll": 73e3, "psync": 12.5e3}
	return seedLab(t, store, plan, host, func(st sweep.Step, _ int, rng *rand.Rand) labStep {
		qd, _ := strconv.ParseFloat(st.Value(sweep.AxisIODepth), 64)
		eng := st.Value(sweep.AxisEngine)
		iops := math.Min(ceiling[eng], base[eng]*qd) * (1 + 0.03*rng.NormFloat64())
		if eng == "psync" {
			qd = 1
		}
		return labStep{iops: iops, median: time.Duration(qd / iops * 1e9), spread: 0.18}
	})
}

// seedScalingPastLimitLab is the scaling run the issue was written from:
// numjobs 1…32 of an io_uring reader at iodepth 8 on a device one job
// already drives to 209k IOPS, flattening at 553k.
func seedScalingPastLimitLab(t testing.TB, store *db.Store, host system.HostInfo) *db.Run {
	plan := labPlan(t, "numjobs scaling past the limit", []string{"--name=reader", "--filename=/dev/nvme1n1", "--rw=randread", "--bs=4k", "--direct=1", "--ioengine=io_uring", "--iodepth=8"}, 3,
		sweep.Sweep{Axis: sweep.AxisNumJobs, Values: []string{"1", "2", "4", "8", "16", "32"}})
	return seedLab(t, store, plan, host, func(st sweep.Step, _ int, rng *rand.Rand) labStep {
		n, _ := strconv.ParseFloat(st.Value(sweep.AxisNumJobs), 64)
		iops := (209e3 + 344e3*(1-math.Exp(-(n-1)/3))) * (1 + 0.03*rng.NormFloat64())
		return labStep{iops: iops / n, median: time.Duration(8 * n / iops * 1e9), spread: 0.2}
	})
}

// seedGroup stores a group of runs, one per host, as a fleet run does.
func seedGroup(t testing.TB, store *db.Store, name string, runs map[string]*db.Run, hosts ...string) string {
	t.Helper()
	ctx := context.Background()
	g := &db.FleetRun{Name: name}
	if err := store.CreateFleetRun(ctx, g); err != nil {
		t.Fatal(err)
	}
	for i, h := range hosts {
		if err := store.AddFleetRunMember(ctx, g.UID, db.FleetRunMember{RunID: runs[h].ID, Position: i, HostKind: db.HostAgent, HostName: h}); err != nil {
			t.Fatal(err)
		}
	}
	return g.UID
}

// readable is what the browser found unreadable on one page: every
// violation, and what it looked at.
type readable struct {
	Charts     []string `json:"charts"` // kind: its visible series, its axes' share
	Kinds      []string `json:"kinds"`  // the charts' kinds, in the page's order
	Violations []string `json:"violations"`
}

// checkReadable reads every drawn chart of the page through echarts'
// API, as a reader's eye would, and lists what a reader could not read:
//
//   - more than 8 visible series (legend-selected; not whiskers or guide
//     lines such as linear scaling);
//   - two series of a chart alike in colour, dash and marker;
//   - a value (one of values, a word of series names) in two colours on
//     the page's charts that colour by it, or two values in one colour;
//   - two drawn texts (titles, axis labels and names, legend, series,
//     markPoint and markLine labels) whose boxes overlap by more than a
//     pixel each way;
//   - a value axis whose data (the visible series' values, bars from 0,
//     stacks as stacked; log axes in log space) occupy less than 20 % of
//     its extent.
const checkReadable = `((values) => {
  const out = {charts: [], kinds: [], violations: []};
  const guide = s => s.type === "custom" || !s.name || / linear$|^linear scaling$|^ideal\b/.test(s.name);
  const str = v => v === undefined || v === null ? "" : (typeof v === "object" ? JSON.stringify(v) : String(v));
  const colourOf = {};   // value → {colour, where}
  const valueOf = {};    // colour → {value, where}
  const charts = [...document.querySelectorAll(".chart[data-kind]")];
  charts.forEach((el, ci) => {
    const c = echarts.getInstanceByDom(el);
    const where = el.dataset.kind + (charts.filter(e => e.dataset.kind === el.dataset.kind).length > 1 ? "#" + ci : "");
    if (!c) { out.violations.push(where + ": not drawn"); return; }
    out.kinds.push(el.dataset.kind);
    const model = c.getModel();
    // eachSeries leaves out the series the legend hides (getSeries
    // does not).
    const visible = [];
    model.eachSeries(sm => visible.push(sm));
    // Series: at most 8, none alike.
    const names = [], looks = {};
    visible.forEach(sm => {
      const o = sm.option;
      if (guide(o) || names.includes(o.name)) return;
      names.push(o.name);
      const style = sm.getData().getVisual("style") || {};
      const colour = str(c.getVisual({seriesIndex: sm.seriesIndex}, "color") || style.fill || style.stroke).toLowerCase();
      const d0 = (Array.isArray(o.data) && o.data[0] && o.data[0].itemStyle) || {};
      const dash = str((o.lineStyle && o.lineStyle.type) || d0.borderType || (o.itemStyle && o.itemStyle.borderType) || "solid");
      // A line's marker tells it apart only where it is drawn.
      const symbol = o.type !== "line" ? o.type : o.showSymbol === false ? "no marker" : str(o.symbol || "emptyCircle");
      const look = colour + " " + dash + " " + symbol;
      if (looks[look]) out.violations.push(where + ": series " + JSON.stringify(looks[look]) + " and " + JSON.stringify(o.name) + " look alike (" + look + ")");
      looks[look] = o.name;
      o.__colour = colour;
    });
    out.charts.push(where + ": " + names.length + " series " + JSON.stringify(names));
    if (names.length > 8) out.violations.push(where + ": " + names.length + " visible series, more than 8: " + names.join(", "));
    // A value's colour: on a chart where every series naming the value
    // has one colour, that colour is the value's.
    values.forEach(v => {
      const cols = new Set();
      visible.forEach(sm => {
        const o = sm.option;
        if (!guide(o) && o.__colour && o.name.split(/\s+/).includes(v)) cols.add(o.__colour);
      });
      if (cols.size !== 1) return;
      const col = [...cols][0];
      if (colourOf[v] && colourOf[v].colour !== col) out.violations.push(where + ": " + v + " in " + col + ", in " + colourOf[v].colour + " on " + colourOf[v].where);
      if (valueOf[col] && valueOf[col].value !== v) out.violations.push(where + ": " + v + " in " + col + ", the colour of " + valueOf[col].value + " on " + valueOf[col].where);
      colourOf[v] = colourOf[v] || {colour: col, where: where};
      valueOf[col] = valueOf[col] || {value: v, where: where};
    });
    // Texts: no two boxes overlap. Each line of a text is a tspan; its
    // box is as wide as measured and a font size high around the line's
    // middle: zrender's own height is the width of a CJK glyph, which a
    // machine without CJK fonts measures at half the font size. The
    // lines of one label are not two labels.
    const texts = [];
    c.getZr().storage.getDisplayList(true).forEach(d => {
      const s = d.style || {};
      if (d.invisible || d.ignore || s.opacity === 0 || typeof s.text !== "string" || !s.text.trim()) return;
      for (let p = d.parent; p; p = p.parent) if (p.ignore || p.invisible) return;
      const r = d.getBoundingRect().clone();
      if (d.transform) r.applyTransform(d.transform);
      if (r.width <= 0 || r.height <= 0) return;
      const px = /(\d+(?:\.\d+)?)px/.exec(s.font || "");
      const rotated = d.transform && Math.abs(d.transform[1]) > 1e-9;
      if (px && !rotated) {
        const fs = Number(px[1]), mid = r.y + r.height / 2;
        r.y = mid - fs / 2;
        r.height = fs;
      }
      texts.push({text: s.text, r: r, label: d.parent || d});
    });
    for (let i = 0; i < texts.length; i++) for (let j = i + 1; j < texts.length; j++) {
      if (texts[i].label === texts[j].label) continue;
      const a = texts[i].r, b = texts[j].r;
      const w = Math.min(a.x + a.width, b.x + b.width) - Math.max(a.x, b.x);
      const h = Math.min(a.y + a.height, b.y + b.height) - Math.max(a.y, b.y);
      if (w > 1 && h > 1) out.violations.push(where + ": text " + JSON.stringify(texts[i].text) + " at (" + Math.round(a.x) + "," + Math.round(a.y) + ") overlaps " +
        JSON.stringify(texts[j].text) + " at (" + Math.round(b.x) + "," + Math.round(b.y) + ") by " + Math.round(w) + "×" + Math.round(h) + " px");
    }
    // Axes: the data occupy at least 20 % of each value axis.
    ["xAxis", "yAxis"].forEach(kind => {
      model.eachComponent(kind, (am, ai) => {
        const axis = am.axis;
        if (!axis || (axis.type !== "value" && axis.type !== "log")) return;
        const log = axis.type === "log", f = v => log ? Math.log10(v) : v;
        let lo = Infinity, hi = -Infinity;
        visible.forEach(sm => {
          const cs = sm.coordinateSystem;
          if (guide(sm.option) || !cs || !cs.getAxis) return;
          const dimName = kind === "xAxis" ? "x" : "y";
          if (cs.getAxis(dimName) !== axis) return;
          const data = sm.getData();
          data.mapDimensionsAll(dimName).forEach(dim => {
            const stacked = data.getCalculationInfo("stackedDimension") === dim && data.getCalculationInfo("stackResultDimension");
            const e = data.getDataExtent(stacked || dim);
            if (!isFinite(e[0]) || !isFinite(e[1])) return;
            lo = Math.min(lo, e[0]); hi = Math.max(hi, e[1]);
          });
          if (sm.subType === "bar" && !log) { lo = Math.min(lo, 0); hi = Math.max(hi, 0); }
        });
        if (!isFinite(lo) || !isFinite(hi)) return;
        const ext = axis.scale.getExtent(); // a log scale's in values, not exponents
        if (log && lo <= 0) lo = ext[0];
        const span = f(ext[1]) - f(ext[0]);
        const share = span > 0 ? (f(Math.min(hi, ext[1])) - f(Math.max(lo, ext[0]))) / span : 1;
        out.charts.push(where + ": " + kind + (ai ? "[" + ai + "]" : "") + " data " + Math.round(100 * share) + " %");
        if (share < 0.2) {
          const show = v => +v.toPrecision(3);
          out.violations.push(where + ": " + kind + (ai ? "[" + ai + "]" : "") + " " + JSON.stringify(am.get("name") || "") + (log ? " (log)" : "") +
            ": data " + show(lo) + "…" + show(hi) + " occupy " + Math.round(100 * share) + " % of " + show(ext[0]) + "…" + show(ext[1]));
        }
      });
    });
  });
  return out;
})`

// drawAll scrolls each chart of the page into view, so that those drawn
// lazily are drawn, and waits for each. The browser asks for reduced
// motion (browser), so the charts are drawn at once: no animation to
// wait for, and the checks read each chart as it ends.
func drawAll(ctx context.Context) error {
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(".chart[data-kind]").length`))
	if err != nil {
		return err
	}
	if still, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`matchMedia("(prefers-reduced-motion: reduce)").matches`)); err != nil || !still {
		return fmt.Errorf("the browser does not ask for reduced motion (%v): the charts would be read while they animate", err)
	}
	for i := range n {
		el := fmt.Sprintf(`document.querySelectorAll(".chart[data-kind]")[%d]`, i)
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { `+el+`.scrollIntoView({block: "center"}); return true; })()`)); err != nil {
			return err
		}
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!echarts.getInstanceByDom(`+el+`)`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
			return fmt.Errorf("chart %d not drawn: %w", i, err)
		}
		if anim, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`echarts.getInstanceByDom(`+el+`).getOption().animation !== false`)); err != nil || anim {
			return fmt.Errorf("chart %d animates under reduced motion (%v)", i, err)
		}
	}
	return nil
}

// readPage opens url, draws every chart and checks them (checkReadable)
// with the page's series-defining values.
func readPage(ctx context.Context, url string, values []string) (readable, error) {
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitReady(`body`)); err != nil {
		return readable{}, err
	}
	if err := drawAll(ctx); err != nil {
		return readable{}, err
	}
	arg := `["` + strings.Join(values, `","`) + `"]`
	return chromedp.Run(ctx, chromedp.Evaluate[readable](checkReadable+`(`+arg+`)`))
}

// TestBrowserReadable opens a page of each experiment — a fairness run,
// a scaling run, an engines × iodepth sweep, a QoS curve by rate, two
// kernels compared, and two groups of hosts — and reads every chart as
// drawn (checkReadable): at most 8 visible series, none alike, a value
// one colour on the page, no text over another, no axis the data leave
// mostly empty. It reports every violation of every page at once;
// screenshots go to testdata/artifacts (readable-*.png).
func TestBrowserReadable(t *testing.T) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed; .ci/test installs it")
	}
	ts := newTestServer(t, Config{})
	hostA := system.HostInfo{Hostname: "lab-a", KernelRelease: "6.12.0-lab", CPUModel: "Lab CPU", CPUCount: 16}
	hostB := hostA
	hostB.Hostname = "lab-b"
	older := hostA
	older.KernelRelease = "6.1.0-lab"
	fairness := seedFairnessLab(t, ts.store, hostA)
	scaling := seedScalingPastLimitLab(t, ts.store, hostA)
	sqpoll := seedEnginesSQPollLab(t, ts.store, hostA)
	engines := seedEnginesLab(t, ts.store, "libaio vs io_uring", hostA, 1)
	enginesOld := seedEnginesLab(t, ts.store, "libaio vs io_uring, 6.1", older, 0.8)
	qos := seedQoSRateLab(t, ts.store, "qos by rate", hostA, 1)
	engineGroup := seedGroup(t, ts.store, "engines on two hosts", map[string]*db.Run{
		"lab-a": engines, "lab-b": seedEnginesLab(t, ts.store, "libaio vs io_uring", hostB, 0.7)}, "lab-a", "lab-b")
	qosGroup := seedGroup(t, ts.store, "qos on two hosts", map[string]*db.Run{
		"lab-a": qos, "lab-b": seedQoSRateLab(t, ts.store, "qos by rate", hostB, 0.7)}, "lab-a", "lab-b")
	hs := httptest.NewServer(ts.e)
	defer hs.Close()
	art := artifactsDir(t)

	engineNames := []string{"io_uring", "libaio", "psync"}
	numjobs := []string{"numjobs=1", "numjobs=2", "numjobs=4", "numjobs=8", "numjobs=16", "numjobs=32"}
	pages := []struct {
		name, url string
		values    []string
	}{
		{"fairness", fmt.Sprintf("/runs/%d", fairness.ID), []string{"none", "mq-deadline", "bfq", "kyber"}},
		{"scaling", fmt.Sprintf("/runs/%d", scaling.ID), numjobs},
		{"engines", fmt.Sprintf("/runs/%d", engines.ID), engineNames},
		{"engines-sqpoll", fmt.Sprintf("/runs/%d", sqpoll.ID), append([]string{"io_uring+sqpoll"}, engineNames...)},
		{"qos", fmt.Sprintf("/runs/%d", qos.ID), engineNames},
		{"kernels", fmt.Sprintf("/compare?run=%d&run=%d", engines.ID, enginesOld.ID), engineNames},
		{"group-engines", "/groups/" + engineGroup, append([]string{"lab-a", "lab-b"}, engineNames...)},
		{"group-qos", "/groups/" + qosGroup, append([]string{"lab-a", "lab-b"}, engineNames...)},
	}
	var all []string
	for _, p := range pages {
		// A browser each: a page of a dozen charts takes a good part of
		// the browser's 90 s on a busy machine.
		ctx, cancel := browser(t, path)
		got, err := readPage(ctx, hs.URL+p.url, p.values)
		if err != nil {
			cancel()
			t.Errorf("%s: %v", p.name, err)
			continue
		}
		if len(got.Charts) == 0 {
			t.Errorf("%s: no chart drawn", p.name)
		}
		t.Logf("%s (%s): %s", p.name, p.url, strings.Join(got.Charts, "; "))
		for _, v := range got.Violations {
			all = append(all, p.name+" "+v)
		}
		screenshot(t, ctx, art, "readable-"+p.name+".png", 100)
		// Each chart with a violation on its own, for a closer look.
		for i, k := range got.Kinds {
			if !slices.ContainsFunc(got.Violations, func(v string) bool { return strings.HasPrefix(v, k+":") || strings.HasPrefix(v, k+"#") }) {
				continue
			}
			shot, err := chromedp.Run(ctx, chromedp.Screenshot(fmt.Sprintf(`figure[data-kind=%s]`, k)))
			if err != nil {
				t.Fatal(err)
			}
			writeArtifact(t, art, fmt.Sprintf("readable-%s-%d-%s.png", p.name, i, k), shot)
		}
		cancel()
	}
	if len(all) > 0 {
		t.Errorf("%d readability violations:\n%s", len(all), strings.Join(all, "\n"))
	}
}

// badCharts draws, on a page that loaded echarts, charts each unreadable
// in one way, and one readable chart.
const badCharts = `(() => {
  document.querySelectorAll(".chart[data-kind]").forEach(e => e.remove());
  const add = (kind, option) => {
    const el = document.createElement("div");
    el.className = "chart";
    el.dataset.kind = kind;
    el.style.cssText = "width: 800px; height: 400px";
    document.body.appendChild(el);
    const c = echarts.init(el);
    c.setOption(Object.assign({animation: false, legend: {top: 360}, grid: {top: 40, bottom: 60}}, option));
  };
  const palette = ["#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#f0e442", "#000000", "#999999"];
  const x = {type: "category", data: ["1", "2", "4"]};
  add("nine", {xAxis: x, yAxis: {type: "value"}, series: palette.map((c, i) => ({name: "s" + i, type: "line", color: c, data: [i, i + 1, i + 2]}))});
  add("alike", {xAxis: x, yAxis: {type: "value"}, series: [
    {name: "io_uring", type: "line", color: "#0072b2", data: [1, 2, 3]},
    {name: "other", type: "line", color: "#0072b2", data: [2, 3, 4]}]});
  add("texts", {title: [{text: "one title", left: 10, top: 5}, {text: "another title", left: 30, top: 14}],
    xAxis: x, yAxis: {type: "value"}, series: [{name: "libaio", type: "line", color: "#d55e00", data: [1, 2, 3]}]});
  add("squashed", {xAxis: x, yAxis: {type: "value", max: 1000}, series: [{name: "psync", type: "line", color: "#009e73", data: [500, 505, 510]}]});
  add("logsquashed", {xAxis: x, yAxis: {type: "log", min: 1, max: 1e6}, series: [{name: "sync", type: "line", color: "#cc79a7", data: [100, 105, 110]}]});
  add("recoloured", {xAxis: x, yAxis: {type: "value"}, series: [
    {name: "io_uring p99", type: "line", color: "#e69f00", data: [1, 2, 3]},
    {name: "libaio p99", type: "line", color: "#0072b2", data: [3, 2, 1]}]});
  add("readable", {xAxis: x, yAxis: [{type: "log", min: 1, max: 1e6}], series: [
    {name: "psync p50", type: "line", color: "#009e73", data: [{value: 10, label: {show: true, position: "right", formatter: "one label\nof two lines"}}, 1000, 1e5]},
    {name: "psync p99", type: "line", color: "#009e73", lineStyle: {type: "dashed"}, data: [20, 2000, 2e5]},
    {name: "hidden", type: "line", color: "#56b4e9", data: [1, 1, 1]},
    {name: "linear scaling", type: "line", color: "#009e73", data: [1e5, 2e5, 4e5]}],
    legend: {top: 360, selected: {hidden: false}}});
  return true;
})()`

// TestBrowserReadableCatches draws charts each unreadable in one way and
// wants checkReadable to name each fault, and nothing of a readable
// chart: too many series, two alike, texts over each other (titles a
// line apart, which boxes of zrender's own height would miss), an axis
// the data leave empty (linear and log), a value in two colours and a
// colour for two values; not a series the legend hides, a guide line
// or the lines of one label.
func TestBrowserReadableCatches(t *testing.T) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed; .ci/test installs it")
	}
	ts := newTestServer(t, Config{})
	run := seedScalingLab(t, ts.store, system.HostInfo{Hostname: "lab-a", KernelRelease: "6.12.0-lab"})
	hs := httptest.NewServer(ts.e)
	defer hs.Close()
	ctx, cancel := browser(t, path)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(fmt.Sprintf("%s/runs/%d", hs.URL, run.ID)), chromedp.WaitReady(`body`)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](badCharts)); err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[readable](checkReadable+`(["io_uring", "libaio", "psync"])`))
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(got.Violations, "\n")
	t.Logf("violations found:\n%s", all)
	for _, want := range []string{
		"nine: 9 visible series, more than 8",
		`alike: series "io_uring" and "other" look alike (#0072b2 solid emptyCircle)`,
		`texts: text "one title" at`,
		`squashed: yAxis "": data 500…510 occupy 1 % of 0…1000`,
		`logsquashed: yAxis "" (log): data 100…110 occupy 1 % of 1…1000000`,
		"recoloured: io_uring in #e69f00, in #0072b2 on alike",
		"recoloured: libaio in #0072b2, the colour of io_uring on alike",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no violation %q in:\n%s", want, all)
		}
	}
	if strings.Contains(all, "readable") {
		t.Errorf("the readable chart has violations:\n%s", all)
	}
	if !slices.Contains(got.Charts, `readable: 2 series ["psync p50","psync p99"]`) {
		t.Errorf("the readable chart's series: %q", got.Charts)
	}
}
