package chart

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
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
	iops [2]float64
}

// stepIntervals is the step's IOPS per interval, its results added (the
// clones of the job drawn: see runView.selectJob). Results are
// lined up interval by interval, as summary.Job.Merge lines up
// samples, up to the shortest job; a job without samples (one that ended
// within its first interval) has nothing to add.
// fromLogs: every job's IOPS log can be drawn (logWindow), and is.
func stepIntervals(res *summary.Result, fromLogs bool) []interval {
	if fromLogs {
		return addIntervals(res, logIntervals) // timeline_logs.go
	}
	return addIntervals(res, jobIntervals)
}

// addIntervals adds up the intervals of res's jobs, lined up one by one
// up to the shortest job's.
func addIntervals(res *summary.Result, jobIntervals func(*summary.Job) []interval) []interval {
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
func jobIntervals(r *summary.Job) []interval {
	out := make([]interval, 0, len(r.Samples))
	var prev bench.Sample
	for _, s := range r.Samples {
		dt := (s.At - prev.At).Seconds()
		if dt <= 0 {
			continue
		}
		iv := interval{at: s.At}
		for d := range 2 {
			iv.iops[d] = float64(s.IOs[d]-prev.IOs[d]) / dt
		}
		out = append(out, iv)
		prev = s
	}
	return out
}

// stepDoes reports whether any job of res did I/O in direction d.
func stepDoes(res *summary.Result, d int) bool {
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
}

// stepTimes places one step on a time axis starting at t0: where its
// measured window starts (its samples' 0) and its phases. A step stored
// without times (imported, or built by hand) starts where the one before
// it ended, at next.
func stepTimes(st *summary.Step, t0 time.Time, next float64, discard bool) (measure float64, phases []phase) {
	var start time.Time
	var ramp, runtime time.Duration
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
			phases = append(phases, phase{prep, from, rampAt})
		}
	}
	if ramp > 0 {
		phases = append(phases, phase{"ramp", rampAt, measure})
	}
	phases = append(phases, phase{"measure", measure, measure + runtime.Seconds()})
	return measure, phases
}

// placeStep is stepTimes, with the step's measurement at 0 when it is
// drawn alone.
func placeStep(st *summary.Step, t0 time.Time, next float64, discard, alone bool) (measure float64, phases []phase) {
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
	last := 0
	for _, r := range runs {
		if n := len(r.steps); n > 0 {
			last = max(last, r.steps[n-1].Step.Seq+1)
		}
	}
	stepsOf := make([][]*summary.Step, len(runs))
	for i, r := range runs {
		if q.Step == 0 {
			for k := range r.steps {
				stepsOf[i] = append(stepsOf[i], &r.steps[k])
			}
			continue
		}
		k := slices.IndexFunc(r.steps, func(s summary.Step) bool { return s.Step.Seq == q.Step-1 })
		if k < 0 {
			if len(r.steps) == 0 {
				return nil, queryError("step", "%s has no steps yet", r.label)
			}
			return nil, queryError("step", "%s has no step %d; its steps are 1 to %d", r.label, q.Step, r.steps[len(r.steps)-1].Step.Seq+1)
		}
		stepsOf[i] = []*summary.Step{&r.steps[k]}
	}
	all := slices.Concat(stepsOf...)

	// Which directions: the one asked for, else those with any I/O.
	var dirs []int
	if d := q.dirIndex(); d >= 0 {
		dirs = []int{d}
	} else {
		for d := range 2 {
			if slices.ContainsFunc(all, func(st *summary.Step) bool { return done(st) && stepDoes(st.Result, d) }) {
				dirs = append(dirs, d)
			}
		}
		if len(dirs) == 0 {
			dirs = []int{bench.Read, bench.Write}
		}
	}
	dirName := [2]string{"read", "write"}

	c := &Chart{Title: "IOPS over time, every step", Format: Format{Tooltip: "time", X: "s", Y: "iops"}}
	how := "shaded: discard (or preparation) in orange, ramp in blue"
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
	stepPicker := Picker{Param: "step", Label: "step", Single: true,
		Options: []PickerOption{{Value: "", Label: "every step, one after the other", On: q.Step == 0}}}
	if len(runs) > 0 {
		for _, st := range runs[0].steps {
			label := fmt.Sprintf("%d · %s repeat %d", st.Step.Seq+1, axesText(st.Step.Axes), st.Step.Repeat+1)
			stepPicker.Options = append(stepPicker.Options, PickerOption{Value: strconv.Itoa(st.Step.Seq + 1), Label: label, On: st.Step.Seq+1 == q.Step})
		}
	}
	if len(stepPicker.Options) > 2 {
		c.Pickers = []Picker{stepPicker}
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
		c.Columns = append(c.Columns, dirName[d]+"_iops")
	}

	line := echarts.NewLine()
	xName := "time since the run's first step (s)"
	if q.Step > 0 {
		xName = "time since the measurement began (s)"
	}
	var every time.Duration
	fromLogs := false // the last step drawn is drawn from its IOPS logs
	var areas []phase
	var steady []steadyMark // steady-state windows (timeline_steady.go), one run drawn
	var drawn []*points     // each series' data, spliced in after the rest is encoded
	// Room for every interval at once: a whole run's are tens of
	// thousands, and growing the slices one by one cost more than
	// drawing them.
	hint := 0
	for _, st := range all {
		if st.Result != nil && len(st.Result.Groups) > 0 && len(st.Result.Groups[0].Jobs) > 0 {
			hint += len(st.Result.Groups[0].Jobs[0].Samples) + 1
		}
	}
	var cells []string // the rows' cells, in one allocation
	if !q.noTable {
		c.Rows = make([][]string, 0, hint)
		cells = make([]string, 0, hint*len(c.Columns))
	}
	for i, r := range runs {
		data := make([]points, len(dirs))
		for k := range data {
			data[k].grow(hint)
		}
		var t0 time.Time
		next := 0.0
		for _, st := range stepsOf[i] {
			if t0.IsZero() && !st.Start.IsZero() {
				t0 = st.Start
			}
			measure, phases := placeStep(st, t0, next, r.plan.Discard, q.Step > 0)
			if i == 0 {
				areas = append(areas, phases...)
			}
			if s := steadyOf(st.Result); s != nil && len(runs) == 1 && done(st) {
				m := markSteady(s, measure)
				areas = append(areas, m.area)
				steady = append(steady, m)
			}
			var ivs []interval
			if done(st) {
				var w time.Duration
				w, fromLogs = logWindow(st.Result)
				ivs = stepIntervals(st.Result, fromLogs)
				if !fromLogs {
					w = stepInterval(st.Result)
				}
				every = cmp.Or(every, w)
			}
			next = phases[len(phases)-1].to
			for _, iv := range ivs {
				t := iv.at.Seconds()
				at := measure + t
				for k, d := range dirs {
					data[k].add(st.Step.Seq+1, at, iv.iops[d])
				}
				if q.noTable {
					continue
				}
				if cap(cells)-len(cells) < len(c.Columns) {
					cells = make([]string, 0, max(hint, 1)*len(c.Columns))
				}
				row := cells[len(cells):len(cells)]
				if len(runs) > 1 {
					row = append(row, strconv.FormatInt(r.id, 10))
				}
				if q.Step == 0 {
					row = append(row, strconv.Itoa(st.Step.Seq+1))
				}
				row = append(row, r.job, num(t))
				if q.Step == 0 {
					row = append(row, num(at))
				}
				for _, d := range dirs {
					row = append(row, num(iv.iops[d]))
				}
				cells = cells[:len(cells)+len(row)]
				c.Rows = append(c.Rows, row[:len(row):len(row)])
			}
			// A gap between steps breaks the line.
			for k := range dirs {
				data[k].gap()
			}
		}
		for k, d := range dirs {
			name := dirName[d]
			if len(runs) > 1 {
				name = r.name + " " + name
			}
			color := palette[(2*i+k)%len(palette)]
			few := data[k].len() <= 40
			line.AddSeries(name, nil, lineStyle(color, 0, 0, few)...)
			line.MultiSeries[len(line.MultiSeries)-1].Data = data[k].placeholder(len(drawn))
			drawn = append(drawn, &data[k])
		}
	}
	if len(steady) > 0 {
		addSteady(line, steady)
		if len(steady) == 1 {
			how = steady[0].text + " (window shaded green) · " + how
		} else {
			how = "steady-state windows shaded green · " + how
		}
	}
	if every > 0 {
		how = "samples every " + units.Nanos(float64(every)) + " · " + how
		if fromLogs {
			how = "from the jobs' IOPS logs (write_iops_log) · " + how
		}
	}
	c.File = fileName(Timeline, runs)
	if q.Step > 0 {
		c.File += "-step" + strconv.Itoa(q.Step)
	}
	x := timeAxis(xName)
	if len(areas) > 0 && areas[0].from < 0 {
		x.Min = math.Floor(areas[0].from*10) / 10 // a step's discard and ramp come before its 0
	}
	line.SetGlobalOptions(plotOptions(c.Title, subtitle(runs, nil, how), "axis",
		x, opts.YAxis{Name: "IOPS", Type: "value", SplitLine: splitLine()})...)
	raw, err := optionJSON(line)
	if err != nil {
		return nil, err
	}
	if raw, err = splicePoints(raw, line, drawn); err != nil {
		return nil, err
	}
	c.Option, err = withPhases(raw, areas, len(all) <= 12)
	return c, err
}

// stepInterval is the sampling interval of a step's jobs (a step drawn
// from its logs: logWindow's).
func stepInterval(res *summary.Result) time.Duration {
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
// behind the first series, named when there are few enough to read.
func withPhases(raw json.RawMessage, phases []phase, named bool) (json.RawMessage, error) {
	if len(phases) == 0 {
		return raw, nil
	}
	var data []any
	for _, p := range phases {
		if p.to <= p.from || phaseColors[p.name] == "" {
			continue // the measurement is the lines themselves
		}
		from := map[string]any{"xAxis": p.from, "itemStyle": map[string]any{"color": phaseColors[p.name]}}
		if named {
			from["name"] = p.name
		}
		data = append(data, []any{from, map[string]any{"xAxis": p.to}})
	}
	area, err := json.Marshal(map[string]any{"silent": true, "data": data,
		"label": map[string]any{"position": "insideTop", "color": "#666", "fontSize": 11}})
	if err != nil {
		return nil, err
	}
	// The option is a whole run's samples (megabytes on a long run): the
	// markArea goes in as the first series' first member, without decoding
	// the rest. A quote cannot stand unescaped inside a JSON string, so
	// "series":[{ found once is the option's series, and with no
	// markArea in the option there is none to clash with.
	if i := bytes.Index(raw, seriesStart); i >= 0 && bytes.Count(raw, seriesStart) == 1 && !bytes.Contains(raw, []byte(`"markArea"`)) {
		at := i + len(seriesStart)
		out := make([]byte, 0, len(raw)+len(area)+16)
		out = append(out, raw[:at]...)
		out = append(out, `"markArea":`...)
		out = append(out, area...)
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
	first["markArea"] = area
	if series[0], err = json.Marshal(first); err != nil {
		return nil, err
	}
	if opt["series"], err = json.Marshal(series); err != nil {
		return nil, err
	}
	return json.Marshal(opt)
}

var seriesStart = []byte(`"series":[{`)

// points is a timeline series' data, written as the []item of {Name:
// "step N", Value: [x, y]} for each point, with {Value: "-"} where a step
// ends, would be by encoding/json, but without reflection: a whole run's
// timeline is tens of thousands of points, and encoding them as items
// took most of its build.
type points struct {
	step []int // each point's step (1-based); 0 for the end of a step
	x, y []float64
}

func (p *points) grow(n int) {
	p.step, p.x, p.y = make([]int, 0, n), make([]float64, 0, n), make([]float64, 0, n)
}

func (p *points) add(step int, x, y float64) {
	p.step, p.x, p.y = append(p.step, step), append(p.x, x), append(p.y, y)
}

// gap ends a step: the line breaks there. There is none before the
// first point or after another.
func (p *points) gap() {
	if n := len(p.step); n > 0 && p.step[n-1] != 0 {
		p.add(0, 0, 0)
	}
}

func (p *points) len() int { return len(p.step) }

// MarshalJSON writes the points as encoding/json writes []item, null
// when there are none (a nil slice).
func (p *points) MarshalJSON() ([]byte, error) { return p.appendJSON(nil) }

// placeholder stands for series k's points in the option until
// splicePoints puts them in: encoding/json checks and copies what a
// Marshaler writes, which for a whole run took twice the writing.
func (p *points) placeholder(k int) string { return "\x00iolab points " + strconv.Itoa(k) + "\x00" }

// splicePoints puts each series' points where its placeholder is in
// raw, what line encodes to. When a placeholder is there other than once
// (a run or job named like one), the option is encoded again with the
// points in it.
func splicePoints(raw json.RawMessage, line *echarts.Line, drawn []*points) (json.RawMessage, error) {
	if len(drawn) == 0 {
		return raw, nil
	}
	at := make([]int, len(drawn))
	marks := make([][]byte, len(drawn))
	n := len(raw)
	for k, p := range drawn {
		var err error
		if marks[k], err = json.Marshal(p.placeholder(k)); err != nil {
			return nil, err
		}
		at[k] = bytes.Index(raw, marks[k])
		if bytes.Count(raw, marks[k]) != 1 || k > 0 && at[k] < at[k-1] {
			for k, p := range drawn {
				line.MultiSeries[k].Data = p
			}
			return optionJSON(line)
		}
		n += 40 * p.len()
	}
	out := make([]byte, 0, n)
	last := 0
	for k, p := range drawn {
		out = append(out, raw[last:at[k]]...)
		var err error
		if out, err = p.appendJSON(out); err != nil {
			return nil, err
		}
		last = at[k] + len(marks[k])
	}
	return append(out, raw[last:]...), nil
}

// appendJSON appends the points as MarshalJSON writes them.
func (p *points) appendJSON(b []byte) ([]byte, error) {
	if len(p.step) == 0 {
		return append(b, "null"...), nil
	}
	b = slices.Grow(b, 40*len(p.step))
	b = append(b, '[')
	for i, st := range p.step {
		if i > 0 {
			b = append(b, ',')
		}
		if st == 0 {
			b = append(b, `{"value":"-"}`...)
			continue
		}
		b = append(b, `{"name":"step `...)
		b = strconv.AppendInt(b, int64(st), 10)
		b = append(b, `","value":[`...)
		var err error
		if b, err = appendJSONFloat(b, p.x[i]); err != nil {
			return nil, err
		}
		b = append(b, ',')
		if b, err = appendJSONFloat(b, p.y[i]); err != nil {
			return nil, err
		}
		b = append(b, "]}"...)
	}
	return append(b, ']'), nil
}

// appendJSONFloat writes f as encoding/json writes a float64
// (encoding/json's floatEncoder): the shortest decimal that reads back
// as f, in exponent form below 1e-6 and from 1e21 on; NaN and the
// infinities are an error there and here.
func appendJSONFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fmt.Errorf("chart: timeline: unsupported value %v", f)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// encoding/json writes e-7, not e-07.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}
