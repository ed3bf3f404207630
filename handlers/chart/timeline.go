package chart

import (
	"fmt"
	"slices"
	"strconv"
	"time"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"iolab/bench"
	"iolab/bench/summary"
	"iolab/bench/sweep"
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

// buildTimeline draws the IOPS of each interval of one step (1-based), in
// each run compared.
func buildTimeline(q Query, runs []*runView) (*Chart, error) {
	if q.Step == 0 {
		last := 1
		for _, r := range runs {
			if n := len(r.steps); n > 0 {
				last = max(last, r.steps[n-1].Step.Seq+1)
			}
		}
		return nil, queryError("step", "the timeline shows one step; add step=N with N from 1 to %d", last)
	}
	steps := make([]*sweep.StepResult, len(runs))
	for i, r := range runs {
		k := slices.IndexFunc(r.steps, func(s sweep.StepResult) bool { return s.Step.Seq == q.Step-1 })
		if k < 0 {
			if len(r.steps) == 0 {
				return nil, queryError("step", "%s has no steps yet", r.label)
			}
			return nil, queryError("step", "%s has no step %d; its steps are 1 to %d", r.label, q.Step, r.steps[len(r.steps)-1].Step.Seq+1)
		}
		steps[i] = &r.steps[k]
	}

	// Which directions: the one asked for, else those with any I/O.
	var dirs []int
	if d := q.dirIndex(); d >= 0 {
		dirs = []int{d}
	} else {
		for d := range 2 {
			if slices.ContainsFunc(steps, func(st *sweep.StepResult) bool { return done(st) && stepDoes(st.Result, d) }) {
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
			subtitle += " · " + axesText(st.Axes)
		}
		subtitle += fmt.Sprintf(" · repeat %d", st.Repeat+1)
		if s := summary.StepStatus(steps[0]); s != sweep.StepDone {
			subtitle += " · " + s
		}
	}
	if len(runs) > 1 {
		c.Columns = append(c.Columns, "run")
	}
	c.Columns = append(c.Columns, "job", "time_s")
	for _, d := range dirs {
		c.Columns = append(c.Columns, dirName[d]+"_iops")
	}

	line := echarts.NewLine()
	line.SetGlobalOptions(plotOptions(c.Title, subtitle, fileName(q.Kind, runs)+"-step"+strconv.Itoa(q.Step), "axis",
		xAxisOpts("time (s)", "value"), opts.YAxis{Name: "IOPS", Type: "value"})...)
	for i, r := range runs {
		var ivs []interval
		if done(steps[i]) {
			ivs = stepIntervals(steps[i].Result)
		}
		data := make([][]opts.LineData, len(dirs))
		for _, iv := range ivs {
			var row []string
			if len(runs) > 1 {
				row = append(row, strconv.FormatInt(r.id, 10))
			}
			row = append(row, r.job)
			t := iv.at.Seconds()
			row = append(row, num(t))
			for k, d := range dirs {
				data[k] = append(data[k], opts.LineData{Value: []float64{t, iv.iops[d]}})
				row = append(row, num(iv.iops[d]))
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
