// Package chart draws the charts of stored runs: IOPS whiskers, latency
// percentiles and distributions, IOPS per interval, CPU time, scaling,
// fairness and max IOPS per kernel × engine. A chart is an echarts option
// built with go-echarts and the exact table it plots, which pages embed,
// the API returns and the CSV exports write.
//
// Every kind is one row of kindTable (Kinds, LookupKind): its name, the
// pages that draw it, its x axis, what it needs read from the store,
// which runs can draw it and its builder. Adding a kind is one file with
// its builder and one row. A Query selects a view and round-trips through
// a URL's query string, so a copied URL shows the same chart.
package chart

import (
	"encoding/json"
	"slices"
	"strings"

	"iolab/bench"
	"iolab/bench/joblog"
	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/db"
)

// Kind names a kind of chart: ?kind= in a chart's URL.
type Kind string

// KindSpec is everything about one kind of chart. Pages, queries, the
// store's loading and the builders ask the table instead of comparing
// names.
type KindSpec struct {
	Name Kind
	// Pages are the pages that draw the kind for runs that can draw it.
	Pages Page
	// Needs is what the kind reads of a run's steps beyond what the store
	// always reads.
	Needs Needs
	// PerJob kinds draw one job of each run (Query.Job, else the run's
	// DefaultJob): results are per job, and a writer's IOPS added to a
	// reader's describe neither. The others draw every job, or none.
	PerJob bool

	// x is the axis the kind keys its points by: its x axis (the default
	// when the query may choose), or the iodepth of each distribution
	// curve; "" when its x axis is time, steps or kernels.
	x sweep.Axis
	// xParam is what a query's x= does for the kind.
	xParam xParam
	// answers is the swept axis the kind is the chart of: pages put it
	// first for runs that sweep that axis (sweptFirst).
	answers sweep.Axis
	// leads: the kind comes before every other a run can draw, swept
	// axes' too (a PTS test's plots: its report's).
	leads bool
	// lat: the kind draws the latency Query.Lat picks (lat= is left out
	// of the others' URLs).
	lat bool
	// blockLat: Query.Lat may also pick a block-layer part (submit,
	// queue, device, completion) of a traced run's I/Os.
	blockLat bool
	// stat: the kind draws the statistic Query.Stat picks (stat= is left
	// out of the others' URLs).
	stat bool
	// available reports whether runs, of which at least one has steps,
	// can draw the kind; nil: any can.
	available func(runs []*runView) bool
	// build draws the chart and its table, from the query with Kind and
	// X resolved (a kind without an x axis gets X "").
	build func(q Query, runs []*runView) (*Chart, error)
}

// Page is a set of the pages that draw a kind.
type Page uint8

// The pages.
const (
	// RunPage is a run's page, and the kinds a chart's page links to.
	RunPage Page = 1 << iota
	// ComparePage is the page that compares runs.
	ComparePage
)

// Needs is what a kind reads of a run's steps beyond what the store
// always reads (db.StepLoad): the rest of a large run would take far
// longer to read.
type Needs struct {
	Lat     bool // the slat, clat and lat histograms (Query.Lat picks one)
	Samples bool // the samples of the query's step (Query.Step)
	Logs    bool // with the samples, the IOPS logs kept with them (write_iops_log)
}

// xParam is what a query's x= does for a kind.
type xParam uint8

const (
	xIgnored xParam = iota // the kind has no axis to choose: x= is left out
	xChosen                // x= picks the x axis; KindSpec.x is the default
	xFixed                 // x= may only name KindSpec.x
)

// kindTable lists the kinds in the order pages show them.
var kindTable = []KindSpec{
	// A PTS run leads with its report's plots (pts*.go); other runs draw none of them.
	{Name: PTSConvergence, Pages: RunPage, Needs: Needs{Lat: true}, leads: true, available: ptsAvailable(ptsWindowAvailable), build: buildPTSConvergence},
	{Name: PTSWindow, Pages: RunPage, Needs: Needs{Lat: true}, leads: true, available: ptsAvailable(ptsWindowAvailable), build: buildPTSWindow},
	{Name: PTSMatrix, Pages: RunPage, Needs: Needs{Lat: true}, leads: true, available: ptsAvailable(ptsMatrixAvailable), build: buildPTSMatrix},
	{Name: PTSWSAT, Pages: RunPage, Needs: Needs{Lat: true}, leads: true, available: ptsAvailable(ptsWSATAvailable), build: buildPTSWSAT},
	{Name: PTSDIRTH, Pages: RunPage, Needs: Needs{Lat: true}, leads: true, available: ptsAvailable(ptsDIRTHAvailable), build: buildPTSDIRTH},
	{Name: PTSDIRTHHist, Pages: RunPage, Needs: Needs{Lat: true}, leads: true, available: ptsAvailable(ptsDIRTHAvailable), build: buildPTSDIRTHHist},
	{Name: IOPS, Pages: RunPage | ComparePage, PerJob: true, x: sweep.AxisIODepth, xParam: xChosen, answers: sweep.AxisIODepth, build: buildIOPS},
	{Name: Latency, Pages: RunPage | ComparePage, Needs: Needs{Lat: true}, PerJob: true, x: sweep.AxisIODepth, xParam: xChosen, lat: true, blockLat: true, build: buildLatency},
	{Name: Distribution, Pages: RunPage | ComparePage, Needs: Needs{Lat: true}, PerJob: true, x: sweep.AxisIODepth, lat: true, blockLat: true, build: buildDistribution},
	{Name: Timeline, Pages: RunPage, Needs: Needs{Samples: true, Logs: true}, PerJob: true, build: buildTimeline},
	{Name: LatencyTimeline, Pages: RunPage, Needs: Needs{Samples: true}, PerJob: true, lat: true, build: buildLatencyTimeline},
	{Name: CPU, Pages: RunPage, build: buildCPU},
	{Name: Scaling, Pages: RunPage | ComparePage, PerJob: true, x: sweep.AxisNumJobs, xParam: xFixed, answers: sweep.AxisNumJobs, available: scalingAvailable, build: buildScaling},
	{Name: Fairness, Pages: RunPage | ComparePage, Needs: Needs{Lat: true}, lat: true, blockLat: true, answers: sweep.AxisScheduler, available: fairnessAvailable, build: buildFairness},
	{Name: TimeSplit, Pages: RunPage | ComparePage, Needs: Needs{Lat: true}, PerJob: true, stat: true, available: timeSplitAvailable, build: buildTimeSplit},
	{Name: MaxIOPS, Pages: ComparePage, PerJob: true, available: maxIOPSAvailable, build: buildMaxIOPS},
	{Name: QoS, Pages: RunPage | ComparePage, Needs: Needs{Lat: true}, PerJob: true, lat: true, answers: sweep.AxisRateIOPS, available: qosAvailable, build: buildQoS},
}

// PageLat is the latency a page's lat= gives the kind's chart: the
// page's, but a block-layer part (lat=queue, which the page's tables
// and the charts that draw one show) only to the kinds that draw one;
// the others draw their default.
func (k KindSpec) PageLat(lat LatKind) LatKind {
	if lat.Block() && !k.blockLat {
		return ""
	}
	return lat
}

// Kinds lists every kind, in the order pages show them.
func Kinds() []KindSpec { return slices.Clone(kindTable) }

// LookupKind returns the kind called name.
func LookupKind(name Kind) (KindSpec, bool) {
	for _, k := range kindTable {
		if k.Name == name {
			return k, true
		}
	}
	return KindSpec{}, false
}

// kindNames lists the kinds' names, for messages.
func kindNames() string {
	names := make([]string, len(kindTable))
	for i, k := range kindTable {
		names[i] = string(k.Name)
	}
	return strings.Join(names, ", ")
}

// LoadedRun is one stored run loaded with its steps, as the server
// reads them: what the charts draw (what a KindSpec Needs loaded). It is
// not a db.Run, the run's row, which it holds; runView is the run as the
// charts see it once they draw.
type LoadedRun struct {
	Run db.Run
	// Steps are the run's steps as the store reads them whole
	// (db.Store.StepsFor), Summary as summaries (db.Store.Summaries): a
	// run gives one or the other, and the charts draw Summary when it
	// gives both. The pages read summaries: a long run's steps whole are
	// hundreds of MB.
	Steps   []sweep.StepResult
	Summary []summary.StepView
	// Host is the fleet host a run of a group ran on (the Hosts page's
	// name for it); "" for a run of no group.
	Host string
}

// summaries are the run's steps as summaries.
func (r *LoadedRun) summaries() []summary.StepView {
	if r.Summary != nil || r.Steps == nil {
		return r.Summary
	}
	return summary.StepViews(r.Steps)
}

// StepSummaries are the run's steps as summaries (Summary, or Steps
// summarised).
func (r *LoadedRun) StepSummaries() []summary.StepView { return r.summaries() }

// stepCount is how many steps the run has.
func (r *LoadedRun) stepCount() int { return max(len(r.Summary), len(r.Steps)) }

// anyDone reports whether a step of the run counts in the numbers
// (summary.StepStatus): finished, not failed or cancelled.
func (r *LoadedRun) anyDone() bool {
	if r.Summary != nil {
		return slices.ContainsFunc(r.Summary, func(s summary.StepView) bool { return done(&s) })
	}
	return slices.ContainsFunc(r.Steps, func(s sweep.StepResult) bool { return summary.StepStatus(&s) == sweep.StepDone })
}

// stepConfig is the config of the run's step i (i < stepCount).
func (r *LoadedRun) stepConfig(i int) *bench.Config {
	if r.Summary != nil {
		return &r.Summary[i].Step.Config
	}
	return &r.Steps[i].Step.Config
}

// stepResultNames are the names of the job results of the run's step i,
// in order.
func (r *LoadedRun) stepResultNames(i int) []string {
	var names []string
	if r.Summary != nil {
		if res := r.Summary[i].Result; res != nil {
			for _, g := range res.Groups {
				for k := range g.Jobs {
					names = append(names, g.Jobs[k].Name)
				}
			}
		}
		return names
	}
	if res := r.Steps[i].Result; res != nil {
		for _, g := range res.Groups {
			for k := range g.Jobs {
				names = append(names, g.Jobs[k].Name)
			}
		}
	}
	return names
}

// BaseJob is the job that speaks for a run: its first step's first job,
// else its plan's first job; nil when it has none.
func (r *LoadedRun) BaseJob() *bench.Job { return r.job("") }

// job is the run's job called name ("": its first), as its first step
// ran it, else as its plan has it; nil when it has none.
func (r *LoadedRun) job(name string) *bench.Job {
	find := func(jobs []bench.Job) *bench.Job {
		for i := range jobs {
			if name == "" || jobs[i].Name == name {
				return &jobs[i]
			}
		}
		return nil
	}
	for i := range r.stepCount() {
		if j := find(r.stepConfig(i).Jobs); j != nil {
			return j
		}
	}
	if j := find(r.Run.Plan.Base.Jobs); j != nil {
		return j
	}
	for _, g := range r.Run.Plan.Base.Groups {
		if j := find(g.Jobs); j != nil {
			return j
		}
	}
	return nil
}

// JobValue is axis a's value in the run's base job, read through the
// axis table: the value of an axis the run does not sweep. It is "" for
// Step axes, for a run without jobs and for a zero, which is a field the
// job never set (jobs built by hand or imported), not a value.
func (r *LoadedRun) JobValue(a sweep.Axis) string { return jobValue(r.BaseJob(), a) }

func jobValue(job *bench.Job, a sweep.Axis) string {
	spec, ok := sweep.LookupAxis(a)
	if !ok || job == nil {
		return ""
	}
	if v := spec.Value(job); v != "0" {
		return v
	}
	return ""
}

// Jobs are the names of the run's jobs, in order: those of its plan,
// else of its first step's config or results. Clones of a job (numjobs)
// are one job, and so is a group with group_reporting, which reports as
// its first job (bench.MergeJobs).
func (r *LoadedRun) Jobs() []string {
	names := configJobs(&r.Run.Plan.Base)
	add := func(n string) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	if len(r.Run.Plan.Base.Groups) == 0 {
		for _, j := range r.Run.Plan.Base.Jobs {
			add(j.Name)
		}
	}
	for i := 0; len(names) == 0 && i < r.stepCount(); i++ {
		for _, j := range r.stepConfig(i).Jobs {
			add(j.Name)
		}
		if len(names) == 0 {
			for _, n := range r.stepResultNames(i) {
				add(n)
			}
		}
	}
	return names
}

// configJobs names a config's jobs in order, each once: clones share a
// name, and a group with group_reporting is one job (its first's name).
func configJobs(cfg *bench.Config) []string {
	var names []string
	for _, g := range cfg.Groups {
		for i, j := range g.Jobs {
			if !g.JoinsEntry(i) && !slices.Contains(names, j.Name) {
				names = append(names, j.Name)
			}
		}
	}
	return names
}

// DefaultJob is the job charts draw of the run when the query names
// none: the one its preset measures (sweep.Plan.MeasuredJob), else its
// first; "" for a run without jobs.
func (r *LoadedRun) DefaultJob() string {
	if m := r.Run.Plan.MeasuredJob(); m != "" {
		return m
	}
	if names := r.Jobs(); len(names) > 0 {
		return names[0]
	}
	return ""
}

// Chart is what a page embeds: an echarts option object built with
// go-echarts, and the exact table it plots.
type Chart struct {
	Kind  Kind   `json:"kind"`
	Title string `json:"title"`
	// Option is the echarts option, for echarts.init(el).setOption. It
	// names no asset or host: the page loads echarts itself.
	Option json.RawMessage `json:"option"`
	// Columns is the CSV header, with units; Rows are the plotted values,
	// formatted for CSV (numbers in full precision, "" where nothing is
	// plotted).
	Columns []string   `json:"columns"`
	Rows    [][]string `json:"rows"`
	// Format is how the page writes the chart's numbers in tooltips.
	Format Format `json:"format"`
	// Pickers choose what the chart draws: the series, percentiles,
	// iodepths or step it leaves out by default are there.
	Pickers []Picker `json:"pickers,omitempty"`
	// Hidden names the series the chart leaves out to stay readable (at
	// most 8 lines) and the pickers that draw them; "" when it draws all
	// it was asked for.
	Hidden string `json:"hidden,omitempty"`
	// File names the chart's downloads, without extension.
	File string `json:"file"`
}

// Build draws the chart q asks for from runs (in the order given; more
// than one compares them); a kind that draws one job draws q.Job of each
// run, else the run's DefaultJob. It returns a *QueryError when the query
// does not fit the data — a job a run does not have, a timeline without a
// step or with one the runs do not have, a scaling chart of a run that
// does not sweep numjobs. Runs without steps give a chart without data,
// not an error. Failed and cancelled steps are left out of the numbers;
// tables count the failed.
func Build(q Query, runs []LoadedRun) (*Chart, error) {
	q.noTable = false
	return build(q, runs)
}

// Draw is Build for a page that draws the chart without its table (and
// links to its CSV): the chart may come without Rows. A whole run's
// timeline is tens of thousands of them.
func Draw(q Query, runs []LoadedRun) (*Chart, error) {
	q.noTable = true
	return build(q, runs)
}

func build(q Query, runs []LoadedRun) (*Chart, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	spec := q.spec()
	chosen := q.X != ""
	q.Kind, q.X, q.perJob = spec.Name, q.xAxis(), spec.PerJob
	vs := views(runs)
	if !chosen {
		q.X = loadX(spec, q.X, vs)
	}
	if spec.PerJob {
		for _, r := range vs {
			if err := r.selectJob(q.Job); err != nil {
				return nil, err
			}
		}
	}
	c, err := spec.build(q, vs)
	if err != nil {
		return nil, err
	}
	c.Kind = spec.Name
	if c.File == "" {
		c.File = fileName(spec.Name, vs)
	}
	if c.Rows == nil {
		c.Rows = [][]string{}
	}
	return c, nil
}

// Available lists the kinds page draws that runs can draw: none until a
// run has steps; then those whose test passes, the chart of what the
// runs sweep first (sweptFirst).
func Available(runs []LoadedRun, page Page) []KindSpec {
	// A run cancelled or failed before any step finished has steps but
	// nothing to draw (the numbers leave those steps out): no chart, not
	// an empty frame of each kind.
	if !slices.ContainsFunc(runs, func(r LoadedRun) bool { return r.anyDone() }) {
		return nil
	}
	vs := views(runs)
	var out []KindSpec
	for _, k := range kindTable {
		if k.Pages&page != 0 && (k.available == nil || k.available(vs)) {
			out = append(out, k)
		}
	}
	return sweptFirst(out, vs)
}

// Load is what drawing kinds reads of each run's steps (db.StepsFor):
// what their Needs add up to, the samples being those of step (1-based),
// or of every step for 0 (the timeline of a whole run).
func Load(step int, kinds ...KindSpec) db.StepLoad {
	var load db.StepLoad
	for _, k := range kinds {
		if k.Needs.Lat {
			load.Hists |= db.AllHists
		}
		if k.Needs.Samples {
			load.Samples = func(st *sweep.StepResult) bool { return step == 0 || st.Step.Seq == step-1 }
		}
		if k.Needs.Logs {
			load.Logs = []joblog.Kind{joblog.IOPS}
		}
	}
	return load
}

// On lists the kinds page draws, whatever the runs.
func On(page Page) []KindSpec {
	var out []KindSpec
	for _, k := range kindTable {
		if k.Pages&page != 0 {
			out = append(out, k)
		}
	}
	return out
}

// every reports whether ok holds for every run.
func every(runs []*runView, ok func(*runView) bool) bool {
	for _, r := range runs {
		if !ok(r) {
			return false
		}
	}
	return true
}
