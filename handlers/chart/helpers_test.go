package chart

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/db"
)

// testLoad is what a synthetic job did in one direction: ios I/Os of bs
// bytes, each with completion (and total) latency lat.
type testLoad struct {
	ios uint64
	bs  uint64
	lat time.Duration // each I/O's clat
	// slat is each I/O's slat: its lat is slat + clat, as fio's are.
	slat time.Duration
}

func testJob(name string, runtime time.Duration, read, write testLoad) bench.JobResult {
	r := bench.JobResult{Name: name, Runtime: runtime, Jobs: 1}
	for d, l := range [2]testLoad{read, write} {
		r.Dirs[d].IOs = l.ios
		r.Dirs[d].Bytes = l.ios * l.bs
		for range l.ios {
			r.Dirs[d].Slat.Add(uint64(l.slat))
			r.Dirs[d].Clat.Add(uint64(l.lat))
			r.Dirs[d].Lat.Add(uint64(l.slat + l.lat))
		}
	}
	return r
}

// testWrites is a one-second 4 KiB write job doing iops I/Os of 50µs.
func testWrites(iops uint64) bench.JobResult {
	return testJob("randwrite", time.Second, testLoad{}, testLoad{ios: iops, bs: 4096, lat: 50 * time.Microsecond})
}

func testPlan(repeat int, sweeps ...sweep.Sweep) *sweep.Plan {
	return &sweep.Plan{Name: "test", Sweeps: sweeps, Repeat: repeat}
}

func testRun(id int64, plan *sweep.Plan, steps []sweep.StepResult) LoadedRun {
	return LoadedRun{Run: db.Run{ID: id, Name: plan.Name, Status: db.StatusDone, Plan: *plan}, Steps: steps}
}

func sweepOf(a sweep.Axis, vals ...string) sweep.Sweep {
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

// cv is the coefficient of variation, computed here without bench.
func cv(vals ...float64) float64 {
	var sum, ss float64
	for _, v := range vals {
		sum += v
	}
	mean := sum / float64(len(vals))
	for _, v := range vals {
		ss += (v - mean) * (v - mean)
	}
	return math.Sqrt(ss/float64(len(vals)-1)) / mean
}

func csvNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// optionDoc is the part of an echarts option the tests read.
type optionDoc struct {
	Title struct {
		Text    string `json:"text"`
		Subtext string `json:"subtext"`
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
		Name       string     `json:"name"`
		Type       string     `json:"type"`
		Stack      string     `json:"stack"`
		XAxisIndex int        `json:"xAxisIndex"`
		YAxisIndex int        `json:"yAxisIndex"`
		Data       []dataItem `json:"data"`
	} `json:"series"`
}

// dataItem is a series' datum: an object with a value, or (error bars)
// the value array itself.
type dataItem struct {
	Value any `json:"value"`
	Label *struct {
		Formatter string `json:"formatter"`
	} `json:"label"`
}

func (d *dataItem) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '[' {
		return json.Unmarshal(b, &d.Value)
	}
	type plain dataItem
	return json.Unmarshal(b, (*plain)(d))
}

// checkOption parses a chart's option and checks what every chart needs:
// valid JSON, no URL, the title, a file name for its downloads (the page
// draws the PNG and SVG buttons), a tooltip kind the page formats, no
// toolbox of echarts' own in the exported images.
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
	if doc.Toolbox.Feature.SaveAsImage != nil {
		t.Errorf("option has echarts' own save-as-image control: %s", c.Option)
	}
	if !strings.HasPrefix(c.File, "iolab-"+string(c.Kind)) {
		t.Errorf("file name %q", c.File)
	}
	if !slices.Contains([]string{"box", "lines", "dist", "bars", "time"}, c.Format.Tooltip) {
		t.Errorf("tooltip format %q", c.Format.Tooltip)
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

func mustBuild(t *testing.T, q Query, runs ...LoadedRun) *Chart {
	t.Helper()
	c, err := Build(q, runs)
	if err != nil {
		t.Fatalf("Build(%+v): %v", q, err)
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
