package chart

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"iolab/bench"
	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/bench/units"
)

// Timeline is the IOPS per interval of one step, read and write, of
// one job.
const Timeline Kind = "timeline"

// interval is one interval of a step: when it ended and the IOPS over it
// in each direction.
type interval struct {
	at   time.Duration
	iops [bench.Trim + 1]float64
}

// stepIntervals is the step's IOPS per interval, its results added (the
// clones of the job drawn: see runView.selectJob). Results are
// lined up interval by interval, as bench.JobResult.Merge lines up
// samples, up to the shortest job; a job without samples (one that ended
// within its first interval) has nothing to add.
// fromLogs: every job's IOPS log can be drawn (logWindow), and is.
func stepIntervals(res *summary.ResultView, fromLogs bool) []interval {
	if fromLogs {
		return addIntervals(res, logIntervals) // timeline_logs.go
	}
	return addIntervals(res, jobIntervals)
}

// addIntervals adds up the intervals of res's jobs, lined up one by one
// up to the shortest job's.
func addIntervals(res *summary.ResultView, jobIntervals func(*summary.JobView) []interval) []interval {
	var total []interval
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
				for d := range total[i].iops {
					total[i].iops[d] += iv[i].iops[d]
				}
			}
		}
	}
	return total
}

// jobIntervals is a job's IOPS over each interval between its cumulative
// samples, skipping empty intervals as JobResult.IntervalIOPS does.
func jobIntervals(r *summary.JobView) []interval {
	out := make([]interval, 0, len(r.Samples))
	var prev bench.Sample
	for _, s := range r.Samples {
		dt := (s.At - prev.At).Seconds()
		if dt <= 0 {
			continue
		}
		iv := interval{at: s.At}
		for d := range iv.iops {
			iv.iops[d] = float64(s.IOs[d]-prev.IOs[d]) / dt
		}
		out = append(out, iv)
		prev = s
	}
	return out
}

// stepDoes reports whether any job of res did I/O in direction d.
func stepDoes(res *summary.ResultView, d int) bool {
	for _, g := range res.Groups {
		for k := range g.Jobs {
			if g.Jobs[k].Dirs[d].IOs > 0 {
				return true
			}
		}
	}
	return false
}

// phase is a stretch of a step drawn behind the timeline: the
// preparation (blkdiscard, dropping caches, switching the scheduler),
// the ramp, the measured window.
type phase struct {
	name     string
	from, to float64 // seconds on the chart's time axis
	// label names the step of a measured window by its swept values
	// (scheduler=bfq, numjobs=8 #2 for its second repeat).
	label string
}

// stepTimes places one step on a time axis starting at t0: where its
// measured window starts (its samples' 0) and its phases. A step stored
// without times (imported, or built by hand) starts where the one before
// it ended, at next. The ramp is the step's config's ramp_time (the
// dashboard reads results without their jobs' options), else its
// results'.
func stepTimes(st *summary.StepView, t0 time.Time, next float64, discard bool) (measure float64, phases []phase) {
	var start time.Time
	var ramp, runtime time.Duration
	for _, g := range st.Step.Config.Groups {
		for _, j := range g.Jobs {
			ramp = max(ramp, j.RampTime)
		}
	}
	if st.Result != nil {
		for _, g := range st.Result.Groups {
			for k := range g.Jobs {
				j := &g.Jobs[k]
				if !j.Start.IsZero() && (start.IsZero() || j.Start.Before(start)) {
					start = j.Start
				}
				ramp, runtime = max(ramp, j.Job.RampTime), max(runtime, j.Runtime)
			}
		}
	}
	if start.IsZero() || t0.IsZero() {
		measure = next + ramp.Seconds()
	} else {
		measure = start.Sub(t0).Seconds()
	}
	rampAt := measure - ramp.Seconds()
	prep := "prepare"
	if discard {
		prep = "discard"
	}
	if !st.Start.IsZero() && !t0.IsZero() {
		if from := st.Start.Sub(t0).Seconds(); from < rampAt {
			phases = append(phases, phase{name: prep, from: from, to: rampAt})
		}
	}
	if ramp > 0 {
		phases = append(phases, phase{name: "ramp", from: rampAt, to: measure})
	}
	phases = append(phases, phase{name: "measure", from: measure, to: measure + runtime.Seconds(), label: stepLabel(st)})
	return measure, phases
}

// stepLabel names a step on a timeline by its swept values, and its
// repeat after the first: "scheduler=bfq", "numjobs=8 #2"; "step 3" when
// it sweeps nothing.
func stepLabel(st *summary.StepView) string {
	label := axesText(st.Step.Axes)
	if label == "" {
		label = "step " + strconv.Itoa(st.Step.Seq+1)
	}
	if st.Step.Repeat > 0 {
		label += " #" + strconv.Itoa(st.Step.Repeat+1)
	}
	return label
}

// placeStep is stepTimes, with the step's measurement at 0 when it is
// drawn alone.
func placeStep(st *summary.StepView, t0 time.Time, next float64, discard, alone bool) (measure float64, phases []phase) {
	measure, phases = stepTimes(st, t0, next, discard)
	if alone {
		for k := range phases {
			phases[k].from -= measure
			phases[k].to -= measure
		}
		measure = 0
	}
	return measure, phases
}

// phaseColors shade the phases behind the lines.
var phaseColors = map[string]string{"discard": "rgba(213,94,0,0.14)", "prepare": "rgba(120,120,120,0.12)", "ramp": "rgba(86,180,233,0.18)",
	"steady": "rgba(0,158,115,0.13)"}

// timeAxis is a timeline's x axis, ending where the data does.
func timeAxis(name string) opts.XAxis {
	x := xAxisOpts(name, "value")
	x.Max = "dataMax"
	return x
}

// buildTimeline draws the IOPS of each interval of one step (1-based), or
// of every step of the run one after the other on one time axis (step
// 0), in each run compared, with each step's phases shaded behind.
func buildTimeline(q Query, runs []*runView) (*Chart, error) {
	stepsOf, err := timelineSteps(q, runs)
	if err != nil {
		return nil, err
	}
	all := slices.Concat(stepsOf...)
	dirs := timelineDirs(q, all)
	c, how := timelineChart(q, runs, stepsOf, dirs)
	t := newTimelineDrawing(q, c, dirs, all, len(runs))
	for i, r := range runs {
		t.drawRun(i, r, stepsOf[i])
	}
	how = t.finish(how)
	c.File = fileName(Timeline, runs)
	xName := "time since the run's first step (s)"
	if q.Step > 0 {
		c.File += "-step" + strconv.Itoa(q.Step)
		xName = "time since the measurement began (s)"
	}
	x := timeAxis(xName)
	if len(t.areas) > 0 && t.areas[0].from < 0 {
		x.Min = math.Floor(t.areas[0].from*10) / 10 // a step's discard and ramp come before its 0
	}
	t.line.SetGlobalOptions(plotOptions(c.Title, subtitle(runs, nil, how), "axis",
		x, opts.YAxis{Name: "IOPS", Type: "value", SplitLine: splitLine()})...)
	raw, err := optionJSON(t.line)
	if err != nil {
		return nil, err
	}
	if raw, err = splicePoints(raw, t.line, t.drawn); err != nil {
		return nil, err
	}
	c.Option, err = withPhases(raw, t.areas, len(all) <= 12)
	return c, err
}

// timelineSteps are the steps a timeline draws of each run: step q.Step,
// or every step for 0.
func timelineSteps(q Query, runs []*runView) ([][]*summary.StepView, error) {
	stepsOf := make([][]*summary.StepView, len(runs))
	for i, r := range runs {
		if q.Step == 0 {
			for k := range r.steps {
				stepsOf[i] = append(stepsOf[i], &r.steps[k])
			}
			continue
		}
		k := slices.IndexFunc(r.steps, func(s summary.StepView) bool { return s.Step.Seq == q.Step-1 })
		if k < 0 {
			if len(r.steps) == 0 {
				return nil, queryError("step", "%s has no steps yet", r.label)
			}
			return nil, queryError("step", "%s has no step %d; its steps are 1 to %d", r.label, q.Step, r.steps[len(r.steps)-1].Step.Seq+1)
		}
		stepsOf[i] = []*summary.StepView{&r.steps[k]}
	}
	return stepsOf, nil
}

// timelineDirs are the directions a timeline draws: the one asked for,
// else those with any I/O in the steps drawn, else both.
func timelineDirs(q Query, all []*summary.StepView) []int {
	if d := q.dirIndex(); d >= 0 {
		return []int{d}
	}
	var dirs []int
	for d := range len(dirNames) {
		if slices.ContainsFunc(all, func(st *summary.StepView) bool { return done(st) && stepDoes(st.Result, d) }) {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		dirs = []int{bench.Read, bench.Write}
	}
	return dirs
}

// dirNames name the directions in a timeline's series and columns.
var dirNames = [bench.Trim + 1]string{"read", "write", "trim"}

// timelineChart is a timeline's chart before it is drawn: its title,
// step picker and table columns, and how (the subtitle's account of
// what is drawn) so far.
func timelineChart(q Query, runs []*runView, stepsOf [][]*summary.StepView, dirs []int) (c *Chart, how string) {
	c = &Chart{Title: "IOPS over time, every step", Format: Format{Tooltip: "time", X: "s", Y: "iops"}}
	how = "shaded: discard (or preparation) in orange, ramp in blue"
	if q.Step > 0 {
		c.Title = fmt.Sprintf("IOPS over time, step %d", q.Step)
		if len(runs) == 1 {
			st := &stepsOf[0][0].Step
			if len(st.Axes) > 0 {
				how = axesText(st.Axes) + " · " + how
			}
			how = fmt.Sprintf("repeat %d · %s", st.Repeat+1, how)
			if s := summary.StatusOf(stepsOf[0][0]); s != sweep.StepDone {
				how = s + " · " + how
			}
		}
	}
	if p := timelineStepPicker(q, runs); len(p.Options) > 2 {
		c.Pickers = []Picker{p}
	}
	if len(runs) > 1 {
		c.Columns = append(c.Columns, "run")
	}
	if q.Step == 0 {
		c.Columns = append(c.Columns, "step")
	}
	c.Columns = append(c.Columns, "job", "time_s")
	if q.Step == 0 {
		c.Columns = append(c.Columns, "run_time_s")
	}
	for _, d := range dirs {
		c.Columns = append(c.Columns, dirNames[d]+"_iops")
	}
	return c, how
}

// timelineStepPicker picks every step or one of the first run's.
func timelineStepPicker(q Query, runs []*runView) Picker {
	p := Picker{Param: "step", Label: "step", Single: true,
		Options: []PickerOption{{Value: "", Label: "every step, one after the other", On: q.Step == 0}}}
	if len(runs) > 0 {
		for _, st := range runs[0].steps {
			label := fmt.Sprintf("%d · %s repeat %d", st.Step.Seq+1, axesText(st.Step.Axes), st.Step.Repeat+1)
			p.Options = append(p.Options, PickerOption{Value: strconv.Itoa(st.Step.Seq + 1), Label: label, On: st.Step.Seq+1 == q.Step})
		}
	}
	return p
}

// timelineDrawing is what a timeline gathers as it draws each run's
// steps: the series, the table's rows, the phases and steady-state
// windows shaded behind, and what the subtitle says of the samples.
type timelineDrawing struct {
	q    Query
	c    *Chart
	dirs []int
	runs int // how many runs are drawn: with several, rows and series name theirs
	line *echarts.Line
	// hint is the intervals of every step drawn: room for all at once (a
	// whole run's are tens of thousands, and growing the slices one by
	// one cost more than drawing them).
	hint     int
	cells    []string // the rows' cells, in one allocation
	every    time.Duration
	fromLogs bool // the last step drawn is drawn from its IOPS logs
	areas    []phase
	steady   []steadyMark // steady-state windows (timeline_steady.go), one run drawn
	drawn    []*points    // each series' data, spliced in after the rest is encoded
}

func newTimelineDrawing(q Query, c *Chart, dirs []int, all []*summary.StepView, runs int) *timelineDrawing {
	t := &timelineDrawing{q: q, c: c, dirs: dirs, runs: runs, line: echarts.NewLine()}
	for _, st := range all {
		if st.Result != nil && len(st.Result.Groups) > 0 && len(st.Result.Groups[0].Jobs) > 0 {
			t.hint += len(st.Result.Groups[0].Jobs[0].Samples) + 1
		}
	}
	if !q.noTable {
		c.Rows = make([][]string, 0, t.hint)
		t.cells = make([]string, 0, t.hint*len(c.Columns))
	}
	return t
}

// drawRun draws run r (the i-th) over steps, one after the other on the
// time axis, as a series per direction; the first run's phases are
// shaded.
func (t *timelineDrawing) drawRun(i int, r *runView, steps []*summary.StepView) {
	data := make([]points, len(t.dirs))
	for k := range data {
		data[k].grow(t.hint)
	}
	var t0 time.Time
	next := 0.0
	for _, st := range steps {
		if t0.IsZero() && !st.Start.IsZero() {
			t0 = st.Start
		}
		measure, phases := placeStep(st, t0, next, r.plan.Discard, t.q.Step > 0)
		if i == 0 {
			t.areas = append(t.areas, phases...)
		}
		if s := steadyOf(st.Result); s != nil && t.runs == 1 && done(st) {
			m := markSteady(s, measure)
			t.areas = append(t.areas, m.area)
			t.steady = append(t.steady, m)
		}
		ivs := t.intervals(st)
		next = phases[len(phases)-1].to
		for _, iv := range ivs {
			at := measure + iv.at.Seconds()
			for k, d := range t.dirs {
				data[k].add(st.Step.Seq+1, at, iv.iops[d])
			}
			if !t.q.noTable {
				t.addRow(r, st, iv, at)
			}
		}
		// A gap between steps breaks the line.
		for k := range t.dirs {
			data[k].gap()
		}
	}
	for k, d := range t.dirs {
		name := dirNames[d]
		if t.runs > 1 {
			name = r.name + " " + name
		}
		color := palette[(2*i+k)%len(palette)]
		few := data[k].len() <= 40
		t.line.AddSeries(name, nil, lineStyle(color, 0, 0, few)...)
		t.line.MultiSeries[len(t.line.MultiSeries)-1].Data = data[k].placeholder(len(t.drawn))
		t.drawn = append(t.drawn, &data[k])
	}
}

// intervals are a finished step's IOPS per interval, from its IOPS logs
// when they can be drawn; a step that did not finish has none.
func (t *timelineDrawing) intervals(st *summary.StepView) []interval {
	if !done(st) {
		return nil
	}
	var w time.Duration
	w, t.fromLogs = logWindow(st.Result)
	ivs := stepIntervals(st.Result, t.fromLogs)
	if !t.fromLogs {
		w = stepInterval(st.Result)
	}
	t.every = cmp.Or(t.every, w)
	return ivs
}

// addRow adds the table's row of interval iv of step st of run r, which
// the time axis places at at.
func (t *timelineDrawing) addRow(r *runView, st *summary.StepView, iv interval, at float64) {
	c := t.c
	if cap(t.cells)-len(t.cells) < len(c.Columns) {
		t.cells = make([]string, 0, max(t.hint, 1)*len(c.Columns))
	}
	row := t.cells[len(t.cells):len(t.cells)]
	if t.runs > 1 {
		row = append(row, strconv.FormatInt(r.id, 10))
	}
	if t.q.Step == 0 {
		row = append(row, strconv.Itoa(st.Step.Seq+1))
	}
	row = append(row, r.job, num(iv.at.Seconds()))
	if t.q.Step == 0 {
		row = append(row, num(at))
	}
	for _, d := range t.dirs {
		row = append(row, num(iv.iops[d]))
	}
	t.cells = t.cells[:len(t.cells)+len(row)]
	c.Rows = append(c.Rows, row[:len(row):len(row)])
}

// finish adds the steady-state windows to the drawing, and to how what
// the drawing adds to it: those windows, the sampling interval and
// whether the IOPS logs were drawn.
func (t *timelineDrawing) finish(how string) string {
	if len(t.steady) > 0 {
		addSteady(t.line, t.steady)
		if len(t.steady) == 1 {
			how = t.steady[0].text + " (window shaded green) · " + how
		} else {
			how = "steady-state windows shaded green · " + how
		}
	}
	if t.every > 0 {
		how = "samples every " + units.Nanos(float64(t.every)) + " · " + how
		if t.fromLogs {
			how = "from the jobs' IOPS logs (write_iops_log) · " + how
		}
	}
	return how
}

// stepInterval is the sampling interval of a step's jobs (a step drawn
// from its logs: logWindow's).
func stepInterval(res *summary.ResultView) time.Duration {
	for _, g := range res.Groups {
		for k := range g.Jobs {
			if g.Jobs[k].Interval > 0 {
				return g.Jobs[k].Interval
			}
		}
	}
	return 0
}

// withPhases adds the phases to a timeline's option as shaded areas
// behind the first series, named when there are few enough to read, and
// each measured window's step as a line where it begins, labelled along
// it (stepMarks).
func withPhases(raw json.RawMessage, phases []phase, named bool) (json.RawMessage, error) {
	if len(phases) == 0 {
		return raw, nil
	}
	lo, hi := phases[0].from, phases[0].to
	for _, p := range phases {
		lo, hi = min(lo, p.from), max(hi, p.to)
	}
	var data []any
	for _, p := range phases {
		if p.to <= p.from || phaseColors[p.name] == "" {
			continue // the measurement is the lines themselves
		}
		from := map[string]any{"xAxis": p.from, "itemStyle": map[string]any{"color": phaseColors[p.name]}}
		if named {
			// Across the area where it fits, else along it, else (a
			// sliver) left to the subtitle's account of the colours.
			switch w := (p.to - p.from) / (hi - lo) * plotWidth; {
			case w >= 7*float64(len(p.name))+8:
				from["name"] = p.name
			case w >= 13:
				from["name"] = p.name
				from["label"] = map[string]any{"rotate": 90, "align": "left", "verticalAlign": "middle", "position": "insideBottom", "distance": 4}
			}
		}
		data = append(data, []any{from, map[string]any{"xAxis": p.to}})
	}
	area, err := json.Marshal(map[string]any{"silent": true, "data": data,
		"label": map[string]any{"position": "insideBottom", "color": "#555", "fontSize": 11}})
	if err != nil {
		return nil, err
	}
	add := []struct {
		key string
		val json.RawMessage
	}{{"markArea", area}}
	if marks := stepMarks(phases); len(marks) > 0 {
		line, err := json.Marshal(map[string]any{"silent": true, "symbol": []string{"none", "none"}, "data": marks,
			"lineStyle": map[string]any{"color": "#9aa3ad", "type": "dotted", "width": 1},
			"label":     map[string]any{"position": "insideEndBottom", "color": "#333", "fontSize": 11}})
		if err != nil {
			return nil, err
		}
		add = append(add, struct {
			key string
			val json.RawMessage
		}{"markLine", line})
	}
	// The option is a whole run's samples (megabytes on a long run): the
	// marks go in as the first series' first members, without decoding
	// the rest. A quote cannot stand unescaped inside a JSON string, so
	// "series":[{ found once is the option's series, and with no marks
	// in the option there are none to clash with.
	if i := bytes.Index(raw, seriesStart); i >= 0 && bytes.Count(raw, seriesStart) == 1 && !bytes.Contains(raw, []byte(`"markArea"`)) &&
		!bytes.Contains(raw, []byte(`"markLine"`)) {
		at := i + len(seriesStart)
		out := make([]byte, 0, len(raw)+len(area)+4096)
		out = append(out, raw[:at]...)
		for k, m := range add {
			if k > 0 {
				out = append(out, ',')
			}
			out = append(out, `"`+m.key+`":`...)
			out = append(out, m.val...)
		}
		if raw[at] != '}' {
			out = append(out, ',')
		}
		return append(out, raw[at:]...), nil
	}
	// Else the slow way: decode what is needed.
	var opt map[string]json.RawMessage
	if err := json.Unmarshal(raw, &opt); err != nil {
		return nil, fmt.Errorf("chart: timeline phases: %w", err)
	}
	var series []json.RawMessage
	if s, ok := opt["series"]; ok {
		if err := json.Unmarshal(s, &series); err != nil {
			return nil, fmt.Errorf("chart: timeline phases: %w", err)
		}
	}
	if len(series) == 0 {
		return raw, nil
	}
	var first map[string]json.RawMessage
	if err := json.Unmarshal(series[0], &first); err != nil {
		return nil, fmt.Errorf("chart: timeline phases: %w", err)
	}
	for _, m := range add {
		first[m.key] = m.val
	}
	if series[0], err = json.Marshal(first); err != nil {
		return nil, err
	}
	if opt["series"], err = json.Marshal(series); err != nil {
		return nil, err
	}
	return json.Marshal(opt)
}

// plotWidth is about how wide a timeline's plot is drawn (px): a page's
// chart is 1000–1300 px wide, a report's figure 960.
const plotWidth = 1000

// mostStepLabels is how many steps a timeline labels each: beyond, a
// step is labelled only where the swept values change (its first
// repeat), so that the labels stay apart.
const mostStepLabels = 24

// stepMarks are the markLine data of the labelled measured windows among
// phases: a vertical line where each begins, its step's label along it.
func stepMarks(phases []phase) []any {
	n := 0
	for _, p := range phases {
		if p.label != "" {
			n++
		}
	}
	var marks []any
	last := ""
	for _, p := range phases {
		if p.label == "" {
			continue
		}
		values, _, _ := strings.Cut(p.label, " #")
		if n > mostStepLabels && values == last {
			continue
		}
		last = values
		marks = append(marks, map[string]any{"xAxis": p.from, "label": map[string]any{"formatter": p.label}})
	}
	return marks
}

var seriesStart = []byte(`"series":[{`)
