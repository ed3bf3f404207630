package report

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"time"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/summary"
	"iolab/db"
	"iolab/handlers/chart"
	"iolab/web"
	"iolab/web/render"
)

// A Report is a write-up of one run or a comparison of several: what the
// run page or the compare page shows, with its charts drawn as inline SVG
// (web/render), in one HTML file that needs nothing else — no script, no
// style sheet, no font or image from anywhere. WriteHTML writes that file;
// WriteBundle (bundle.go) a directory of it, a Markdown summary,
// each chart as PNG (2×) and SVG, and the CSVs.
type Report struct {
	Title     string
	Generated string
	Version   string
	CSS       template.CSS
	Runs      []RunPart
	// Compare: several runs, with their warnings and differences.
	Compare  bool
	Warnings []Warning
	EnvDiffs []EnvDiff
	// StatDiffs: each run against the first, or one run's axis values
	// against its base; StatErr why there are none.
	StatDiffs []StatDiffView
	StatErr   string
	// Charts are the compare page's charts (a compare) or the run page's
	// (one run).
	Charts  []Chart
	MaxIOPS *chart.Chart
	Sched   []SchedTables
	// Knees: each QoS curve's knee under its run's SLO and its points
	// (qos.go).
	Knees []Knee
	// Fleet: the runs are one group's hosts, as one system (fleet.go);
	// nil else. Its chart is among Charts.
	Fleet *FleetView
	fleet *summary.Fleet

	diffs []*summary.Diff
}

// RunPart is one run of a report: its header, environment and plan,
// and for a report of one run its steps, errors and notes.
type RunPart struct {
	Run              *db.Run
	Command, JobFile string
	Steps            []StepRow
	Errors           []summary.ErrorGroup
	Notes            []summary.Note
	// Lat is the latency the steps' p50 and p99 are of (StepLat).
	Lat summary.LatKind
	// What the step table's legend says (runPageData's fields alike).
	ReliableP50, ReliableP99 uint64
	SaturatedPct             float64
	Block                    bool
	MinOneToOnePct           float64
	// PTS is a SNIA PTS test's part (pts.go); nil for another run.
	PTS   *PTSView
	steps []summary.StepView // for the bundle's steps CSV
}

// Chart is one chart, drawn.
type Chart struct {
	Kind, Title string
	SVG         template.HTML
	Error       string
	// Hidden names the series the chart leaves out to stay readable, as
	// the dashboard's note under the chart does (chart.Chart.Hidden).
	Hidden string
	chart  *chart.Chart
	file   string
}

// Report limits: a report draws what a page would, for at most a few runs.
const (
	MaxRuns = MaxStatDiffRuns
	// ChartWidth × ChartHeight is each chart's size in CSS
	// pixels; the bundle's PNGs are twice that.
	ChartWidth, ChartHeight = 960, 480
)

// Options pick, for a report of one run, the axis whose values the
// statistical diff compares and its base value ("": the defaults).
type Options struct {
	Axis, Base string
	Version    string
	// Lat is the latency the tables and charts show: "" for each its
	// default (lat when engines or hosts are compared, else clat).
	Lat summary.LatKind
}

// InputError is a report asked of runs it cannot cover (none, or too
// many): the dashboard answers it with 400, the field and the message, as
// its own ValidationError.
type InputError struct {
	Field string // what names the runs: "run"
	Msg   string // what is wrong and what is allowed
}

func (e *InputError) Error() string {
	if e.Field == "" || strings.HasPrefix(e.Msg, e.Field+":") {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// Build reads the runs and draws their report.
func Build(ctx context.Context, store *db.Store, ids []int64, opt Options) (*Report, error) {
	var uniq []int64
	for _, id := range ids {
		if !slices.Contains(uniq, id) {
			uniq = append(uniq, id)
		}
	}
	ids = uniq
	if len(ids) == 0 {
		return nil, &InputError{Field: "run", Msg: "name at least one run"}
	}
	if len(ids) > MaxRuns {
		return nil, &InputError{Field: "run", Msg: fmt.Sprintf("a report covers at most %d runs", MaxRuns)}
	}
	page := chart.RunPage
	if len(ids) > 1 {
		page = chart.ComparePage
	}
	// Summaries, as the run page reads them: the store reads the steps a
	// few at a time and keeps of each what the tables, charts and the
	// statistical diff draw (its figures, clat bins, samples), a few kB,
	// where a step read whole holds about 100 kB of histograms a job.
	runs := make([]chart.LoadedRun, 0, len(ids))
	for _, id := range ids {
		r, err := store.GetRun(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", id, err)
		}
		steps, err := store.Summaries(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", id, err)
		}
		runs = append(runs, chart.LoadedRun{Run: *r, Summary: steps})
	}
	css, err := fs.ReadFile(web.Templates(), "report.css")
	if err != nil {
		return nil, err
	}
	rep := &Report{Generated: time.Now().UTC().Format("2006-01-02 15:04 UTC"), Version: opt.Version,
		CSS: template.CSS(css), Compare: len(runs) > 1}
	for i := range runs {
		r := &runs[i].Run
		rr := RunPart{Run: r, Command: r.Plan.Command(), JobFile: r.Plan.JobFile(), steps: runs[i].Summary}
		if !rep.Compare {
			rr.Lat = StepLat(opt.Lat, r, runs[i].Summary)
			rr.Steps = SummaryRows(runs[i].Summary, rr.Lat)
			rr.Errors = summary.GroupErrorsOf(runs[i].Summary)
			rr.Notes = summary.NotesOf(runs[i].Summary)
			rr.ReliableP50, rr.ReliableP99 = hist.ReliableN(StepPercentiles[0]), hist.ReliableN(StepPercentiles[1])
			rr.SaturatedPct = 100 * bench.SaturatedCPU
			rr.Block, rr.MinOneToOnePct = Traced(runs[i].Summary), 100*MinOneToOne
			rr.PTS = ptsView(r, runs[i].Summary)
		}
		rep.Runs = append(rep.Runs, rr)
	}
	if rep.Compare {
		var names []string
		for _, r := range runs {
			names = append(names, strconv.FormatInt(r.Run.ID, 10))
		}
		rep.Title = "Runs " + strings.Join(names, ", ") + " compared"
		rep.Warnings = CompareWarnings(runs)
		rep.EnvDiffs = EnvDiffs(runs)
		if rep.MaxIOPS, err = chart.Build(chart.Query{Kind: chart.MaxIOPS}, runs); err != nil {
			return nil, err
		}
		if NeedSchedTables(runs) {
			rep.Sched = SchedulerTables(runs, false)
		}
	} else {
		rep.Title = fmt.Sprintf("Run %d · %s", runs[0].Run.ID, runs[0].Run.Name)
	}
	if rep.diffs, err = StatDiffs(runs, opt.Axis, opt.Base, opt.Lat); err != nil {
		if rep.Compare || opt.Axis != "" || opt.Base != "" {
			rep.StatErr = err.Error()
		}
	} else {
		rep.StatDiffs = StatDiffViews(rep.diffs)
	}
	rep.Knees = qosKnees(runs)
	for _, k := range chart.Available(runs, page) {
		q, err := chart.ParseQuery(chart.Query{Kind: k.Name, Runs: ids, Lat: k.PageLat(chart.LatKind(opt.Lat))}.Values())
		if err != nil {
			rep.Charts = append(rep.Charts, Chart{Kind: string(k.Name), Title: string(k.Name), Error: err.Error()})
			continue
		}
		rep.Charts = append(rep.Charts, drawReportChart(q, runs))
	}
	if err := rep.addFleet(ctx, store, runs); err != nil {
		return nil, err
	}
	return rep, nil
}

// drawReportChart builds the chart q asks for and renders it to SVG.
func drawReportChart(q chart.Query, runs []chart.LoadedRun) Chart {
	rc := Chart{Kind: string(q.Kind), Title: string(q.Kind), file: string(q.Kind)}
	ch, err := chart.Build(q, runs)
	if err != nil {
		rc.Error = err.Error()
		return rc
	}
	return renderChart(rc, ch)
}

// renderChart draws a built chart into rc as SVG.
func renderChart(rc Chart, ch *chart.Chart) Chart {
	rc.Title, rc.Hidden, rc.chart = ch.Title, ch.Hidden, ch
	if ch.File != "" {
		rc.file = ch.File
	}
	svg, err := render.SVG(ch.Option, ChartWidth, ChartHeight)
	if err != nil {
		rc.Error = err.Error()
		return rc
	}
	rc.SVG = template.HTML(inlineSVG(svg)) // echarts' own output, from our option
	return rc
}

// inlineSVG drops what an SVG file has before its <svg> element (an XML
// declaration, a doctype) so that it can sit in HTML.
func inlineSVG(doc []byte) []byte {
	if i := bytes.Index(doc, []byte("<svg")); i > 0 {
		return doc[i:]
	}
	return doc
}

// reportTemplate is parsed once: the report's own page, the statistical
// diff's table (shared with the compare page) and the parts of a run
// (shared with the run page).
var reportTemplate = template.Must(template.New("report").Funcs(TemplateFuncs()).
	ParseFS(web.Templates(), "report.html", "statdiff.html", "runparts.html", "fleet.html", "pts.html"))

// WriteHTML writes the report as one self-contained HTML file.
func (r *Report) WriteHTML(w io.Writer) error {
	var buf bytes.Buffer
	if err := reportTemplate.ExecuteTemplate(&buf, "report", r); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// FileName names a report of the runs: "iolab-run-3.html",
// "iolab-compare-3-5.html".
func FileName(ids []int64, ext string) string {
	var parts []string
	for _, id := range ids {
		parts = append(parts, strconv.FormatInt(id, 10))
	}
	if len(ids) == 1 {
		return "iolab-run-" + parts[0] + ext
	}
	return "iolab-compare-" + strings.Join(parts, "-") + ext
}
