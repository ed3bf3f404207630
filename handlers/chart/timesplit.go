package chart

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/stats"
	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/bench/units"
)

// TimeSplit is where a traced job's I/Os spent their time (--trace-block):
// the submit, queue, device and completion parts of their latency
// stacked, per step of the swept axes.
const TimeSplit Kind = "timesplit"

// minOneToOne is the share of a step's traced I/Os below which its parts
// are flagged (summary.MinOneToOne).
const minOneToOne = summary.MinOneToOne

// timeSplitAvailable: a run has a done step with a block-layer time split.
func timeSplitAvailable(runs []*runView) bool {
	return slices.ContainsFunc(runs, func(r *runView) bool {
		return slices.ContainsFunc(r.steps, func(s summary.StepView) bool { return done(&s) && traced(&s, -1) })
	})
}

// traced reports whether a step's jobs have a block-layer time split in
// direction d (any when d < 0).
func traced(s *summary.StepView, d int) bool {
	if s.Result == nil {
		return false
	}
	for _, g := range s.Result.Groups {
		for j := range g.Jobs {
			for dd := range g.Jobs[j].Dirs {
				if (d < 0 || d == dd) && g.Jobs[j].Dirs[dd].Block != nil {
					return true
				}
			}
		}
	}
	return false
}

// splitStep is one traced step's time split: each part's statistic and
// lat's (ns), and what the trace counted.
type splitStep struct {
	parts                              [4]float64
	lat                                float64
	oneToOne, merged, split, unmatched uint64
	splitTimed                         uint64 // of split, in the histograms
	foreign, dropped, missed           uint64
	// own: the parts are each its own percentile, and lat all the I/Os',
	// for a step traced before iolab kept the parts by lat.
	own bool
}

// splitOf is the time split of direction d (both when d < 0) of step s's
// jobs, merged, at lat's percentile p: the timed I/Os at that percentile
// of their lat, their mean parts, which add up to it
// (bench.SplitByLat.SplitAt). A step traced before iolab kept the parts
// by lat has each part's own percentile instead, and lat's of all the
// I/Os (own). ok false when the step has none.
func splitOf(s *summary.StepView, d int, p float64) (out splitStep, ok bool) {
	var parts [4]hist.Histogram
	var lat hist.Histogram
	byLat := bench.SplitByLat{}
	for _, g := range s.Result.Groups {
		if t := g.Trace; t != nil {
			out.foreign += t.Foreign
			out.dropped += t.Dropped
			out.missed += t.Missed
		}
		for j := range g.Jobs {
			for dd := range g.Jobs[j].Dirs {
				dv := &g.Jobs[j].Dirs[dd]
				if d >= 0 && d != dd || dv.Block == nil {
					continue
				}
				ok = true
				for k, kind := range summary.BlockKinds {
					dv.Block.Part(kind).Hist.AddTo(&parts[k])
				}
				dv.Lat.Hist.AddTo(&lat)
				byLat.Merge(dv.Block.ByLat)
				out.oneToOne += dv.Block.OneToOne
				out.splitTimed += dv.Block.SplitTimed
				out.merged += dv.Block.Merged
				out.split += dv.Block.Split
				out.unmatched += dv.Block.Unmatched
			}
		}
	}
	if !ok || parts[0].N() == 0 {
		return out, false
	}
	if at, found := byLat.SplitAt(p); found && at.IOs > 0 {
		out.parts, out.lat = at.Parts, float64(at.Lat)
		return out, true
	}
	out.own = true
	for k := range parts {
		out.parts[k] = float64(parts[k].Percentiles([]float64{p})[0])
	}
	if lat.N() > 0 {
		out.lat = float64(lat.Percentiles([]float64{p})[0])
	}
	return out, true
}

// oneToOneShare is the share of the traced I/Os in the histograms: the
// timed ones (one-to-one, and splits with every piece seen).
func (s splitStep) oneToOneShare() float64 {
	all := s.oneToOne + s.merged + s.split + s.unmatched
	if all == 0 {
		return 0
	}
	return float64(s.oneToOne+s.splitTimed) / float64(all)
}

// flags say why a step's split is to be read with care: few I/Os mapped
// one-to-one, the trace lost events, other processes' I/O shared the
// device.
func (s splitStep) flags() []string {
	var out []string
	if sh := s.oneToOneShare(); sh < minOneToOne {
		out = append(out, fmt.Sprintf("%.0f %% timed", 100*sh))
	}
	if n := s.dropped + s.missed; n > 0 {
		out = append(out, units.Count(float64(n))+" events lost")
	}
	if s.foreign > 0 {
		out = append(out, units.Count(float64(s.foreign))+" foreign I/Os")
	}
	if s.own {
		out = append(out, "each part's own percentile (traced before iolab kept the parts by lat): they need not add up to lat")
	}
	return out
}

// splitPart is one part of the split as the chart draws it.
type splitPart struct {
	kind  summary.LatKind
	color string
}

// splitParts are the stack from the bottom, in the order of an I/O's
// life: the submission and completion, iolab's side, light; the queue,
// what schedulers change, strong; the device between.
var splitParts = [4]splitPart{
	{summary.LatSubmit, "#fdd0a2"},
	{summary.LatQueue, "#d94801"},
	{summary.LatDevice, "#2171b5"},
	{summary.LatCompletion, "#9ecae1"},
}

// splitCategory is one bar of the chart: a series of the grid (a
// combination of the swept axes, of one run) and its traced repeats.
type splitCategory struct {
	name            string
	repeats, failed int
	steps           []splitStep
}

// median is the median over the category's repeats of what of picks.
func (c *splitCategory) median(of func(splitStep) float64) stats.Spread {
	v := make([]float64, len(c.steps))
	for i, s := range c.steps {
		v[i] = of(s)
	}
	return stats.SpreadOf(v)
}

// buildTimeSplit draws, per combination of the swept axes (per scheduler,
// engine, iodepth…), the timed I/Os at lat's q.Stat (p50 or p99 of a
// step's jobs merged) split into their parts, stacked, the median over
// repeats, with that lat beside as a mark: the stack adds up to it.
// Steps that were not traced are left out and named; a step whose split
// describes few of its I/Os, whose trace lost events or saw other I/O,
// or that was traced before the parts were kept by lat (each part's own
// percentile then, which need not add up), is drawn hatched and says
// why.
func buildTimeSplit(q Query, runs []*runView) (*Chart, error) {
	if q.Series == "" {
		// A bar per value of the first swept axis, numeric or not: an
		// iodepth sweep's bars are "1", "4", "16" under "iodepth".
	first:
		for _, r := range runs {
			for _, s := range r.plan.Swept() {
				q.Series = s.Axis
				break first
			}
		}
	}
	l := newLayout(q, runs, "")
	g := gridOf(l, runs)
	col, dirTitle := dirPrefix(q)
	stat := q.stat()
	p := stat.percentile()
	c := &Chart{Title: dirTitle + "Time split in the block layer", Format: Format{Tooltip: "bars", Y: "us"},
		Pickers: []Picker{statPicker(stat)}}
	if l.series != "" {
		c.Title += " per " + string(l.series)
	}
	c.Columns = append(l.columns(false), "repeats", "traced", "failed")
	for _, sp := range splitParts {
		c.Columns = append(c.Columns, col+string(sp.kind)+"_"+string(stat)+"_us")
	}
	c.Columns = append(c.Columns, col+"lat_"+string(stat)+"_us", "timed_pct", "merged", "split", "unmatched",
		"foreign", "dropped", "missed", "flags")

	var cats []splitCategory
	var untraced []string
	for _, s := range g.series {
		// The x axis names the series axis: "4", not "iodepth=4".
		cat := splitCategory{name: cmp.Or(strings.TrimPrefix(s.name, string(l.series)+"="), s.run.label)}
		var steps []summary.StepView
		for _, cell := range s.cells {
			steps = append(steps, cell.steps...)
		}
		slices.SortFunc(steps, func(a, b summary.StepView) int { return cmp.Compare(a.Step.Seq, b.Step.Seq) })
		for i := range steps {
			switch summary.StatusOf(&steps[i]) {
			case sweep.StepFailed:
				cat.failed++
				continue
			case sweep.StepDone:
			default:
				continue
			}
			cat.repeats++
			if sp, ok := splitOf(&steps[i], q.dirIndex(), p); ok {
				cat.steps = append(cat.steps, sp)
			}
		}
		row := append(l.row(s.run, "", s.group, false), strconv.Itoa(cat.repeats), strconv.Itoa(len(cat.steps)), strconv.Itoa(cat.failed))
		if len(cat.steps) == 0 {
			if cat.repeats > 0 {
				untraced = append(untraced, cat.name)
			}
			c.Rows = append(c.Rows, append(row, make([]string, len(c.Columns)-len(row))...))
			continue
		}
		sum := cat.sum()
		for k := range splitParts {
			row = append(row, num(cat.median(func(s splitStep) float64 { return s.parts[k] }).Median/1000))
		}
		row = append(row, num(cat.median(func(s splitStep) float64 { return s.lat }).Median/1000),
			num(100*sum.oneToOneShare()), strconv.FormatUint(sum.merged, 10), strconv.FormatUint(sum.split, 10),
			strconv.FormatUint(sum.unmatched, 10), strconv.FormatUint(sum.foreign, 10), strconv.FormatUint(sum.dropped, 10),
			strconv.FormatUint(sum.missed, 10), strings.Join(sum.flags(), "; "))
		c.Rows = append(c.Rows, row)
		cats = append(cats, cat)
	}

	how := "the timed I/Os at lat's " + string(stat) + ", split (◆ that lat), median over repeats"
	if len(untraced) > 0 {
		how += " · not traced: " + strings.Join(untraced, ", ")
	}
	if len(cats) == 0 && len(untraced) == 0 {
		how += " · no step done"
	}
	labels := make([]string, len(cats))
	x := xAxisOpts("", "category")
	for i := range cats {
		labels[i] = cats[i].name
		if f := cats[i].sum().flags(); len(f) > 0 {
			labels[i] += "\n⚠ " + strings.Join(f, ", ")
			x.NameGap = 46 // below the flags' line
		}
	}
	if l.series != "" {
		x.Name = string(l.series)
		c.Format.XName = x.Name
	}
	bar := echarts.NewBar()
	bar.SetGlobalOptions(plotOptions(c.Title, subtitle(runs, g, how), "item", x,
		opts.YAxis{Name: dirTitle + "time (µs), " + string(stat), Type: "value", SplitLine: splitLine()})...)
	bar.SetXAxis(labels)
	for _, sp := range splitParts {
		bar.AddSeries(sp.kind.Name(), nil, echarts.WithItemStyleOpts(opts.ItemStyle{Color: sp.color}),
			echarts.WithBarChartOpts(opts.BarChart{Stack: "split", BarCategoryGap: "40%"}))
		setData(bar.MultiSeries, splitBars(cats, sp))
	}
	raw, err := optionJSON(bar)
	if err != nil {
		return nil, err
	}
	marks := make([]item, len(cats))
	for i := range cats {
		lat := cats[i].median(func(s splitStep) float64 { return s.lat }).Median / 1000
		marks[i] = item{Name: "lat " + string(stat), Value: lat, N: len(cats[i].steps)}
		if lat == 0 {
			marks[i].Value = missing
		}
	}
	if raw, err = addSeries(raw, []map[string]any{{"type": "scatter", "name": "lat " + string(stat), "symbol": "diamond", "symbolSize": 12,
		"itemStyle": map[string]any{"color": "#252525", "borderColor": "#fff", "borderWidth": 1.5}, "z": 4, "data": marks}}); err != nil {
		return nil, err
	}
	c.Option, err = twoLineCategories(raw)
	return c, err
}

// sum is the category's counts added over its repeats.
func (c *splitCategory) sum() splitStep {
	var out splitStep
	for _, s := range c.steps {
		out.oneToOne += s.oneToOne
		out.splitTimed += s.splitTimed
		out.merged += s.merged
		out.split += s.split
		out.unmatched += s.unmatched
		out.foreign += s.foreign
		out.dropped += s.dropped
		out.missed += s.missed
		out.own = out.own || s.own
	}
	return out
}

// splitBars are part sp's bars in each category: the median over its
// repeats, the range and the share of lat in the tooltip; hatched and
// noted where the category is flagged.
func splitBars(cats []splitCategory, sp splitPart) []item {
	k := slices.IndexFunc(splitParts[:], func(o splitPart) bool { return o.kind == sp.kind })
	data := make([]item, len(cats))
	for i := range cats {
		v := cats[i].median(func(s splitStep) float64 { return s.parts[k] / 1000 })
		data[i] = item{Name: sp.kind.Title(), Value: v.Median, N: len(cats[i].steps)}
		if len(cats[i].steps) > 1 {
			data[i].Extra = append(data[i].Extra, [3]any{"min", v.Min, "us"}, [3]any{"max", v.Max, "us"})
		}
		if lat := cats[i].median(func(s splitStep) float64 { return s.lat / 1000 }).Median; lat > 0 {
			data[i].Extra = append(data[i].Extra, [3]any{"of lat", 100 * v.Median / lat, "pct"})
		}
		sum := cats[i].sum()
		data[i].Extra = append(data[i].Extra, [3]any{"timed", 100 * sum.oneToOneShare(), "pct"})
		if f := sum.flags(); len(f) > 0 {
			data[i].Note = "read with care: " + strings.Join(f, ", ")
			data[i].ItemStyle = &itemStyle{Color: sp.color, BorderColor: "#333", BorderWidth: 1, BorderType: "dashed", Decal: hatched()}
		}
	}
	return data
}

// Stat is the statistic a time split stacks: ?stat=p50|p99.
type Stat string

// The statistics; "" is p50.
const (
	statP50 Stat = "p50"
	statP99 Stat = "p99"
)

// stats are the statistics a time split offers, in the picker's order.
var splitStats = []Stat{statP50, statP99}

// percentile is the statistic's percentile.
func (s Stat) percentile() float64 {
	if s == statP99 {
		return 99
	}
	return 50
}

// stat is the query's statistic, p50 by default.
func (q Query) stat() Stat { return cmp.Or(q.Stat, statP50) }

// statPicker offers the statistics, s chosen.
func statPicker(s Stat) Picker {
	p := Picker{Param: "stat", Label: "statistic", Single: true}
	for _, o := range splitStats {
		p.Options = append(p.Options, PickerOption{Value: string(o), Label: string(o), On: o == s})
	}
	return p
}
