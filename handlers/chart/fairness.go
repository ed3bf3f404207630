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

// Fairness is each job's latency p50, p99 (of the query's LatKind) and
// bandwidth per scheduler.
const Fairness Kind = "fairness"

// fairnessAvailable: every run sweeps schedulers and runs more than one
// job per step.
func fairnessAvailable(runs []*runView) bool {
	return every(runs, func(r *runView) bool { return r.sweeps(sweep.AxisScheduler) && len(r.src.Jobs()) > 1 })
}

// jobLat is the p50 and p99 latency of kind k (µs) of job in each done
// step, its clones' histograms merged, in direction d (both when d < 0).
func jobLat(steps []summary.StepView, job string, d int, k LatKind) (p50, p99 []float64) {
	for i := range steps {
		if !done(&steps[i]) {
			continue
		}
		h := new(hist.Histogram)
		for _, g := range steps[i].Result.Groups {
			for j := range g.Jobs {
				if g.Jobs[j].Name != job {
					continue
				}
				for dd := range 2 {
					if d < 0 || d == dd {
						k.of(&g.Jobs[j].Dirs[dd]).Hist.AddTo(h)
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

// jobBW is the bandwidth (MiB/s) of job in each done step, in the
// direction the steps keep (dirSteps): one value per repeat, as the
// statistical diff takes them.
func jobBW(steps []summary.StepView, job string) []float64 {
	var out []float64
	for i := range steps {
		if !done(&steps[i]) {
			continue
		}
		for _, j := range summary.FiguresOfStep(&steps[i]).Jobs {
			if !j.Total && j.Name == job {
				out = append(out, j.BWMiB)
			}
		}
	}
	return out
}

// buildFairness draws, per scheduler (per combination of the swept axes),
// each job's latency p50 and p99 (q.Lat's kind) above and its bandwidth below, medians with
// whiskers min–max over repeats, each labelled with its change from the
// first scheduler: the fairness write-up, where a background writer and
// a foreground reader share a disk. Both plots are logarithmic, so a 4 KiB
// reader's bandwidth shows beside a 1 MiB writer's.
func buildFairness(q Query, runs []*runView) (*Chart, error) {
	l := newLayout(q, runs, "")
	g := gridOf(l, runs)
	col, dirTitle := dirPrefix(q)
	q.Lat = latKind(q, runs)
	lc := col + q.Lat.column()
	c := &Chart{Title: dirTitle + "Per-job latency and bandwidth", Format: Format{Tooltip: "bars"},
		Pickers: []Picker{latPicker(q.Lat)}}
	if l.series == sweep.AxisScheduler {
		c.Title += " per scheduler"
	}
	c.Columns = append(l.columns(false), "job", "repeats", "failed",
		lc+"_p50_min_us", lc+"_p50_median_us", lc+"_p50_max_us",
		lc+"_p99_min_us", lc+"_p99_median_us", lc+"_p99_max_us",
		col+"lat_mean_min_us", col+"lat_mean_median_us", col+"lat_mean_max_us",
		col+"bw_min_mib_s", col+"bw_median_mib_s", col+"bw_max_mib_s",
		lc+"_p99_change_pct", col+"bw_change_pct")
	f := fairnessRows(q, l, g, c)
	f.addChanges(c, l, g)

	catName := ""
	how := q.Lat.Title() + " · medians, whiskers min–max over repeats"
	if len(f.cats) > 1 {
		how += "; labels: change from " + f.cats[0] + " (" + string(stats.MedianRatio) + ")"
	}
	if l.series == sweep.AxisScheduler {
		catName = string(sweep.AxisScheduler)
	}
	bw := f.bwUnit()
	bar := echarts.NewBar()
	bar.SetGlobalOptions(append(globalOptions(c.Title, subtitle(runs, g, how), "item"),
		echarts.WithGridOpts(
			opts.Grid{Top: "72", Height: "34%", Left: "24", Right: "40", ContainLabel: opts.Bool(true)},
			opts.Grid{Top: "58%", Bottom: "64", Left: "24", Right: "40", ContainLabel: opts.Bool(true)},
		),
		echarts.WithXAxisOpts(opts.XAxis{Type: "category", GridIndex: 0}),
		echarts.WithYAxisOpts(opts.YAxis{Name: dirTitle + q.Lat.column() + " p50, p99 (µs)", Type: "log", GridIndex: 0, SplitLine: splitLine()}),
	)...)
	bar.ExtendXAxis(opts.XAxis{Type: "category", GridIndex: 1, Data: f.cats, Name: catName, NameLocation: "middle", NameGap: 30})
	bar.ExtendYAxis(opts.YAxis{Name: dirTitle + "bandwidth (" + bw.name + ")", Type: "log", GridIndex: 1, SplitLine: splitLine()})
	bar.SetXAxis(f.cats)
	extra := f.addBars(bar, bw)
	raw, err := optionJSON(bar)
	if err != nil {
		return nil, err
	}
	c.Option, err = addSeries(raw, extra)
	return c, err
}

// fairnessFigures are one job's p50, p99 and bandwidth in one category.
type fairnessFigures struct {
	ok           bool
	n            int
	p50, p99, bw stats.Spread
	// p50s, p99s and bws are the repeats' values, which a change is of.
	p50s, p99s, bws []float64
}

// fairnessData is what a fairness chart draws: its categories (a
// scheduler, or a combination of the swept axes: the grid's series), its
// jobs, and each job's figures by category.
type fairnessData struct {
	cats   []string
	jobs   []string
	points map[string][]fairnessFigures
}

// fairnessRows adds to c a row per job and category, their changes left
// empty (addChanges), and returns the figures drawn.
func fairnessRows(q Query, l *layout, g *grid, c *Chart) *fairnessData {
	const mib = 1 << 20
	f := &fairnessData{cats: make([]string, len(g.series)), points: map[string][]fairnessFigures{}}
	for i, s := range g.series {
		f.cats[i] = cmp.Or(s.name, s.run.label)
		var steps []summary.StepView
		for _, cell := range s.cells {
			steps = append(steps, cell.steps...)
		}
		slices.SortFunc(steps, func(a, b summary.StepView) int { return cmp.Compare(a.Step.Seq, b.Step.Seq) })
		for _, js := range summary.SummarizeSteps(s.run.plan, dirSteps(steps, q.dirIndex())) {
			if js.Total {
				continue // each job, side by side: the chart is about their difference
			}
			if !slices.Contains(f.jobs, js.Job) {
				f.jobs = append(f.jobs, js.Job)
			}
			if f.points[js.Job] == nil {
				f.points[js.Job] = make([]fairnessFigures, len(g.series))
			}
			row := append(l.row(s.run, "", s.group, false), js.Job, strconv.Itoa(js.Repeats), strconv.Itoa(js.Failed))
			if js.Repeats == 0 {
				c.Rows = append(c.Rows, append(row, make([]string, 14)...))
				continue
			}
			p50, p99 := jobLat(steps, js.Job, q.dirIndex(), q.Lat)
			bws := jobBW(dirSteps(steps, q.dirIndex()), js.Job)
			ff := fairnessFigures{ok: true, n: js.Repeats, p50: stats.SpreadOf(p50), p99: stats.SpreadOf(p99), bw: js.BW.Scale(1.0 / mib),
				p50s: p50, p99s: p99, bws: bws}
			f.points[js.Job][i] = ff
			lat := js.LatMean.Scale(1e-3)
			row = append(row, num(ff.p50.Min), num(ff.p50.Median), num(ff.p50.Max), num(ff.p99.Min), num(ff.p99.Median), num(ff.p99.Max),
				num(lat.Min), num(lat.Median), num(lat.Max), num(ff.bw.Min), num(ff.bw.Median), num(ff.bw.Max), "", "")
			c.Rows = append(c.Rows, row)
		}
	}
	return f
}

// addChanges writes, at the end of each of c's rows, the change of the
// job's p99 and bandwidth from the first category's (stats.ChangeOf: the
// ratio of the medians over the repeats, as every surface gives it).
func (f *fairnessData) addChanges(c *Chart, l *layout, g *grid) {
	for _, row := range c.Rows {
		if len(row) < len(c.Columns) {
			continue
		}
		job := row[len(l.columns(false))]
		base := f.points[job][0]
		i := slices.IndexFunc(g.series, func(s *series) bool {
			return slices.Equal(l.row(s.run, "", s.group, false), row[:len(l.columns(false))])
		})
		if i < 0 || !base.ok || !f.points[job][i].ok {
			continue
		}
		ff := f.points[job][i]
		if ch := stats.ChangeOf(base.p99s, ff.p99s, summary.DiffConf); !math.IsNaN(ch.Rel) {
			row[len(row)-2] = num(ch.Percent())
		}
		if ch := stats.ChangeOf(base.bws, ff.bws, summary.DiffConf); !math.IsNaN(ch.Rel) {
			row[len(row)-1] = num(ch.Percent())
		}
	}
}

// bandwidthUnit is the unit a fairness chart draws bandwidth in: its
// name in the extras (unit) and on the axis (name), and the scale from
// MiB/s.
type bandwidthUnit struct {
	unit, name string
	scale      float64
}

// bwUnit is MiB/s, or KiB/s when a bandwidth is below 1 MiB/s (a 4 KiB
// reader's): bars on a log axis rise from 1, so that its bar rises too.
func (f *fairnessData) bwUnit() bandwidthUnit {
	for _, ps := range f.points {
		for _, ff := range ps {
			if ff.ok && ff.bw.Min < 1 {
				return bandwidthUnit{"kibs", "KiB/s", 1024}
			}
		}
	}
	return bandwidthUnit{"mibs", "MiB/s", 1}
}

// fairnessPick is one of the three bars of a job in a category.
type fairnessPick struct {
	name string
	of   func(fairnessFigures) stats.Spread
	// values are the repeats' values a change is of.
	values func(fairnessFigures) []float64
	grid   int
	unit   string
}

// addBars adds to bar, per category, each job's p50 and p99 above and its
// bandwidth below, and returns their whiskers (series to add to the
// option); the log axes start a decade below the lowest whisker, so that
// every bar rises from the axis.
func (f *fairnessData) addBars(bar *echarts.Bar, bw bandwidthUnit) []map[string]any {
	var extra []map[string]any
	lowest := [2]float64{math.Inf(1), math.Inf(1)}
	for ji, job := range f.jobs {
		color := colorOf("job " + job)
		if ji < len(palette) {
			color = palette[(ji+4)%len(palette)] // away from the schedulers' own colours
		}
		for k, pick := range []fairnessPick{
			{"p50", func(f fairnessFigures) stats.Spread { return f.p50 }, func(f fairnessFigures) []float64 { return f.p50s }, 0, "us"},
			{"p99", func(f fairnessFigures) stats.Spread { return f.p99 }, func(f fairnessFigures) []float64 { return f.p99s }, 0, "us"},
			{"bandwidth", func(f fairnessFigures) stats.Spread { return f.bw.Scale(bw.scale) }, func(f fairnessFigures) []float64 { return f.bws }, 1, bw.unit},
		} {
			place, count := 2*ji+k, 2*len(f.jobs)
			if pick.grid == 1 {
				place, count = ji, len(f.jobs)
			}
			data, whiskers := f.bars(job, pick, k == 0, color, bw, place, count, &lowest[pick.grid])
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
	return extra
}

// change is job's change of pick in category i from the first category
// (stats.ChangeOf); NaN for the first or a side without values.
func (f *fairnessData) change(job string, pick fairnessPick, i int) stats.Change {
	base, ff := f.points[job][0], f.points[job][i]
	if i == 0 || !base.ok || !ff.ok {
		return stats.Change{Rel: math.NaN()}
	}
	return stats.ChangeOf(pick.values(base), pick.values(ff), summary.DiffConf)
}

// bars are job's bars of pick in each category, labelled with the
// percentile and the change from the first category (there, the
// bandwidth itself), and their whiskers, each at place of count bars in
// its category; lowest is lowered to the lowest whisker. p50's bars
// (faint) are paler than p99's.
func (f *fairnessData) bars(job string, pick fairnessPick, faint bool, color string, bw bandwidthUnit, place, count int, lowest *float64) ([]item, [][]any) {
	data := make([]item, len(f.cats))
	var whiskers [][]any
	for i, ff := range f.points[job] {
		data[i] = item{Value: missing}
		sp := pick.of(ff)
		if !ff.ok || !(sp.Median > 0) { // the log axes have no 0
			continue
		}
		data[i] = item{Name: job + " " + pick.name, Value: sp.Median, N: ff.n,
			Extra: [][3]any{{"min", sp.Min, pick.unit}, {"max", sp.Max, pick.unit}}}
		data[i].ItemStyle = &itemStyle{Color: color}
		if faint {
			data[i].ItemStyle.Opacity = 0.55
		}
		var label []string
		if pick.grid == 0 {
			label = append(label, pick.name)
		}
		if ch := f.change(job, pick, i); !math.IsNaN(ch.Rel) {
			label = append(label, ch.Text())
			data[i].Extra = append(data[i].Extra, [3]any{"vs " + f.cats[0] + " (" + ch.Label() + ")", ch.Text(), ""})
		} else if pick.grid == 1 {
			label = append(label, units.Number(sp.Median)+" "+bw.name)
		}
		*lowest = math.Min(*lowest, sp.Min)
		data[i].Label = &opts.Label{Show: opts.Bool(true), Position: "top", Formatter: strings.Join(label, "\n"), FontSize: 10, Color: "#333"}
		whiskers = append(whiskers, []any{i, sp.Min, sp.Max, place, count})
	}
	return data, whiskers
}
