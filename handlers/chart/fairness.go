package chart

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"iolab/bench/hist"
	"iolab/bench/stats"
	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/bench/units"
)

// Fairness is each job's clat p50, p99 and bandwidth per scheduler.
const Fairness Kind = "fairness"

// fairnessAvailable: every run sweeps schedulers and runs more than one
// job per step.
func fairnessAvailable(runs []*runView) bool {
	return every(runs, func(r *runView) bool { return r.sweeps(sweep.AxisScheduler) && len(r.src.Jobs()) > 1 })
}

// jobClat is the p50 and p99 clat (µs) of job in each done step, its
// clones' histograms merged, in direction d (both when d < 0).
func jobClat(steps []summary.Step, job string, d int) (p50, p99 []float64) {
	for i := range steps {
		if !done(&steps[i]) {
			continue
		}
		h := new(hist.Histogram)
		for _, g := range steps[i].Result.Groups {
			for k := range g.Jobs {
				if g.Jobs[k].Name != job {
					continue
				}
				for dd := range 2 {
					if d < 0 || d == dd {
						g.Jobs[k].Dirs[dd].Clat.Hist.AddTo(h)
					}
				}
			}
		}
		if h.N() == 0 {
			continue
		}
		ps := h.Percentiles([]float64{50, 99})
		p50, p99 = append(p50, float64(ps[0])/1000), append(p99, float64(ps[1])/1000)
	}
	return p50, p99
}

// change is v's change from base in percent; NaN without a base.
func change(v, base float64) float64 {
	if base == 0 || math.IsNaN(base) || math.IsNaN(v) {
		return math.NaN()
	}
	return 100 * (v - base) / base
}

// buildFairness draws, per scheduler (per combination of the swept axes),
// each job's clat p50 and p99 above and its bandwidth below, medians with
// whiskers min–max over repeats, each labelled with its change from the
// first scheduler: the fairness write-up, where a background writer and
// a foreground reader share a disk. Both plots are logarithmic, so a 4 KiB
// reader's bandwidth shows beside a 1 MiB writer's.
func buildFairness(q Query, runs []*runView) (*Chart, error) {
	l := newLayout(q, runs, "")
	g := gridOf(l, runs)
	col, dirTitle := dirPrefix(q)
	c := &Chart{Title: dirTitle + "Per-job latency and bandwidth", Format: Format{Tooltip: "bars"}}
	if l.series == sweep.AxisScheduler {
		c.Title += " per scheduler"
	}
	c.Columns = append(l.columns(false), "job", "repeats", "failed",
		col+"clat_p50_min_us", col+"clat_p50_median_us", col+"clat_p50_max_us",
		col+"clat_p99_min_us", col+"clat_p99_median_us", col+"clat_p99_max_us",
		col+"lat_mean_min_us", col+"lat_mean_median_us", col+"lat_mean_max_us",
		col+"bw_min_mib_s", col+"bw_median_mib_s", col+"bw_max_mib_s",
		col+"clat_p99_change_pct", col+"bw_change_pct")

	const mib = 1 << 20
	cats := make([]string, len(g.series))
	var jobs []string
	// figures are one job's in one category: p50, p99 and bandwidth.
	type figures struct {
		ok           bool
		n            int
		p50, p99, bw stats.Spread
	}
	points := map[string][]figures{} // by job, by category
	for i, s := range g.series {
		cats[i] = cmp.Or(s.name, s.run.label)
		var steps []summary.Step
		for _, cell := range s.cells {
			steps = append(steps, cell.steps...)
		}
		slices.SortFunc(steps, func(a, b summary.Step) int { return cmp.Compare(a.Step.Seq, b.Step.Seq) })
		for _, js := range summary.SummarizeSteps(s.run.plan, dirSteps(steps, q.dirIndex())) {
			if js.Total {
				continue // each job, side by side: the chart is about their difference
			}
			if !slices.Contains(jobs, js.Job) {
				jobs = append(jobs, js.Job)
			}
			if points[js.Job] == nil {
				points[js.Job] = make([]figures, len(g.series))
			}
			row := append(l.row(s.run, "", s.group, false), js.Job, strconv.Itoa(js.Repeats), strconv.Itoa(js.Failed))
			if js.Repeats == 0 {
				c.Rows = append(c.Rows, append(row, make([]string, 14)...))
				continue
			}
			p50, p99 := jobClat(steps, js.Job, q.dirIndex())
			f := figures{ok: true, n: js.Repeats, p50: stats.SpreadOf(p50), p99: stats.SpreadOf(p99), bw: js.BW.Scale(1.0 / mib)}
			points[js.Job][i] = f
			lat := js.LatMean.Scale(1e-3)
			row = append(row, num(f.p50.Min), num(f.p50.Median), num(f.p50.Max), num(f.p99.Min), num(f.p99.Median), num(f.p99.Max),
				num(lat.Min), num(lat.Median), num(lat.Max), num(f.bw.Min), num(f.bw.Median), num(f.bw.Max), "", "")
			c.Rows = append(c.Rows, row)
		}
	}
	// The changes from the first category, at the end of each row.
	for _, row := range c.Rows {
		if len(row) < len(c.Columns) {
			continue
		}
		job := row[len(l.columns(false))]
		base := points[job][0]
		i := slices.IndexFunc(g.series, func(s *series) bool {
			return slices.Equal(l.row(s.run, "", s.group, false), row[:len(l.columns(false))])
		})
		if i < 0 || !base.ok || !points[job][i].ok {
			continue
		}
		f := points[job][i]
		if v := change(f.p99.Median, base.p99.Median); !math.IsNaN(v) {
			row[len(row)-2] = num(v)
		}
		if v := change(f.bw.Median, base.bw.Median); !math.IsNaN(v) {
			row[len(row)-1] = num(v)
		}
	}

	// Bars on a log axis rise from 1: a bandwidth below 1 MiB/s (a 4 KiB
	// reader's) is drawn in KiB/s, so that its bar rises too.
	bwUnit, bwName, bwScale := "mibs", "MiB/s", 1.0
	for _, ps := range points {
		for _, f := range ps {
			if f.ok && f.bw.Min < 1 {
				bwUnit, bwName, bwScale = "kibs", "KiB/s", 1024
			}
		}
	}

	catName := ""
	how := "medians, whiskers min–max over repeats"
	if len(cats) > 1 {
		how += "; labels: change from " + cats[0]
	}
	if l.series == sweep.AxisScheduler {
		catName = string(sweep.AxisScheduler)
	}
	bar := echarts.NewBar()
	bar.SetGlobalOptions(append(globalOptions(c.Title, subtitle(runs, g, how), "item"),
		echarts.WithGridOpts(
			opts.Grid{Top: "72", Height: "34%", Left: "24", Right: "40", ContainLabel: opts.Bool(true)},
			opts.Grid{Top: "58%", Bottom: "64", Left: "24", Right: "40", ContainLabel: opts.Bool(true)},
		),
		echarts.WithXAxisOpts(opts.XAxis{Type: "category", GridIndex: 0}),
		echarts.WithYAxisOpts(opts.YAxis{Name: dirTitle + "clat p50, p99 (µs)", Type: "log", GridIndex: 0, SplitLine: splitLine()}),
	)...)
	bar.ExtendXAxis(opts.XAxis{Type: "category", GridIndex: 1, Data: cats, Name: catName, NameLocation: "middle", NameGap: 30})
	bar.ExtendYAxis(opts.YAxis{Name: dirTitle + "bandwidth (" + bwName + ")", Type: "log", GridIndex: 1, SplitLine: splitLine()})
	bar.SetXAxis(cats)

	// Bars per category: each job's p50 and p99 above, its bandwidth below.
	var extra []map[string]any
	perCat := 2 * len(jobs)
	// The log axes start a decade below the lowest whisker, so that every
	// bar rises from the axis.
	lowest := [2]float64{math.Inf(1), math.Inf(1)}
	for ji, job := range jobs {
		color := colorOf("job " + job)
		if ji < len(palette) {
			color = palette[(ji+4)%len(palette)] // away from the schedulers' own colours
		}
		for k, pick := range []struct {
			name string
			of   func(figures) stats.Spread
			grid int
			unit string
		}{
			{"p50", func(f figures) stats.Spread { return f.p50 }, 0, "us"},
			{"p99", func(f figures) stats.Spread { return f.p99 }, 0, "us"},
			{"bandwidth", func(f figures) stats.Spread { return f.bw.Scale(bwScale) }, 1, bwUnit},
		} {
			data := make([]item, len(cats))
			var whiskers [][]any
			place, count := 2*ji+k, perCat
			if pick.grid == 1 {
				place, count = ji, len(jobs)
			}
			for i, f := range points[job] {
				data[i] = item{Value: missing}
				sp := pick.of(f)
				if !f.ok || !(sp.Median > 0) { // the log axes have no 0
					continue
				}
				data[i] = item{Name: job + " " + pick.name, Value: sp.Median, N: f.n,
					Extra: [][3]any{{"min", sp.Min, pick.unit}, {"max", sp.Max, pick.unit}}}
				data[i].ItemStyle = &itemStyle{Color: color}
				if k == 0 {
					data[i].ItemStyle.Opacity = 0.55
				}
				// Labels: which percentile, and the change from the first
				// category; there, the bandwidth itself.
				var label []string
				if pick.grid == 0 {
					label = append(label, pick.name)
				}
				if v := change(sp.Median, pick.of(points[job][0]).Median); i > 0 && !math.IsNaN(v) {
					label = append(label, units.Percent(v, true))
					data[i].Extra = append(data[i].Extra, [3]any{"vs " + cats[0], v, "pct"})
				} else if pick.grid == 1 {
					label = append(label, units.Number(sp.Median)+" "+bwName)
				}
				lowest[pick.grid] = math.Min(lowest[pick.grid], sp.Min)
				data[i].Label = &opts.Label{Show: opts.Bool(true), Position: "top", Formatter: strings.Join(label, "\n"), FontSize: 10, Color: "#333"}
				whiskers = append(whiskers, []any{i, sp.Min, sp.Max, place, count})
			}
			// One name for the three: the legend toggles a job everywhere.
			bar.AddSeries(job, nil, echarts.WithBarChartOpts(opts.BarChart{XAxisIndex: pick.grid, YAxisIndex: pick.grid, BarGap: barGap, BarCategoryGap: barCategoryGap}),
				echarts.WithItemStyleOpts(opts.ItemStyle{Color: color}))
			setData(bar.MultiSeries, data)
			eb := errorBars(job, whiskers)
			eb["xAxisIndex"], eb["yAxisIndex"] = pick.grid, pick.grid
			extra = append(extra, eb)
		}
	}
	for i, low := range lowest {
		if low > 0 && !math.IsInf(low, 1) {
			bar.YAxisList[i].Min = math.Pow(10, math.Floor(math.Log10(low)))
		}
	}
	raw, err := optionJSON(bar)
	if err != nil {
		return nil, err
	}
	c.Option, err = addSeries(raw, extra)
	return c, err
}
