package chart

import (
	"strconv"

	"iolab/bench/summary"
)

// PTSWSAT is write saturation: each round's IOPS against the GiB
// written by its end (the bottom axis) and against the time since the
// first round began (the top axis).
const PTSWSAT Kind = "pts-wsat"

// ptsWSATAvailable: a write saturation run.
func ptsWSATAvailable(p *summary.PTSReport) bool { return p.Test.Saturate && len(p.WSAT) > 0 }

func buildPTSWSAT(q Query, runs []*runView) (*Chart, error) {
	p, err := ptsOf(q, runs)
	if err != nil {
		return nil, err
	}
	if !ptsWSATAvailable(p) {
		return nil, queryError("kind", "the %s chart draws a write saturation run, and %s is a %s test", q.Kind, runs[0].label, p.Test.Name)
	}
	c := &Chart{Title: ptsTitle(p, "IOPS against data written and time"), Columns: []string{"round", "seconds", "gib_written", "iops"},
		Format: Format{Tooltip: "lines", Y: "iops", XName: "GiB written"}}
	var byGiB, byTime [][]float64
	var iops []float64
	for _, w := range p.WSAT {
		gib, s := float64(w.Written)/(1<<30), w.Elapsed.Seconds()
		byGiB, byTime = append(byGiB, []float64{gib, w.IOPS}), append(byTime, []float64{s, w.IOPS})
		iops = append(iops, w.IOPS)
		c.Rows = append(c.Rows, []string{strconv.Itoa(w.Round + 1), num(s), num(gib), num(w.IOPS)})
	}
	sub := describeRuns(runs[:1]) + " · 4 KiB random writes, a point per round: solid against the GiB written (bottom axis), dashed against the time (top axis)"
	c.Option, err = rawOption(c.Title, sub, map[string]any{
		"grid": map[string]any{"top": "96", "bottom": "64", "left": "24", "right": "40", "containLabel": true},
		"xAxis": []map[string]any{
			valueAxis("GiB written", false, map[string]any{"nameLocation": "middle", "position": "bottom"}),
			valueAxis("seconds", false, map[string]any{"nameLocation": "middle", "position": "top", "splitLine": map[string]any{"show": false}}),
		},
		"yAxis": valueAxis("IOPS", logAxis(iops), map[string]any{"nameLocation": "middle", "nameRotate": 90, "nameGap": 56}),
		"series": []map[string]any{
			{"type": "line", "name": "IOPS by GiB written", "xAxisIndex": 0, "data": byGiB, "symbolSize": 5, "color": palette[0],
				"lineStyle": map[string]any{"width": 2, "color": palette[0]}},
			{"type": "line", "name": "IOPS by time", "xAxisIndex": 1, "data": byTime, "symbolSize": 5, "color": palette[1],
				"lineStyle": map[string]any{"width": 1, "type": "dashed", "color": palette[1]}},
		},
	})
	return c, err
}
