package chart

import (
	"cmp"
	"encoding/json"
	"fmt"
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

// jobLat is the mean, p50 and p99 latency of kind k (µs) of job in each
// done step, its clones' histograms and statistics merged, in direction
// d (both when d < 0).
func jobLat(steps []summary.StepView, job string, d int, k LatKind) (mean, p50, p99 []float64) {
	for i := range steps {
		if !done(&steps[i]) {
			continue
		}
		h := new(hist.Histogram)
		var st hist.LatStat
		for _, g := range steps[i].Result.Groups {
			for j := range g.Jobs {
				if g.Jobs[j].Name != job {
					continue
				}
				for dd := range g.Jobs[j].Dirs {
					if d < 0 || d == dd {
						lv := k.Of(&g.Jobs[j].Dirs[dd])
						lv.Hist.AddTo(h)
						st.Merge(&lv.Stat)
					}
				}
			}
		}
		if h.N() == 0 {
			continue
		}
		ps := h.Percentiles([]float64{50, 99})
		mean = append(mean, st.Mean/1000)
		p50, p99 = append(p50, float64(ps[0])/1000), append(p99, float64(ps[1])/1000)
	}
	return mean, p50, p99
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
// each job's latency (q.Lat's kind: p50, mean and p99) above and its
// bandwidth below, medians with whiskers min–max over repeats, each bar
// labelled with its value, p99's and bandwidth's change from the first
// scheduler under each other one: the fairness write-up, where a background
// writer and a foreground reader share a disk. Each job has its own
// grids, on linear axes from 0: a 4 KiB reader's 1 MiB/s is a bar as tall
// as its axis beside a 1 MiB writer's 500 MiB/s, not a sliver of the
// writer's axis (nor, as on a log axis, a bar whose height says nothing).
func buildFairness(q Query, runs []*runView) (*Chart, error) {
	l := newLayout(q, runs, "")
	g := gridOf(l, runs)
	col, dirTitle := dirPrefix(q)
	q.Lat = latKind(q, runs)
	lc := col + q.Lat.Name()
	c := &Chart{Title: dirTitle + "Per-job latency and bandwidth", Format: Format{Tooltip: "bars"},
		Pickers: []Picker{latPicker(q.Lat, timeSplitAvailable(runs))}}
	if l.series == sweep.AxisScheduler {
		c.Title += " per scheduler"
	}
	c.Columns = append(l.columns(false), "job", "repeats", "failed",
		lc+"_p50_min_us", lc+"_p50_median_us", lc+"_p50_max_us",
		lc+"_p99_min_us", lc+"_p99_median_us", lc+"_p99_max_us",
		lc+"_mean_min_us", lc+"_mean_median_us", lc+"_mean_max_us",
		col+"bw_min_mib_s", col+"bw_median_mib_s", col+"bw_max_mib_s")
	// A traced run's jobs show their queue time beside their latency:
	// how much of the reader's was queueing behind the writer.
	queue := timeSplitAvailable(runs) && !q.Lat.Block()
	if queue {
		qc := col + string(summary.LatQueue)
		c.Columns = append(c.Columns, qc+"_p50_min_us", qc+"_p50_median_us", qc+"_p50_max_us",
			qc+"_p99_min_us", qc+"_p99_median_us", qc+"_p99_max_us")
	}
	c.Columns = append(c.Columns, lc+"_p99_change_pct", col+"bw_change_pct")
	f := fairnessRows(q, l, g, c, queue)
	f.addChanges(c, l, g)

	under := "each group of bars"
	if l.series == sweep.AxisScheduler {
		under = "each scheduler"
	}
	how := q.Lat.Title() + " · each job on its own linear axes · medians, whiskers min–max over repeats"
	if n := blockNote(q.Lat, runs); n != "" {
		how = q.Lat.Title() + " · " + n + " · medians, whiskers min–max over repeats"
	}
	if queue {
		how += " · orange: the queue part of the timed I/Os (--trace-block)"
	}
	if len(f.cats) > 1 {
		how += "; under " + under + ", p99's and bandwidth's change from " + f.cats[0] + " (" + string(stats.MedianRatio) + ")"
	}
	bar := echarts.NewBar()
	bar.SetGlobalOptions(append(globalOptions(c.Title, subtitle(runs, g, how), "item"), echarts.WithGridOpts(f.grids()...))...)
	if len(f.jobs) > 0 {
		bar.XAxisList, bar.YAxisList = nil, nil
	}
	first := f.cats
	for ji, job := range f.jobs {
		bw := f.bwUnit(job)
		lat := f.catLabels(job, f.picks()[2], "p99 ")
		if ji == 0 {
			first = lat
		}
		bar.XAxisList = append(bar.XAxisList,
			opts.XAxis{Type: "category", GridIndex: 2 * ji, Data: lat},
			opts.XAxis{Type: "category", GridIndex: 2*ji + 1, Data: f.catLabels(job, f.picks()[len(f.picks())-1], "")})
		bar.YAxisList = append(bar.YAxisList,
			opts.YAxis{Name: job + " · " + dirTitle + q.Lat.Name() + " (µs)", Type: "value", GridIndex: 2 * ji, SplitLine: splitLine()},
			opts.YAxis{Name: job + " · " + strings.ToLower(dirTitle) + "bandwidth (" + bw.name + ")", Type: "value", GridIndex: 2*ji + 1, SplitLine: splitLine()})
	}
	bar.SetXAxis(first) // Validate sets the first axis's data to it
	raw, err := optionJSON(bar)
	if err != nil {
		return nil, err
	}
	if raw, err = addSeries(raw, f.series()); err != nil {
		return nil, err
	}
	c.Option, err = twoLineCategories(raw)
	return c, err
}

// twoLineCategories gives the x axes' labels, a category and its change,
// a line height (a number, which go-echarts' string cannot carry): without
// one, echarts draws the two lines over each other.
func twoLineCategories(raw json.RawMessage) (json.RawMessage, error) {
	var opt map[string]any
	if err := json.Unmarshal(raw, &opt); err != nil {
		return nil, fmt.Errorf("chart: fairness option: %w", err)
	}
	xs, _ := opt["xAxis"].([]any)
	for _, x := range xs {
		if x, ok := x.(map[string]any); ok {
			label, _ := x["axisLabel"].(map[string]any)
			if label == nil {
				label = map[string]any{}
			}
			label["lineHeight"] = 15
			x["axisLabel"] = label
		}
	}
	return json.Marshal(opt)
}

// fairnessFigures are one job's p50, p99 and bandwidth in one category.
type fairnessFigures struct {
	ok                 bool
	n                  int
	mean, p50, p99, bw stats.Spread
	// means, p50s, p99s and bws are the repeats' values, which a change
	// is of.
	means, p50s, p99s, bws []float64
	// queue50 and queue99 are the queue part's p50 and p99 (µs) of a
	// traced job (queued), over its traced repeats.
	queued             bool
	queue50, queue99   stats.Spread
	queue50s, queue99s []float64
}

// fairnessData is what a fairness chart draws: its categories (a
// scheduler, or a combination of the swept axes: the grid's series), its
// jobs, and each job's figures by category.
type fairnessData struct {
	cats   []string
	jobs   []string
	points map[string][]fairnessFigures
	// queue: the chart draws each job's queue part beside its latency.
	queue bool
}

// fairnessRows adds to c a row per job and category, their changes left
// empty (addChanges), and returns the figures drawn.
func fairnessRows(q Query, l *layout, g *grid, c *Chart, queue bool) *fairnessData {
	const mib = 1 << 20
	f := &fairnessData{cats: make([]string, len(g.series)), points: map[string][]fairnessFigures{}, queue: queue}
	extra := 0
	if queue {
		extra = 6
	}
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
				c.Rows = append(c.Rows, append(row, make([]string, 14+extra)...))
				continue
			}
			mean, p50, p99 := jobLat(steps, js.Job, q.dirIndex(), q.Lat)
			bws := jobBW(dirSteps(steps, q.dirIndex()), js.Job)
			ff := fairnessFigures{ok: true, n: js.Repeats, mean: stats.SpreadOf(mean), p50: stats.SpreadOf(p50), p99: stats.SpreadOf(p99),
				bw: js.BW.Scale(1.0 / mib), means: mean, p50s: p50, p99s: p99, bws: bws}
			row = append(row, num(ff.p50.Min), num(ff.p50.Median), num(ff.p50.Max), num(ff.p99.Min), num(ff.p99.Median), num(ff.p99.Max),
				num(ff.mean.Min), num(ff.mean.Median), num(ff.mean.Max), num(ff.bw.Min), num(ff.bw.Median), num(ff.bw.Max))
			if queue {
				_, q50, q99 := jobLat(steps, js.Job, q.dirIndex(), summary.LatQueue)
				if ff.queued = len(q50) > 0; ff.queued {
					ff.queue50, ff.queue99, ff.queue50s, ff.queue99s = stats.SpreadOf(q50), stats.SpreadOf(q99), q50, q99
					row = append(row, num(ff.queue50.Min), num(ff.queue50.Median), num(ff.queue50.Max),
						num(ff.queue99.Min), num(ff.queue99.Median), num(ff.queue99.Max))
				} else {
					row = append(row, make([]string, 6)...) // not traced: empty, never zeros
				}
			}
			f.points[js.Job][i] = ff
			c.Rows = append(c.Rows, append(row, "", ""))
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

// bandwidthUnit is the unit a fairness chart draws a job's bandwidth
// in: its name in the extras (unit) and on the axis (name), and the scale
// from MiB/s.
type bandwidthUnit struct {
	unit, name string
	scale      float64
}

// bwUnit is MiB/s, or KiB/s for a job whose bandwidth stays below
// 1 MiB/s (a 4 KiB reader's), so that its axis reads 0 to 800, not 0 to
// 0.8.
func (f *fairnessData) bwUnit(job string) bandwidthUnit {
	for _, ff := range f.points[job] {
		if ff.ok && ff.bw.Max >= 1 {
			return bandwidthUnit{"mibs", "MiB/s", 1}
		}
	}
	return bandwidthUnit{"kibs", "KiB/s", 1024}
}

// grids are the chart's plots: a column per job, its latency above and
// its bandwidth below (grid 2j and 2j+1, each with its own axes).
func (f *fairnessData) grids() []opts.Grid {
	var out []opts.Grid
	n := max(len(f.jobs), 1)
	width := 96.0 / float64(n)
	for ji := range f.jobs {
		left := fmt.Sprintf("%.1f%%", 1+float64(ji)*width)
		w := fmt.Sprintf("%.1f%%", width-3)
		out = append(out,
			opts.Grid{Top: "72", Bottom: "47%", Left: left, Width: w, ContainLabel: opts.Bool(true)},
			opts.Grid{Top: "61%", Bottom: "36", Left: left, Width: w, ContainLabel: opts.Bool(true)})
	}
	return out
}

// fairnessPick is one figure a fairness chart draws of each job: a bar
// per category, in its own colour.
type fairnessPick struct {
	name, color string
	of          func(fairnessFigures) stats.Spread
	// values are the repeats' values a change is of.
	values func(fairnessFigures) []float64
	// bandwidth: the pick is drawn below, in the job's bandwidth unit;
	// else above, in µs.
	bandwidth bool
}

// fairnessPicks are what a fairness chart draws of each job: p50, mean
// and p99 side by side (from the typical I/O to the tail, light to dark:
// the schedulers are the categories, so the colours name the figure),
// and the bandwidth.
var fairnessPicks = []fairnessPick{
	{"p50", "#a6bddb", func(f fairnessFigures) stats.Spread { return f.p50 }, func(f fairnessFigures) []float64 { return f.p50s }, false},
	{"mean", "#3690c0", func(f fairnessFigures) stats.Spread { return f.mean }, func(f fairnessFigures) []float64 { return f.means }, false},
	{"p99", "#034e7b", func(f fairnessFigures) stats.Spread { return f.p99 }, func(f fairnessFigures) []float64 { return f.p99s }, false},
	{"bandwidth", "#8a8a8a", func(f fairnessFigures) stats.Spread { return f.bw }, func(f fairnessFigures) []float64 { return f.bws }, true},
}

// queuePicks are what a fairness chart of a traced run draws beside each
// job's latency: its queue part's p50 and p99, in the time split's
// orange.
var queuePicks = []fairnessPick{
	{"queue p50", "#fd8d3c", func(f fairnessFigures) stats.Spread { return f.queue50 }, func(f fairnessFigures) []float64 { return f.queue50s }, false},
	{"queue p99", "#d94801", func(f fairnessFigures) stats.Spread { return f.queue99 }, func(f fairnessFigures) []float64 { return f.queue99s }, false},
}

// picks are what the chart draws of each job: fairnessPicks, and the
// queue part's after the latency's where it draws it; bandwidth last.
func (f *fairnessData) picks() []fairnessPick {
	if !f.queue {
		return fairnessPicks
	}
	n := len(fairnessPicks)
	return slices.Concat(fairnessPicks[:n-1], queuePicks, fairnessPicks[n-1:])
}

// series are the chart's bars and their whiskers: per job, p50, mean and
// p99 on its latency grid and its bandwidth on the one below. A pick has
// one name on every job, so the legend toggles it everywhere.
func (f *fairnessData) series() []map[string]any {
	var bars, whiskers []map[string]any
	lat := 0
	for _, p := range f.picks() {
		if !p.bandwidth {
			lat++
		}
	}
	for ji, job := range f.jobs {
		bw := f.bwUnit(job)
		place := 0
		for _, pick := range f.picks() {
			grid, count, at := 2*ji, lat, place
			if pick.bandwidth {
				grid, count, at = 2*ji+1, 1, 0
			} else {
				place++
			}
			data, wk := f.bars(job, pick, bw, at, count)
			bars = append(bars, barSeries(pick.name, pick.color, grid, data))
			eb := errorBars(pick.name, wk)
			eb["xAxisIndex"], eb["yAxisIndex"] = grid, grid
			whiskers = append(whiskers, eb)
		}
	}
	return append(bars, whiskers...)
}

// barSeries is a series of bars on grid, each labelled (its datum's
// label formatter) along the bar from its base: a label across a bar
// would run into its neighbours', and one at its base stays inside the
// plot however short the bar. The white outline keeps it readable on a
// dark bar and on the grid above a short one.
func barSeries(name, color string, grid int, data []item) map[string]any {
	return map[string]any{"type": "bar", "name": name, "xAxisIndex": grid, "yAxisIndex": grid,
		"barGap": barGap, "barCategoryGap": barCategoryGap, "itemStyle": map[string]any{"color": color}, "data": data,
		"label": map[string]any{"show": true, "rotate": 90, "position": "insideBottom", "align": "left", "verticalAlign": "middle",
			"distance": 6, "fontSize": 11, "color": "#1a1a1a", "textBorderColor": "#fff", "textBorderWidth": 2.5}}
}

// catLabels are the categories of job's plots, each after the first
// with the change of job's pick from the first ("bfq\np99 −77.6 %"):
// across a bar's label, it would run out of a short bar.
func (f *fairnessData) catLabels(job string, pick fairnessPick, prefix string) []string {
	out := slices.Clone(f.cats)
	for i := range out {
		if ch := f.change(job, pick, i); !math.IsNaN(ch.Rel) {
			out[i] += "\n" + prefix + ch.Text()
		}
	}
	return out
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

// whiskerAside is how far right of its bar's middle a fairness whisker
// stands, in bar widths (chartprep.js errorBar's sixth value).
const whiskerAside = 0.3

// bars are job's bars of pick in each category, each labelled with its
// value as the tables write it (4.12ms, 1.12MiB/s), its tooltip with the
// change from the first category, and their whiskers, each at place of
// count bars in its category.
func (f *fairnessData) bars(job string, pick fairnessPick, bw bandwidthUnit, place, count int) ([]item, [][]any) {
	data := make([]item, len(f.cats))
	var whiskers [][]any
	for i, ff := range f.points[job] {
		data[i] = item{Value: missing}
		if !ff.ok || len(pick.values(ff)) == 0 { // no queue part of an untraced step
			continue
		}
		sp, unit, text := pick.of(ff), "us", units.Nanos(pick.of(ff).Median*1000)
		if pick.bandwidth {
			sp, unit, text = sp.Scale(bw.scale), bw.unit, units.Rate(sp.Median*(1<<20))
		}
		data[i] = item{Name: job + " " + pick.name, Value: sp.Median, N: ff.n,
			Extra: [][3]any{{"min", sp.Min, unit}, {"max", sp.Max, unit}}}
		if ch := f.change(job, pick, i); !math.IsNaN(ch.Rel) {
			data[i].Extra = append(data[i].Extra, [3]any{"vs " + f.cats[0] + " (" + ch.Label() + ")", ch.Text(), ""})
		}
		data[i].Label = &opts.Label{Formatter: text}
		// The whisker stands by the bar's right edge, clear of the
		// label along its middle.
		whiskers = append(whiskers, []any{i, sp.Min, sp.Max, place, count, whiskerAside})
	}
	return data, whiskers
}
