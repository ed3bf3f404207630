package chart

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

// numjobsRun sweeps numjobs 1, 2, 4 with 2 repeats, IOPS from iops.
func numjobsRun(id int64, iops map[string][2]uint64) LoadedRun {
	plan := testPlan(2, sweepOf(sweep.AxisNumJobs, "1", "2", "4"))
	return testRun(id, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		return sweeptest.Done(testWrites(iops[s.Value(sweep.AxisNumJobs)][s.Repeat]))
	}))
}

// scalingDoc is what the scaling tests read of the option: the axes'
// types, bases and ranges, the legend's starting selection, each
// series' axis, look and [x, y] points.
type scalingDoc struct {
	XAxis []struct {
		Name    string  `json:"name"`
		Type    string  `json:"type"`
		LogBase float64 `json:"logBase"`
		Data    []any   `json:"data"`
	} `json:"xAxis"`
	YAxis []struct {
		Name string   `json:"name"`
		Min  *float64 `json:"min"`
		Max  *float64 `json:"max"`
	} `json:"yAxis"`
	Legend struct {
		Selected map[string]bool `json:"selected"`
	} `json:"legend"`
	Title struct {
		Subtext string `json:"subtext"`
	} `json:"title"`
	Series []struct {
		Name       string `json:"name"`
		Type       string `json:"type"`
		RenderItem string `json:"renderItem"`
		YAxisIndex int    `json:"yAxisIndex"`
		LineStyle  struct {
			Type  string `json:"type"`
			Color string `json:"color"`
		} `json:"lineStyle"`
		ItemStyle struct {
			Color string `json:"color"`
		} `json:"itemStyle"`
		Data []json.RawMessage `json:"data"`
	} `json:"series"`
}

func parseScaling(t *testing.T, c *Chart) *scalingDoc {
	t.Helper()
	checkOption(t, c)
	var doc scalingDoc
	if err := json.Unmarshal(c.Option, &doc); err != nil {
		t.Fatal(err)
	}
	return &doc
}

// points are series i's [x, y] points (a line's) or whiskers' rows.
func (d *scalingDoc) points(t *testing.T, i int) [][]float64 {
	t.Helper()
	var out [][]float64
	for _, raw := range d.Series[i].Data {
		var it struct {
			Value []float64 `json:"value"`
		}
		if raw[0] == '[' {
			json.Unmarshal(raw, &it.Value)
		} else if err := json.Unmarshal(raw, &it); err != nil {
			t.Fatal(err)
		}
		out = append(out, it.Value)
	}
	return out
}

func (d *scalingDoc) names() []string {
	var names []string
	for _, s := range d.Series {
		names = append(names, s.Name)
	}
	return names
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9*math.Max(1, math.Abs(b)) }

func TestBuildChartScaling(t *testing.T) {
	run := numjobsRun(6, map[string][2]uint64{"1": {100, 120}, "2": {200, 220}, "4": {300, 340}})
	c := mustBuild(t, Query{Kind: Scaling}, run)
	g2 := 100 * (210.0 - 110) / 110
	g4 := 100 * (320.0 - 210) / 210
	// Efficiency: the median against numjobs × numjobs=1's median.
	e2, e4 := 100*210.0/220, 100*320.0/440
	checkTable(t, c, []string{"job", "numjobs", "repeats", "failed", "iops_min", "iops_median", "iops_max", "iops_cv", "noisy", "growth_pct", "efficiency_pct"}, [][]string{
		{"randwrite", "1", "2", "0", "100", "110", "120", csvNum(cv(100, 120)), "true", "", "100"},
		{"randwrite", "2", "2", "0", "200", "210", "220", csvNum(cv(200, 220)), "false", csvNum(g2), csvNum(e2)},
		{"randwrite", "4", "2", "0", "300", "320", "340", csvNum(cv(300, 340)), "false", csvNum(g4), csvNum(e4)},
	})
	doc := parseScaling(t, c)

	// numjobs on a log2 axis: 1, 2, 4 … evenly spaced, no categories.
	if x := doc.XAxis[0]; x.Type != "log" || x.LogBase != 2 || len(x.Data) != 0 || x.Name != "numjobs" {
		t.Errorf("x axis %+v, want log base 2 named numjobs", x)
	}
	// The IOPS line with its whiskers, the efficiency, linear scaling.
	if got := doc.names(); !slices.Equal(got, []string{"randwrite", "randwrite", "randwrite efficiency", "linear scaling"}) {
		t.Fatalf("series %q", got)
	}
	iops, whisk, eff, ideal := doc.points(t, 0), doc.points(t, 1), doc.points(t, 2), doc.points(t, 3)
	if !slices.EqualFunc(iops, [][]float64{{1, 110}, {2, 210}, {4, 320}}, slices.Equal) ||
		!slices.EqualFunc(whisk, [][]float64{{1, 100, 120, 0, 1}, {2, 200, 220, 0, 1}, {4, 300, 340, 0, 1}}, slices.Equal) ||
		!slices.EqualFunc(ideal, [][]float64{{1, 110}, {2, 220}, {4, 440}}, slices.Equal) {
		t.Errorf("iops %v, whiskers %v, linear %v", iops, whisk, ideal)
	}
	if len(eff) != 3 || eff[0][1] != 100 || !near(eff[1][1], e2) || !near(eff[2][1], e4) {
		t.Errorf("efficiency %v, want 100, %v, %v", eff, e2, e4)
	}
	if doc.Series[1].Type != "custom" || doc.Series[1].RenderItem != "whisker" {
		t.Errorf("whiskers %+v", doc.Series[1])
	}

	// The axes: IOPS on the left, its range the measured data's (nothing
	// fixes it, and linear scaling, which would set it, starts off);
	// efficiency on its own axis from 0 to 100 %.
	for _, s := range doc.Series {
		want := 0
		if strings.HasSuffix(s.Name, " efficiency") {
			want = 1
		}
		if s.YAxisIndex != want {
			t.Errorf("%s on y axis %d, want %d", s.Name, s.YAxisIndex, want)
		}
	}
	if len(doc.Legend.Selected) != 1 || doc.Legend.Selected["linear scaling"] {
		t.Errorf("legend selection %v: want linear scaling off and nothing else named", doc.Legend.Selected)
	}
	if len(doc.YAxis) != 2 || doc.YAxis[0].Min != nil || doc.YAxis[0].Max != nil {
		t.Fatalf("y axes %+v: want IOPS from its data and efficiency", doc.YAxis)
	}
	if y := doc.YAxis[1]; y.Min == nil || *y.Min != 0 || y.Max == nil || *y.Max != 100 || !strings.Contains(y.Name, "% of linear") {
		t.Errorf("efficiency axis %+v, want 0–100 %% of linear", y)
	}
	if fill := 340 / doc.visibleTop(t); fill < 0.2 {
		t.Errorf("measured IOPS fill %.0f %% of their axis", 100*fill)
	}
	// Lines of one colour told apart by dash.
	if doc.Series[0].LineStyle.Type != "solid" || doc.Series[2].LineStyle.Type != "dashed" || doc.Series[3].LineStyle.Type != "dotted" ||
		doc.Series[0].ItemStyle.Color != doc.Series[2].ItemStyle.Color {
		t.Errorf("line styles %+v", doc.Series)
	}
	for _, w := range []string{"IOPS(n) ÷ (n × IOPS(1))", "each job", "linear scaling (dotted) starts off"} {
		if !strings.Contains(doc.Title.Subtext, w) {
			t.Errorf("subtitle %q does not say %q", doc.Title.Subtext, w)
		}
	}

	// Not sweeping numjobs does not fit.
	_, err := Build(Query{Kind: Scaling}, []LoadedRun{run, iodepthEngineRun(3, engineIOPS, [3]string{})})
	var ve *QueryError
	if !errors.As(err, &ve) || !strings.Contains(ve.Msg, "run 3 does not sweep numjobs") {
		t.Errorf("scaling of a run without numjobs: %v", err)
	}
}

// niceTop is the top of a value axis from 0 that echarts draws over
// data up to v: v rounded up to 1, 2, 2.5, 5 or 10 × 10^k.
func niceTop(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// visibleTop is the top of the IOPS axis as echarts draws it: over the
// series on it the legend starts with on (a series it starts with off
// does not count until clicked).
func (d *scalingDoc) visibleTop(t *testing.T) float64 {
	t.Helper()
	top := 0.0
	for i, s := range d.Series {
		if on, ok := d.Legend.Selected[s.Name]; (ok && !on) || s.YAxisIndex != 0 {
			continue
		}
		for _, p := range d.points(t, i) {
			top = max(top, p[1])
			if s.Type == "custom" {
				top = max(top, p[2])
			}
		}
	}
	return niceTop(top)
}

// The write-up's shape: 7× the IOPS at 32 jobs, against linear scaling's
// 32×. Efficiency falls to 22 %, under 100 % and above 0 on its axis,
// which a superlinear step would stretch past 100 %.
func TestScalingEfficiencyAxis(t *testing.T) {
	values := []string{"1", "2", "4", "8", "16", "32"}
	iops := map[string]uint64{"1": 100e3, "2": 190e3, "4": 380e3, "8": 500e3, "16": 640e3, "32": 700e3}
	run := func(super bool) LoadedRun {
		plan := testPlan(1, sweepOf(sweep.AxisNumJobs, values...))
		return testRun(8, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
			v := iops[s.Value(sweep.AxisNumJobs)]
			if super && s.Value(sweep.AxisNumJobs) == "4" {
				v = 530e3 // 132.5 % of linear
			}
			return sweeptest.Done(testWrites(v))
		}))
	}
	doc := parseScaling(t, mustBuild(t, Query{Kind: Scaling}, run(false)))
	var xs []float64
	for _, p := range doc.points(t, 0) {
		xs = append(xs, p[0])
	}
	if !slices.Equal(xs, []float64{1, 2, 4, 8, 16, 32}) || doc.XAxis[0].Type != "log" || doc.XAxis[0].LogBase != 2 {
		t.Errorf("x %v on %+v", xs, doc.XAxis[0])
	}
	eff := doc.points(t, 2)
	if last := eff[len(eff)-1][1]; !near(last, 100*700e3/(32*100e3)) {
		t.Errorf("efficiency at 32 jobs %v", last)
	}
	// The measured IOPS fill the axis echarts draws for them; linear
	// scaling, 3.2 M, would leave them its bottom seventh.
	top := 0.0
	for _, w := range doc.points(t, 1) {
		top = max(top, w[2])
	}
	if fill := top / doc.visibleTop(t); fill < 0.2 {
		t.Errorf("measured IOPS fill %.0f %% of their axis", 100*fill)
	}
	if fill := top / niceTop(3.2e6); fill >= 0.2 {
		t.Errorf("linear scaling would leave the IOPS %.0f %% of the axis: the fixture shows nothing", 100*fill)
	}
	ideal := doc.points(t, 3)
	if peak := ideal[len(ideal)-1][1]; peak != 3.2e6 || doc.Legend.Selected["linear scaling"] {
		t.Errorf("linear scaling to %v, selected %v", peak, doc.Legend.Selected)
	}
	if y := doc.YAxis[1]; *y.Max != 100 {
		t.Errorf("efficiency axis to %v", *y.Max)
	}
	doc = parseScaling(t, mustBuild(t, Query{Kind: Scaling}, run(true)))
	if y := doc.YAxis[1]; *y.Max != 140 || *y.Min != 0 {
		t.Errorf("efficiency axis %v–%v with a point at 132.5 %%, want 0–140", *y.Min, *y.Max)
	}
}

// The scaling chart of a numjobs × iodepth run draws a series per
// iodepth, on a page whose other charts draw one per numjobs value: its
// colours are none of numjobs', and its lone series on a numjobs-only
// run is not numjobs=1's blue, nor grey (the write-up's 1…32 takes six
// colours, and grey is the next).
func TestScalingColoursAwayFromNumjobs(t *testing.T) {
	numjobs := []string{"1", "2", "4", "8", "16", "32"}
	for _, tc := range []struct {
		name   string
		sweeps []sweep.Sweep
		lines  int
		other  Kind // the page's chart that draws a series per numjobs value
	}{
		{"numjobs × iodepth", []sweep.Sweep{sweepOf(sweep.AxisIODepth, "1", "8"), sweepOf(sweep.AxisNumJobs, numjobs...)}, 2, IOPS},
		// numjobs alone: the IOPS chart draws numjobs along x, the
		// distribution a curve per numjobs value.
		{"numjobs alone", []sweep.Sweep{sweepOf(sweep.AxisNumJobs, numjobs...)}, 1, Distribution},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan := testPlan(1, tc.sweeps...)
			run := testRun(9, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult { return sweeptest.Done(testWrites(uint64(1000 + 10*s.Seq))) }))
			iops := seriesColours(t, mustBuild(t, Query{Kind: tc.other}, run).Option)
			taken := map[string]string{}
			for _, v := range numjobs {
				c, ok := iops["numjobs="+v]
				if !ok {
					c, ok = iops["numjobs="+v+" iodepth=1"]
				}
				if !ok {
					t.Fatalf("%s chart series %v: no numjobs=%s", tc.other, iops, v)
				}
				taken[c] = v
			}
			doc := parseScaling(t, mustBuild(t, Query{Kind: Scaling}, run))
			seen := map[string]bool{}
			for _, s := range doc.Series {
				if s.Type != "line" || strings.HasSuffix(s.Name, " efficiency") || strings.HasSuffix(s.Name, "linear") || strings.HasSuffix(s.Name, "scaling") {
					continue
				}
				c := strings.ToLower(s.ItemStyle.Color)
				if v, ok := taken[c]; ok {
					t.Errorf("scaling series %q in %s, numjobs=%s's colour on the IOPS chart", s.Name, c, v)
				}
				if seen[c] {
					t.Errorf("two scaling series in %s", c)
				}
				if c == grey {
					t.Errorf("scaling series %q in grey", s.Name)
				}
				seen[c] = true
			}
			if len(seen) != tc.lines {
				t.Errorf("%d scaling series, want %d: %q", len(seen), tc.lines, doc.names())
			}
		})
	}
}

// Where the page's other charts draw a series per engine, the scaling
// chart's series are the engines too, in the same colours.
func TestScalingColoursAreThePages(t *testing.T) {
	engines := []string{"psync", "libaio", "io_uring"}
	plan := testPlan(1, sweepOf(sweep.AxisEngine, engines...), sweepOf(sweep.AxisNumJobs, "1", "2", "4"))
	run := testRun(10, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult { return sweeptest.Done(testWrites(uint64(1000 + 10*s.Seq))) }))
	// The IOPS chart's series: an engine and a numjobs value each.
	iops := map[string]string{}
	for name, c := range seriesColours(t, mustBuild(t, Query{Kind: IOPS}, run).Option) {
		e := valueOf(name, engines)
		if was, ok := iops[e]; ok && was != c {
			t.Fatalf("IOPS chart: %s in %s and %s", e, was, c)
		}
		iops[e] = c
	}
	doc := parseScaling(t, mustBuild(t, Query{Kind: Scaling}, run))
	n := 0
	for _, s := range doc.Series {
		e := strings.TrimSuffix(s.Name, " efficiency")
		if !slices.Contains(engines, e) || s.Type != "line" {
			continue
		}
		n++
		if want := iops[e]; want == "" || !strings.EqualFold(s.ItemStyle.Color, want) || !strings.EqualFold(s.LineStyle.Color, want) {
			t.Errorf("scaling %q in %s/%s, %s on the IOPS chart", s.Name, s.ItemStyle.Color, s.LineStyle.Color, want)
		}
	}
	if n != 2*len(engines) {
		t.Errorf("scaling series %q: want each engine's IOPS and efficiency", doc.names())
	}
}

// Two runs of one kernel compared: their series share its colour and
// are told apart by symbol, their lines by dash; no two series look
// alike, the lines linear scaling starts off with included.
func TestScalingComparedRunsApart(t *testing.T) {
	a := numjobsRun(11, map[string][2]uint64{"1": {100, 120}, "2": {200, 220}, "4": {300, 340}})
	b := numjobsRun(12, map[string][2]uint64{"1": {90, 100}, "2": {150, 170}, "4": {200, 220}})
	a.Run.Kernel, b.Run.Kernel = "6.12.0", "6.12.0"
	c := mustBuild(t, Query{Kind: Scaling, Runs: []int64{11, 12}}, a, b)
	names, looks := seriesLooks(t, c.Option)
	if len(names) != 6 {
		t.Fatalf("series %q, want each run's IOPS, efficiency and linear scaling", names)
	}
	seen := map[look]string{}
	for _, n := range names {
		if w, ok := seen[looks[n]]; ok {
			t.Errorf("%q and %q both %+v", w, n, looks[n])
		}
		seen[looks[n]] = n
	}
	if looks[names[0]].colour != looks[names[3]].colour || looks[names[0]].symbol == looks[names[3]].symbol {
		t.Errorf("runs %q and %q: %+v, %+v: want one colour, two symbols", names[0], names[3], looks[names[0]], looks[names[3]])
	}
}
