package handlers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/launch"
	"iolab/bench/summary"
	"iolab/bench/units"
	"iolab/db"
	"iolab/handlers/agent"
	"iolab/handlers/chart"
	"iolab/handlers/report"

	"github.com/labstack/echo/v4"
)

// templateFuncs are the report's (report.TemplateFuncs, for the parts of
// a run and the statistical diff both show) and the dashboard's own.
var templateFuncs = func() template.FuncMap {
	funcs := report.TemplateFuncs()
	funcs["hasItem"] = func(list []string, s string) bool { return slices.Contains(list, s) }
	funcs["filterSel"] = func(name, label, current string, values []string) filterSelect {
		if current != "" && values != nil && !slices.Contains(values, current) {
			values = append(slices.Clone(values), current) // the URL's, though no run has it
		}
		return filterSelect{Name: name, Label: label, Current: current, Values: values}
	}
	funcs["bytes"] = func(b int64) string { return units.Bytes(float64(b)) }
	funcs["thousands"] = thousands
	funcs["fieldErr"] = func(errs map[string]string, field string) fieldError {
		return fieldError{Field: field, Msg: errs[field]}
	}
	return funcs
}()

// thousands writes n with its thousands apart: 31,204.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// filterSelect is one filter of the runs list: a list to pick from, or a
// text field when its values are too many to list (nil).
type filterSelect struct {
	Name, Label, Current string
	Values               []string
}

// fieldError is a form field's error, shown next to it.
type fieldError struct{ Field, Msg string }

func urlQueryEscape(s string) string { return url.QueryEscape(s) }

// runPageData is a run's page.
type runPageData struct {
	pageBase
	Run     *db.Run
	Active  bool         // queued or running on this server
	Waiting string       // what a queued run waits for
	Agent   *agent.Reach // an agent's run: whether its agent is heard from
	Planned int          // steps in the plan
	Charts  []chartView
	// PTS is a PTS test's part of the report (header, what was scaled
	// down, the steady-state and measurement tables); nil for other runs.
	PTS       *report.PTSView
	Steps     []report.StepRow
	Errors    []summary.ErrorGroup // the failed steps' errors, each once
	Notes     []summary.Note       // what done steps must be read with (disturbed, …)
	Command   string
	JobFile   string
	CanDelete bool
	// Group is the page of the group the run is one host's run of, on
	// GroupHost; "" for a run of no group.
	Group, GroupHost string
	// JobLinks pick the job the charts draw, for a run of several jobs.
	JobLinks []jobLink
	// What the step table's legend says: how many I/Os p50 and p99 need,
	// and the share of a core that flags a job's thread as saturated.
	ReliableP50, ReliableP99 uint64
	SaturatedPct             float64
	// Block: a step was traced (report.Traced), and the step table shows
	// the block-layer parts, flagging a job under MinOneToOnePct %
	// one-to-one.
	Block          bool
	MinOneToOnePct float64
	// Lat is the latency the step table shows (report.StepLat: the
	// page's lat=, else lat for a run that compares engines, else clat);
	// LatLinks switch it, StepsCSV is the table's CSV in it.
	Lat      summary.LatKind
	LatLinks []jobLink
	StepsCSV string
	// LogSteps are the fio log files the steps kept, to download.
	LogSteps []logStep
	// Report downloads the run's write-up (handlers/report.go); StatDiff
	// is the statistical diff of its swept engines, schedulers… ("" when
	// it sweeps none).
	Report, StatDiff, StatDiffAxis string
}

// sizeHint is about how large the page is: its charts' options, escaped
// (quotes grow five times), and its step table. The page is rendered
// into a buffer of that size rather than one grown as it is written,
// megabytes for a long run.
func (d *runPageData) sizeHint() int {
	n := 32 << 10
	for _, c := range d.Charts {
		n += len(c.Option) * 7 / 4
	}
	for _, st := range d.Steps {
		n += 768 * len(st.Jobs)
	}
	return n
}

// jobLink is a link to the run page with its charts of one job.
type jobLink struct {
	Name, URL string
	Current   bool
	Measured  bool // the job the run's preset measures
}

// chartView is one chart on a page.
type chartView struct {
	Kind    string
	Title   string
	Option  string // echarts option JSON, put in a data attribute
	Format  string // chart.Format as JSON: how tooltips write numbers
	File    string // the downloads' name, without extension
	Pickers []chart.Picker
	Hidden  string // the series left out to stay readable, and how to draw them
	// Keep is the page's view state the pickers' form carries along
	// (hidden inputs), so that submitting it without a script keeps the
	// rest of the view.
	Keep  []urlParam
	URL   string // the standalone chart page
	CSV   string
	Error string
}

func (s *Server) runPage(c echo.Context) error {
	ctx := c.Request().Context()
	id, err := runIDParam(c)
	if err != nil {
		return err
	}
	run, err := s.getRun(ctx, id)
	if err != nil {
		return err
	}
	// The charts' state is in the page's URL, as on a chart's own page:
	// p=, qd=, show=, step=, dir=, job=.
	state, err := chart.ParseQuery(c.QueryParams())
	if err != nil {
		return err
	}
	// lat= is the page's: the latency charts' and the step table's
	// (ParseQuery keeps it for a latency kind only).
	lat, err := summary.ParseLatKind(strings.TrimSpace(c.QueryParam("lat")))
	if err != nil {
		return &ValidationError{Field: "lat", Msg: "lat: " + err.Error()}
	}
	state.Lat = chart.LatKind(lat)
	steps, err := s.store.Summaries(ctx, id)
	if err != nil {
		return err
	}
	data := runPageData{pageBase: s.base(c, fmt.Sprintf("Run %d · %s", run.ID, run.Name)), Run: run,
		Active: s.launcher.Active(id), Waiting: s.launcher.Waiting(id), Agent: s.agentReach(id),
		Command: run.Plan.Command(), JobFile: run.Plan.JobFile()}
	data.Planned = s.planned.of(run)
	data.CanDelete = !data.Active
	if uid, m, err := s.store.FleetRunOf(ctx, id); err == nil {
		data.Group, data.GroupHost = groupURL(uid), m.HostName
	}
	data.Lat = report.StepLat(summary.LatKind(state.Lat), run, steps)
	data.Steps = report.SummaryRows(steps, data.Lat)
	data.StepsCSV = fmt.Sprintf("/runs/%d/steps.csv?lat=%s", run.ID, data.Lat)
	kinds := summary.LatKinds
	if data.Block = report.Traced(steps); data.Block {
		kinds = slices.Concat(kinds, summary.BlockKinds)
	}
	for _, k := range kinds {
		v := c.QueryParams()
		v.Set("lat", string(k))
		data.LatLinks = append(data.LatLinks, jobLink{Name: k.Title(), URL: fmt.Sprintf("/runs/%d?%s#run-steps", run.ID, v.Encode()), Current: k == data.Lat})
	}
	files, err := s.store.RunLogFiles(ctx, id)
	if err != nil {
		return err
	}
	data.LogSteps = logSteps(id, files)
	data.Errors = summary.GroupErrorsOf(steps)
	data.Notes = summary.NotesOf(steps)
	data.ReliableP50, data.ReliableP99 = hist.ReliableN(report.StepPercentiles[0]), hist.ReliableN(report.StepPercentiles[1])
	data.SaturatedPct = 100 * bench.SaturatedCPU
	data.MinOneToOnePct = 100 * report.MinOneToOne
	data.Report = fmt.Sprintf("/report?run=%d", run.ID)
	if lat != "" {
		data.Report += "&lat=" + string(lat)
	}
	if axes := summary.DiffAxes(&run.Plan); len(axes) > 0 && len(steps) > 0 {
		data.StatDiff, data.StatDiffAxis = fmt.Sprintf("/compare?run=%d#stat-diff", run.ID), string(axes[0])
	}
	cr := chart.LoadedRun{Run: *run, Summary: steps}
	job := strings.TrimSpace(c.QueryParam("job"))
	names := cr.Jobs()
	if job != "" && !slices.Contains(names, job) {
		return &ValidationError{Field: "job", Msg: fmt.Sprintf("job %q: run %d has no such job; its jobs are %s", job, run.ID, strings.Join(names, ", "))}
	}
	if len(names) > 1 {
		current := cmp.Or(job, cr.DefaultJob())
		measured := run.Plan.MeasuredJob()
		for _, n := range names {
			data.JobLinks = append(data.JobLinks, jobLink{Name: n, URL: fmt.Sprintf("/runs/%d?job=%s", run.ID, url.QueryEscape(n)),
				Current: n == current, Measured: n == measured})
		}
	}
	if len(steps) > 0 {
		data.Charts = chartViews([]chart.LoadedRun{cr}, state)
		data.PTS = report.PTSViewOf(run, steps)
	}
	return s.render(c, http.StatusOK, "run", &data)
}

// plannedSteps are the step counts of runs' plans, by run: a stored
// run's plan never changes, and expanding a long one (each step's jobs)
// was a tenth of its page's build, again after each step landed.
type plannedSteps struct {
	mu     sync.Mutex
	counts map[plannedKey]int
}

// plannedKey is a run: its id, and when it was created, which tells a run
// from another stored under the id of a deleted one.
type plannedKey struct{ id, created int64 }

// of is how many steps run's plan expands to; 0 when it does not.
func (p *plannedSteps) of(run *db.Run) int {
	k := plannedKey{run.ID, run.Created.UnixNano()}
	p.mu.Lock()
	n, ok := p.counts[k]
	p.mu.Unlock()
	if ok {
		return n
	}
	if steps, err := run.Plan.Steps(); err == nil {
		n = len(steps)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.counts) >= 4096 { // a few bytes each; no server shows that many runs in a while
		clear(p.counts)
	}
	p.counts[k] = n
	return n
}

// chartViews builds every chart that the runs' steps can show, in the
// view state (a page's query string) picks: the job, direction,
// percentiles, iodepths, series and step it names, else the defaults.
func chartViews(runs []chart.LoadedRun, state chart.Query) []chartView {
	ids := make([]int64, len(runs))
	for i, r := range runs {
		ids[i] = r.Run.ID
	}
	var out []chartView
	for _, k := range chart.Available(runs, chart.RunPage) {
		// Through the query string, so the chart gets the defaults a
		// copied URL would.
		cq := chart.Query{Kind: k.Name, Runs: ids, Job: state.Job, Dir: state.Dir, Percentiles: state.Percentiles,
			IODepths: state.IODepths, Show: state.Show, ShowRuns: state.ShowRuns, Lat: k.PageLat(state.Lat)}
		if k.Needs.Samples {
			cq.Step = state.Step
		}
		q, err := chart.ParseQuery(cq.Values())
		if err != nil {
			out = append(out, chartView{Kind: string(k.Name), Title: string(k.Name), Error: err.Error()})
			continue
		}
		out = append(out, keepState(chartViewOf(q, runs), state.Values()))
	}
	return out
}

// loadRuns reads runs and what load asks for of their steps, for charts.
// One load serves every run.
func (s *Server) loadRuns(ctx context.Context, ids []int64, load db.StepLoad) ([]chart.LoadedRun, error) {
	return s.readRuns(ctx, ids, func(id int64, cr *chart.LoadedRun) (err error) {
		cr.Steps, err = s.store.StepsFor(ctx, id, load)
		return err
	})
}

// loadSummaries reads runs and their steps' summaries, for charts.
func (s *Server) loadSummaries(ctx context.Context, ids []int64) ([]chart.LoadedRun, error) {
	return s.readRuns(ctx, ids, func(id int64, cr *chart.LoadedRun) (err error) {
		cr.Summary, err = s.store.Summaries(ctx, id)
		return err
	})
}

// readRuns reads runs (in one query), and their steps with steps.
func (s *Server) readRuns(ctx context.Context, ids []int64, steps func(id int64, cr *chart.LoadedRun) error) ([]chart.LoadedRun, error) {
	if len(ids) == 0 {
		return nil, &ValidationError{Field: "run", Msg: "name at least one run (run=ID)"}
	}
	if len(ids) > 50 {
		return nil, &ValidationError{Field: "run", Msg: "at most 50 runs at once"}
	}
	rows, err := s.store.RunsByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]chart.LoadedRun, 0, len(ids))
	for i, id := range ids {
		if i >= len(rows) || rows[i].ID != id {
			return nil, notFoundError{what: fmt.Sprintf("run %d", id)}
		}
		cr := chart.LoadedRun{Run: rows[i]}
		if err := steps(id, &cr); err != nil {
			return nil, err
		}
		if _, m, err := s.store.FleetRunOf(ctx, id); err == nil {
			cr.Host = m.HostName
		} else if !errors.Is(err, db.ErrNotFound) {
			return nil, err
		}
		out = append(out, cr)
	}
	return out, nil
}

// chartPageData is the standalone chart page and the compare page.
type chartPageData struct {
	pageBase
	Runs   []chart.LoadedRun
	Charts []chartView
	Kinds  []chartLink  // the same runs under another chart
	Table  *chart.Chart // the plotted numbers, on a single chart's page
}

// chartLink is a link to one kind of chart of the page's runs.
type chartLink struct {
	Kind    string
	URL     string
	Current bool
}

// queryChart builds the chart the request's query string names, with the
// runs it was drawn from.
func (s *Server) queryChart(c echo.Context) (chart.Query, []chart.LoadedRun, *chart.Chart, error) {
	q, err := chart.ParseQuery(c.QueryParams())
	if err != nil {
		return q, nil, nil, err
	}
	var runs []chart.LoadedRun
	if logs := q.LatLogs(); logs != nil {
		// The latency timeline's lat or slat, from the jobs' logs, which
		// summaries leave out: the steps it draws, with those logs.
		spec, _ := chart.LookupKind(q.Kind)
		load := chart.Load(q.Step, spec)
		load.Logs = append(load.Logs, logs...)
		runs, err = s.loadRuns(c.Request().Context(), q.Runs, load)
	} else {
		runs, err = s.loadSummaries(c.Request().Context(), q.Runs)
	}
	if err != nil {
		return q, nil, nil, err
	}
	ch, err := chart.Build(q, runs)
	return q, runs, ch, err
}

func (s *Server) chartPage(c echo.Context) error {
	q, runs, ch, err := s.queryChart(c)
	if err != nil {
		return err
	}
	enc := q.Values().Encode()
	data := chartPageData{pageBase: s.base(c, ch.Title), Runs: runs, Table: ch,
		Charts: []chartView{keepState(withChart(chartView{Kind: string(ch.Kind), URL: "/charts?" + enc, CSV: "/charts/export.csv?" + enc}, ch), q.Values())}}
	for _, k := range chart.Available(runs, chart.RunPage) {
		data.Kinds = append(data.Kinds, chartLink{Kind: string(k.Name), URL: "/charts?" + chart.Query{Kind: k.Name, Runs: q.Runs, Job: q.Job}.Values().Encode(), Current: k.Name == q.Kind})
	}
	return s.render(c, http.StatusOK, "chart", &data)
}

func (s *Server) chartCSV(c echo.Context) error {
	q, _, ch, err := s.queryChart(c)
	if err != nil {
		return err
	}
	return s.serveCSV(c, fmt.Sprintf("iolab-%s.csv", q.Kind), ch)
}

// serveCSV writes a table as a CSV download, straight to the client.
func (s *Server) serveCSV(c echo.Context, filename string, ch *chart.Chart) error {
	startCSV(c, filename)
	if err := chart.WriteCSV(c.Response(), ch); err != nil {
		markNotWhole(c)
		s.log.Warn("csv cut short", "path", c.Request().URL.Path, "err", err)
	}
	return nil
}

// startCSV sends a CSV download's headers: from here on, the rows go to
// the client as they are made.
func startCSV(c echo.Context, filename string) {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s"`, filename))
	c.Response().WriteHeader(http.StatusOK)
}

// stepsCSV is the run page's per-step table as CSV, unformatted, with
// units in the header.
func (s *Server) stepsCSV(c echo.Context) error {
	ctx := c.Request().Context()
	id, err := runIDParam(c)
	if err != nil {
		return err
	}
	k, err := summary.ParseLatKind(strings.TrimSpace(c.QueryParam("lat")))
	if err != nil {
		return &ValidationError{Field: "lat", Msg: "lat: " + err.Error()}
	}
	run, err := s.getRun(ctx, id)
	if err != nil {
		return err
	}
	// The summaries are a few MB of a run of any length; the rows go out
	// as they are made.
	steps, err := s.store.Summaries(ctx, id)
	if err != nil {
		return err
	}
	k = report.StepLat(k, run, steps)
	startCSV(c, fmt.Sprintf("iolab-run-%d-steps.csv", id))
	traced := report.Traced(steps)
	cw := chart.NewCSVWriter(c.Response(), report.StepsColumns(k, traced))
	err = cw.Header()
	for i := 0; err == nil && i < len(steps); i++ {
		for _, row := range report.SummaryTableRows(&steps[i], k, traced) {
			if err = cw.Row(row); err != nil {
				break
			}
		}
	}
	if err == nil {
		err = cw.Flush()
	}
	if err != nil {
		markNotWhole(c)
		s.log.Warn("steps csv cut short", "run", id, "err", err)
	}
	return nil
}

// cancel cancels run id, queued or running here; 409 when it is neither,
// saying which process holds it when another one does.
func (s *Server) cancel(c echo.Context, id int64) error {
	ctx := c.Request().Context()
	run, err := s.getRun(ctx, id)
	if err != nil {
		return err
	}
	err = s.launcher.Cancel(ctx, id)
	if err != launch.ErrNotActive {
		return err
	}
	if err := s.heldElsewhere(ctx, id, "cancel it there"); err != nil {
		return err
	}
	if run.Status == db.StatusQueued || run.Status == db.StatusRunning {
		// Its process is gone: it is not running, whatever it says.
		if _, err := s.store.MarkInterrupted(ctx); err != nil {
			return err
		}
		return echo.NewHTTPError(http.StatusConflict, fmt.Sprintf("run %d is not running: the process that ran it has ended, so it is now marked interrupted", id))
	}
	return echo.NewHTTPError(http.StatusConflict, launch.ErrNotActive.Error())
}

// heldElsewhere is a 409 when another live process queues or runs run id:
// the run is that process's to end (what tells the user how), and its
// next step's save needs the run still there.
func (s *Server) heldElsewhere(ctx context.Context, id int64, what string) error {
	pid, alive, err := s.store.RunOwnedElsewhere(ctx, id)
	if errors.Is(err, db.ErrNotFound) {
		return notFoundError{what: fmt.Sprintf("run %d", id)}
	}
	if err != nil {
		return err
	}
	if alive {
		return echo.NewHTTPError(http.StatusConflict, fmt.Sprintf("run %d is queued or running in another iolab process (pid %d): %s", id, pid, what))
	}
	return nil
}

func (s *Server) cancelRun(c echo.Context) error {
	id, err := runIDParam(c)
	if err != nil {
		return err
	}
	if err := s.cancel(c, id); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/runs/%d", id))
}

func (s *Server) deleteRun(c echo.Context) error {
	id, err := runIDParam(c)
	if err != nil {
		return err
	}
	if err := s.removeRun(c.Request().Context(), id); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/runs")
}

// removeRun deletes a run that is not queued or running here.
func (s *Server) removeRun(ctx context.Context, id int64) error {
	if s.launcher.Active(id) {
		return echo.NewHTTPError(http.StatusConflict, fmt.Sprintf("run %d is queued or running: cancel it first", id))
	}
	if err := s.heldElsewhere(ctx, id, "stop it there (Ctrl-C, or kill -INT the pid) before deleting it"); err != nil {
		return err
	}
	if err := s.store.DeleteRun(ctx, id); err != nil {
		if _, gerr := s.getRun(ctx, id); gerr != nil {
			return gerr
		}
		return err
	}
	return nil
}
