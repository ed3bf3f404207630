package chart

import (
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
// lined up interval by interval, as bench.JobResult.Merge lines up
// samples, up to the shortest job; a job without samples (one that ended
// within its first interval) has nothing to add.
func stepIntervals(res *bench.Result) []interval {
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
func jobIntervals(r *bench.JobResult) []interval {
	var out []interval
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
func stepTimes(st *sweep.StepResult, t0 time.Time, next float64, discard bool) (measure float64, phases []phase) {
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

// phaseColors shade the phases behind the lines.
var phaseColors = map[string]string{"discard": "rgba(213,94,0,0.14)", "prepare": "rgba(120,120,120,0.12)", "ramp": "rgba(86,180,233,0.18)"}

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
	stepsOf := make([][]*sweep.StepResult, len(runs))
	for i, r := range runs {
		if q.Step == 0 {
			for k := range r.steps {
				stepsOf[i] = append(stepsOf[i], &r.steps[k])
			}
			continue
		}
		k := slices.IndexFunc(r.steps, func(s sweep.StepResult) bool { return s.Step.Seq == q.Step-1 })
		if k < 0 {
			if len(r.steps) == 0 {
				return nil, queryError("step", "%s has no steps yet", r.label)
			}
			return nil, queryError("step", "%s has no step %d; its steps are 1 to %d", r.label, q.Step, r.steps[len(r.steps)-1].Step.Seq+1)
		}
		stepsOf[i] = []*sweep.StepResult{&r.steps[k]}
	}
	all := slices.Concat(stepsOf...)

	// Which directions: the one asked for, else those with any I/O.
	var dirs []int
	if d := q.dirIndex(); d >= 0 {
		dirs = []int{d}
	} else {
		for d := range 2 {
			if slices.ContainsFunc(all, func(st *sweep.StepResult) bool { return done(st) && stepDoes(st.Result, d) }) {
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
			if s := summary.StepStatus(stepsOf[0][0]); s != sweep.StepDone {
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
	var areas []phase
	for i, r := range runs {
		data := make([][]item, len(dirs))
		var t0 time.Time
		next := 0.0
		for _, st := range stepsOf[i] {
			if t0.IsZero() && !st.Start.IsZero() {
				t0 = st.Start
			}
			measure, phases := stepTimes(st, t0, next, r.plan.Discard)
			if q.Step > 0 {
				for k := range phases {
					phases[k].from -= measure
					phases[k].to -= measure
				}
				measure = 0
			}
			if i == 0 {
				areas = append(areas, phases...)
			}
			var ivs []interval
			if done(st) {
				ivs = stepIntervals(st.Result)
				every = cmp.Or(every, stepInterval(st.Result))
			}
			next = phases[len(phases)-1].to
			for _, iv := range ivs {
				var row []string
				if len(runs) > 1 {
					row = append(row, strconv.FormatInt(r.id, 10))
				}
				if q.Step == 0 {
					row = append(row, strconv.Itoa(st.Step.Seq+1))
				}
				t := iv.at.Seconds()
				row = append(row, r.job, num(t))
				at := measure + t
				if q.Step == 0 {
					row = append(row, num(at))
				}
				for k, d := range dirs {
					data[k] = append(data[k], item{Value: []float64{at, iv.iops[d]}, Name: "step " + strconv.Itoa(st.Step.Seq+1)})
					row = append(row, num(iv.iops[d]))
				}
				c.Rows = append(c.Rows, row)
			}
			// A gap between steps breaks the line.
			for k := range dirs {
				if n := len(data[k]); n > 0 && data[k][n-1].Value != missing {
					data[k] = append(data[k], item{Value: missing})
				}
			}
		}
		for k, d := range dirs {
			name := dirName[d]
			if len(runs) > 1 {
				name = r.label + " " + name
			}
			color := palette[(2*i+k)%len(palette)]
			few := len(data[k]) <= 40
			line.AddSeries(name, nil, lineStyle(color, 0, 0, few)...)
			setData(line.MultiSeries, data[k])
		}
	}
	if every > 0 {
		how = "samples every " + units.Nanos(float64(every)) + " · " + how
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
	c.Option, err = withPhases(raw, areas, len(all) <= 12)
	return c, err
}

// stepInterval is the sampling interval of a step's jobs.
func stepInterval(res *bench.Result) time.Duration {
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
	var opt map[string]any
	if err := json.Unmarshal(raw, &opt); err != nil {
		return nil, fmt.Errorf("chart: timeline phases: %w", err)
	}
	series, _ := opt["series"].([]any)
	if len(series) == 0 || len(phases) == 0 {
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
	first := series[0].(map[string]any)
	first["markArea"] = map[string]any{"silent": true, "data": data,
		"label": map[string]any{"position": "insideTop", "color": "#666", "fontSize": 11}}
	return json.Marshal(opt)
}
