package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"iolab/bench/sweep"
	"iolab/db"

	"github.com/labstack/echo/v4"
)

// The compare page has its own template.
func init() { pageNames = append(pageNames, "compare") }

// compareIDs reads the runs to compare: run=1&run=2, or runs=1,2 (both
// may be given; duplicates count once).
func compareIDs(v url.Values) ([]int64, error) {
	var raw []string
	raw = append(raw, v["run"]...)
	for _, s := range v["runs"] {
		raw = append(raw, strings.Split(s, ",")...)
	}
	var ids []int64
	for _, s := range raw {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id < 1 {
			return nil, &ValidationError{Field: "run", Msg: fmt.Sprintf("run=%q is not a run id", s)}
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// compareQuery is the chart query the compare page's view is: the runs and
// the chart parameters that apply to every chart (dir, p, qd, series).
func compareQuery(v url.Values, ids []int64) url.Values {
	out := url.Values{}
	for _, k := range []string{"dir", "p", "qd", "series"} {
		if vs, ok := v[k]; ok {
			out[k] = vs
		}
	}
	for _, id := range ids {
		out.Add("run", strconv.FormatInt(id, 10))
	}
	return out
}

// comparePageData is the compare page.
type comparePageData struct {
	pageBase
	Runs      []RunData
	Warnings  []Warning
	Diffs     []diffRow
	DiffCSV   string
	Charts    []chartView
	MaxIOPS   *Chart
	MaxCSV    string
	IODepths  []string // the iodepths the distribution may show
	QD        []string // the ones it shows
	Hidden    url.Values
	Canonical string
	// Sched are the scheduler tables, per run, when the runs differ by
	// scheduler or sweep schedulers (handlers/schedtables.go).
	Sched    []schedTables
	SchedCSV string
	JobsCSV  string
}

// compareView shows several runs side by side: warnings about what
// differs besides what is compared, the environment and plan differences,
// the IOPS, latency and distribution charts overlaid, and max IOPS per
// kernel × engine.
func (s *Server) compareView(c echo.Context) error {
	ids, err := compareIDs(c.QueryParams())
	if err != nil {
		return err
	}
	// Histograms for the latency charts; no samples (no timeline here).
	runs, err := s.loadRuns(c.Request().Context(), ids, db.StepLoad{Hists: db.AllHists})
	if err != nil {
		return err
	}
	v := compareQuery(c.QueryParams(), ids)
	base, err := ParseChartQuery(v)
	if err != nil {
		return err
	}
	canon := base.Values()
	canon.Del("kind")
	data := comparePageData{pageBase: s.base(c, "Compare runs"), Runs: runs, Warnings: CompareWarnings(runs),
		Diffs: compareDiffs(runs), Canonical: "/compare?" + canon.Encode()}
	tv := url.Values{}
	for _, id := range ids {
		tv.Add("run", strconv.FormatInt(id, 10))
	}
	tv.Set("table", "diff")
	data.DiffCSV = "/compare/export.csv?" + tv.Encode()
	tv.Set("table", "maxiops")
	data.MaxCSV = "/compare/export.csv?" + tv.Encode()
	if needSchedTables(runs) {
		data.Sched = schedulerTables(runs, false)
		tv.Set("table", "schedulers")
		data.SchedCSV = "/compare/export.csv?" + tv.Encode()
		tv.Set("table", "jobs")
		data.JobsCSV = "/compare/export.csv?" + tv.Encode()
	}

	available := AvailableCharts(runs)
	for _, kind := range []ChartKind{ChartIOPS, ChartLatency, ChartDistribution, ChartScaling, ChartFairness} {
		if !slices.Contains(available, kind) {
			continue
		}
		q := base
		q.Kind = kind
		if kind == ChartScaling {
			q.X = ""
		}
		enc := q.Values().Encode()
		cv := chartView{Kind: string(kind), Title: string(kind), URL: "/charts?" + enc, CSV: "/charts/export.csv?" + enc}
		if ch, err := BuildChart(q, runs); err != nil {
			cv.Error = err.Error()
		} else {
			cv.Title, cv.Option = ch.Title, string(ch.Option)
		}
		data.Charts = append(data.Charts, cv)
	}
	mx := maxIOPSChart(runs)
	data.MaxIOPS = mx
	if len(mx.Rows) > 0 {
		data.Charts = append(data.Charts, chartView{Kind: string(mx.Kind), Title: mx.Title, Option: string(mx.Option), CSV: data.MaxCSV})
	}
	for _, r := range runs {
		cr := newChartRun(&r)
		for i := range cr.steps {
			data.IODepths = appendNew(data.IODepths, cr.value(cr.steps[i].Step.Axes, sweep.AxisIODepth))
		}
	}
	slices.SortFunc(data.IODepths, func(a, b string) int { x, _ := strconv.Atoi(a); y, _ := strconv.Atoi(b); return x - y })
	for _, d := range base.IODepths {
		data.QD = append(data.QD, strconv.Itoa(d))
	}
	data.Hidden = url.Values{}
	for k, vs := range v {
		if k != "qd" {
			data.Hidden[k] = vs
		}
	}
	return s.render(c, http.StatusOK, "compare", &data)
}

// compareCSV is the compare page's tables as CSV: table=diff (environment
// and plan differences) or table=maxiops.
func (s *Server) compareCSV(c echo.Context) error {
	ids, err := compareIDs(c.QueryParams())
	if err != nil {
		return err
	}
	runs, err := s.loadRuns(c.Request().Context(), ids, db.StepLoad{})
	if err != nil {
		return err
	}
	var ch *Chart
	switch t := c.QueryParam("table"); t {
	case "diff":
		ch = &Chart{Columns: []string{"field"}}
		for _, r := range runs {
			ch.Columns = append(ch.Columns, "run "+strconv.FormatInt(r.Run.ID, 10))
		}
		for _, d := range compareDiffs(runs) {
			ch.Rows = append(ch.Rows, append([]string{d.Field}, d.Values...))
		}
	case "maxiops", "":
		ch = maxIOPSChart(runs)
	case "schedulers", "jobs":
		ch = schedulerCSV(runs, t == "jobs")
	default:
		return &ValidationError{Field: "table", Msg: fmt.Sprintf("table %q: use diff, maxiops, schedulers or jobs", t)}
	}
	var buf strings.Builder
	if err := WriteCSV(&buf, ch); err != nil {
		return err
	}
	c.Response().Header().Set("Content-Disposition", `attachment; filename="iolab-compare.csv"`)
	return c.Blob(http.StatusOK, "text/csv; charset=utf-8", []byte(buf.String()))
}

// ChartMaxIOPS is the compare page's grouped bars: the best IOPS (the
// highest median over repeats of any step) per kernel × engine.
const ChartMaxIOPS ChartKind = "maxiops"

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// maxIOPSChart finds each run's best IOPS per engine: the median over
// repeats of each step's axes, the highest over the axes. Bars are grouped
// by kernel (by "kernel (run N)" when runs share a kernel), one series per
// engine.
func maxIOPSChart(runs []RunData) *Chart {
	kernels := map[string]int{}
	for _, r := range runs {
		kernels[r.Run.Kernel]++
	}
	type cell struct{ kernel, engine string }
	best := map[cell]float64{}
	bestAt := map[cell]string{}
	var cats, engines []string
	for i := range runs {
		cr := newChartRun(&runs[i])
		kernel := runs[i].Run.Kernel
		if kernel == "" {
			kernel = "unknown kernel"
		}
		if kernels[runs[i].Run.Kernel] > 1 {
			kernel += " (run " + strconv.FormatInt(runs[i].Run.ID, 10) + ")"
		}
		points := map[string][]float64{}
		pointEngine := map[string]string{}
		var order []string
		for j := range cr.steps {
			st := &cr.steps[j]
			if chartStepStatus(st) != sweep.StepDone || st.Result == nil {
				continue
			}
			iops, _ := st.Result.Totals()
			var key []string
			for _, a := range st.Step.Axes {
				key = append(key, string(a.Axis)+"="+a.Value)
			}
			k := strings.Join(key, " ")
			if _, seen := points[k]; !seen {
				order = append(order, k)
				pointEngine[k] = cr.value(st.Step.Axes, sweep.AxisEngine)
			}
			points[k] = append(points[k], iops)
		}
		for _, k := range order {
			c := cell{kernel, pointEngine[k]}
			if m := median(points[k]); m > best[c] {
				best[c], bestAt[c] = m, k
			}
			cats = appendNew(cats, kernel)
			engines = appendNew(engines, pointEngine[k])
		}
	}
	ch := &Chart{Kind: ChartMaxIOPS, Title: "Max IOPS per kernel × engine",
		Columns: []string{"kernel", "ioengine", "max_iops", "at"}, Rows: [][]string{}}
	type series struct {
		Name string `json:"name"`
		Type string `json:"type"`
		Data []any  `json:"data"`
	}
	var ss []series
	for _, e := range engines {
		s := series{Name: e, Type: "bar"}
		for _, k := range cats {
			v, ok := best[cell{k, e}]
			if !ok {
				s.Data = append(s.Data, "-")
				continue
			}
			s.Data = append(s.Data, v)
			ch.Rows = append(ch.Rows, []string{k, e, chartNum(v), bestAt[cell{k, e}]})
		}
		ss = append(ss, s)
	}
	opt := map[string]any{
		"title":   map[string]any{"text": ch.Title, "left": "center", "textStyle": map[string]any{"fontSize": 13}},
		"tooltip": map[string]any{"trigger": "axis"},
		"legend":  map[string]any{"bottom": 0},
		"grid":    map[string]any{"containLabel": true, "bottom": 40},
		"xAxis":   map[string]any{"type": "category", "name": "kernel", "data": cats},
		"yAxis":   map[string]any{"type": "value", "name": "IOPS"},
		"series":  ss,
	}
	b, err := json.Marshal(opt)
	if err != nil {
		b = []byte("{}")
	}
	ch.Option = b
	return ch
}
