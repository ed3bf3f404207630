package chart

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"iolab/bench/summary"
	"iolab/bench/sweep"
)

// Fairness is each job's mean latency and bandwidth per scheduler.
const Fairness Kind = "fairness"

// fairnessAvailable: every run sweeps schedulers and runs more than one
// job per step.
func fairnessAvailable(runs []*runView) bool {
	return every(runs, func(r *runView) bool { return r.sweeps(sweep.AxisScheduler) && len(r.src.Jobs()) > 1 })
}

// buildFairness draws, per scheduler (per combination of the swept axes),
// each job's median mean latency above and median bandwidth below, from
// summary.Summarize: the fairness write-up, where a background writer
// and a foreground reader share a disk.
func buildFairness(q Query, runs []*runView) (*Chart, error) {
	l := newLayout(q, runs, "")
	g := gridOf(l, runs)
	col, dirTitle := dirPrefix(q)
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
		for _, js := range summary.Summarize(s.run.plan, dirSteps(steps, q.dirIndex())) {
			if js.Total {
				continue // each job, side by side: the chart is about their difference
			}
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
			lat, bw := js.LatMean.Scale(1e-3), js.BW.Scale(1.0/mib)
			points[js.Job][i] = point{lat.Median, bw.Median}
			c.Rows = append(c.Rows, append(row, num(lat.Min), num(lat.Median), num(lat.Max),
				num(bw.Min), num(bw.Median), num(bw.Max)))
		}
	}

	catName := ""
	if l.series == sweep.AxisScheduler {
		catName = string(sweep.AxisScheduler)
	}
	bar := echarts.NewBar()
	bar.SetGlobalOptions(append(globalOptions(c.Title, describeRuns(runs)+" · medians over repeats",
		fileName(q.Kind, runs), "axis"),
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
			lat[i], bw[i] = opts.BarData{Value: missing}, opts.BarData{Value: missing}
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
