package chart

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"iolab/bench"
	"iolab/bench/summary"
	"iolab/bench/sweep"
)

// QueryError is a query that names something wrong or impossible: the
// server answers it with 400, the parameter and the message.
type QueryError struct {
	Field string // the query parameter
	Msg   string // "field: what is wrong and what is allowed"
}

func (e *QueryError) Error() string { return e.Msg }

func queryError(field, format string, args ...any) error {
	return &QueryError{Field: field, Msg: field + ": " + fmt.Sprintf(format, args...)}
}

// The views a query gets when it names no percentiles or iodepths: the
// write-ups' percentiles, and the iodepths their distributions compare.
var (
	defaultPercentiles = []float64{50, 90, 99, 99.9, 99.99}
	defaultIODepths    = []int{1, 4, 16}
)

// Bounds on list parameters, so that a URL cannot ask for thousands of
// series.
const (
	maxPercentiles = 20
	maxIODepths    = 20
	maxJobName     = 200
	maxShow        = 50
)

// Query is everything that selects what a chart shows. It round-trips
// through the URL query string, so a copied URL reproduces the view: zero
// fields mean the defaults, and Values omits them.
type Query struct {
	Kind        Kind       // ?kind= (default iops)
	Runs        []int64    // ?run=3&run=5 (several runs: compare; series are then per run as well)
	Step        int        // ?step=N (1-based seq) for kinds that show one step
	Series      sweep.Axis // ?series=ioengine|scheduler|… (default: the first swept axis that is not Numeric nor x, else none)
	X           sweep.Axis // ?x=bs … for kinds whose x axis the query picks (default: the kind's)
	Dir         string     // ?dir=read|write|trim|all (default all)
	Percentiles []float64  // ?p=50&p=99 … for latency (default 50, 90, 99, 99.9, 99.99)
	IODepths    []int      // ?qd=1&qd=16 for distribution (default those of 1, 4, 16 the runs have, else all)
	// Lat is ?lat=total|clat|slat: the latency the latency charts draw
	// (KindSpec.lat); default lat (total) when the runs compare engines
	// or hosts, else clat (latKind). The kinds that draw them
	// (KindSpec.blockLat) also take submit|queue|device|completion, a
	// part of a traced run's time in the block layer.
	Lat LatKind
	// Job is ?job=NAME: the job the kinds that draw one job draw
	// (KindSpec.PerJob); default each run's measured job
	// (sweep.Plan.MeasuredJob), else its first.
	Job string
	// Show is ?show=io_uring&show=bfq: the values of the series' axes to
	// draw (an axis none of whose values is named draws every value);
	// default: every series, the first few when there are too many.
	Show []string
	// ShowRuns is ?showrun=3: the compared runs whose series are drawn
	// (default all).
	ShowRuns []int64
	// Stat is ?stat=p50|p99: the statistic the kinds that stack one
	// (KindSpec.stat, the time split) draw; default p50.
	Stat Stat

	// perJob is the kind's PerJob, set by Build for the builders.
	perJob bool
	// noTable is set by Draw: the builders may leave Chart.Rows out.
	noTable bool
}

// ParseQuery reads a chart query from a URL's query string. Unknown
// parameters are ignored; empty ones count as absent. Explicit defaults
// (dir=all, x=iodepth, the default percentile list, …) and parameters
// the kind does not use (x= of a chart without an axis to choose) come
// back as zero fields, so that Values of the result is the canonical URL.
// A bad value is a *QueryError naming the parameter and what it allows.
func ParseQuery(v url.Values) (Query, error) {
	var q Query
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
		return "", queryError(name, "given %d times (%s); give it once", len(got), strings.Join(got, ", "))
	}

	s, err := single("kind")
	if err != nil {
		return Query{}, err
	}
	q.Kind = Kind(s)
	if q.Kind == "" {
		q.Kind = IOPS
	}
	// runIDs reads a list of run ids, each once.
	runIDs := func(name string) ([]int64, error) {
		var ids []int64
		for _, s := range list(name) {
			id, err := strconv.ParseInt(s, 10, 64)
			if err != nil || id < 1 {
				return nil, queryError(name, "%q is not a run id: want a whole number, 1 or more", s)
			}
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
		return ids, nil
	}
	if q.Runs, err = runIDs("run"); err != nil {
		return Query{}, err
	}
	if s, err = single("step"); err != nil {
		return Query{}, err
	} else if s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return Query{}, queryError("step", "%q is not a step number: want a whole number, 1 or more (the step's place in the run)", s)
		}
		q.Step = n
	}
	if s, err = single("series"); err != nil {
		return Query{}, err
	}
	q.Series = sweep.Axis(s)
	if s, err = single("x"); err != nil {
		return Query{}, err
	}
	q.X = sweep.Axis(s)
	if s, err = single("dir"); err != nil {
		return Query{}, err
	}
	q.Dir = s
	for _, s := range list("p") {
		p, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return Query{}, queryError("p", "%q is not a percentile: want a number above 0 and at most 100 (p=99.9)", s)
		}
		if !slices.Contains(q.Percentiles, p) {
			q.Percentiles = append(q.Percentiles, p)
		}
	}
	if s, err = single("job"); err != nil {
		return Query{}, err
	}
	q.Job = s
	for _, s := range list("qd") {
		n, err := strconv.Atoi(s)
		if err != nil {
			return Query{}, queryError("qd", "%q is not an iodepth: want a whole number, 1 or more", s)
		}
		if !slices.Contains(q.IODepths, n) {
			q.IODepths = append(q.IODepths, n)
		}
	}
	if s, err = single("lat"); err != nil {
		return Query{}, err
	}
	q.Lat = LatKind(s)
	for _, s := range list("show") {
		if !slices.Contains(q.Show, s) {
			q.Show = append(q.Show, s)
		}
	}
	if q.ShowRuns, err = runIDs("showrun"); err != nil {
		return Query{}, err
	}
	if s, err = single("stat"); err != nil {
		return Query{}, err
	}
	q.Stat = Stat(s)
	if err := q.check(); err != nil {
		return Query{}, err
	}
	return q.canonical(), nil
}

// canonical turns explicit defaults, and an x= or job= the kind does not
// use, into zero fields.
func (q Query) canonical() Query {
	if q.Dir == "all" {
		q.Dir = ""
	}
	if spec, ok := LookupKind(q.kind()); ok && (spec.xParam != xChosen || q.X == spec.x) {
		q.X = ""
	}
	if spec, ok := LookupKind(q.kind()); ok && !spec.PerJob {
		q.Job = ""
	}
	if spec, ok := LookupKind(q.kind()); ok && !spec.lat {
		q.Lat = ""
	}
	if spec, ok := LookupKind(q.kind()); ok && !spec.stat || q.Stat == statP50 {
		q.Stat = ""
	}
	return q
}

// Values is the query's canonical encoding: defaults omitted, so that
// ParseQuery(q.Values()) == q for any query ParseQuery returns.
func (q Query) Values() url.Values {
	q = q.canonical()
	v := url.Values{}
	if q.Kind != "" && q.Kind != IOPS {
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
	if q.Job != "" {
		v.Set("job", q.Job)
	}
	if q.Lat != "" {
		v.Set("lat", string(q.Lat))
	}
	for _, s := range q.Show {
		v.Add("show", s)
	}
	for _, id := range q.ShowRuns {
		v.Add("showrun", strconv.FormatInt(id, 10))
	}
	if q.Stat != "" {
		v.Set("stat", string(q.Stat))
	}
	return v
}

func (q Query) kind() Kind {
	if q.Kind == "" {
		return IOPS
	}
	return q.Kind
}

// spec is the query's kind; call it on checked queries only.
func (q Query) spec() KindSpec {
	spec, _ := LookupKind(q.kind())
	return spec
}

// xAxis is the axis the query's kind keys its points by (KindSpec.x, or
// the one the query picks); "" for kinds whose x is time, steps or
// kernels.
func (q Query) xAxis() sweep.Axis {
	spec := q.spec()
	if spec.xParam == xChosen && q.X != "" {
		return q.X
	}
	return spec.x
}

// dirIndex is the query's direction as bench.Read, bench.Write or
// bench.Trim, or -1 for all.
func (q Query) dirIndex() int {
	switch q.Dir {
	case "read":
		return bench.Read
	case "write":
		return bench.Write
	case "trim":
		return bench.Trim
	}
	return -1
}

// check validates a query's values against each other, for queries parsed
// or built by hand.
func (q Query) check() error {
	spec, ok := LookupKind(q.kind())
	if !ok {
		return queryError("kind", "%q is not a chart; use one of %s", q.Kind, kindNames())
	}
	for _, id := range q.Runs {
		if id < 1 {
			return queryError("run", "%d is not a run id: want a whole number, 1 or more", id)
		}
	}
	if q.Step < 0 {
		return queryError("step", "%d is not a step number: want a whole number, 1 or more", q.Step)
	}
	axes := strings.Join(sweep.AxisNames(), ", ")
	if _, ok := sweep.LookupAxis(q.X); q.X != "" && !ok {
		return queryError("x", "%q is not an axis; use one of %s", q.X, axes)
	}
	if spec.xParam == xFixed && q.X != "" && q.X != spec.x {
		return queryError("x", "the %s chart's x axis is %s, not %s", spec.Name, spec.x, q.X)
	}
	if _, ok := sweep.LookupAxis(q.Series); q.Series != "" && !ok {
		return queryError("series", "%q is not an axis; use one of %s", q.Series, axes)
	}
	if x := q.xAxis(); q.Series != "" && q.Series == x {
		return queryError("series", "%s is the %s chart's x axis; pick another axis for the series", x, spec.Name)
	}
	switch q.Dir {
	case "", "all", "read", "write", "trim":
	default:
		return queryError("dir", "%q is not a direction; use read, write, trim or all", q.Dir)
	}
	if len(q.Percentiles) > maxPercentiles {
		return queryError("p", "%d percentiles; at most %d", len(q.Percentiles), maxPercentiles)
	}
	for _, p := range q.Percentiles {
		if !(p > 0 && p <= 100) {
			return queryError("p", "%v is not a percentile: want a number above 0 and at most 100 (p=99.9)", p)
		}
	}
	if len(q.Job) > maxJobName || strings.ContainsAny(q.Job, "\x00\n") {
		return queryError("job", "%.40q is not a job name", q.Job)
	}
	if len(q.IODepths) > maxIODepths {
		return queryError("qd", "%d iodepths; at most %d", len(q.IODepths), maxIODepths)
	}
	for _, d := range q.IODepths {
		if d < 1 {
			return queryError("qd", "%d is not an iodepth: want a whole number, 1 or more", d)
		}
	}
	if q.Lat.Block() && spec.lat && !spec.blockLat {
		return queryError("lat", "%s is a part of the time in the block layer, which the %s chart does not draw; the latency, distribution and fairness charts draw it, and the time split all four", q.Lat, spec.Name)
	}
	if q.Lat != "" && !slices.Contains(summary.LatKinds, q.Lat) && !q.Lat.Block() {
		return queryError("lat", "%.40q is not a latency; use total (fio's lat, from submission), clat or slat, or a traced run's block-layer part: submit, queue, device or completion", q.Lat)
	}
	if q.Stat != "" && !slices.Contains(splitStats, q.Stat) {
		return queryError("stat", "%.40q is not a statistic; use p50 or p99", q.Stat)
	}
	if len(q.Show) > maxShow {
		return queryError("show", "%d values; at most %d", len(q.Show), maxShow)
	}
	for _, s := range q.Show {
		if len(s) > maxJobName || strings.ContainsAny(s, "\x00\n") {
			return queryError("show", "%.40q is not a value of an axis", s)
		}
	}
	if len(q.ShowRuns) > maxShow {
		return queryError("showrun", "%d runs; at most %d", len(q.ShowRuns), maxShow)
	}
	for _, id := range q.ShowRuns {
		if id < 1 {
			return queryError("showrun", "%d is not a run id: want a whole number, 1 or more", id)
		}
	}
	return nil
}
