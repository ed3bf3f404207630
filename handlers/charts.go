package handlers

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/stats"
	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"
)

// ChartKind names a chart.
type ChartKind string

// The charts of a run or of runs compared.
const (
	ChartIOPS         ChartKind = "iops"         // IOPS vs iodepth, whiskers (min/median/max over repeats) per series
	ChartLatency      ChartKind = "latency"      // clat percentiles vs iodepth, log y axis, one line per series × percentile
	ChartDistribution ChartKind = "distribution" // clat distribution at chosen iodepths, overlaid; x log (µs), y % of I/Os
	ChartTimeline     ChartKind = "timeline"     // IOPS per interval of one step, read and write
	ChartCPU          ChartKind = "cpu"          // per step: us+sy, hi+si, iowait, idle as stacked bars
	ChartScaling      ChartKind = "scaling"      // aggregate IOPS vs numjobs with growth % labels
	ChartFairness     ChartKind = "fairness"     // each job's mean latency and bandwidth per scheduler
)

// ChartKinds lists every kind, in the order pages show them.
var ChartKinds = []ChartKind{ChartIOPS, ChartLatency, ChartDistribution, ChartTimeline, ChartCPU, ChartScaling, ChartFairness}

// ValidationError is a request that names something wrong or impossible:
// the server answers it with 400, the field and the message.
type ValidationError struct {
	Field string // the query parameter or form field
	Msg   string // what is wrong and what is allowed
}

func (e *ValidationError) Error() string {
	if e.Field == "" || strings.HasPrefix(e.Msg, e.Field+":") {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

func chartQueryError(field, format string, args ...any) error {
	return &ValidationError{Field: field, Msg: field + ": " + fmt.Sprintf(format, args...)}
}

// chartAxes are the axes a chart query may name: the ones plans sweep.
var chartAxes = []sweep.Axis{sweep.AxisIODepth, sweep.AxisEngine, sweep.AxisScheduler, sweep.AxisNumJobs, sweep.AxisBS, sweep.AxisRW}

// The views a query gets when it names no percentiles or iodepths: the
// write-ups' percentiles, and the iodepths their distributions compare.
var (
	defaultChartPercentiles = []float64{50, 90, 99, 99.9, 99.99}
	defaultChartIODepths    = []int{1, 4, 16}
)

// Bounds on list parameters, so that a URL cannot ask for thousands of
// series.
const (
	maxChartPercentiles = 20
	maxChartIODepths    = 20
)

// ChartQuery is everything that selects what a chart shows. It round-trips
// through the URL query string, so a copied URL reproduces the view: zero
// fields mean the defaults, and Values omits them.
type ChartQuery struct {
	Kind        ChartKind  // ?kind= (default iops)
	Runs        []int64    // ?run=3&run=5 (several runs: compare; series are then per run as well)
	Step        int        // ?step=N (1-based seq) for timeline
	Series      sweep.Axis // ?series=ioengine|scheduler|… (default: the first swept axis other than iodepth/numjobs and x, else none)
	X           sweep.Axis // ?x=iodepth (default iodepth, or numjobs for scaling)
	Dir         string     // ?dir=read|write|all (default all)
	Percentiles []float64  // ?p=50&p=99 … for latency (default 50, 90, 99, 99.9, 99.99)
	IODepths    []int      // ?qd=1&qd=16 for distribution (default those of 1, 4, 16 the runs have, else all)
}

// ParseChartQuery reads a chart query from a URL's query string. Unknown
// parameters are ignored; empty ones count as absent. Explicit defaults
// (dir=all, x=iodepth, the default percentile list, …) come back as zero
// fields, so that Values of the result is the canonical URL. A bad value
// is a *ValidationError naming the parameter and what it allows.
func ParseChartQuery(v url.Values) (ChartQuery, error) {
	var q ChartQuery
	list := func(name string) []string {
		var out []string
		for _, s := range v[name] {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		return out
	}
	single := func(name string) (string, error) {
		got := list(name)
		switch len(got) {
		case 0:
			return "", nil
		case 1:
			return got[0], nil
		}
		return "", chartQueryError(name, "given %d times (%s); give it once", len(got), strings.Join(got, ", "))
	}

	s, err := single("kind")
	if err != nil {
		return ChartQuery{}, err
	}
	q.Kind = ChartKind(s)
	if q.Kind == "" {
		q.Kind = ChartIOPS
	}
	for _, s := range list("run") {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil || id < 1 {
			return ChartQuery{}, chartQueryError("run", "%q is not a run id: want a whole number, 1 or more", s)
		}
		if !slices.Contains(q.Runs, id) {
			q.Runs = append(q.Runs, id)
		}
	}
	if s, err = single("step"); err != nil {
		return ChartQuery{}, err
	} else if s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return ChartQuery{}, chartQueryError("step", "%q is not a step number: want a whole number, 1 or more (the step's place in the run)", s)
		}
		q.Step = n
	}
	if s, err = single("series"); err != nil {
		return ChartQuery{}, err
	}
	q.Series = sweep.Axis(s)
	if s, err = single("x"); err != nil {
		return ChartQuery{}, err
	}
	q.X = sweep.Axis(s)
	if s, err = single("dir"); err != nil {
		return ChartQuery{}, err
	}
	q.Dir = s
	for _, s := range list("p") {
		p, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return ChartQuery{}, chartQueryError("p", "%q is not a percentile: want a number above 0 and at most 100 (p=99.9)", s)
		}
		if !slices.Contains(q.Percentiles, p) {
			q.Percentiles = append(q.Percentiles, p)
		}
	}
	for _, s := range list("qd") {
		n, err := strconv.Atoi(s)
		if err != nil {
			return ChartQuery{}, chartQueryError("qd", "%q is not an iodepth: want a whole number, 1 or more", s)
		}
		if !slices.Contains(q.IODepths, n) {
			q.IODepths = append(q.IODepths, n)
		}
	}
	q = q.canonical()
	if err := q.check(); err != nil {
		return ChartQuery{}, err
	}
	return q, nil
}

// canonical turns explicit defaults into zero fields.
func (q ChartQuery) canonical() ChartQuery {
	if q.Dir == "all" {
		q.Dir = ""
	}
	if q.X == defaultChartX(q.kind()) {
		q.X = ""
	}
	if slices.Equal(q.Percentiles, defaultChartPercentiles) {
		q.Percentiles = nil
	}
	if slices.Equal(q.IODepths, defaultChartIODepths) {
		q.IODepths = nil
	}
	return q
}

// Values is the query's canonical encoding: defaults omitted, so that
// ParseChartQuery(q.Values()) == q for any query ParseChartQuery returns.
func (q ChartQuery) Values() url.Values {
	q = q.canonical()
	v := url.Values{}
	if q.Kind != "" && q.Kind != ChartIOPS {
		v.Set("kind", string(q.Kind))
	}
	for _, id := range q.Runs {
		v.Add("run", strconv.FormatInt(id, 10))
	}
	if q.Step > 0 {
		v.Set("step", strconv.Itoa(q.Step))
	}
	if q.Series != "" {
		v.Set("series", string(q.Series))
	}
	if q.X != "" {
		v.Set("x", string(q.X))
	}
	if q.Dir != "" {
		v.Set("dir", q.Dir)
	}
	for _, p := range q.Percentiles {
		v.Add("p", strconv.FormatFloat(p, 'f', -1, 64))
	}
	for _, d := range q.IODepths {
		v.Add("qd", strconv.Itoa(d))
	}
	return v
}

func (q ChartQuery) kind() ChartKind {
	if q.Kind == "" {
		return ChartIOPS
	}
	return q.Kind
}

// defaultChartX is the x axis of a kind whose query names none.
func defaultChartX(k ChartKind) sweep.Axis {
	if k == ChartScaling {
		return sweep.AxisNumJobs
	}
	return sweep.AxisIODepth
}

// xAxis is the axis the chart's x axis (or, for the distribution, each
// series' iodepth) follows; "" for kinds whose x is time, steps or
// combinations.
func (q ChartQuery) xAxis() sweep.Axis {
	switch q.kind() {
	case ChartIOPS, ChartLatency, ChartScaling:
		if q.X != "" {
			return q.X
		}
		return defaultChartX(q.kind())
	case ChartDistribution:
		return sweep.AxisIODepth
	}
	return ""
}

// dirIndex is the query's direction as bench.Read or bench.Write, or -1
// for both.
func (q ChartQuery) dirIndex() int {
	switch q.Dir {
	case "read":
		return bench.Read
	case "write":
		return bench.Write
	}
	return -1
}

func chartAxisNames() string {
	names := make([]string, len(chartAxes))
	for i, a := range chartAxes {
		names[i] = string(a)
	}
	return strings.Join(names, ", ")
}

// check validates a query's values against each other, for queries parsed
// or built by hand.
func (q ChartQuery) check() error {
	if !slices.Contains(ChartKinds, q.kind()) {
		names := make([]string, len(ChartKinds))
		for i, k := range ChartKinds {
			names[i] = string(k)
		}
		return chartQueryError("kind", "%q is not a chart; use one of %s", q.Kind, strings.Join(names, ", "))
	}
	for _, id := range q.Runs {
		if id < 1 {
			return chartQueryError("run", "%d is not a run id: want a whole number, 1 or more", id)
		}
	}
	if q.Step < 0 {
		return chartQueryError("step", "%d is not a step number: want a whole number, 1 or more", q.Step)
	}
	if q.X != "" && !slices.Contains(chartAxes, q.X) {
		return chartQueryError("x", "%q is not an axis; use one of %s", q.X, chartAxisNames())
	}
	if q.kind() == ChartScaling && q.X != "" && q.X != sweep.AxisNumJobs {
		return chartQueryError("x", "the scaling chart's x axis is numjobs, not %s", q.X)
	}
	if q.Series != "" && !slices.Contains(chartAxes, q.Series) {
		return chartQueryError("series", "%q is not an axis; use one of %s", q.Series, chartAxisNames())
	}
	if x := q.xAxis(); q.Series != "" && q.Series == x {
		return chartQueryError("series", "%s is the %s chart's x axis; pick another axis for the series", x, q.kind())
	}
	switch q.Dir {
	case "", "all", "read", "write":
	default:
		return chartQueryError("dir", "%q is not a direction; use read, write or all", q.Dir)
	}
	if len(q.Percentiles) > maxChartPercentiles {
		return chartQueryError("p", "%d percentiles; at most %d", len(q.Percentiles), maxChartPercentiles)
	}
	for _, p := range q.Percentiles {
		if !(p > 0 && p <= 100) {
			return chartQueryError("p", "%v is not a percentile: want a number above 0 and at most 100 (p=99.9)", p)
		}
	}
	if len(q.IODepths) > maxChartIODepths {
		return chartQueryError("qd", "%d iodepths; at most %d", len(q.IODepths), maxChartIODepths)
	}
	for _, d := range q.IODepths {
		if d < 1 {
			return chartQueryError("qd", "%d is not an iodepth: want a whole number, 1 or more", d)
		}
	}
	return nil
}

// RunData is one stored run with its steps, as the server loads it.
type RunData struct {
	Run   db.Run
	Steps []sweep.StepResult
}

// Chart is what a page embeds: an echarts option object built with
// go-echarts, and the exact table it plots.
type Chart struct {
	Kind  ChartKind `json:"kind"`
	Title string    `json:"title"`
	// Option is the echarts option, for echarts.init(el).setOption. It
	// names no asset or host: the page loads echarts itself.
	Option json.RawMessage `json:"option"`
	// Columns is the CSV header, with units; Rows are the plotted values,
	// formatted for CSV (numbers in full precision, "" where nothing is
	// plotted).
	Columns []string   `json:"columns"`
	Rows    [][]string `json:"rows"`
}

// BuildChart draws the chart q asks for from runs (in the order given;
// more than one compares them). It returns a *ValidationError when the
// query does not fit the data — a timeline without a step or with one the
// runs do not have, a scaling chart of a run that does not sweep numjobs.
// Runs without steps give a chart without data, not an error. Failed and
// cancelled steps are left out of the numbers; tables count the failed.
func BuildChart(q ChartQuery, runs []RunData) (*Chart, error) {
	if err := q.check(); err != nil {
		return nil, err
	}
	views := make([]*chartRun, len(runs))
	for i := range runs {
		views[i] = newChartRun(&runs[i])
	}
	var c *Chart
	var err error
	switch q.kind() {
	case ChartIOPS:
		c, err = buildIOPSChart(q, views)
	case ChartLatency:
		c, err = buildLatencyChart(q, views)
	case ChartDistribution:
		c, err = buildDistributionChart(q, views)
	case ChartTimeline:
		c, err = buildTimelineChart(q, views)
	case ChartCPU:
		c, err = buildCPUChart(q, views)
	case ChartScaling:
		c, err = buildScalingChart(q, views)
	case ChartFairness:
		c, err = buildFairnessChart(q, views)
	}
	if err != nil {
		return nil, err
	}
	c.Kind = q.kind()
	if c.Rows == nil {
		c.Rows = [][]string{}
	}
	return c, nil
}

// AvailableCharts lists the kinds that make sense for runs: the per-step
// charts once any step exists; scaling when every run sweeps numjobs;
// fairness when every run sweeps schedulers and runs more than one job per
// step.
func AvailableCharts(runs []RunData) []ChartKind {
	if !slices.ContainsFunc(runs, func(r RunData) bool { return len(r.Steps) > 0 }) {
		return nil
	}
	out := []ChartKind{ChartIOPS, ChartLatency, ChartDistribution, ChartTimeline, ChartCPU}
	every := func(ok func(*chartRun) bool) bool {
		for i := range runs {
			if !ok(newChartRun(&runs[i])) {
				return false
			}
		}
		return true
	}
	if every(func(r *chartRun) bool { return r.sweeps(sweep.AxisNumJobs) }) {
		out = append(out, ChartScaling)
	}
	if every(func(r *chartRun) bool { return r.sweeps(sweep.AxisScheduler) && len(r.jobNames()) > 1 }) {
		out = append(out, ChartFairness)
	}
	return out
}

// chartRun is one run as the charts see it: its steps in order and the
// values of the axes it does not sweep.
type chartRun struct {
	id    int64
	label string // "run 3"
	run   *db.Run
	plan  *sweep.Plan
	steps []sweep.StepResult // by Seq
	fixed map[sweep.Axis]string
}

func newChartRun(rd *RunData) *chartRun {
	r := &chartRun{
		id:    rd.Run.ID,
		label: "run " + strconv.FormatInt(rd.Run.ID, 10),
		run:   &rd.Run,
		plan:  &rd.Run.Plan,
		steps: slices.Clone(rd.Steps),
		fixed: map[sweep.Axis]string{},
	}
	slices.SortStableFunc(r.steps, func(a, b sweep.StepResult) int { return cmp.Compare(a.Step.Seq, b.Step.Seq) })

	// An axis the plan does not sweep has the base jobs' value in every
	// step; the first job speaks for the step.
	var job *bench.Job
	for i := range r.steps {
		if jobs := r.steps[i].Step.Config.Jobs; len(jobs) > 0 {
			job = &jobs[0]
			break
		}
	}
	if job == nil && len(r.plan.Base.Jobs) > 0 {
		job = &r.plan.Base.Jobs[0]
	}
	if job != nil {
		if job.IODepth > 0 {
			r.fixed[sweep.AxisIODepth] = strconv.Itoa(job.IODepth)
		}
		if job.NumJobs > 0 {
			r.fixed[sweep.AxisNumJobs] = strconv.Itoa(job.NumJobs)
		}
		r.fixed[sweep.AxisEngine] = bench.EngineVariant(job)
		r.fixed[sweep.AxisBS] = chartBlockSize(job.BS)
		r.fixed[sweep.AxisRW] = job.RW
	}
	if len(r.steps) > 0 {
		// Without a scheduler sweep the disks keep theirs: what the first
		// step read back.
		s := &r.steps[0]
		scheds := []string{}
		if s.Step.Scheduler != "" {
			scheds = append(scheds, s.Step.Scheduler)
		}
		for _, disk := range slices.Sorted(maps.Keys(s.Schedulers)) {
			if v := s.Schedulers[disk]; v != "" && !slices.Contains(scheds, v) {
				scheds = append(scheds, v)
			}
		}
		r.fixed[sweep.AxisScheduler] = strings.Join(scheds, "+")
	}
	return r
}

// chartBlockSize writes a block size as sweeps do: 4k, 1m, else bytes.
func chartBlockSize(b int64) string {
	switch {
	case b <= 0:
		return ""
	case b%(1<<20) == 0:
		return strconv.FormatInt(b>>20, 10) + "m"
	case b%(1<<10) == 0:
		return strconv.FormatInt(b>>10, 10) + "k"
	}
	return strconv.FormatInt(b, 10)
}

func (r *chartRun) sweeps(a sweep.Axis) bool {
	return slices.ContainsFunc(r.plan.Sweeps, func(s sweep.Sweep) bool { return s.Axis == a })
}

// value is a's value among axes (a step's or a summary cell's), or the
// run's fixed value when the run does not sweep a.
func (r *chartRun) value(axes []sweep.AxisValue, a sweep.Axis) string {
	for _, v := range axes {
		if v.Axis == a {
			return v.Value
		}
	}
	return r.fixed[a]
}

// rank orders a's values as the run's sweep lists them; values it does not
// list come last.
func (r *chartRun) rank(a sweep.Axis, v string) int {
	for _, s := range r.plan.Sweeps {
		if s.Axis == a {
			if i := slices.Index(s.Values, v); i >= 0 {
				return i
			}
		}
	}
	return math.MaxInt
}

// jobNames are the distinct job names of a step: from the plan's base
// jobs, else from the first step's configuration or result.
func (r *chartRun) jobNames() []string {
	var names []string
	add := func(n string) {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	for _, j := range r.plan.Base.Jobs {
		add(j.Name)
	}
	for i := 0; len(names) == 0 && i < len(r.steps); i++ {
		for _, j := range r.steps[i].Step.Config.Jobs {
			add(j.Name)
		}
		if res := r.steps[i].Result; len(names) == 0 && res != nil {
			for _, g := range res.Groups {
				for k := range g.Jobs {
					add(g.Jobs[k].Name)
				}
			}
		}
	}
	return names
}

// describeRuns is a subtitle naming the runs.
func describeRuns(runs []*chartRun) string {
	if len(runs) == 1 {
		r := runs[0]
		parts := []string{r.label}
		if r.run.Name != "" {
			parts = append(parts, strconv.Quote(r.run.Name))
		}
		if r.run.Hostname != "" {
			host := "on " + r.run.Hostname
			if r.run.Kernel != "" {
				host += " (" + r.run.Kernel + ")"
			}
			parts = append(parts, host)
		}
		return strings.Join(parts, " ")
	}
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = strconv.FormatInt(r.id, 10)
	}
	return "runs " + strings.Join(ids, ", ")
}

// chartStepStatus is a step's outcome by bench's rule (its summaries use
// the same): failed when its status says so, when it left no result or
// when any of its jobs failed.
func chartStepStatus(r *sweep.StepResult) string {
	switch r.Status {
	case sweep.StepCancelled:
		return sweep.StepCancelled
	case sweep.StepFailed:
		return sweep.StepFailed
	}
	if r.Result == nil {
		return sweep.StepFailed
	}
	for _, g := range r.Result.Groups {
		for k := range g.Jobs { // by index: a JobResult holds its histograms
			if g.Jobs[k].Error != "" {
				return sweep.StepFailed
			}
		}
	}
	return sweep.StepDone
}

// chartDirSteps returns steps with every job's other direction emptied, so
// that bench's summaries, which add reads and writes, count direction d
// alone; d < 0 returns steps as they are. The copies leave the histograms
// out: the summaries do not read them.
func chartDirSteps(steps []sweep.StepResult, d int) []sweep.StepResult {
	if d < 0 {
		return steps
	}
	out := slices.Clone(steps)
	for i := range out {
		src := out[i].Result
		if src == nil {
			continue
		}
		res := &bench.Result{Start: src.Start, Groups: make([]bench.GroupResult, len(src.Groups))}
		for g := range src.Groups {
			sg := &src.Groups[g]
			res.Groups[g] = bench.GroupResult{ID: sg.ID, Reporting: sg.Reporting, Jobs: make([]bench.JobResult, len(sg.Jobs))}
			for k := range sg.Jobs {
				j, c := &sg.Jobs[k], &res.Groups[g].Jobs[k]
				c.Name, c.GroupID, c.Error, c.Runtime, c.Jobs = j.Name, j.GroupID, j.Error, j.Runtime, j.Jobs
				c.Dirs[d].IOs, c.Dirs[d].Bytes = j.Dirs[d].IOs, j.Dirs[d].Bytes
				c.Dirs[d].Lat.Stat = j.Dirs[d].Lat.Stat
			}
		}
		out[i].Result = res
	}
	return out
}

// chartLayout is how a chart's points are keyed: by run, by the value of
// the x axis, and by the values of the group axes, which make the series
// (the series axis first, then every other swept axis but x, so that no
// series mixes steps that differ in anything but their repeat).
type chartLayout struct {
	compare bool
	x       sweep.Axis
	series  sweep.Axis
	group   []sweep.Axis
}

func newChartLayout(q ChartQuery, runs []*chartRun, x sweep.Axis) *chartLayout {
	l := &chartLayout{compare: len(runs) > 1, x: x, series: q.Series}
	if l.series == "" {
	find:
		for _, r := range runs {
			for _, s := range r.plan.Sweeps {
				if s.Axis != sweep.AxisIODepth && s.Axis != sweep.AxisNumJobs && s.Axis != x {
					l.series = s.Axis
					break find
				}
			}
		}
	}
	if l.series != "" {
		l.group = append(l.group, l.series)
	}
	for _, r := range runs {
		for _, s := range r.plan.Sweeps {
			if s.Axis != x && !slices.Contains(l.group, s.Axis) {
				l.group = append(l.group, s.Axis)
			}
		}
	}
	return l
}

// key is the x value and group values of a step or summary cell.
func (l *chartLayout) key(r *chartRun, axes []sweep.AxisValue) (x string, group []string) {
	if l.x != "" {
		x = r.value(axes, l.x)
	}
	group = make([]string, len(l.group))
	for i, a := range l.group {
		group[i] = r.value(axes, a)
	}
	return x, group
}

// name names a group for legends: "io_uring", "run 3 libaio",
// "io_uring numjobs=4"; "" when there is nothing to tell apart.
func (l *chartLayout) name(r *chartRun, group []string) string {
	var parts []string
	if l.compare {
		parts = append(parts, r.label)
		// Compared runs say where they ran: host, kernel, scheduler.
		var env []string
		for _, v := range []string{r.run.Hostname, r.run.Kernel} {
			if v != "" {
				env = append(env, v)
			}
		}
		if v := r.fixed[sweep.AxisScheduler]; v != "" && !slices.Contains(l.group, sweep.AxisScheduler) {
			env = append(env, v)
		}
		if len(env) > 0 {
			parts = append(parts, "("+strings.Join(env, " ")+")")
		}
	}
	for i, a := range l.group {
		switch v := group[i]; {
		case v == "":
		case i == 0 && a == l.series && (a == sweep.AxisEngine || a == sweep.AxisScheduler || a == sweep.AxisRW):
			parts = append(parts, v) // names that say what they are
		default:
			parts = append(parts, string(a)+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

// columns is the CSV header of the key: run (when comparing), the group
// axes and x (when withX).
func (l *chartLayout) columns(withX bool) []string {
	var cols []string
	if l.compare {
		cols = append(cols, "run")
	}
	if withX && l.x != "" {
		cols = append(cols, string(l.x))
	}
	for _, a := range l.group {
		cols = append(cols, string(a))
	}
	return cols
}

func (l *chartLayout) row(r *chartRun, x string, group []string, withX bool) []string {
	var row []string
	if l.compare {
		row = append(row, strconv.FormatInt(r.id, 10))
	}
	if withX && l.x != "" {
		row = append(row, x)
	}
	return append(row, group...)
}

// chartCell is the steps of one point: one run, one x value, one group.
type chartCell struct {
	run   *chartRun
	x     string
	group []string
	steps []sweep.StepResult
}

// chartSeries is one group of one run.
type chartSeries struct {
	run   *chartRun
	group []string
	name  string
	ranks []int
	cells map[string]*chartCell // by x value
}

// chartGrid is a chart's cells in order: x values and series.
type chartGrid struct {
	xs     []string
	series []*chartSeries
}

// gridOf groups every run's steps by the layout's key and orders the x
// values (numerically when they all are numbers, else as the sweeps list
// them) and the series (by run, then by the sweeps' order of their
// values).
func gridOf(l *chartLayout, runs []*chartRun) *chartGrid {
	g := &chartGrid{}
	type xRank struct {
		v    string
		rank int
	}
	var xs []xRank
	for _, r := range runs {
		var series []*chartSeries
		for _, st := range r.steps {
			x, group := l.key(r, st.Step.Axes)
			k := slices.IndexFunc(series, func(s *chartSeries) bool { return slices.Equal(s.group, group) })
			if k < 0 {
				s := &chartSeries{run: r, group: group, name: l.name(r, group), cells: map[string]*chartCell{}}
				for i, a := range l.group {
					s.ranks = append(s.ranks, r.rank(a, group[i]))
				}
				series = append(series, s)
				k = len(series) - 1
			}
			c := series[k].cells[x]
			if c == nil {
				c = &chartCell{run: r, x: x, group: group}
				series[k].cells[x] = c
			}
			c.steps = append(c.steps, st)
			rank := r.rank(l.x, x)
			if i := slices.IndexFunc(xs, func(e xRank) bool { return e.v == x }); i < 0 {
				xs = append(xs, xRank{x, rank})
			} else {
				xs[i].rank = min(xs[i].rank, rank)
			}
		}
		slices.SortStableFunc(series, func(a, b *chartSeries) int { return slices.Compare(a.ranks, b.ranks) })
		g.series = append(g.series, series...)
	}
	numeric := true
	for _, e := range xs {
		if _, err := strconv.ParseFloat(e.v, 64); err != nil {
			numeric = false
		}
	}
	slices.SortStableFunc(xs, func(a, b xRank) int {
		if numeric {
			fa, _ := strconv.ParseFloat(a.v, 64)
			fb, _ := strconv.ParseFloat(b.v, 64)
			return cmp.Compare(fa, fb)
		}
		return cmp.Compare(a.rank, b.rank)
	})
	for _, e := range xs {
		g.xs = append(g.xs, e.v)
	}
	return g
}

// chartNum formats a number for CSV and tables: the shortest decimal that
// reads back as the same float64, never an exponent.
func chartNum(v float64) string {
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// chartDirPrefix prefixes column names and titles with the direction a
// query selects.
func chartDirPrefix(q ChartQuery) (column, title string) {
	switch q.dirIndex() {
	case bench.Read:
		return "read_", "Read "
	case bench.Write:
		return "write_", "Write "
	}
	return "", ""
}

// chartMissing is echarts' empty value: nothing is drawn there.
const chartMissing = "-"

// chartOptions are the options every chart shares: title, legend below
// the plot, the save-as-PNG control, no animation (what a screenshot
// shows is the final chart).
func chartOptions(title, subtitle, file, trigger string) []echarts.GlobalOpts {
	return []echarts.GlobalOpts{
		echarts.WithTitleOpts(opts.Title{Title: title, Subtitle: subtitle, Left: "10", Top: "6"}),
		echarts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Type: "scroll", Bottom: "0"}),
		echarts.WithToolboxOpts(opts.Toolbox{Show: opts.Bool(true), Right: "20", Feature: &opts.ToolBoxFeature{
			SaveAsImage: &opts.ToolBoxFeatureSaveAsImage{Show: opts.Bool(true), Type: "png", Name: file, Title: "save as PNG"},
		}}),
		echarts.WithTooltipOpts(opts.Tooltip{Show: opts.Bool(true), Trigger: trigger}),
		echarts.WithAnimation(false),
	}
}

// chartPalette is echarts' default palette, for charts that give the
// lines of one group one colour.
var chartPalette = []string{"#5470c6", "#91cc75", "#fac858", "#ee6666", "#73c0de", "#3ba272", "#fc8452", "#9a60b4", "#ea7ccc"}

// chartLineStyle draws line k of group g: the group's colour, and a symbol
// and dash of its own for each line within the group.
func chartLineStyle(g, k int, showSymbol bool) []echarts.SeriesOpts {
	color := chartPalette[g%len(chartPalette)]
	symbols := []string{"circle", "rect", "triangle", "diamond", "roundRect", "pin", "arrow"}
	dashes := []string{"solid", "dashed", "dotted"}
	return []echarts.SeriesOpts{
		echarts.WithLineChartOpts(opts.LineChart{Symbol: symbols[k%len(symbols)], SymbolSize: 7, ShowSymbol: opts.Bool(showSymbol)}),
		echarts.WithItemStyleOpts(opts.ItemStyle{Color: color}),
		echarts.WithLineStyleOpts(opts.LineStyle{Color: color, Type: dashes[k%len(dashes)]}),
	}
}

// chartGridOpts leaves room for the title above and the x axis name and
// legend below.
func chartGridOpts() opts.Grid {
	return opts.Grid{Top: "80", Bottom: "70", Left: "30", Right: "50", ContainLabel: opts.Bool(true)}
}

func chartXAxis(name, typ string) opts.XAxis {
	return opts.XAxis{Name: name, Type: typ, NameLocation: "middle", NameGap: 30}
}

func chartFile(kind ChartKind, runs []*chartRun) string {
	name := "iolab-" + string(kind)
	for _, r := range runs {
		name += "-run" + strconv.FormatInt(r.id, 10)
	}
	return name
}

// optionJSON is a go-echarts chart's option object, validated (which
// places the x axis data) and marshalled.
func optionJSON(c interface {
	Validate()
	JSON() map[string]any
}) (json.RawMessage, error) {
	c.Validate()
	b, err := json.Marshal(c.JSON())
	if err != nil {
		return nil, fmt.Errorf("handlers: chart option: %w", err)
	}
	return b, nil
}

// buildIOPSChart is IOPS vs x with whiskers: per (x, series) one box of
// [min, median, median, median, max] of the done repeats' IOPS, from
// summary.Summarize.
func buildIOPSChart(q ChartQuery, runs []*chartRun) (*Chart, error) {
	l := newChartLayout(q, runs, q.xAxis())
	g := gridOf(l, runs)
	col, dirTitle := chartDirPrefix(q)
	c := &Chart{Title: fmt.Sprintf("%sIOPS vs %s", dirTitle, l.x)}
	c.Columns = append(l.columns(true), "repeats", "failed", col+"iops_min", col+"iops_median", col+"iops_max")

	box := echarts.NewBoxPlot()
	box.SetGlobalOptions(append(chartOptions(c.Title, describeRuns(runs)+" · median, whiskers min–max over repeats",
		chartFile(q.kind(), runs), "item"),
		echarts.WithGridOpts(chartGridOpts()),
		echarts.WithXAxisOpts(chartXAxis(string(l.x), "category")),
		echarts.WithYAxisOpts(opts.YAxis{Name: dirTitle + "IOPS", Type: "value"}),
	)...)
	box.SetXAxis(g.xs)
	for _, s := range g.series {
		data := make([]opts.BoxPlotData, len(g.xs))
		for i, x := range g.xs {
			data[i] = opts.BoxPlotData{Value: []any{chartMissing, chartMissing, chartMissing, chartMissing, chartMissing}}
			cell := s.cells[x]
			if cell == nil {
				continue
			}
			sum := summary.Summarize(s.run.plan, chartDirSteps(cell.steps, q.dirIndex()))[0]
			row := append(l.row(s.run, x, s.group, true), strconv.Itoa(sum.Repeats), strconv.Itoa(sum.Failed))
			if sum.Repeats == 0 {
				c.Rows = append(c.Rows, append(row, "", "", ""))
				continue
			}
			sp := sum.IOPS
			data[i] = opts.BoxPlotData{Value: []float64{sp.Min, sp.Median, sp.Median, sp.Median, sp.Max}}
			c.Rows = append(c.Rows, append(row, chartNum(sp.Min), chartNum(sp.Median), chartNum(sp.Max)))
		}
		box.AddSeries(cmp.Or(s.name, s.run.label), data)
	}
	var err error
	c.Option, err = optionJSON(box)
	return c, err
}

// clatOf merges the clat histograms of the done steps' jobs in direction
// d (both when d < 0), the way fio's group_reporting merges a group.
func clatOf(steps []sweep.StepResult, d int) (h *hist.Histogram, done, failed int) {
	h = new(hist.Histogram)
	for i := range steps {
		switch chartStepStatus(&steps[i]) {
		case sweep.StepFailed:
			failed++
			continue
		case sweep.StepCancelled:
			continue
		}
		done++
		for _, g := range steps[i].Result.Groups {
			for k := range g.Jobs {
				for dd := range 2 {
					if d < 0 || d == dd {
						h.Merge(&g.Jobs[k].Dirs[dd].Clat.Hist)
					}
				}
			}
		}
	}
	return h, done, failed
}

func percentileName(p float64) string { return "p" + chartNum(p) }

// buildLatencyChart is clat percentiles vs x on a log axis, each from the
// histograms of a point's done repeats merged: a percentile of all their
// I/Os, not a median of per-repeat percentiles.
func buildLatencyChart(q ChartQuery, runs []*chartRun) (*Chart, error) {
	l := newChartLayout(q, runs, q.xAxis())
	g := gridOf(l, runs)
	ps := q.Percentiles
	if len(ps) == 0 {
		ps = defaultChartPercentiles
	}
	col, dirTitle := chartDirPrefix(q)
	c := &Chart{Title: fmt.Sprintf("%sCompletion latency percentiles vs %s", dirTitle, l.x)}
	c.Columns = append(l.columns(true), "repeats", "failed", "ios")
	for _, p := range ps {
		c.Columns = append(c.Columns, col+"clat_"+percentileName(p)+"_us")
	}

	line := echarts.NewLine()
	line.SetGlobalOptions(append(chartOptions(c.Title, describeRuns(runs)+" · clat histograms of all repeats merged",
		chartFile(q.kind(), runs), "axis"),
		echarts.WithGridOpts(chartGridOpts()),
		echarts.WithXAxisOpts(chartXAxis(string(l.x), "category")),
		echarts.WithYAxisOpts(opts.YAxis{Name: dirTitle + "clat (µs)", Type: "log"}),
	)...)
	line.SetXAxis(g.xs)
	for si, s := range g.series {
		data := make([][]opts.LineData, len(ps))
		for k := range data {
			data[k] = make([]opts.LineData, len(g.xs))
		}
		for i, x := range g.xs {
			for k := range ps {
				data[k][i] = opts.LineData{Value: chartMissing}
			}
			cell := s.cells[x]
			if cell == nil {
				continue
			}
			h, done, failed := clatOf(cell.steps, q.dirIndex())
			n := h.N()
			row := append(l.row(s.run, x, s.group, true), strconv.Itoa(done), strconv.Itoa(failed), strconv.FormatUint(n, 10))
			vals := h.Percentiles(ps)
			for k, ns := range vals {
				if n == 0 {
					row = append(row, "")
					continue
				}
				us := float64(ns) / 1000
				data[k][i] = opts.LineData{Value: us}
				row = append(row, chartNum(us))
			}
			c.Rows = append(c.Rows, row)
		}
		for k, p := range ps {
			name := percentileName(p)
			if s.name != "" {
				name = s.name + " " + name
			}
			line.AddSeries(name, data[k], chartLineStyle(si, k, true)...)
		}
	}
	var err error
	c.Option, err = optionJSON(line)
	return c, err
}

// fio's histogram layout (stat.h): FIO_IO_U_PLAT_BITS = 6, so values below
// 2^7 ns have a bucket each and every power of two above has 64.
const (
	chartHistBits = 6
	chartHistVal  = 1 << chartHistBits
	// chartBinShift merges 2^3 buckets into one bin of the distribution
	// chart: 8 bins per doubling of the latency, each about 9 % wide —
	// fine enough to show modes, coarse enough not to turn every I/O into
	// a spike.
	chartBinShift = 3
)

// bucketRange is the latencies [lo, hi) in ns that bucket idx of a
// hist.Histogram counts (the inverse of hist.BucketIndex).
func bucketRange(idx int) (lo, hi uint64) {
	if idx < 2*chartHistVal {
		return uint64(idx), uint64(idx) + 1
	}
	errorBits := idx>>chartHistBits - 1
	lo = 1<<(errorBits+chartHistBits) + uint64(idx&(chartHistVal-1))<<errorBits
	return lo, lo + 1<<errorBits
}

// chartBin is one bin of a latency distribution.
type chartBin struct {
	mid     float64 // µs, the middle of the bin's range
	ios     uint64
	percent float64
}

// distributionOf bins h: every bin from the first non-empty one to the
// last, empty ones too so that lines fall to zero between modes.
func distributionOf(h *hist.Histogram) []chartBin {
	n := h.N()
	if n == 0 {
		return nil
	}
	first := slices.IndexFunc(h.Counts[:], func(c uint64) bool { return c != 0 })
	last := len(h.Counts) - 1
	for h.Counts[last] == 0 {
		last--
	}
	var bins []chartBin
	for b := first >> chartBinShift; b <= last>>chartBinShift; b++ {
		lo, _ := bucketRange(b << chartBinShift)
		_, hi := bucketRange(b<<chartBinShift + 1<<chartBinShift - 1)
		var ios uint64
		for _, c := range h.Counts[b<<chartBinShift : (b+1)<<chartBinShift] {
			ios += c
		}
		bins = append(bins, chartBin{
			mid:     (float64(lo) + float64(hi)) / 2 / 1000,
			ios:     ios,
			percent: 100 * float64(ios) / float64(n),
		})
	}
	return bins
}

// buildDistributionChart overlays the clat distributions at the chosen
// iodepths: each series one group at one iodepth, its done repeats'
// histograms merged.
func buildDistributionChart(q ChartQuery, runs []*chartRun) (*Chart, error) {
	l := newChartLayout(q, runs, sweep.AxisIODepth)
	g := gridOf(l, runs)
	qds := make([]string, 0, len(q.IODepths))
	for _, d := range q.IODepths {
		qds = append(qds, strconv.Itoa(d))
	}
	if len(qds) == 0 {
		// The write-up's iodepths, those the runs have; else every one.
		for _, d := range defaultChartIODepths {
			if s := strconv.Itoa(d); slices.Contains(g.xs, s) {
				qds = append(qds, s)
			}
		}
		if len(qds) == 0 {
			qds = g.xs
		}
	}
	_, dirTitle := chartDirPrefix(q)
	c := &Chart{Title: dirTitle + "Completion latency distribution"}
	c.Columns = append(l.columns(false), "iodepth", "repeats", "failed", "clat_us", "ios", "percent_ios")

	line := echarts.NewLine()
	line.SetGlobalOptions(append(chartOptions(c.Title,
		describeRuns(runs)+" · iodepth "+strings.Join(qds, ", ")+" · clat histograms of all repeats merged",
		chartFile(q.kind(), runs), "axis"),
		echarts.WithGridOpts(chartGridOpts()),
		echarts.WithXAxisOpts(chartXAxis(dirTitle+"clat (µs)", "log")),
		echarts.WithYAxisOpts(opts.YAxis{Name: "% of I/Os", Type: "value"}),
	)...)
	for si, s := range g.series {
		for k, qd := range qds {
			cell := s.cells[qd]
			if cell == nil {
				continue
			}
			h, done, failed := clatOf(cell.steps, q.dirIndex())
			prefix := append(l.row(s.run, qd, s.group, false), qd, strconv.Itoa(done), strconv.Itoa(failed))
			bins := distributionOf(h)
			if len(bins) == 0 {
				c.Rows = append(c.Rows, append(slices.Clone(prefix), "", "", ""))
			}
			data := make([]opts.LineData, len(bins))
			for i, b := range bins {
				data[i] = opts.LineData{Value: []float64{b.mid, b.percent}}
				c.Rows = append(c.Rows, append(slices.Clone(prefix), chartNum(b.mid), strconv.FormatUint(b.ios, 10), chartNum(b.percent)))
			}
			name := "iodepth=" + qd
			if s.name != "" {
				name = s.name + " " + name
			}
			style := chartLineStyle(k, 0, false) // one group: a colour per iodepth
			if len(g.series) > 1 {
				style = chartLineStyle(si, k, false)
			}
			line.AddSeries(name, data, style...)
		}
	}
	var err error
	c.Option, err = optionJSON(line)
	return c, err
}

// chartInterval is one interval of a step: when it ended and the IOPS
// over it in each direction.
type chartInterval struct {
	at   time.Duration
	iops [2]float64
}

// stepIntervals is the step's IOPS per interval, all jobs added. Jobs are
// lined up interval by interval, as bench.JobResult.Merge lines up
// samples, up to the shortest job; a job without samples (one that ended
// within its first interval) has nothing to add.
func stepIntervals(res *bench.Result) []chartInterval {
	var total []chartInterval
	first := true
	for _, g := range res.Groups {
		for k := range g.Jobs {
			iv := jobIntervals(&g.Jobs[k])
			if len(iv) == 0 {
				continue
			}
			if first {
				total, first = iv, false
				continue
			}
			total = total[:min(len(total), len(iv))]
			for i := range total {
				for d := range 2 {
					total[i].iops[d] += iv[i].iops[d]
				}
			}
		}
	}
	return total
}

// jobIntervals is a job's IOPS over each interval between its cumulative
// samples, skipping empty intervals as JobResult.IntervalIOPS does.
func jobIntervals(r *bench.JobResult) []chartInterval {
	var out []chartInterval
	var prev bench.Sample
	for _, s := range r.Samples {
		dt := (s.At - prev.At).Seconds()
		if dt <= 0 {
			continue
		}
		iv := chartInterval{at: s.At}
		for d := range 2 {
			iv.iops[d] = float64(s.IOs[d]-prev.IOs[d]) / dt
		}
		out = append(out, iv)
		prev = s
	}
	return out
}

// stepDoes reports whether any job of res did I/O in direction d.
func stepDoes(res *bench.Result, d int) bool {
	for _, g := range res.Groups {
		for k := range g.Jobs {
			if g.Jobs[k].Dirs[d].IOs > 0 {
				return true
			}
		}
	}
	return false
}

// buildTimelineChart is the IOPS of each interval of one step (1-based),
// in each run compared.
func buildTimelineChart(q ChartQuery, runs []*chartRun) (*Chart, error) {
	if q.Step == 0 {
		last := 1
		for _, r := range runs {
			if n := len(r.steps); n > 0 {
				last = max(last, r.steps[n-1].Step.Seq+1)
			}
		}
		return nil, chartQueryError("step", "the timeline shows one step; add step=N with N from 1 to %d", last)
	}
	steps := make([]*sweep.StepResult, len(runs))
	for i, r := range runs {
		k := slices.IndexFunc(r.steps, func(s sweep.StepResult) bool { return s.Step.Seq == q.Step-1 })
		if k < 0 {
			if len(r.steps) == 0 {
				return nil, chartQueryError("step", "%s has no steps yet", r.label)
			}
			return nil, chartQueryError("step", "%s has no step %d; its steps are 1 to %d", r.label, q.Step, r.steps[len(r.steps)-1].Step.Seq+1)
		}
		steps[i] = &r.steps[k]
	}

	// Which directions: the one asked for, else those with any I/O.
	var dirs []int
	if d := q.dirIndex(); d >= 0 {
		dirs = []int{d}
	} else {
		for d := range 2 {
			if slices.ContainsFunc(steps, func(st *sweep.StepResult) bool {
				return chartStepStatus(st) == sweep.StepDone && stepDoes(st.Result, d)
			}) {
				dirs = append(dirs, d)
			}
		}
		if len(dirs) == 0 {
			dirs = []int{bench.Read, bench.Write}
		}
	}
	dirName := [2]string{"read", "write"}

	c := &Chart{Title: fmt.Sprintf("IOPS per interval, step %d", q.Step)}
	subtitle := describeRuns(runs)
	if len(runs) == 1 {
		st := &steps[0].Step
		if len(st.Axes) > 0 {
			var axes []string
			for _, a := range st.Axes {
				axes = append(axes, string(a.Axis)+"="+a.Value)
			}
			subtitle += " · " + strings.Join(axes, " ")
		}
		subtitle += fmt.Sprintf(" · repeat %d", st.Repeat+1)
		if s := chartStepStatus(steps[0]); s != sweep.StepDone {
			subtitle += " · " + s
		}
	}
	if len(runs) > 1 {
		c.Columns = append(c.Columns, "run")
	}
	c.Columns = append(c.Columns, "time_s")
	for _, d := range dirs {
		c.Columns = append(c.Columns, dirName[d]+"_iops")
	}

	line := echarts.NewLine()
	line.SetGlobalOptions(append(chartOptions(c.Title, subtitle, chartFile(q.kind(), runs)+"-step"+strconv.Itoa(q.Step), "axis"),
		echarts.WithGridOpts(chartGridOpts()),
		echarts.WithXAxisOpts(chartXAxis("time (s)", "value")),
		echarts.WithYAxisOpts(opts.YAxis{Name: "IOPS", Type: "value"}),
	)...)
	for i, r := range runs {
		var ivs []chartInterval
		if chartStepStatus(steps[i]) == sweep.StepDone {
			ivs = stepIntervals(steps[i].Result)
		}
		data := make([][]opts.LineData, len(dirs))
		for _, iv := range ivs {
			var row []string
			if len(runs) > 1 {
				row = append(row, strconv.FormatInt(r.id, 10))
			}
			t := iv.at.Seconds()
			row = append(row, chartNum(t))
			for k, d := range dirs {
				data[k] = append(data[k], opts.LineData{Value: []float64{t, iv.iops[d]}})
				row = append(row, chartNum(iv.iops[d]))
			}
			c.Rows = append(c.Rows, row)
		}
		for k, d := range dirs {
			name := dirName[d]
			if len(runs) > 1 {
				name = r.label + " " + name
			}
			line.AddSeries(name, data[k], echarts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false)}))
		}
	}
	var err error
	c.Option, err = optionJSON(line)
	return c, err
}

// buildCPUChart is the whole machine's CPU time over each step, in top's
// terms: us+sy is work, hi+si interrupts, iowait is idle time with I/O
// outstanding (a thread blocked in io_uring_enter shows up there), idle.
func buildCPUChart(q ChartQuery, runs []*chartRun) (*Chart, error) {
	parts := []struct {
		name, column string
		of           func(*system.CPUBreakdown) float64
	}{
		{"busy (us+sy)", "busy_pct", func(c *system.CPUBreakdown) float64 { return c.User + c.System }},
		{"irq (hi+si)", "irq_pct", func(c *system.CPUBreakdown) float64 { return c.IRQ + c.SoftIRQ }},
		{"iowait", "iowait_pct", func(c *system.CPUBreakdown) float64 { return c.IOWait }},
		{"idle", "idle_pct", func(c *system.CPUBreakdown) float64 { return c.Idle }},
		{"steal", "steal_pct", func(c *system.CPUBreakdown) float64 { return c.Steal }},
	}
	// Steal only on machines that have it (VMs).
	steal := false
	var axes []sweep.Axis
	var xs []int
	for _, r := range runs {
		for _, s := range r.plan.Sweeps {
			if !slices.Contains(axes, s.Axis) {
				axes = append(axes, s.Axis)
			}
		}
		for i := range r.steps {
			st := &r.steps[i]
			steal = steal || (chartStepStatus(st) == sweep.StepDone && st.CPU.Steal > 0)
			if n := st.Step.Seq + 1; !slices.Contains(xs, n) {
				xs = append(xs, n)
			}
		}
	}
	if !steal {
		parts = parts[:len(parts)-1]
	}
	slices.Sort(xs)
	cats := make([]string, len(xs))
	for i, n := range xs {
		cats[i] = strconv.Itoa(n)
	}

	c := &Chart{Title: "CPU time per step"}
	if len(runs) > 1 {
		c.Columns = append(c.Columns, "run")
	}
	c.Columns = append(c.Columns, "step")
	for _, a := range axes {
		c.Columns = append(c.Columns, string(a))
	}
	c.Columns = append(c.Columns, "repeat", "status")
	for _, p := range parts {
		c.Columns = append(c.Columns, p.column)
	}

	bar := echarts.NewBar()
	bar.SetGlobalOptions(append(chartOptions(c.Title, describeRuns(runs)+" · all CPUs, % of their time over each step",
		chartFile(q.kind(), runs), "axis"),
		echarts.WithGridOpts(chartGridOpts()),
		echarts.WithXAxisOpts(chartXAxis("step", "category")),
		echarts.WithYAxisOpts(opts.YAxis{Name: "% of CPU time", Type: "value", Max: 100}),
	)...)
	bar.SetXAxis(cats)
	for _, r := range runs {
		data := make([][]opts.BarData, len(parts))
		for k := range data {
			data[k] = make([]opts.BarData, len(xs))
			for i := range data[k] {
				data[k][i] = opts.BarData{Value: chartMissing}
			}
		}
		for i := range r.steps {
			st := &r.steps[i]
			var row []string
			if len(runs) > 1 {
				row = append(row, strconv.FormatInt(r.id, 10))
			}
			row = append(row, strconv.Itoa(st.Step.Seq+1))
			for _, a := range axes {
				row = append(row, r.value(st.Step.Axes, a))
			}
			status := chartStepStatus(st)
			row = append(row, strconv.Itoa(st.Step.Repeat+1), status)
			x := slices.Index(xs, st.Step.Seq+1)
			for k, p := range parts {
				if status != sweep.StepDone {
					row = append(row, "")
					continue
				}
				v := p.of(&st.CPU)
				data[k][x] = opts.BarData{Value: v}
				row = append(row, chartNum(v))
			}
			c.Rows = append(c.Rows, row)
		}
		for k, p := range parts {
			name := p.name
			if len(runs) > 1 {
				name = r.label + " " + name
			}
			bar.AddSeries(name, data[k], echarts.WithBarChartOpts(opts.BarChart{Stack: r.label}))
		}
	}
	var err error
	c.Option, err = optionJSON(bar)
	return c, err
}

// growthLabel is a bar's growth label: +85%, +3.2%.
func growthLabel(g float64) string {
	digits := 0
	if math.Abs(g) < 10 {
		digits = 1
	}
	s := strconv.FormatFloat(g, 'f', digits, 64)
	if g >= 0 {
		s = "+" + s
	}
	return s + "%"
}

// buildScalingChart is the median aggregate IOPS at each numjobs value,
// labelled with its growth from the previous one, from
// summary.SummarizeScaling.
func buildScalingChart(q ChartQuery, runs []*chartRun) (*Chart, error) {
	for _, r := range runs {
		if !r.sweeps(sweep.AxisNumJobs) {
			return nil, chartQueryError("kind", "the scaling chart needs a numjobs sweep, and %s does not sweep numjobs", r.label)
		}
	}
	l := newChartLayout(q, runs, sweep.AxisNumJobs)
	col, dirTitle := chartDirPrefix(q)
	c := &Chart{Title: dirTitle + "Aggregate IOPS vs numjobs"}
	c.Columns = append(l.columns(true), "repeats", "failed", col+"iops_min", col+"iops_median", col+"iops_max", "growth_pct")

	// The x values and series in the order gridOf gives them; the numbers
	// from SummarizeScaling, keyed the same way.
	g := gridOf(l, runs)
	type point struct {
		step summary.ScalingStep
		ok   bool
	}
	points := map[*chartSeries]map[string]point{}
	for _, r := range runs {
		for _, st := range summary.SummarizeScaling(r.plan, chartDirSteps(r.steps, q.dirIndex())) {
			x, group := l.key(r, st.Axes)
			k := slices.IndexFunc(g.series, func(s *chartSeries) bool { return s.run == r && slices.Equal(s.group, group) })
			if k < 0 {
				continue // cannot happen: both come from the same steps
			}
			if points[g.series[k]] == nil {
				points[g.series[k]] = map[string]point{}
			}
			points[g.series[k]][x] = point{st, true}
		}
	}

	bar := echarts.NewBar()
	bar.SetGlobalOptions(append(chartOptions(c.Title, describeRuns(runs)+" · median over repeats, growth from the previous numjobs",
		chartFile(q.kind(), runs), "axis"),
		echarts.WithGridOpts(chartGridOpts()),
		echarts.WithXAxisOpts(chartXAxis("numjobs", "category")),
		echarts.WithYAxisOpts(opts.YAxis{Name: dirTitle + "IOPS", Type: "value"}),
	)...)
	bar.SetXAxis(g.xs)
	for _, s := range g.series {
		data := make([]opts.BarData, len(g.xs))
		for i, x := range g.xs {
			data[i] = opts.BarData{Value: chartMissing}
			p, ok := points[s][x]
			if !ok {
				continue
			}
			row := append(l.row(s.run, x, s.group, true), strconv.Itoa(p.step.Repeats), strconv.Itoa(p.step.Failed))
			if p.step.Repeats == 0 {
				c.Rows = append(c.Rows, append(row, "", "", "", ""))
				continue
			}
			sp := p.step.IOPS
			row = append(row, chartNum(sp.Min), chartNum(sp.Median), chartNum(sp.Max), "")
			data[i] = opts.BarData{Value: sp.Median}
			if p.step.Growth != nil {
				row[len(row)-1] = chartNum(*p.step.Growth)
				data[i].Label = &opts.Label{Show: opts.Bool(true), Position: "top", Formatter: growthLabel(*p.step.Growth)}
			}
			c.Rows = append(c.Rows, row)
		}
		bar.AddSeries(cmp.Or(s.name, s.run.label), data)
	}
	var err error
	c.Option, err = optionJSON(bar)
	return c, err
}

// buildFairnessChart is, per scheduler (per combination of the swept
// axes), each job's median mean latency above and median bandwidth
// below, from summary.SummarizeJobs: the fairness write-up, where a
// background writer and a foreground reader share a disk.
func buildFairnessChart(q ChartQuery, runs []*chartRun) (*Chart, error) {
	l := newChartLayout(q, runs, "")
	g := gridOf(l, runs)
	col, dirTitle := chartDirPrefix(q)
	c := &Chart{Title: dirTitle + "Per-job latency and bandwidth"}
	if l.series == sweep.AxisScheduler {
		c.Title += " per scheduler"
	}
	c.Columns = append(l.columns(false), "job", "repeats", "failed",
		col+"lat_mean_min_us", col+"lat_mean_median_us", col+"lat_mean_max_us",
		col+"bw_min_mib_s", col+"bw_median_mib_s", col+"bw_max_mib_s")

	const mib = 1 << 20
	cats := make([]string, len(g.series))
	var jobs []string
	type point struct{ lat, bw float64 }
	points := map[string][]point{} // by job, by category
	for i, s := range g.series {
		cats[i] = cmp.Or(s.name, s.run.label)
		var steps []sweep.StepResult
		for _, cell := range s.cells {
			steps = append(steps, cell.steps...)
		}
		slices.SortFunc(steps, func(a, b sweep.StepResult) int { return cmp.Compare(a.Step.Seq, b.Step.Seq) })
		for _, js := range summary.SummarizeJobs(s.run.plan, chartDirSteps(steps, q.dirIndex())) {
			if !slices.Contains(jobs, js.Job) {
				jobs = append(jobs, js.Job)
			}
			if points[js.Job] == nil {
				points[js.Job] = make([]point, len(g.series))
				for k := range points[js.Job] {
					points[js.Job][k] = point{math.NaN(), math.NaN()}
				}
			}
			row := append(l.row(s.run, "", s.group, false), js.Job, strconv.Itoa(js.Repeats), strconv.Itoa(js.Failed))
			if js.Repeats == 0 {
				c.Rows = append(c.Rows, append(row, "", "", "", "", "", ""))
				continue
			}
			lat := stats.Spread{Min: js.LatMean.Min / 1000, Median: js.LatMean.Median / 1000, Max: js.LatMean.Max / 1000}
			bw := stats.Spread{Min: js.BW.Min / mib, Median: js.BW.Median / mib, Max: js.BW.Max / mib}
			points[js.Job][i] = point{lat.Median, bw.Median}
			c.Rows = append(c.Rows, append(row, chartNum(lat.Min), chartNum(lat.Median), chartNum(lat.Max),
				chartNum(bw.Min), chartNum(bw.Median), chartNum(bw.Max)))
		}
	}

	catName := "scheduler"
	if l.series != sweep.AxisScheduler {
		catName = ""
	}
	bar := echarts.NewBar()
	bar.SetGlobalOptions(append(chartOptions(c.Title, describeRuns(runs)+" · medians over repeats",
		chartFile(q.kind(), runs), "axis"),
		echarts.WithGridOpts(
			opts.Grid{Top: "80", Height: "30%", Left: "30", Right: "50", ContainLabel: opts.Bool(true)},
			opts.Grid{Top: "58%", Bottom: "70", Left: "30", Right: "50", ContainLabel: opts.Bool(true)},
		),
		echarts.WithXAxisOpts(opts.XAxis{Type: "category", GridIndex: 0}),
		echarts.WithYAxisOpts(opts.YAxis{Name: dirTitle + "mean latency (µs)", Type: "log", GridIndex: 0}),
	)...)
	bar.ExtendXAxis(opts.XAxis{Type: "category", GridIndex: 1, Data: cats, Name: catName, NameLocation: "middle", NameGap: 30})
	bar.ExtendYAxis(opts.YAxis{Name: dirTitle + "bandwidth (MiB/s)", Type: "value", GridIndex: 1})
	bar.SetXAxis(cats)
	for _, job := range jobs {
		lat := make([]opts.BarData, len(cats))
		bw := make([]opts.BarData, len(cats))
		for i, p := range points[job] {
			lat[i], bw[i] = opts.BarData{Value: chartMissing}, opts.BarData{Value: chartMissing}
			if !math.IsNaN(p.lat) && p.lat > 0 { // the log axis has no 0
				lat[i].Value = p.lat
			}
			if !math.IsNaN(p.bw) {
				bw[i].Value = p.bw
			}
		}
		// One name for both: the legend toggles a job in both grids.
		bar.AddSeries(job, lat, echarts.WithBarChartOpts(opts.BarChart{XAxisIndex: 0, YAxisIndex: 0}))
		bar.AddSeries(job, bw, echarts.WithBarChartOpts(opts.BarChart{XAxisIndex: 1, YAxisIndex: 1}))
	}
	var err error
	c.Option, err = optionJSON(bar)
	return c, err
}
