package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"iolab/bench/summary"
	"iolab/db"
	"iolab/handlers/chart"
	"iolab/handlers/report"

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
// the chart parameters that apply to every chart (dir, p, qd, series, the
// series and runs shown, and job for those that draw one).
func compareQuery(v url.Values, ids []int64) url.Values {
	out := url.Values{}
	for _, k := range []string{"dir", "p", "qd", "series", "job", "lat", "show", "showrun"} {
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
	Runs      []chart.LoadedRun
	Warnings  []report.Warning
	Diffs     []report.EnvDiff
	DiffCSV   string
	Charts    []chartView
	MaxIOPS   *chart.Chart
	MaxCSV    string
	Canonical string
	// Sched are the scheduler tables, per run, when the runs differ by
	// scheduler or sweep schedulers (report.SchedulerTables).
	Sched    []report.SchedTables
	SchedCSV string
	JobsCSV  string
	// StatDiffs are the statistical diffs (report.StatDiffs): each
	// run against the first, or one run's axis values against its base;
	// StatErr says why there are none, StatAxes pick one run's axis.
	StatDiffs []report.StatDiffView
	StatErr   string
	StatCSV   string
	StatAxes  []chartLink
	// StatLat switch the latency kind the diff compares; Lat is the
	// page's lat= ("" for each table's and chart's default).
	StatLat []chartLink
	Lat     summary.LatKind
	// StatNote says what of the runs the statistical diff compares when
	// not all their steps (PTS runs: each one's steady-state window).
	StatNote string
	// PTS is the runs of one PTS test round by round (compare_pts.go);
	// PTSWhy says why PTS runs are not compared so.
	PTS    *ptsCompareView
	PTSWhy string
	// Report is the link that downloads the page as a write-up.
	Report string
}

// compareView shows several runs side by side: warnings about what
// differs besides what is compared, the environment and plan differences,
// the charts the compare page draws overlaid, and the table of max IOPS
// per kernel × engine.
func (s *Server) compareView(c echo.Context) error {
	ids, err := compareIDs(c.QueryParams())
	if err != nil {
		return err
	}
	data, err := s.compareData(c, ids)
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, "compare", data)
}

// compareData is the compare page of runs ids, its charts' state from the
// request's query.
func (s *Server) compareData(c echo.Context, ids []int64) (*comparePageData, error) {
	load := chart.Load(0, chart.On(chart.ComparePage)...)
	load.Hists |= db.AllHists // the statistical diff's percentiles, of any latency kind
	runs, err := s.loadRuns(c.Request().Context(), ids, load)
	if err != nil {
		return nil, err
	}
	v := compareQuery(c.QueryParams(), ids)
	base, err := chart.ParseQuery(v)
	if err != nil {
		return nil, err
	}
	// lat= is the page's: the latency charts' and the statistical
	// diff's (ParseQuery keeps it for a latency kind only).
	pageLat, err := summary.ParseLatKind(strings.TrimSpace(c.QueryParam("lat")))
	if err != nil {
		return nil, &ValidationError{Field: "lat", Msg: "lat: " + err.Error()}
	}
	base.Lat = chart.LatKind(pageLat)
	canon := base.Values()
	canon.Del("kind")
	data := comparePageData{pageBase: s.base(c, "Compare runs"), Runs: runs, Warnings: report.CompareWarnings(runs),
		Diffs: report.EnvDiffs(runs), Canonical: "/compare?" + canon.Encode(), Lat: pageLat}
	tv := url.Values{}
	for _, id := range ids {
		tv.Add("run", strconv.FormatInt(id, 10))
	}
	axis, baseValue := c.QueryParam("axis"), c.QueryParam("base")
	lat := pageLat
	data.PTS, data.PTSWhy = ptsCompare(runs)
	diffRuns, statNote := ptsWindowed(runs)
	data.StatNote = statNote
	if diffs, err := report.StatDiffs(diffRuns, axis, baseValue, lat); err != nil {
		data.StatErr = err.Error()
	} else {
		data.StatDiffs = report.StatDiffViews(diffs)
	}
	data.StatAxes = statDiffAxisLinks(runs, axis)
	if len(data.StatDiffs) > 0 {
		kinds := summary.LatKinds
		if slices.ContainsFunc(chart.Available(runs, chart.ComparePage), func(k chart.KindSpec) bool { return k.Name == chart.TimeSplit }) {
			kinds = slices.Concat(kinds, summary.BlockKinds) // a run was traced: its parts compare too
		}
		for _, k := range kinds {
			lv := c.QueryParams()
			lv.Set("lat", string(k))
			data.StatLat = append(data.StatLat, chartLink{Kind: k.Title(), URL: "/compare?" + lv.Encode() + "#stat-diff",
				Current: k == data.StatDiffs[0].LatKind})
		}
	}
	data.Report = "/report?" + tv.Encode()
	if pageLat != "" {
		data.Report += "&lat=" + string(pageLat)
	}
	sv := url.Values{"run": tv["run"], "table": {"stats"}}
	if lat != "" {
		sv.Set("lat", string(lat))
	}
	if axis != "" {
		sv.Set("axis", axis)
	}
	if baseValue != "" {
		sv.Set("base", baseValue)
	}
	data.StatCSV = "/compare/export.csv?" + sv.Encode()
	if data.PTS != nil {
		tv.Set("table", "pts")
		data.PTS.CSV = "/compare/export.csv?" + tv.Encode()
	}
	tv.Set("table", "diff")
	data.DiffCSV = "/compare/export.csv?" + tv.Encode()
	tv.Set("table", "maxiops")
	data.MaxCSV = "/compare/export.csv?" + tv.Encode()
	if report.NeedSchedTables(runs) {
		data.Sched = report.SchedulerTables(runs, false)
		tv.Set("table", "schedulers")
		data.SchedCSV = "/compare/export.csv?" + tv.Encode()
		tv.Set("table", "jobs")
		data.JobsCSV = "/compare/export.csv?" + tv.Encode()
	}

	for _, k := range chart.Available(runs, chart.ComparePage) {
		q := base
		q.Kind, q.Lat = k.Name, k.PageLat(base.Lat)
		data.Charts = append(data.Charts, keepState(chartViewOf(q, runs), v))
	}
	if data.MaxIOPS, err = chart.Build(chart.Query{Kind: chart.MaxIOPS}, runs); err != nil {
		return nil, err
	}
	return &data, nil
}

// compareCSV is the compare page's tables as CSV: table=diff (environment
// and plan differences), stats (the statistical diff), pts (runs of one
// PTS test round by round), maxiops, schedulers or jobs.
func (s *Server) compareCSV(c echo.Context) error {
	ids, err := compareIDs(c.QueryParams())
	if err != nil {
		return err
	}
	t := c.QueryParam("table")
	load := db.StepLoad{}
	if t == "stats" {
		load.Hists = db.AllHists
	}
	runs, err := s.loadRuns(c.Request().Context(), ids, load)
	if err != nil {
		return err
	}
	var ch *chart.Chart
	switch t {
	case "stats":
		lat, err := summary.ParseLatKind(strings.TrimSpace(c.QueryParam("lat")))
		if err != nil {
			return &ValidationError{Field: "lat", Msg: "lat: " + err.Error()}
		}
		diffRuns, _ := ptsWindowed(runs)
		diffs, err := report.StatDiffs(diffRuns, c.QueryParam("axis"), c.QueryParam("base"), lat)
		if err != nil {
			return &ValidationError{Field: "run", Msg: err.Error()}
		}
		ch = report.StatDiffCSV(diffs)
	case "pts":
		if ch, err = ptsCSV(runs); err != nil {
			return err
		}
	case "diff":
		ch = &chart.Chart{Columns: []string{"field"}}
		for _, r := range runs {
			ch.Columns = append(ch.Columns, "run "+strconv.FormatInt(r.Run.ID, 10))
		}
		for _, d := range report.EnvDiffs(runs) {
			ch.Rows = append(ch.Rows, append([]string{d.Field}, d.Values...))
		}
	case "maxiops", "":
		if ch, err = chart.Build(chart.Query{Kind: chart.MaxIOPS}, runs); err != nil {
			return err
		}
	case "schedulers", "jobs":
		ch = schedulerCSV(runs, t == "jobs")
	default:
		return &ValidationError{Field: "table", Msg: fmt.Sprintf("table %q: use diff, stats, maxiops, schedulers, jobs or pts", t)}
	}
	return s.serveCSV(c, "iolab-compare.csv", ch)
}

// statDiffAxisLinks are the links to the compare page of one run with
// each of its comparable axes (summary.DiffAxes); none for several runs.
func statDiffAxisLinks(runs []chart.LoadedRun, current string) []chartLink {
	if len(runs) != 1 {
		return nil
	}
	axes := summary.DiffAxes(&runs[0].Run.Plan)
	if len(axes) < 2 {
		return nil
	}
	var out []chartLink
	for i, a := range axes {
		v := url.Values{"run": {strconv.FormatInt(runs[0].Run.ID, 10)}, "axis": {string(a)}}
		out = append(out, chartLink{Kind: string(a), URL: "/compare?" + v.Encode() + "#stat-diff",
			Current: string(a) == current || current == "" && i == 0})
	}
	return out
}

// schedulerCSV is every run's table of one kind (table=schedulers: IOPS
// and bandwidth, table=jobs: latency and bandwidth) in one CSV, a run
// column first.
func schedulerCSV(runs []chart.LoadedRun, jobs bool) *chart.Chart {
	out := &chart.Chart{}
	for _, t := range report.SchedulerTables(runs, true) {
		src := t.Rates
		if jobs {
			src = t.Jobs
		}
		if src == nil {
			continue
		}
		out.Columns = src.Columns
		out.Rows = append(out.Rows, src.Rows...)
	}
	return out
}
