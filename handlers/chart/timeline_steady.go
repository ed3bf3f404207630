package chart

import (
	"fmt"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"iolab/bench"
	"iolab/bench/summary"
	"iolab/bench/units"
)

// steadyMark is a step's steady-state window (ss_dur) on the timeline:
// the window shaded, its one-a-second samples, and the criterion —
// the band of the allowed deviation around the window's mean, or the
// fitted line whose slope is judged — in IOPS when IOPS are judged.
type steadyMark struct {
	area     phase
	samples  []item
	criteria []item // the band's edges or the fitted line; missing between
	text     string
}

// steadyOf is the steady-state window of the step's drawn job (the first
// of its results with one).
func steadyOf(res *summary.ResultView) *bench.SteadyResult {
	if res == nil {
		return nil
	}
	for _, g := range res.Groups {
		for k := range g.Jobs {
			if s := g.Jobs[k].Steady; s != nil && len(s.IOPS) > 0 {
				return s
			}
		}
	}
	return nil
}

// markSteady places s on a time axis whose measured window starts at
// measure (s).
func markSteady(s *bench.SteadyResult, measure float64) steadyMark {
	n := len(s.IOPS)
	if !s.Full {
		// A window that never filled: its samples, then fio's zeros.
		for n > 0 && s.IOPS[n-1] == 0 && s.BW[n-1] == 0 {
			n--
		}
	}
	last := measure + s.Last.Seconds()
	at := func(k int) float64 { return last - float64(n-1-k) }
	var m steadyMark
	var sum float64
	for k := range n {
		m.samples = append(m.samples, item{Value: []float64{at(k), float64(s.IOPS[k])}})
		sum += float64(s.IOPS[k])
	}
	if n == 0 {
		return m
	}
	m.area = phase{name: "steady", from: at(0) - 1, to: last}
	m.text = summary.SteadyText(s)
	if !s.Full {
		return m // never judged
	}
	// The criterion in IOPS: as judged, or a bandwidth's at the window's
	// bytes per I/O when every sample has the same (one block size);
	// without one it cannot be drawn over IOPS.
	scale := 1.0
	if s.Metric == bench.SteadyBW {
		per, ok := bytesPerIO(s.IOPS[:n], s.BW[:n])
		if !ok {
			return m
		}
		scale = 1 / per
		m.text += fmt.Sprintf(" (bandwidth, drawn in IOPS of %s)", units.Bytes(per))
	}
	mean := sum / float64(n)
	if s.Slope {
		// fio's least-squares line, x in samples, through the mean.
		mid := float64(n-1) / 2
		slope := s.SlopeValue * scale
		m.criteria = []item{{Value: []float64{at(0), mean - slope*mid}}, {Value: []float64{at(n - 1), mean + slope*mid}}}
		return m
	}
	dev := s.Limit * scale
	if s.Pct {
		dev = s.Limit / 100 * mean
	}
	m.criteria = []item{{Value: []float64{at(0) - 1, mean + dev}}, {Value: []float64{last, mean + dev}}, {Value: missing},
		{Value: []float64{at(0) - 1, mean - dev}}, {Value: []float64{last, mean - dev}}}
	return m
}

// bytesPerIO is the window's bytes per I/O when every sample has the
// same, within the rounding of fio's per-second rates (0.5 %).
func bytesPerIO(iops, bw []uint64) (float64, bool) {
	var lo, hi float64
	for i := range iops {
		if iops[i] == 0 {
			return 0, false
		}
		r := float64(bw[i]) / float64(iops[i])
		if i == 0 || r < lo {
			lo = r
		}
		hi = max(hi, r)
	}
	return (lo + hi) / 2, len(iops) > 0 && hi <= lo*1.005
}

// addSteady draws the marks' samples and criteria on line.
func addSteady(line *echarts.Line, marks []steadyMark) {
	var samples, criteria []item
	for _, m := range marks {
		samples = append(append(samples, m.samples...), item{Value: missing})
		if len(m.criteria) > 0 {
			criteria = append(append(criteria, m.criteria...), item{Value: missing})
		}
	}
	color := palette[2]
	line.AddSeries("steady-state samples", nil,
		echarts.WithLineChartOpts(opts.LineChart{Symbol: "diamond", SymbolSize: 8, ShowSymbol: opts.Bool(true)}),
		echarts.WithItemStyleOpts(opts.ItemStyle{Color: color}),
		echarts.WithLineStyleOpts(opts.LineStyle{Color: color, Width: 0}))
	setData(line.MultiSeries, samples)
	if len(criteria) > 0 {
		line.AddSeries("steady-state criterion", nil,
			echarts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(false)}),
			echarts.WithItemStyleOpts(opts.ItemStyle{Color: color}),
			echarts.WithLineStyleOpts(opts.LineStyle{Color: color, Type: "dashed", Width: 1.5}))
		setData(line.MultiSeries, criteria)
	}
}
