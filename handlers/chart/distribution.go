package chart

import (
	"slices"
	"strconv"
	"strings"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"iolab/bench/hist"
)

// Distribution is the latency distribution (of the query's LatKind) at
// chosen iodepths, overlaid; x log (µs), y % of I/Os.
const Distribution Kind = "distribution"

// binShift merges 2^3 of fio's histogram buckets into one bin: 8 bins per
// doubling of the latency, each about 9 % wide — fine enough to show
// modes, coarse enough not to turn every I/O into a spike.
const binShift = 3

// bin is one bin of a latency distribution.
type bin struct {
	mid     float64 // µs, the middle of the bin's range
	ios     uint64
	percent float64
}

// distributionOf bins h: every bin from the first non-empty one to the
// last, empty ones too so that lines fall to zero between modes.
func distributionOf(h *hist.Histogram) []bin {
	n := h.N()
	if n == 0 {
		return nil
	}
	first := slices.IndexFunc(h.Counts[:], func(c uint64) bool { return c != 0 })
	last := len(h.Counts) - 1
	for h.Counts[last] == 0 {
		last--
	}
	var bins []bin
	for b := first >> binShift; b <= last>>binShift; b++ {
		lo, _ := hist.BucketBounds(b << binShift)
		_, hi := hist.BucketBounds(b<<binShift + 1<<binShift - 1)
		var ios uint64
		for _, c := range h.Counts[b<<binShift : (b+1)<<binShift] {
			ios += c
		}
		bins = append(bins, bin{
			mid:     (float64(lo) + float64(hi)) / 2 / 1000,
			ios:     ios,
			percent: 100 * float64(ios) / float64(n),
		})
	}
	return bins
}

// spread picks n of vals, evenly spaced, the first and last among them:
// iodepths 1 and 16 of 1, 4, 16 tell more apart than 1 and 4.
func spread(vals []string, n int) []string {
	if n >= len(vals) {
		return vals
	}
	if n == 1 {
		return vals[:1]
	}
	out := make([]string, n)
	for i := range n {
		out[i] = vals[i*(len(vals)-1)/(n-1)]
	}
	return out
}

// buildDistribution overlays the latency distributions at the chosen
// iodepths: each curve one group at one iodepth, its done repeats'
// histograms merged.
func buildDistribution(q Query, runs []*runView) (*Chart, error) {
	l := newLayout(q, runs, q.X)
	g := gridOf(l, runs)
	qds := make([]string, 0, len(q.IODepths))
	for _, d := range q.IODepths {
		qds = append(qds, strconv.Itoa(d))
	}
	if len(qds) == 0 {
		// The write-up's iodepths, those the runs have; else every one.
		for _, d := range defaultIODepths {
			if s := strconv.Itoa(d); slices.Contains(g.xs, s) {
				qds = append(qds, s)
			}
		}
		if len(qds) == 0 {
			qds = g.xs
		}
		qds = spread(qds, max(1, maxSeries/max(1, g.shown(q, l))))
	}
	g.pick(q, l, runs, maxSeries/max(1, len(qds)))
	_, dirTitle := dirPrefix(q)
	lk := latKind(q, runs)
	qdPicker := Picker{Param: "qd", Label: string(l.x)}
	for _, x := range g.xs {
		qdPicker.Options = append(qdPicker.Options, PickerOption{Value: x, Label: x, On: slices.Contains(qds, x)})
	}
	c := &Chart{Title: dirTitle + "Latency distribution", Pickers: append([]Picker{latPicker(lk, timeSplitAvailable(runs)), qdPicker}, g.pickers...), Hidden: g.hiddenNote(len(qds), string(l.x)+" values"),
		Format: Format{Tooltip: "dist", X: "us", Y: "pct", XName: string(l.x)}}
	c.Columns = append(l.columns(false), string(l.x), "repeats", "failed", lk.Name()+"_us", "ios", "percent_ios")

	line := echarts.NewLine()
	how := lk.Title() + " histograms of all repeats merged, 8 bins per doubling"
	if n := blockNote(lk, runs); n != "" {
		how += " · " + n
	}
	if len(qds) > 1 || len(qds) == 1 && qds[0] != "" {
		how = string(l.x) + " " + strings.Join(qds, ", ") + " · " + how
	}
	if len(g.series) > 1 && len(qds) > 1 {
		how += "; line style: " + string(l.x)
	}
	line.SetGlobalOptions(plotOptions(c.Title, subtitle(runs, g, how),
		"item", xAxisOpts(dirTitle+lk.Name()+" (µs)", "log"), opts.YAxis{Name: "% of I/Os", Type: "value", SplitLine: splitLine()})...)
	for si, s := range g.series {
		for k, qd := range qds {
			cell := s.cells[qd]
			if cell == nil {
				continue
			}
			h, done, failed := latOf(cell.steps, q.dirIndex(), lk)
			prefix := append(l.row(s.run, qd, s.group, false), qd, strconv.Itoa(done), strconv.Itoa(failed))
			bins := distributionOf(h)
			if len(bins) == 0 {
				c.Rows = append(c.Rows, append(slices.Clone(prefix), "", "", ""))
			}
			data := make([]item, len(bins))
			for i, b := range bins {
				data[i] = item{Value: []float64{b.mid, b.percent}, N: done}
				c.Rows = append(c.Rows, append(slices.Clone(prefix), num(b.mid), strconv.FormatUint(b.ios, 10), num(b.percent)))
			}
			// A run that does not set the x axis (iodepth in no step's
			// options) has one x value, "": its series are named alone.
			name := s.name
			if qd != "" {
				name = strings.TrimSpace(s.name + " " + string(l.x) + "=" + qd)
			}
			// One group of one run: a colour per iodepth. Else the
			// series' colour (a compared run's: its host's, as on the
			// page's other charts), a dash per line of that colour; past
			// the dashes (six rates of one engine), the dashes again
			// with a marker on each bin, a marker of their own.
			style := lineStyle(palette[k%len(palette)], 0, 0, false)
			if len(g.series) > 1 || l.compare {
				j := ofColour(g.series[:si], s)*len(qds) + k
				style = lineStyle(s.color, j, s.runAt+j/len(dashes), j >= len(dashes))
			}
			line.AddSeries(name, nil, style...)
			setData(line.MultiSeries, data)
			c.Format.Groups = append(c.Format.Groups, si)
		}
	}
	var err error
	c.Option, err = optionJSON(line)
	return c, err
}

// ofColour counts the series before s of its colour: its lines' place
// among the dashes of that colour (the lines draw no symbol to tell them
// apart).
func ofColour(before []*series, s *series) int {
	n := 0
	for _, o := range before {
		if o.color == s.color {
			n++
		}
	}
	return n
}
