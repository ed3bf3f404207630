package chart

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"iolab/bench/hist"
	"iolab/bench/stats"
)

// Latency is latency percentiles (of the query's LatKind) vs iodepth (or
// the query's x), log y axis, one line per series × percentile.
const Latency Kind = "latency"

func percentileName(p float64) string { return "p" + num(p) }

// percentilesFor are the percentiles a latency chart of n series draws
// by default: all five of the write-ups for one series, the median and
// p99 for a few, p99 alone beyond, so the lines stay maxSeries at most.
func percentilesFor(n int) []float64 {
	switch {
	case n <= 1:
		return defaultPercentiles
	case 2*n <= maxSeries:
		return []float64{50, 99}
	}
	return []float64{99}
}

// percentilePicker offers the write-ups' percentiles and any other drawn.
func percentilePicker(drawn []float64) Picker {
	p := Picker{Param: "p", Label: "percentiles"}
	all := append(slices.Clone(defaultPercentiles), drawn...)
	slices.Sort(all)
	for _, v := range slices.Compact(all) {
		p.Options = append(p.Options, PickerOption{Value: num(v), Label: percentileName(v), On: slices.Contains(drawn, v)})
	}
	return p
}

// buildLatency draws each percentile from the histograms of a point's
// done repeats merged: a percentile of all their I/Os, not a median of
// per-repeat percentiles.
func buildLatency(q Query, runs []*runView) (*Chart, error) {
	l := newLayout(q, runs, q.X)
	g := gridOf(l, runs)
	ps := q.Percentiles
	if len(ps) == 0 {
		ps = percentilesFor(g.shown(q, l))
	}
	g.pick(q, l, runs, maxSeries/len(ps))
	col, dirTitle := dirPrefix(q)
	lk := latKind(q, runs)
	c := &Chart{Title: fmt.Sprintf("%sLatency percentiles vs %s", dirTitle, l.x),
		Pickers: append([]Picker{latPicker(lk, timeSplitAvailable(runs)), percentilePicker(ps)}, g.pickers...), Hidden: g.hiddenNote(len(ps), "percentiles"),
		Format: Format{Tooltip: "lines", Y: "us", XName: string(l.x)}}
	c.Columns = append(l.columns(true), "repeats", "failed", "ios")
	for _, p := range ps {
		c.Columns = append(c.Columns, col+lk.Name()+"_"+percentileName(p)+"_us", col+lk.Name()+"_"+percentileName(p)+"_reliable")
	}

	// The tooltip is per point, so that it can say when one is not worth
	// reading.
	line := echarts.NewLine()
	how := lk.Title() + " histograms of all repeats merged; line style: percentile; hollow: too few I/Os"
	if l.compare {
		how = lk.Title() + " histograms of all repeats merged; line style: percentile and run, symbol: run; hollow: too few I/Os"
	}
	if n := blockNote(lk, runs); n != "" {
		how += " · " + n
	}
	if len(g.series) > 1 && g.series[0].name != "" {
		how += "; tooltips: change from " + g.series[0].name + " (" + string(stats.PooledRatio) + ")"
	}
	// base is the first series' merged percentiles (µs) and repeats at
	// each x: the others' tooltips give their change from it.
	type basePoint struct {
		us   []float64
		done int
	}
	base := map[string]basePoint{}
	// One x value: bars, the series side by side and a bar per
	// percentile, not a lone dot per line (oneX).
	one := g.oneX(l)
	xName, xs := string(l.x), g.xs
	if one != nil {
		c.Title = one.title(dirTitle + "Latency percentiles")
		c.Format.XName, xName, xs = one.name, one.name, one.categories
		how = strings.Replace(how, "line style: percentile", "shade: percentile", 1)
	}
	bars := make([][]item, len(ps)) // one x: [percentile][series]
	line.SetGlobalOptions(plotOptions(c.Title, subtitle(runs, g, how),
		"item", xAxisOpts(xName, "category"), opts.YAxis{Name: dirTitle + lk.Name() + " (µs)", Type: "log", SplitLine: splitLine()})...)
	line.SetXAxis(xs)
	for si, s := range g.series {
		data := make([][]item, len(ps))
		for k := range data {
			data[k] = make([]item, len(g.xs))
		}
		for i, x := range g.xs {
			for k := range ps {
				data[k][i] = item{Value: missing}
			}
			cell := s.cells[x]
			if cell == nil {
				continue
			}
			h, done, failed := latOf(cell.steps, q.dirIndex(), lk)
			n := h.N()
			if si == 0 && n > 0 {
				base[x] = basePoint{done: done}
			}
			row := append(l.row(s.run, x, s.group, true), strconv.Itoa(done), strconv.Itoa(failed), strconv.FormatUint(n, 10))
			for k, ns := range h.Percentiles(ps) {
				if n == 0 {
					row = append(row, "", "")
					continue
				}
				us := float64(ns) / 1000
				data[k][i] = item{Name: x, Value: us, N: done}
				if b, ok := base[x]; si == 0 && ok {
					b.us = append(b.us, us)
					base[x] = b
				} else if ok && s.name != "" && k < len(b.us) {
					// A merged percentile has no repeats to take a median
					// of: its change is the merged figures' ratio, named so.
					ch := stats.PooledChange(b.us[k], us, b.done, done)
					data[k][i].Extra = [][3]any{{percentileName(ps[k]) + " vs " + g.series[0].name + " (" + ch.Label() + ")", ch.Text(), ""}}
				}
				reliable := hist.Reliable(ps[k], n)
				if !reliable {
					// Fewer than ten I/Os lie above it: drawn hollow, and
					// the tooltip says why.
					data[k][i].Note = fmt.Sprintf("unreliable: %d I/Os, %s needs %d", n, percentileName(ps[k]), hist.ReliableN(ps[k]))
					data[k][i].Symbol = "empty" + pointSymbol(s.runAt)
				}
				row = append(row, num(us), strconv.FormatBool(reliable))
			}
			c.Rows = append(c.Rows, row)
		}
		if one != nil {
			for k := range ps {
				d := data[k][0]
				d.Name, d.Symbol = one.categories[si], ""
				d.ItemStyle = &itemStyle{Color: s.color, Opacity: percentileShade(k, len(ps))}
				if d.Note != "" { // unreliable: hollow, as the lines draw it
					d.ItemStyle = &itemStyle{Color: s.color + "22", BorderColor: s.color, BorderWidth: 1.5, BorderType: "dashed"}
				}
				bars[k] = append(bars[k], d)
			}
			continue
		}
		for k, p := range ps {
			name := percentileName(p)
			if s.name != "" {
				name = s.name + " " + name
			}
			line.AddSeries(name, nil, lineStyle(s.color, s.runAt*len(ps)+k, s.runAt, true)...)
			setData(line.MultiSeries, data[k])
			c.Format.Groups = append(c.Format.Groups, si)
		}
	}
	if one != nil {
		// Each percentile a bar series over the categories, its bars in
		// their series' colours, lighter for the lower percentiles; the
		// legend's swatch a grey as light.
		for k, p := range ps {
			line.AddSeries(percentileName(p), nil, echarts.WithItemStyleOpts(opts.ItemStyle{Color: percentileGrey(k, len(ps))}),
				echarts.WithLabelOpts(opts.Label{Show: opts.Bool(len(ps) > 1), Position: "top", Formatter: "{a}", FontSize: 10}))
			line.MultiSeries[len(line.MultiSeries)-1].Type = "bar"
			setData(line.MultiSeries, bars[k])
		}
	}
	var err error
	c.Option, err = optionJSON(line)
	return c, err
}

// percentileShade is the opacity of the k-th of n percentiles' bars:
// the highest (the last) solid, the lower ones lighter.
func percentileShade(k, n int) float32 { return float32(0.3 + 0.7*float64(k+1)/float64(n)) }

// percentileGrey is the legend's swatch of the k-th of n percentiles'
// bars: a grey as light as their shade.
func percentileGrey(k, n int) string {
	v := int(255 - 200*percentileShade(k, n))
	return fmt.Sprintf("#%02x%02x%02x", v, v, v)
}
