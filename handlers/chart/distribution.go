package chart

import (
	"slices"
	"strconv"
	"strings"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"iolab/bench/hist"
)

// Distribution is the clat distribution at chosen iodepths, overlaid; x
// log (µs), y % of I/Os.
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

// buildDistribution overlays the clat distributions at the chosen
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
	}
	_, dirTitle := dirPrefix(q)
	c := &Chart{Title: dirTitle + "Completion latency distribution"}
	c.Columns = append(l.columns(false), string(l.x), "repeats", "failed", "clat_us", "ios", "percent_ios")

	line := echarts.NewLine()
	line.SetGlobalOptions(plotOptions(c.Title,
		describeRuns(runs)+" · "+string(l.x)+" "+strings.Join(qds, ", ")+" · clat histograms of all repeats merged",
		fileName(q.Kind, runs), "axis",
		xAxisOpts(dirTitle+"clat (µs)", "log"), opts.YAxis{Name: "% of I/Os", Type: "value"})...)
	for si, s := range g.series {
		for k, qd := range qds {
			cell := s.cells[qd]
			if cell == nil {
				continue
			}
			h, done, failed := clatOf(cell.steps, q.dirIndex())
			prefix := append(l.row(s.run, qd, s.group, false), qd, strconv.Itoa(done), strconv.Itoa(failed))
			bins := distributionOf(h)
			if len(bins) == 0 {
				c.Rows = append(c.Rows, append(slices.Clone(prefix), "", "", ""))
			}
			data := make([]opts.LineData, len(bins))
			for i, b := range bins {
				data[i] = opts.LineData{Value: []float64{b.mid, b.percent}}
				c.Rows = append(c.Rows, append(slices.Clone(prefix), num(b.mid), strconv.FormatUint(b.ios, 10), num(b.percent)))
			}
			name := string(l.x) + "=" + qd
			if s.name != "" {
				name = s.name + " " + name
			}
			style := lineStyle(k, 0, false) // one group: a colour per iodepth
			if len(g.series) > 1 {
				style = lineStyle(si, k, false)
			}
			line.AddSeries(name, data, style...)
		}
	}
	var err error
	c.Option, err = optionJSON(line)
	return c, err
}
