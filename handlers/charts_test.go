package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"
)

// chartLoad is what a synthetic job did in one direction: ios I/Os of bs
// bytes, each with completion (and total) latency lat.
type chartLoad struct {
	ios uint64
	bs  uint64
	lat time.Duration
}

func chartTestJob(name string, runtime time.Duration, read, write chartLoad) bench.JobResult {
	r := bench.JobResult{Name: name, Runtime: runtime, Jobs: 1}
	for d, l := range [2]chartLoad{read, write} {
		r.Dirs[d].IOs = l.ios
		r.Dirs[d].Bytes = l.ios * l.bs
		for range l.ios {
			r.Dirs[d].Clat.Add(uint64(l.lat))
			r.Dirs[d].Lat.Add(uint64(l.lat))
		}
	}
	return r
}

// chartTestWrites is a one-second 4 KiB write job doing iops I/Os of 50µs.
func chartTestWrites(iops uint64) bench.JobResult {
	return chartTestJob("randwrite", time.Second, chartLoad{}, chartLoad{ios: iops, bs: 4096, lat: 50 * time.Microsecond})
}

func chartTestPlan(repeat int, sweeps ...sweep.Sweep) *sweep.Plan {
	return &sweep.Plan{Name: "test", Sweeps: sweeps, Repeat: repeat}
}

// chartTestSteps builds the step results of every combination of the
// plan's sweeps (the first outermost) and repeat, in Seq order.
func chartTestSteps(plan *sweep.Plan, result func(s sweep.Step) sweep.StepResult) []sweep.StepResult {
	var out []sweep.StepResult
	var walk func(i int, axes []sweep.AxisValue)
	walk = func(i int, axes []sweep.AxisValue) {
		if i == len(plan.Sweeps) {
			for rep := range plan.Repeat {
				s := sweep.Step{Seq: len(out), Repeat: rep, Axes: slices.Clone(axes)}
				r := result(s)
				r.Step = s
				out = append(out, r)
			}
			return
		}
		for _, v := range plan.Sweeps[i].Values {
			walk(i+1, append(axes, sweep.AxisValue{Axis: plan.Sweeps[i].Axis, Value: v}))
		}
	}
	walk(0, nil)
	return out
}

func chartDone(jobs ...bench.JobResult) sweep.StepResult {
	return sweep.StepResult{Status: sweep.StepDone, Result: &bench.Result{Groups: []bench.GroupResult{{Jobs: jobs}}}}
}

func chartFailed(msg string) sweep.StepResult {
	return sweep.StepResult{Status: sweep.StepFailed, Error: msg}
}

func chartTestRun(id int64, plan *sweep.Plan, steps []sweep.StepResult) RunData {
	return RunData{Run: db.Run{ID: id, Name: plan.Name, Status: db.StatusDone, Plan: *plan}, Steps: steps}
}

func chartSweep(a sweep.Axis, vals ...string) sweep.Sweep {
	return sweep.Sweep{Axis: a, Values: vals}
}

// spread3 is min, median and max, computed here without bench.
func spread3(vals ...float64) [3]float64 {
	v := slices.Sorted(slices.Values(vals))
	n := len(v)
	med := v[n/2]
	if n%2 == 0 {
		med = (v[n/2-1] + v[n/2]) / 2
	}
	return [3]float64{v[0], med, v[n-1]}
}

func csvNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// optionDoc is the part of an echarts option the tests read.
type optionDoc struct {
	Title struct {
		Text string `json:"text"`
	} `json:"title"`
	Toolbox struct {
		Feature struct {
			SaveAsImage *struct {
				Type string `json:"type"`
			} `json:"saveAsImage"`
		} `json:"feature"`
	} `json:"toolbox"`
	XAxis []struct {
		Name string   `json:"name"`
		Type string   `json:"type"`
		Data []string `json:"data"`
	} `json:"xAxis"`
	YAxis []struct {
		Name string `json:"name"`
		Type string `json:"type"`
	} `json:"yAxis"`
	Series []struct {
		Name       string `json:"name"`
		Type       string `json:"type"`
		Stack      string `json:"stack"`
		XAxisIndex int    `json:"xAxisIndex"`
		YAxisIndex int    `json:"yAxisIndex"`
		Data       []struct {
			Value any `json:"value"`
			Label *struct {
				Formatter string `json:"formatter"`
			} `json:"label"`
		} `json:"data"`
	} `json:"series"`
}

// checkOption parses a chart's option and checks what every chart needs:
// valid JSON, no URL, the title, a save-as-PNG control.
func checkOption(t *testing.T, c *Chart) *optionDoc {
	t.Helper()
	if strings.Contains(string(c.Option), "http") {
		t.Errorf("option names a URL: %s", c.Option)
	}
	if strings.Contains(string(c.Option), "__f__") {
		t.Errorf("option holds a go-echarts JS function marker: %s", c.Option)
	}
	var doc optionDoc
	if err := json.Unmarshal(c.Option, &doc); err != nil {
		t.Fatalf("option is not JSON: %v\n%s", err, c.Option)
	}
	if doc.Title.Text != c.Title || c.Title == "" {
		t.Errorf("option title %q, chart title %q", doc.Title.Text, c.Title)
	}
	if s := doc.Toolbox.Feature.SaveAsImage; s == nil || s.Type != "png" {
		t.Errorf("option has no save-as-PNG control: %s", c.Option)
	}
	return &doc
}

func seriesNames(doc *optionDoc) []string {
	var names []string
	for _, s := range doc.Series {
		names = append(names, s.Name)
	}
	return names
}

// seriesValues are a series' data values as the chart has them: numbers, "-"
// for none, or [x, y] pairs and boxes as lists.
func seriesValues(doc *optionDoc, series int) []any {
	var out []any
	for _, d := range doc.Series[series].Data {
		out = append(out, d.Value)
	}
	return out
}

func mustBuildChart(t *testing.T, q ChartQuery, runs ...RunData) *Chart {
	t.Helper()
	c, err := BuildChart(q, runs)
	if err != nil {
		t.Fatalf("BuildChart(%+v): %v", q, err)
	}
	for i, r := range c.Rows {
		if len(r) != len(c.Columns) {
			t.Errorf("row %d has %d fields for columns %v: %v", i, len(r), c.Columns, r)
		}
	}
	return c
}

func checkTable(t *testing.T, c *Chart, cols []string, rows [][]string) {
	t.Helper()
	if !slices.Equal(c.Columns, cols) {
		t.Errorf("columns = %q\nwant      %q", c.Columns, cols)
	}
	if !reflect.DeepEqual(c.Rows, rows) {
		t.Errorf("rows =\n%s\nwant\n%s", fmtRows(c.Rows), fmtRows(rows))
	}
}

func fmtRows(rows [][]string) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "  %q\n", r)
	}
	return b.String()
}

func TestChartQueryRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		q    ChartQuery
		want string // the encoded query string
	}{
		{ChartQuery{Kind: ChartIOPS, Runs: []int64{3}}, "run=3"},
		{ChartQuery{Kind: ChartIOPS, Runs: []int64{5, 3}, Series: sweep.AxisScheduler, Dir: "write"}, "dir=write&run=5&run=3&series=scheduler"},
		{ChartQuery{Kind: ChartLatency, Runs: []int64{3}, Percentiles: []float64{99.99, 50, 99.9}}, "kind=latency&p=99.99&p=50&p=99.9&run=3"},
		{ChartQuery{Kind: ChartLatency, Runs: []int64{3}, X: sweep.AxisNumJobs}, "kind=latency&run=3&x=numjobs"},
		{ChartQuery{Kind: ChartDistribution, Runs: []int64{3}, IODepths: []int{32, 1}, Dir: "read"}, "dir=read&kind=distribution&qd=32&qd=1&run=3"},
		{ChartQuery{Kind: ChartTimeline, Runs: []int64{7}, Step: 12}, "kind=timeline&run=7&step=12"},
		{ChartQuery{Kind: ChartCPU, Runs: []int64{1}}, "kind=cpu&run=1"},
		{ChartQuery{Kind: ChartScaling, Runs: []int64{1}, Series: sweep.AxisEngine}, "kind=scaling&run=1&series=ioengine"},
		{ChartQuery{Kind: ChartFairness, Runs: []int64{1, 2}}, "kind=fairness&run=1&run=2"},
		{ChartQuery{Kind: ChartIOPS}, ""},
	} {
		t.Run(tc.want, func(t *testing.T) {
			v := tc.q.Values()
			if got := v.Encode(); got != tc.want {
				t.Errorf("Values().Encode() = %q, want %q", got, tc.want)
			}
			got, err := ParseChartQuery(v)
			if err != nil {
				t.Fatalf("ParseChartQuery(%q): %v", v.Encode(), err)
			}
			if !reflect.DeepEqual(got, tc.q) {
				t.Errorf("ParseChartQuery(Values()) = %+v, want %+v", got, tc.q)
			}
		})
	}
}

func TestChartQueryCanonical(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ChartQuery
		enc  string
	}{
		// Explicit defaults come back as zero fields and leave the URL.
		{"kind=iops&run=3&dir=all&x=iodepth&p=50&p=90&p=99&p=99.9&p=99.99&qd=1&qd=4&qd=16",
			ChartQuery{Kind: ChartIOPS, Runs: []int64{3}}, "run=3"},
		{"kind=scaling&run=3&x=numjobs", ChartQuery{Kind: ChartScaling, Runs: []int64{3}}, "kind=scaling&run=3"},
		// Repeated runs and list values count once; empty values are absent.
		{"run=3&run=3&run=4&p=99&p=99&step=&series=", ChartQuery{Kind: ChartIOPS, Runs: []int64{3, 4}, Percentiles: []float64{99}}, "p=99&run=3&run=4"},
		{"p=+99.90&qd=%2004", ChartQuery{Kind: ChartIOPS, Percentiles: []float64{99.9}, IODepths: []int{4}}, "p=99.9&qd=4"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			v, err := url.ParseQuery(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseChartQuery(v)
			if err != nil {
				t.Fatalf("ParseChartQuery: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseChartQuery = %+v, want %+v", got, tc.want)
			}
			if enc := got.Values().Encode(); enc != tc.enc {
				t.Errorf("Values().Encode() = %q, want %q", enc, tc.enc)
			}
		})
	}
	// Values omits defaults set by hand, too.
	q := ChartQuery{Kind: ChartLatency, Runs: []int64{2}, Dir: "all", X: sweep.AxisIODepth, Percentiles: slices.Clone(defaultChartPercentiles)}
	if enc := q.Values().Encode(); enc != "kind=latency&run=2" {
		t.Errorf("Values of explicit defaults = %q", enc)
	}
}

func TestChartQueryErrors(t *testing.T) {
	for _, tc := range []struct {
		in, field, says string
	}{
		{"kind=pie", "kind", "iops, latency, distribution"},
		{"kind=iops&kind=cpu", "kind", "give it once"},
		{"run=abc", "run", "whole number"},
		{"run=0", "run", "1 or more"},
		{"run=-2", "run", "1 or more"},
		{"kind=timeline&step=0", "step", "1 or more"},
		{"kind=timeline&step=two", "step", "whole number"},
		{"step=1&step=2", "step", "give it once"},
		{"x=queue", "x", "iodepth, ioengine, scheduler"},
		{"kind=scaling&x=iodepth", "x", "numjobs"},
		{"series=color", "series", "iodepth, ioengine"},
		{"series=iodepth", "series", "x axis"},
		{"kind=latency&x=bs&series=bs", "series", "x axis"},
		{"kind=distribution&series=iodepth", "series", "x axis"},
		{"kind=scaling&series=numjobs", "series", "x axis"},
		{"dir=up", "dir", "read, write or all"},
		{"p=0", "p", "above 0 and at most 100"},
		{"p=100.5", "p", "above 0 and at most 100"},
		{"p=NaN", "p", "above 0 and at most 100"},
		{"p=high", "p", "not a percentile"},
		{"qd=0", "qd", "1 or more"},
		{"qd=1.5", "qd", "whole number"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			v, err := url.ParseQuery(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			_, err = ParseChartQuery(v)
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("ParseChartQuery(%q) = %v, want a *ValidationError", tc.in, err)
			}
			if ve.Field != tc.field || !strings.Contains(ve.Msg, tc.says) || !strings.HasPrefix(ve.Msg, tc.field+":") {
				t.Errorf("error = {%q, %q}, want field %q and a message saying %q", ve.Field, ve.Msg, tc.field, tc.says)
			}
		})
	}
	// Parameters the charts do not use are not errors.
	if _, err := ParseChartQuery(url.Values{"sort": {"name"}, "run": {"1"}}); err != nil {
		t.Errorf("an unknown parameter: %v", err)
	}
}

// iodepthEngineRun is a run sweeping iodepth 1, 16 × io_uring, libaio
// with 3 repeats, its write IOPS from iops; the failed step's repeat fails.
func iodepthEngineRun(id int64, iops map[[2]string][3]uint64, failed [3]string) RunData {
	plan := chartTestPlan(3, chartSweep(sweep.AxisIODepth, "1", "16"), chartSweep(sweep.AxisEngine, "io_uring", "libaio"))
	steps := chartTestSteps(plan, func(s sweep.Step) sweep.StepResult {
		if s.Value(sweep.AxisIODepth) == failed[0] && s.Value(sweep.AxisEngine) == failed[1] && strconv.Itoa(s.Repeat) == failed[2] {
			return chartFailed("io_uring_setup: EOPNOTSUPP")
		}
		return chartDone(chartTestWrites(iops[[2]string{s.Value(sweep.AxisIODepth), s.Value(sweep.AxisEngine)}][s.Repeat]))
	})
	// Steps come from the store in any order.
	steps[0], steps[len(steps)-1] = steps[len(steps)-1], steps[0]
	return chartTestRun(id, plan, steps)
}

var engineIOPS = map[[2]string][3]uint64{
	{"1", "io_uring"}:  {12000, 10000, 11000},
	{"1", "libaio"}:    {9000, 9500, 9400},
	{"16", "io_uring"}: {150000, 160000, 155000},
	{"16", "libaio"}:   {120000, 100000, 130000},
}

func TestBuildChartIOPS(t *testing.T) {
	run := iodepthEngineRun(3, engineIOPS, [3]string{"16", "libaio", "1"})
	c := mustBuildChart(t, ChartQuery{Kind: ChartIOPS, Runs: []int64{3}}, run)

	s := func(k [2]string, reps ...int) [3]float64 {
		var v []float64
		for _, r := range reps {
			v = append(v, float64(engineIOPS[k][r]))
		}
		return spread3(v...)
	}
	want := map[[2]string][3]float64{
		{"1", "io_uring"}:  s([2]string{"1", "io_uring"}, 0, 1, 2),
		{"1", "libaio"}:    s([2]string{"1", "libaio"}, 0, 1, 2),
		{"16", "io_uring"}: s([2]string{"16", "io_uring"}, 0, 1, 2),
		{"16", "libaio"}:   s([2]string{"16", "libaio"}, 0, 2), // repeat 1 failed
	}
	row := func(qd, engine, repeats, failed string) []string {
		w := want[[2]string{qd, engine}]
		return []string{qd, engine, repeats, failed, csvNum(w[0]), csvNum(w[1]), csvNum(w[2])}
	}
	checkTable(t, c, []string{"iodepth", "ioengine", "repeats", "failed", "iops_min", "iops_median", "iops_max"}, [][]string{
		row("1", "io_uring", "3", "0"),
		row("16", "io_uring", "3", "0"),
		row("1", "libaio", "3", "0"),
		row("16", "libaio", "2", "1"),
	})
	if want[[2]string{"16", "libaio"}][1] != 125000 {
		t.Fatalf("test's own median is off: %v", want[[2]string{"16", "libaio"}])
	}

	doc := checkOption(t, c)
	if got := seriesNames(doc); !slices.Equal(got, []string{"io_uring", "libaio"}) {
		t.Errorf("series = %q", got)
	}
	if len(doc.XAxis) != 1 || !slices.Equal(doc.XAxis[0].Data, []string{"1", "16"}) || doc.XAxis[0].Name != "iodepth" {
		t.Errorf("x axis = %+v", doc.XAxis)
	}
	if len(doc.YAxis) != 1 || doc.YAxis[0].Name != "IOPS" {
		t.Errorf("y axis = %+v", doc.YAxis)
	}
	for i, s := range doc.Series {
		if s.Type != "boxplot" || len(s.Data) != 2 {
			t.Fatalf("series %d = %+v, want a boxplot with 2 boxes", i, s)
		}
		for k, qd := range []string{"1", "16"} {
			w := want[[2]string{qd, s.Name}]
			wantBox := []any{w[0], w[1], w[1], w[1], w[2]}
			if got := seriesValues(doc, i)[k]; !reflect.DeepEqual(got, wantBox) {
				t.Errorf("%s iodepth %s box = %v, want %v", s.Name, qd, got, wantBox)
			}
		}
	}
}

func TestBuildChartIOPSCompare(t *testing.T) {
	a := iodepthEngineRun(3, engineIOPS, [3]string{})
	// Run 5 has only io_uring at iodepth 1 and 4, all failed at 4.
	plan := chartTestPlan(2, chartSweep(sweep.AxisIODepth, "1", "4"), chartSweep(sweep.AxisEngine, "io_uring"))
	b := chartTestRun(5, plan, chartTestSteps(plan, func(s sweep.Step) sweep.StepResult {
		if s.Value(sweep.AxisIODepth) == "4" {
			return chartFailed("no space left on device")
		}
		return chartDone(chartTestWrites(7000 + 1000*uint64(s.Repeat)))
	}))
	c := mustBuildChart(t, ChartQuery{Kind: ChartIOPS, Runs: []int64{3, 5}}, a, b)
	doc := checkOption(t, c)
	if got := seriesNames(doc); !slices.Equal(got, []string{"run 3 io_uring", "run 3 libaio", "run 5 io_uring"}) {
		t.Errorf("series = %q", got)
	}
	if got := doc.XAxis[0].Data; !slices.Equal(got, []string{"1", "4", "16"}) {
		t.Errorf("categories = %q, want numeric order", got)
	}
	// Run 5 has no box at 16 and none at 4 (all failed); run 3 none at 4.
	none := []any{"-", "-", "-", "-", "-"}
	if got := seriesValues(doc, 2); !reflect.DeepEqual(got, []any{[]any{7000.0, 7500.0, 7500.0, 7500.0, 8000.0}, none, none}) {
		t.Errorf("run 5 boxes = %v", got)
	}
	if got := seriesValues(doc, 0)[1]; !reflect.DeepEqual(got, none) {
		t.Errorf("run 3 at iodepth 4 = %v", got)
	}
	if !slices.Equal(c.Columns[:3], []string{"run", "iodepth", "ioengine"}) {
		t.Errorf("columns = %q", c.Columns)
	}
	last := c.Rows[len(c.Rows)-2:]
	if !reflect.DeepEqual(last, [][]string{
		{"5", "1", "io_uring", "2", "0", "7000", "7500", "8000"},
		{"5", "4", "io_uring", "0", "2", "", "", ""},
	}) {
		t.Errorf("run 5 rows = %q", last)
	}
}

func TestBuildChartIOPSDirection(t *testing.T) {
	// A 70/30 mix: reads and writes counted apart.
	plan := chartTestPlan(3, chartSweep(sweep.AxisScheduler, "none", "bfq"))
	plan.Base.Jobs = []bench.Job{{Name: "mixed", IODepth: 8, IOEngine: "io_uring", NumJobs: 1, BS: 4096, RW: "randrw"}}
	reads := map[string][3]uint64{"none": {7000, 7100, 6900}, "bfq": {5000, 5600, 5200}}
	run := chartTestRun(1, plan, chartTestSteps(plan, func(s sweep.Step) sweep.StepResult {
		r := reads[s.Value(sweep.AxisScheduler)][s.Repeat]
		return chartDone(chartTestJob("mixed", 2*time.Second, chartLoad{ios: 2 * r, bs: 4096, lat: time.Millisecond}, chartLoad{ios: 2 * r * 3 / 7, bs: 4096, lat: time.Millisecond}))
	}))
	c := mustBuildChart(t, ChartQuery{Kind: ChartIOPS, Dir: "read"}, run)
	n, b := spread3(7000, 7100, 6900), spread3(5000, 5600, 5200)
	// iodepth is not swept: the base job's 8 is the one category.
	checkTable(t, c, []string{"iodepth", "scheduler", "repeats", "failed", "read_iops_min", "read_iops_median", "read_iops_max"}, [][]string{
		{"8", "none", "3", "0", csvNum(n[0]), csvNum(n[1]), csvNum(n[2])},
		{"8", "bfq", "3", "0", csvNum(b[0]), csvNum(b[1]), csvNum(b[2])},
	})
	doc := checkOption(t, c)
	if !slices.Equal(seriesNames(doc), []string{"none", "bfq"}) || !slices.Equal(doc.XAxis[0].Data, []string{"8"}) {
		t.Errorf("series %q, categories %q", seriesNames(doc), doc.XAxis[0].Data)
	}
	if !strings.HasPrefix(c.Title, "Read IOPS") {
		t.Errorf("title %q", c.Title)
	}
	// The whole: reads and writes.
	all := mustBuildChart(t, ChartQuery{Kind: ChartIOPS}, run)
	total := func(r uint64) float64 { return float64(r) + float64(2*r*3/7)/2 }
	wantAll := spread3(total(7000), total(7100), total(6900))
	if got := all.Rows[0][4:]; !slices.Equal(got, []string{csvNum(wantAll[0]), csvNum(wantAll[1]), csvNum(wantAll[2])}) {
		t.Errorf("total IOPS = %q, want %v", got, wantAll)
	}
}

// usBucket is, in µs, the value bench's histogram reports for a latency.
func usBucket(d time.Duration) float64 {
	return float64(hist.BucketValue(hist.BucketIndex(uint64(d)))) / 1000
}

func TestBuildChartLatency(t *testing.T) {
	plan := chartTestPlan(2, chartSweep(sweep.AxisIODepth, "1", "4"), chartSweep(sweep.AxisEngine, "libaio", "io_uring"))
	// Repeat 0 completes every I/O in 50µs, repeat 1 in 1ms (iodepth 4: 4×
	// as long); io_uring is twice as fast. Merged, p50 is the fast repeat's
	// and p90 and above the slow one's.
	lat := func(s sweep.Step) time.Duration {
		d := 50 * time.Microsecond
		if s.Repeat == 1 {
			d = time.Millisecond
		}
		if s.Value(sweep.AxisIODepth) == "4" {
			d *= 4
		}
		if s.Value(sweep.AxisEngine) == "io_uring" {
			d /= 2
		}
		return d
	}
	run := chartTestRun(9, plan, chartTestSteps(plan, func(s sweep.Step) sweep.StepResult {
		if s.Value(sweep.AxisIODepth) == "4" && s.Value(sweep.AxisEngine) == "io_uring" && s.Repeat == 1 {
			return chartFailed("boom")
		}
		return chartDone(chartTestJob("r", time.Second, chartLoad{ios: 100, bs: 4096, lat: lat(s)}, chartLoad{}))
	}))

	c := mustBuildChart(t, ChartQuery{Kind: ChartLatency, Percentiles: []float64{50, 90, 99.9}}, run)
	us := func(d time.Duration) string { return csvNum(usBucket(d)) }
	checkTable(t, c, []string{"iodepth", "ioengine", "repeats", "failed", "ios", "clat_p50_us", "clat_p90_us", "clat_p99.9_us"}, [][]string{
		{"1", "libaio", "2", "0", "200", us(50 * time.Microsecond), us(time.Millisecond), us(time.Millisecond)},
		{"4", "libaio", "2", "0", "200", us(200 * time.Microsecond), us(4 * time.Millisecond), us(4 * time.Millisecond)},
		{"1", "io_uring", "2", "0", "200", us(25 * time.Microsecond), us(500 * time.Microsecond), us(500 * time.Microsecond)},
		// The failed repeat is left out: only the fast one remains.
		{"4", "io_uring", "1", "1", "100", us(100 * time.Microsecond), us(100 * time.Microsecond), us(100 * time.Microsecond)},
	})
	if v := usBucket(50 * time.Microsecond); math.Abs(v-50)/50 > 0.01 {
		t.Fatalf("bucket of 50µs is %vµs", v)
	}
	doc := checkOption(t, c)
	if got := seriesNames(doc); !slices.Equal(got, []string{"libaio p50", "libaio p90", "libaio p99.9", "io_uring p50", "io_uring p90", "io_uring p99.9"}) {
		t.Errorf("series = %q", got)
	}
	if doc.YAxis[0].Type != "log" || !strings.Contains(doc.YAxis[0].Name, "µs") {
		t.Errorf("y axis = %+v, want log in µs", doc.YAxis[0])
	}
	if got := seriesValues(doc, 4); !reflect.DeepEqual(got, []any{usBucket(500 * time.Microsecond), usBucket(100 * time.Microsecond)}) {
		t.Errorf("io_uring p90 = %v", got)
	}

	// Default percentiles; the write direction has no I/O: nothing plotted.
	w := mustBuildChart(t, ChartQuery{Kind: ChartLatency, Dir: "write"}, run)
	if len(w.Columns) != 5+len(defaultChartPercentiles) || w.Columns[5] != "write_clat_p50_us" || w.Columns[9] != "write_clat_p99.99_us" {
		t.Errorf("columns = %q", w.Columns)
	}
	if got := w.Rows[0]; !slices.Equal(got, []string{"1", "libaio", "2", "0", "0", "", "", "", "", ""}) {
		t.Errorf("write row = %q", got)
	}
	if got := seriesValues(checkOption(t, w), 0); !reflect.DeepEqual(got, []any{"-", "-"}) {
		t.Errorf("write p50 = %v", got)
	}
}

func TestBucketRange(t *testing.T) {
	for _, idx := range []int{0, 1, 127, 128, 129, 191, 192, 500, 1000, hist.HistBuckets - 2} {
		lo, hi := bucketRange(idx)
		if hist.BucketIndex(lo) != idx || hist.BucketIndex(hi-1) != idx || hist.BucketIndex(hi) != idx+1 || (lo > 0 && hist.BucketIndex(lo-1) != idx-1) {
			t.Errorf("bucketRange(%d) = [%d, %d): BucketIndex gives %d, %d, %d", idx, lo, hi, hist.BucketIndex(lo), hist.BucketIndex(hi-1), hist.BucketIndex(hi))
		}
		if v := hist.BucketValue(idx); v < lo || v >= hi {
			t.Errorf("bucket %d's value %d is outside [%d, %d)", idx, v, lo, hi)
		}
	}
}

// eighthOctave is, in ns, the bin of 1/8 of a power of two holding v
// (v ≥ 1024).
func eighthOctave(v uint64) (lo, hi uint64) {
	top := uint64(1) << (bits.Len64(v) - 1)
	w := top / 8
	lo = top + (v-top)/w*w
	return lo, lo + w
}

func TestBuildChartDistribution(t *testing.T) {
	plan := chartTestPlan(2, chartSweep(sweep.AxisIODepth, "1", "4", "16", "32"))
	// Each repeat: 3 of 4 I/Os take 10µs, 1 takes 100µs.
	run := chartTestRun(1, plan, chartTestSteps(plan, func(s sweep.Step) sweep.StepResult {
		j := chartTestJob("r", time.Second, chartLoad{ios: 30, bs: 4096, lat: 10 * time.Microsecond}, chartLoad{})
		for range 10 {
			j.Dirs[bench.Read].Clat.Add(uint64(100 * time.Microsecond))
		}
		j.Dirs[bench.Read].IOs += 10
		return chartDone(j)
	}))
	c := mustBuildChart(t, ChartQuery{Kind: ChartDistribution}, run)
	doc := checkOption(t, c)
	if got := seriesNames(doc); !slices.Equal(got, []string{"iodepth=1", "iodepth=4", "iodepth=16"}) {
		t.Errorf("series = %q (default iodepths 1, 4, 16)", got)
	}
	if doc.XAxis[0].Type != "log" || !strings.Contains(doc.XAxis[0].Name, "µs") || !strings.Contains(doc.YAxis[0].Name, "%") {
		t.Errorf("axes = %+v %+v", doc.XAxis, doc.YAxis)
	}
	if !slices.Equal(c.Columns, []string{"iodepth", "repeats", "failed", "clat_us", "ios", "percent_ios"}) {
		t.Errorf("columns = %q", c.Columns)
	}

	// Every bin from 10µs's to 100µs's, 1/8 of an octave each: 75 % and
	// 25 % in those two, nothing in between.
	lo10, hi10 := eighthOctave(10000)
	lo100, hi100 := eighthOctave(100000)
	var want [][]string
	for lo := lo10; lo <= lo100; {
		_, hi := eighthOctave(lo)
		ios, pct := "0", "0"
		switch lo {
		case lo10:
			ios, pct = "60", "75"
		case lo100:
			ios, pct = "20", "25"
		}
		want = append(want, []string{"1", "2", "0", csvNum(float64(lo+hi) / 2 / 1000), ios, pct})
		lo = hi
	}
	if hi10-lo10 != 1024 || hi100-lo100 != 8192 || len(want) != 7+8+8+5 {
		t.Fatalf("test's bins are off: [%d,%d) [%d,%d), %d bins", lo10, hi10, lo100, hi100, len(want))
	}
	if got := c.Rows[:len(want)]; !reflect.DeepEqual(got, want) {
		t.Errorf("iodepth 1 rows =\n%s\nwant\n%s", fmtRows(got), fmtRows(want))
	}
	if len(c.Rows) != 3*len(want) {
		t.Errorf("%d rows, want %d", len(c.Rows), 3*len(want))
	}
	pts := seriesValues(doc, 0)
	if len(pts) != len(want) || !reflect.DeepEqual(pts[0], []any{float64(lo10+hi10) / 2 / 1000, 75.0}) {
		t.Errorf("iodepth=1 points = %v", pts)
	}

	// Chosen iodepths, and those a run lacks give no series.
	c = mustBuildChart(t, ChartQuery{Kind: ChartDistribution, IODepths: []int{32, 2}}, run)
	if got := seriesNames(checkOption(t, c)); !slices.Equal(got, []string{"iodepth=32"}) {
		t.Errorf("series = %q", got)
	}
	// Without 1, 4 or 16 in the runs: every iodepth.
	p8 := chartTestPlan(1, chartSweep(sweep.AxisIODepth, "8", "64"))
	r8 := chartTestRun(2, p8, chartTestSteps(p8, func(sweep.Step) sweep.StepResult { return chartDone(chartTestWrites(10)) }))
	if got := seriesNames(checkOption(t, mustBuildChart(t, ChartQuery{Kind: ChartDistribution}, r8))); !slices.Equal(got, []string{"iodepth=8", "iodepth=64"}) {
		t.Errorf("series = %q", got)
	}
}

func TestBuildChartTimeline(t *testing.T) {
	plan := chartTestPlan(1, chartSweep(sweep.AxisIODepth, "1", "4"))
	samples := func(ios ...uint64) []bench.Sample {
		var out []bench.Sample
		for i, n := range ios {
			out = append(out, bench.Sample{At: time.Duration(i+1) * 500 * time.Millisecond, IOs: [2]uint64{n, 0}})
		}
		return out
	}
	run := chartTestRun(4, plan, chartTestSteps(plan, func(s sweep.Step) sweep.StepResult {
		if s.Seq == 1 {
			return chartFailed("boom")
		}
		a := chartTestJob("a", 1500*time.Millisecond, chartLoad{ios: 600, bs: 4096}, chartLoad{})
		a.Samples = samples(100, 300, 600)
		b := chartTestJob("b", 1500*time.Millisecond, chartLoad{ios: 150, bs: 4096}, chartLoad{})
		b.Samples = samples(50, 100, 150, 150) // one more interval than a: left out
		return chartDone(a, b)
	}))
	c := mustBuildChart(t, ChartQuery{Kind: ChartTimeline, Step: 1}, run)
	// Per half second: a 100, 200, 300 I/Os; b 50 each; ×2 per second.
	checkTable(t, c, []string{"time_s", "read_iops"}, [][]string{
		{"0.5", "300"}, {"1", "500"}, {"1.5", "700"},
	})
	doc := checkOption(t, c)
	if !slices.Equal(seriesNames(doc), []string{"read"}) || !reflect.DeepEqual(seriesValues(doc, 0)[1], []any{1.0, 500.0}) {
		t.Errorf("series %q, data %v", seriesNames(doc), seriesValues(doc, 0))
	}
	if doc.XAxis[0].Name != "time (s)" || doc.YAxis[0].Name != "IOPS" {
		t.Errorf("axes %+v %+v", doc.XAxis, doc.YAxis)
	}
	// Asked for, writes show even at zero.
	c = mustBuildChart(t, ChartQuery{Kind: ChartTimeline, Step: 1, Dir: "write"}, run)
	checkTable(t, c, []string{"time_s", "write_iops"}, [][]string{{"0.5", "0"}, {"1", "0"}, {"1.5", "0"}})
	// A failed step plots nothing.
	c = mustBuildChart(t, ChartQuery{Kind: ChartTimeline, Step: 2}, run)
	if len(c.Rows) != 0 {
		t.Errorf("failed step rows = %q", c.Rows)
	}
	checkOption(t, c)

	for _, tc := range []struct {
		q    ChartQuery
		says string
	}{
		{ChartQuery{Kind: ChartTimeline}, "add step=N with N from 1 to 2"},
		{ChartQuery{Kind: ChartTimeline, Step: 3}, "run 4 has no step 3; its steps are 1 to 2"},
	} {
		_, err := BuildChart(tc.q, []RunData{run})
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != "step" || !strings.Contains(ve.Msg, tc.says) {
			t.Errorf("BuildChart(%+v) = %v, want a step error saying %q", tc.q, err, tc.says)
		}
	}
}

func TestBuildChartCPU(t *testing.T) {
	plan := chartTestPlan(2, chartSweep(sweep.AxisEngine, "io_uring", "libaio"))
	run := chartTestRun(2, plan, chartTestSteps(plan, func(s sweep.Step) sweep.StepResult {
		if s.Seq == 2 {
			r := chartFailed("boom")
			r.CPU = system.CPUBreakdown{User: 99}
			return r
		}
		r := chartDone(chartTestWrites(1000))
		k := float64(s.Seq)
		r.CPU = system.CPUBreakdown{User: 10 + k, System: 5, IRQ: 1, SoftIRQ: 2 + k, IOWait: 30, Idle: 52 - 2*k}
		return r
	}))
	c := mustBuildChart(t, ChartQuery{Kind: ChartCPU}, run)
	checkTable(t, c, []string{"step", "ioengine", "repeat", "status", "busy_pct", "irq_pct", "iowait_pct", "idle_pct"}, [][]string{
		{"1", "io_uring", "1", "done", "15", "3", "30", "52"},
		{"2", "io_uring", "2", "done", "16", "4", "30", "50"},
		{"3", "libaio", "1", "failed", "", "", "", ""},
		{"4", "libaio", "2", "done", "18", "6", "30", "46"},
	})
	doc := checkOption(t, c)
	if got := seriesNames(doc); !slices.Equal(got, []string{"busy (us+sy)", "irq (hi+si)", "iowait", "idle"}) {
		t.Errorf("series = %q", got)
	}
	for i, s := range doc.Series {
		if s.Type != "bar" || s.Stack != "run 2" {
			t.Errorf("series %d is %s stacked %q", i, s.Type, s.Stack)
		}
	}
	if got := seriesValues(doc, 0); !reflect.DeepEqual(got, []any{15.0, 16.0, "-", 18.0}) {
		t.Errorf("busy = %v", got)
	}
	if !slices.Equal(doc.XAxis[0].Data, []string{"1", "2", "3", "4"}) || !strings.Contains(doc.YAxis[0].Name, "%") {
		t.Errorf("axes %+v %+v", doc.XAxis, doc.YAxis)
	}
}

// numjobsRun sweeps numjobs 1, 2, 4 with 2 repeats, IOPS from iops.
func numjobsRun(id int64, iops map[string][2]uint64) RunData {
	plan := chartTestPlan(2, chartSweep(sweep.AxisNumJobs, "1", "2", "4"))
	return chartTestRun(id, plan, chartTestSteps(plan, func(s sweep.Step) sweep.StepResult {
		return chartDone(chartTestWrites(iops[s.Value(sweep.AxisNumJobs)][s.Repeat]))
	}))
}

func TestBuildChartScaling(t *testing.T) {
	run := numjobsRun(6, map[string][2]uint64{"1": {100, 120}, "2": {200, 220}, "4": {300, 340}})
	c := mustBuildChart(t, ChartQuery{Kind: ChartScaling}, run)
	g2 := 100 * (210.0 - 110) / 110
	g4 := 100 * (320.0 - 210) / 210
	checkTable(t, c, []string{"numjobs", "repeats", "failed", "iops_min", "iops_median", "iops_max", "growth_pct"}, [][]string{
		{"1", "2", "0", "100", "110", "120", ""},
		{"2", "2", "0", "200", "210", "220", csvNum(g2)},
		{"4", "2", "0", "300", "320", "340", csvNum(g4)},
	})
	doc := checkOption(t, c)
	if !slices.Equal(seriesNames(doc), []string{"run 6"}) || !slices.Equal(doc.XAxis[0].Data, []string{"1", "2", "4"}) || doc.XAxis[0].Name != "numjobs" {
		t.Errorf("series %q, x %+v", seriesNames(doc), doc.XAxis)
	}
	var labels []string
	for _, d := range doc.Series[0].Data {
		if d.Label != nil {
			labels = append(labels, d.Label.Formatter)
		}
	}
	if !slices.Equal(labels, []string{"+91%", "+52%"}) {
		t.Errorf("growth labels = %q", labels)
	}

	// Not sweeping numjobs does not fit.
	_, err := BuildChart(ChartQuery{Kind: ChartScaling}, []RunData{run, iodepthEngineRun(3, engineIOPS, [3]string{})})
	var ve *ValidationError
	if !errors.As(err, &ve) || !strings.Contains(ve.Msg, "run 3 does not sweep numjobs") {
		t.Errorf("scaling of a run without numjobs: %v", err)
	}
}

func TestBuildChartFairness(t *testing.T) {
	plan := chartTestPlan(3, chartSweep(sweep.AxisScheduler, "none", "bfq"))
	plan.Base.Jobs = []bench.Job{{Name: "bg-writer"}, {Name: "fg-reader"}}
	// Per scheduler and repeat: the writer's MiB/s and the reader's mean
	// latency in µs.
	writer := map[string][3]uint64{"none": {500, 520, 480}, "bfq": {400, 410, 390}}
	reader := map[string][3]time.Duration{"none": {4000, 4400, 3600}, "bfq": {1000, 900, 1100}}
	run := chartTestRun(8, plan, chartTestSteps(plan, func(s sweep.Step) sweep.StepResult {
		sched := s.Value(sweep.AxisScheduler)
		w := chartTestJob("bg-writer", time.Second, chartLoad{}, chartLoad{ios: writer[sched][s.Repeat], bs: 1 << 20, lat: 20 * time.Millisecond})
		r := chartTestJob("fg-reader", 2*time.Second, chartLoad{ios: 1000, bs: 4096, lat: reader[sched][s.Repeat] * time.Microsecond}, chartLoad{})
		return chartDone(w, r)
	}))
	c := mustBuildChart(t, ChartQuery{Kind: ChartFairness}, run)
	rw := func(sched string) []string {
		w := writer[sched]
		bw := spread3(float64(w[0]), float64(w[1]), float64(w[2]))
		return []string{sched, "bg-writer", "3", "0", "20000", "20000", "20000", csvNum(bw[0]), csvNum(bw[1]), csvNum(bw[2])}
	}
	rr := func(sched string) []string {
		l := reader[sched]
		lat := spread3(float64(l[0]), float64(l[1]), float64(l[2]))
		bw := 1000 * 4096 / 2.0 / (1 << 20)
		return []string{sched, "fg-reader", "3", "0", csvNum(lat[0]), csvNum(lat[1]), csvNum(lat[2]), csvNum(bw), csvNum(bw), csvNum(bw)}
	}
	checkTable(t, c, []string{"scheduler", "job", "repeats", "failed",
		"lat_mean_min_us", "lat_mean_median_us", "lat_mean_max_us", "bw_min_mib_s", "bw_median_mib_s", "bw_max_mib_s"},
		[][]string{rw("none"), rr("none"), rw("bfq"), rr("bfq")})

	doc := checkOption(t, c)
	if got := seriesNames(doc); !slices.Equal(got, []string{"bg-writer", "bg-writer", "fg-reader", "fg-reader"}) {
		t.Errorf("series = %q", got)
	}
	if len(doc.XAxis) != 2 || len(doc.YAxis) != 2 || !slices.Equal(doc.XAxis[0].Data, []string{"none", "bfq"}) || !slices.Equal(doc.XAxis[1].Data, []string{"none", "bfq"}) {
		t.Fatalf("axes = %+v %+v", doc.XAxis, doc.YAxis)
	}
	if !strings.Contains(doc.YAxis[0].Name, "latency (µs)") || !strings.Contains(doc.YAxis[1].Name, "MiB/s") {
		t.Errorf("y axes = %+v", doc.YAxis)
	}
	// The reader's latency on the first grid, its bandwidth on the second.
	if s := doc.Series[2]; s.XAxisIndex != 0 || s.YAxisIndex != 0 || !reflect.DeepEqual(seriesValues(doc, 2), []any{4000.0, 1000.0}) {
		t.Errorf("reader latency series = %+v", s)
	}
	if s := doc.Series[1]; s.XAxisIndex != 1 || s.YAxisIndex != 1 || !reflect.DeepEqual(seriesValues(doc, 1), []any{500.0, 400.0}) {
		t.Errorf("writer bandwidth series = %+v", s)
	}
}

func TestBuildChartEmpty(t *testing.T) {
	plan := chartTestPlan(1, chartSweep(sweep.AxisIODepth, "1", "4"))
	run := chartTestRun(1, plan, nil)
	for _, k := range []ChartKind{ChartIOPS, ChartLatency, ChartDistribution, ChartCPU, ChartFairness} {
		t.Run(string(k), func(t *testing.T) {
			c := mustBuildChart(t, ChartQuery{Kind: k}, run)
			if c.Kind != k || c.Rows == nil || len(c.Rows) != 0 {
				t.Errorf("kind %q, rows %#v", c.Kind, c.Rows)
			}
			// Series may be there, without points.
			doc := checkOption(t, c)
			for i, s := range doc.Series {
				for _, v := range seriesValues(doc, i) {
					if v != "-" {
						t.Errorf("series %q has a point: %v", s.Name, seriesValues(doc, i))
						break
					}
				}
			}
		})
	}
	_, err := BuildChart(ChartQuery{Kind: ChartTimeline, Step: 1}, []RunData{run})
	var ve *ValidationError
	if !errors.As(err, &ve) || !strings.Contains(ve.Msg, "no steps yet") {
		t.Errorf("timeline of a run without steps: %v", err)
	}
}

// TestBuildChartEveryKind draws every kind from one run with every axis
// a kind needs, as a page does.
func TestBuildChartEveryKind(t *testing.T) {
	plan := chartTestPlan(2, chartSweep(sweep.AxisScheduler, "none", "bfq"), chartSweep(sweep.AxisNumJobs, "1", "2"), chartSweep(sweep.AxisIODepth, "1", "4"))
	plan.Base.Jobs = []bench.Job{{Name: "w"}, {Name: "r"}}
	run := chartTestRun(1, plan, chartTestSteps(plan, func(s sweep.Step) sweep.StepResult {
		w := chartTestWrites(1000 + uint64(s.Seq))
		w.Name = "w"
		w.Samples = []bench.Sample{{At: time.Second, IOs: [2]uint64{0, 1000}}}
		r := chartTestJob("r", time.Second, chartLoad{ios: 10, bs: 4096, lat: time.Millisecond}, chartLoad{})
		return chartDone(w, r)
	}))
	if got := AvailableCharts([]RunData{run}); !slices.Equal(got, ChartKinds) {
		t.Fatalf("AvailableCharts = %q", got)
	}
	for _, k := range ChartKinds {
		t.Run(string(k), func(t *testing.T) {
			c := mustBuildChart(t, ChartQuery{Kind: k, Step: 1}, run)
			if len(c.Rows) == 0 {
				t.Errorf("no rows")
			}
			doc := checkOption(t, c)
			if len(doc.Series) == 0 {
				t.Errorf("no series")
			}
			var csv strings.Builder
			if err := WriteCSV(&csv, c); err != nil {
				t.Errorf("WriteCSV: %v", err)
			}
			if k == ChartIOPS {
				// scheduler makes the series; numjobs tells them apart.
				if got := seriesNames(doc); !slices.Equal(got, []string{"none numjobs=1", "none numjobs=2", "bfq numjobs=1", "bfq numjobs=2"}) {
					t.Errorf("series = %q", got)
				}
			}
		})
	}
}

func TestAvailableCharts(t *testing.T) {
	perStep := []ChartKind{ChartIOPS, ChartLatency, ChartDistribution, ChartTimeline, ChartCPU}
	sched := chartTestPlan(1, chartSweep(sweep.AxisScheduler, "none", "bfq"))
	sched.Base.Jobs = []bench.Job{{Name: "bg-writer"}, {Name: "fg-reader"}}
	schedOneJob := chartTestPlan(1, chartSweep(sweep.AxisScheduler, "none", "bfq"))
	schedOneJob.Base.Jobs = []bench.Job{{Name: "mixed", NumJobs: 4}}
	done := func(plan *sweep.Plan) []sweep.StepResult {
		return chartTestSteps(plan, func(sweep.Step) sweep.StepResult { return chartDone(chartTestWrites(1)) })
	}
	nj := numjobsRun(1, nil)
	for _, tc := range []struct {
		name string
		runs []RunData
		want []ChartKind
	}{
		{"no runs", nil, nil},
		{"no steps yet", []RunData{chartTestRun(1, sched, nil)}, nil},
		{"iodepth × engine", []RunData{iodepthEngineRun(1, engineIOPS, [3]string{})}, perStep},
		{"numjobs", []RunData{nj}, append(slices.Clone(perStep), ChartScaling)},
		{"numjobs compared with iodepth", []RunData{nj, iodepthEngineRun(2, engineIOPS, [3]string{})}, perStep},
		{"schedulers, two jobs", []RunData{chartTestRun(1, sched, done(sched))}, append(slices.Clone(perStep), ChartFairness)},
		{"schedulers, one job", []RunData{chartTestRun(1, schedOneJob, done(schedOneJob))}, perStep},
		{"one of two runs has steps", []RunData{chartTestRun(1, sched, nil), chartTestRun(2, sched, done(sched))}, append(slices.Clone(perStep), ChartFairness)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := AvailableCharts(tc.runs); !slices.Equal(got, tc.want) {
				t.Errorf("AvailableCharts = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestValidationErrorText(t *testing.T) {
	for _, tc := range []struct {
		e    ValidationError
		want string
	}{
		{ValidationError{Field: "step", Msg: "step: want 1 or more"}, "step: want 1 or more"},
		{ValidationError{Field: "step", Msg: "want 1 or more"}, "step: want 1 or more"},
		{ValidationError{Msg: "the body is not a plan"}, "the body is not a plan"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}
