package chart

import (
	"fmt"
	"math"

	"iolab/bench/pts"
	"iolab/bench/summary"
)

// PTSMatrix is the IOPS test's measurement as a heat map: block size ×
// read/write mix, each cell the element's IOPS averaged over the
// steady-state window.
const PTSMatrix Kind = "pts-matrix"

// ptsMatrixAvailable: the test tracks IOPS over a matrix of mixes ×
// block sizes (the latency test's matrix is the same, its measure the
// response time: its table has it).
func ptsMatrixAvailable(p *summary.PTSReport) bool {
	return len(p.Tracking) > 0 && p.Tracking[0].Metric == pts.MetricIOPS && ptsAxisValues(p, "rwmixread") != nil && ptsAxisValues(p, "bs") != nil && len(p.Window) > 0
}

// ptsAxisValues are the values of the matrix's axis option; nil when it
// has none.
func ptsAxisValues(p *summary.PTSReport, option string) []string {
	for _, a := range p.Matrix {
		if a.Option == option {
			return a.Values
		}
	}
	return nil
}

// buildPTSMatrix draws the heat map, a cell per element labelled with
// its IOPS, coloured on a log scale (4 KiB's IOPS are tens of times 1
// MiB's).
func buildPTSMatrix(q Query, runs []*runView) (*Chart, error) {
	p, err := ptsOf(q, runs)
	if err != nil {
		return nil, err
	}
	if !ptsMatrixAvailable(p) {
		return nil, queryError("kind", "the %s chart draws a matrix of mixes × block sizes, and a %s test has none", q.Kind, p.Test.Name)
	}
	mixes, sizes := ptsAxisValues(p, "rwmixread"), ptsAxisValues(p, "bs")
	c := &Chart{Title: ptsTitle(p, "IOPS by block size × read/write mix"), Columns: []string{"bs", "rwmixread", "iops"},
		Format: Format{Tooltip: "bars", Y: "iops", XName: "mix"}}
	var mixNames []string
	for _, m := range mixes {
		mixNames = append(mixNames, mixName(m))
	}
	var data [][]any
	lo, hi := math.Inf(1), 0.0
	for y, bs := range sizes {
		for x, m := range mixes {
			e := p.Element(map[string]string{"rwmixread": m, "bs": bs})
			if e < 0 || p.Window[e].Rounds == 0 {
				continue
			}
			v := p.Window[e].TotalIOPS()
			lo, hi = min(lo, v), max(hi, v)
			// The colour is the log of the IOPS, the label the IOPS.
			data = append(data, []any{x, y, math.Log10(max(v, 1)), math.Round(v)})
			c.Rows = append(c.Rows, []string{bs, m, num(v)})
		}
	}
	if hi == 0 {
		lo, hi = 1, 10
	}
	sub := describeRuns(runs[:1]) + fmt.Sprintf(" · each element's IOPS over the steady-state window (rounds %d–%d); colour on a log scale", p.WindowFirst+1, p.WindowLast+1)
	c.Option, err = rawOption(c.Title, sub, map[string]any{
		"tooltip": map[string]any{"show": true, "trigger": "item"},
		"grid":    map[string]any{"top": "72", "bottom": "88", "left": "24", "right": "40", "containLabel": true},
		"xAxis":   map[string]any{"type": "category", "name": "read/write mix (%)", "nameLocation": "middle", "nameGap": 30, "data": mixNames, "splitArea": map[string]any{"show": true}},
		"yAxis":   map[string]any{"type": "category", "name": "block size", "nameLocation": "start", "data": sizes, "inverse": true, "splitArea": map[string]any{"show": true}},
		"visualMap": map[string]any{"type": "continuous", "dimension": 2, "min": math.Log10(max(lo, 1)), "max": math.Log10(max(hi, 1)),
			"orient": "horizontal", "left": "center", "bottom": "0", "itemHeight": 240, "text": []string{"more IOPS", "fewer"},
			"inRange": map[string]any{"color": []string{"#deebf7", "#6baed6", "#08519c"}}, "calculable": false},
		"legend": map[string]any{"show": false},
		"series": []map[string]any{{"type": "heatmap", "name": "IOPS", "data": data,
			"label": map[string]any{"show": true, "formatter": "{@[3]}"}, "itemStyle": map[string]any{"borderColor": "#fff", "borderWidth": 1}}},
	})
	return c, err
}

// mixName is a rwmixread value as the specification writes a mix:
// "65/35".
func mixName(rwmixread string) string {
	var n int
	if _, err := fmt.Sscanf(rwmixread, "%d", &n); err != nil {
		return rwmixread
	}
	return fmt.Sprintf("%d/%d", n, 100-n)
}
