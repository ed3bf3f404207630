package chart

import (
	"fmt"
	"math"
	"strconv"
	"time"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"iolab/bench"
	"iolab/bench/summary"
)

// LatencyTimeline is one job's latency per interval — p50, p99 and max
// from each interval's own histogram — of one step, or of every step one
// after the other, drawn beside the IOPS timeline so a p99 spike can be
// placed in time.
const LatencyTimeline Kind = "lattime"

func buildLatencyTimeline(q Query, runs []*runView) (*Chart, error) {
	c := &Chart{Title: "Latency over time, every step", Format: Format{Tooltip: "time", X: "s", Y: "us"}}
	if q.Step > 0 {
		c.Title = fmt.Sprintf("Latency over time, step %d", q.Step)
	}
	if len(runs) > 1 {
		c.Columns = append(c.Columns, "run")
	}
	c.Columns = append(c.Columns, "step", "job", "time_s", "run_time_s", "latency", "ios", "p50_us", "p99_us", "max_us")
	t := &latencyDrawing{q: q, c: c, multi: len(runs) > 1, line: echarts.NewLine(), latencies: map[string]bool{},
		logs: map[LatKind]logState{}}
	for i, r := range runs {
		if err := t.drawRun(i, r); err != nil {
			return nil, err
		}
	}
	if err := t.checkKind(); err != nil {
		return nil, err
	}
	if k := q.Lat; len(t.latencies) == 0 && k != LatTotal && k != LatSlat {
		// Nothing to draw: a frame of shading alone says nothing.
		return nil, errNoIntervalLatency
	}
	c.Pickers = []Picker{t.picker()}
	c.File = fileName(LatencyTimeline, runs)
	if q.Step > 0 {
		c.File += "-step" + strconv.Itoa(q.Step)
	}
	xName := "time since the run's first step (s)"
	if q.Step > 0 {
		xName = "time since the measurement began (s)"
	}
	x := timeAxis(xName)
	if len(t.areas) > 0 && t.areas[0].from < 0 {
		x.Min = math.Floor(t.areas[0].from*10) / 10
	}
	t.line.SetGlobalOptions(append(plotOptions(c.Title, subtitle(runs, nil, t.how()), "axis",
		x, opts.YAxis{Name: "latency (µs)", Type: "log", SplitLine: splitLine()}),
		echarts.WithLegendOpts(opts.Legend{Show: opts.Bool(true), Type: "scroll", Bottom: "0", Data: t.legend}))...)
	raw, err := optionJSON(t.line)
	if err != nil {
		return nil, err
	}
	c.Option, err = withPhases(raw, t.areas, len(t.areas) <= 36)
	return c, err
}

// latencyDrawing is what a latency timeline gathers as it draws each
// run: its series and rows, the phases shaded behind, which latencies
// the samples hold, and whether a job had clones.
type latencyDrawing struct {
	q         Query
	c         *Chart
	multi     bool // several runs: rows and series name theirs
	line      *echarts.Line
	latencies map[string]bool
	clones    bool
	areas     []phase
	legend    []string // the series' names in the legend's order
	// logs is what the drawn steps' jobs logged of lat and slat, the
	// least of any step's (stepLogs); unread: a log to draw was not read
	// with the steps, truncated: one was cut short for the store.
	logs              map[LatKind]logState
	unread, truncated bool
}

// drawRun draws the p50, p99 and max of run r's (the i-th's) steps, one
// after the other on the time axis; the first run's phases are shaded.
func (t *latencyDrawing) drawRun(i int, r *runView) error {
	var steps []*summary.StepView
	for k := range r.steps {
		if t.q.Step == 0 || r.steps[k].Step.Seq == t.q.Step-1 {
			steps = append(steps, &r.steps[k])
		}
	}
	if t.q.Step > 0 && len(steps) == 0 {
		return queryError("step", "%s has no step %d", r.label, t.q.Step)
	}
	data := make([][]item, 3)
	t0 := steps0(steps)
	next := 0.0
	for _, st := range steps {
		measure, phases := placeStep(st, t0, next, r.plan.Discard, t.q.Step > 0)
		if i == 0 {
			t.areas = append(t.areas, phases...)
		}
		next = phases[len(phases)-1].to
		jr, n := firstResult(st)
		t.clones = t.clones || n > 1
		if jr == nil || !done(st) {
			continue
		}
		for _, k := range []LatKind{LatTotal, LatSlat} {
			if l, ok := t.logs[k]; !ok || stepLogs(st, r.job, k) < l {
				t.logs[k] = stepLogs(st, r.job, k)
			}
		}
		t.addStep(data, r, st, jr, measure)
		for k := range data {
			if n := len(data[k]); n > 0 && data[k][n-1].Value != missing {
				data[k] = append(data[k], item{Value: missing})
			}
		}
	}
	// max first, p50 and then p99 over it: an interval of few I/Os has
	// its p99 at its max, and the line the legend lists must show.
	for _, k := range []int{2, 0, 1} {
		name := latLines[k]
		if t.multi {
			name = r.name + " " + name
		}
		color := palette[(3*i+k)%len(palette)]
		style := lineStyle(color, 0, 0, len(data[k]) <= 40)
		if k == 2 {
			style = append(style, echarts.WithLineStyleOpts(opts.LineStyle{Color: color, Type: "dashed", Width: 1.2, Opacity: opts.Float(0.8)}))
		} else if k == 1 {
			style = append(style, echarts.WithLineStyleOpts(opts.LineStyle{Color: color, Width: 2.4}))
		}
		t.line.AddSeries(name, nil, style...)
		setData(t.line.MultiSeries, data[k])
	}
	for k := range latLines {
		name := latLines[k]
		if t.multi {
			name = r.name + " " + name
		}
		t.legend = append(t.legend, name)
	}
	return nil
}

// latLines are the lines of a latency timeline, in the legend's order.
var latLines = []string{"p50", "p99", "max"}

// addStep adds to data (p50, p99, max) and the rows the intervals of
// step st of run r that hold latencies of the kind drawn, its job jr's,
// the measurement starting at measure on the time axis: the samples'
// own (clat, or from the intended start), or those of the job's lat or
// slat log (lattime_logs.go).
func (t *latencyDrawing) addStep(data [][]item, r *runView, st *summary.StepView, jr *summary.JobView, measure float64) {
	lat := "clat"
	if jr.Paced(bench.Read) || jr.Paced(bench.Write) {
		lat = bench.LatIntended
	}
	lats := make([]*bench.IntervalLat, len(jr.Samples))
	for i, s := range jr.Samples {
		lats[i] = s.Lat
	}
	if k := t.q.Lat; k == LatTotal || k == LatSlat {
		if stepLogs(st, r.job, k) != logPerIO {
			return // refused (checkKind)
		}
		var found, cut bool
		lats, found, cut = logIntervalLats(jr, logKind(k), t.q.dirIndex())
		t.unread = t.unread || !found
		t.truncated = t.truncated || cut
		lat = k.Name()
	}
	for i, s := range jr.Samples {
		il := lats[i]
		if il == nil {
			continue
		}
		t.latencies[lat] = true
		sec := s.At.Seconds()
		at := measure + sec
		name := "step " + strconv.Itoa(st.Step.Seq+1)
		for k, v := range []uint64{il.P50, il.P99, il.Max} {
			it := item{Value: []float64{at, float64(v) / 1e3}, Name: name, Extra: [][3]any{{"I/Os", float64(il.N), ""}}}
			if k == 1 && il.N < 1000 {
				it.Note = fmt.Sprintf("unreliable: %d I/Os in the interval, p99 needs 1000", il.N)
			}
			data[k] = append(data[k], it)
		}
		var row []string
		if t.multi {
			row = append(row, strconv.FormatInt(r.id, 10))
		}
		row = append(row, strconv.Itoa(st.Step.Seq+1), jr.Name, num(sec), num(at), lat, strconv.FormatUint(il.N, 10),
			num(float64(il.P50)/1e3), num(float64(il.P99)/1e3), num(float64(il.Max)/1e3))
		t.c.Rows = append(t.c.Rows, row)
	}
}

// errNoIntervalLatency is why a run's latency timeline is not drawn: no
// step kept latency per interval.
// It is the query's (400, its reason on the page), not the server's.
var errNoIntervalLatency error = &QueryError{Field: "kind", Msg: "no step kept its latency per interval (runs stored before iolab kept it, or imported from fio, whose JSON has none): the latency percentiles and distribution charts have each step's latency"}

// how says which latency the lines are, from what, and that a job with
// clones is drawn by its first.
func (t *latencyDrawing) how() string {
	how := "from each interval's own histogram"
	if k := t.q.Lat; k == LatTotal || k == LatSlat {
		how = k.Title() + " of each interval's I/Os, from the job's " + k.Name() + " log (write_lat_log)"
		if t.truncated {
			how += ", which the store kept the start of: the line ends early"
		}
		return how
	}
	switch {
	case len(t.latencies) == 1 && t.latencies[bench.LatIntended]:
		how = "latency from each I/O's intended start (coordinated omission corrected), " + how
	case len(t.latencies) == 1:
		how = "clat, " + how
	default:
		how = "latency from the intended start for paced steps, clat for the others, " + how
	}
	if t.clones {
		how += " · the job's first clone (numjobs): intervals' percentiles do not add up"
	}
	return how
}

// The latency kinds of a latency timeline: what each interval keeps
// (clat, or from the intended start for a paced job), and lat and slat
// where the job kept them per I/O in its logs (lattime_logs.go).

// keeps reports whether the steps drawn keep latency kind k per
// interval.
func (t *latencyDrawing) keeps(k LatKind) bool {
	if k == LatClat {
		return !t.latencies[bench.LatIntended]
	}
	return t.logs[k] == logPerIO
}

// checkKind refuses a latency kind the steps drawn do not keep per
// interval, saying why.
func (t *latencyDrawing) checkKind() error {
	k := t.q.Lat
	switch {
	case k == "" || t.keeps(k) && !t.unread:
		return nil
	case t.keeps(k):
		return fmt.Errorf("chart: latency timeline: the %s logs were not read with the steps", k.Name())
	case k == LatClat:
		return queryError("lat", "each interval of a paced job keeps the latency from its intended start, not clat; "+
			"the latency chart draws clat for each step")
	case t.logs[k] == logAveraged:
		return queryError("lat", "the job's %s log holds a mean per log_avg_msec window, not each I/O, so the latency timeline cannot draw "+
			"%s percentiles; run with log_avg_msec=0, or see the latency chart for each step", k.Name(), k.Title())
	}
	return queryError("lat", "each interval keeps a histogram of clat alone and the job kept no %s log (write_lat_log), so the "+
		"latency timeline cannot draw %s; the latency chart draws it for each step", k.Name(), k.Title())
}

// picker offers the latency kinds, saying which the steps drawn do not
// keep per interval; with a paced job, what they keep comes first.
func (t *latencyDrawing) picker() Picker {
	p := Picker{Param: "lat", Label: "latency", Single: true}
	paced := t.latencies[bench.LatIntended]
	if paced {
		p.Options = append(p.Options, PickerOption{Value: "", Label: "from the intended start (kept per interval)", On: t.q.Lat == ""})
	}
	for _, k := range summary.LatKinds {
		o := PickerOption{Value: string(k), Label: k.Title(), On: t.q.Lat == k || t.q.Lat == "" && k == LatClat && !paced}
		switch {
		case k != LatClat && t.keeps(k):
			o.Label += ", from the job's " + k.Name() + " log"
		case k != LatClat && t.logs[k] == logAveraged:
			o.Label += " — logged as log_avg_msec means, not per I/O"
			o.Disabled = true
		case !t.keeps(k):
			o.Label += " — not kept per interval"
			o.Disabled = true
		}
		p.Options = append(p.Options, o)
	}
	return p
}

// steps0 is when the first of steps started.
func steps0(steps []*summary.StepView) (t0 time.Time) {
	for _, st := range steps {
		if !st.Start.IsZero() {
			return st.Start
		}
	}
	return t0
}

// firstResult is a step's first job result (the drawn job's, once the
// view selected it) and how many the step has.
func firstResult(st *summary.StepView) (*summary.JobView, int) {
	if st.Result == nil {
		return nil, 0
	}
	n := 0
	var first *summary.JobView
	for g := range st.Result.Groups {
		for k := range st.Result.Groups[g].Jobs {
			if first == nil {
				first = &st.Result.Groups[g].Jobs[k]
			}
			n++
		}
	}
	return first, n
}
