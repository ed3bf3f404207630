package chart

import (
	"slices"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"iolab/bench/stats"
	"iolab/bench/summary"
	"iolab/bench/sweep"
)

// MaxIOPS is grouped bars of the best IOPS (the highest median over
// repeats of any step) per kernel × engine.
const MaxIOPS Kind = "maxiops"

// maxIOPSAvailable: some step is done, so some kernel has a best.
func maxIOPSAvailable(runs []*runView) bool {
	return slices.ContainsFunc(runs, func(r *runView) bool {
		return slices.ContainsFunc(r.steps, func(st summary.StepView) bool { return done(&st) })
	})
}

// buildMaxIOPS finds each run's best IOPS per engine, of the job drawn: the median over
// repeats of each combination of the step's axes, the highest over the
// combinations. Bars are grouped by kernel (by "kernel (run N)" when runs
// share a kernel), one series per engine.
func buildMaxIOPS(q Query, runs []*runView) (*Chart, error) {
	kernels := map[string]int{}
	for _, r := range runs {
		kernels[r.run.Kernel]++
	}
	type cell struct{ kernel, engine string }
	best := map[cell]float64{}
	jobOf := map[string]string{} // by kernel category: the job drawn of its run
	bestAt := map[cell]string{}
	var cats, engines []string
	for _, r := range runs {
		kernel := r.run.Kernel
		if kernel == "" {
			kernel = "unknown kernel"
		}
		if kernels[r.run.Kernel] > 1 {
			if r.host != "" {
				kernel += " (" + r.host + ", " + r.label + ")"
			} else {
				kernel += " (" + r.label + ")"
			}
		}
		jobOf[kernel] = r.job
		points := map[string][]float64{}
		pointEngine := map[string]string{}
		var order []string
		for i := range r.steps {
			st := &r.steps[i]
			if !done(st) {
				continue
			}
			iops, _ := st.Result.Totals()
			k := axesText(st.Step.Axes)
			if _, seen := points[k]; !seen {
				order = append(order, k)
				pointEngine[k] = r.value(st.Step.Axes, sweep.AxisEngine)
			}
			points[k] = append(points[k], iops)
		}
		for _, k := range order {
			c := cell{kernel, pointEngine[k]}
			if m := stats.Median(points[k]); m > best[c] {
				best[c], bestAt[c] = m, k
			}
			if !slices.Contains(cats, kernel) {
				cats = append(cats, kernel)
			}
			if e := pointEngine[k]; e != "" && !slices.Contains(engines, e) {
				engines = append(engines, e)
			}
		}
	}
	ch := &Chart{Title: "Max IOPS per kernel × engine", Columns: []string{"kernel", string(sweep.AxisEngine), "job", "max_iops", "at"},
		Format: Format{Tooltip: "bars", Y: "iops", XName: "kernel"}}

	bar := echarts.NewBar()
	bar.SetGlobalOptions(plotOptions(ch.Title, subtitle(runs, nil, "the highest median over repeats of any step"),
		"item", xAxisOpts("kernel", "category"), opts.YAxis{Name: "IOPS", Type: "value", SplitLine: splitLine()})...)
	bar.SetXAxis(cats)
	colours := axisColours(runs, sweep.AxisEngine) // as the page's other charts colour its engines
	for _, e := range engines {
		data := make([]item, len(cats))
		for i, k := range cats {
			data[i] = item{Value: missing}
			if v, ok := best[cell{k, e}]; ok {
				data[i] = item{Value: v, Name: k, Note: "at " + bestAt[cell{k, e}]}
				ch.Rows = append(ch.Rows, []string{k, e, jobOf[k], num(v), bestAt[cell{k, e}]})
			}
		}
		bar.AddSeries(e, nil, echarts.WithItemStyleOpts(opts.ItemStyle{Color: colours.of(e)}))
		setData(bar.MultiSeries, data)
	}
	var err error
	ch.Option, err = optionJSON(bar)
	return ch, err
}
