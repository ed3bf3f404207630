package chart

import (
	"strconv"

	"iolab/bench/summary"
)

// PTSDIRTH is demand intensity: each point's mean response time against
// its IOPS, a line per number of jobs from the deepest queue to the
// shallowest — the curve whose knee is the device's best outstanding
// I/O — with the 99.99th percentile dashed beside it where the lines
// fit.
const PTSDIRTH Kind = "pts-dirth"

// ptsDIRTHAvailable: a demand intensity run.
func ptsDIRTHAvailable(p *summary.PTSReport) bool { return len(p.DIRTH) > 0 }

func buildPTSDIRTH(q Query, runs []*runView) (*Chart, error) {
	p, err := ptsOf(q, runs)
	if err != nil {
		return nil, err
	}
	if !ptsDIRTHAvailable(p) {
		return nil, queryError("kind", "the %s chart draws a demand intensity run, and %s is a %s test", q.Kind, runs[0].label, p.Test.Name)
	}
	c := &Chart{Title: ptsTitle(p, "response time against IOPS"), Columns: []string{"numjobs", "iodepth", "oio", "iops", "mean_us", "p99.99_us"},
		Format: Format{Tooltip: "lines", Y: "us", XName: "IOPS"}}
	var jobs []int
	for _, d := range p.DIRTH {
		if len(jobs) == 0 || jobs[len(jobs)-1] != d.NumJobs {
			jobs = append(jobs, d.NumJobs)
		}
	}
	// The 99.99th percentiles' lines too while both fit in the lines a
	// chart draws; the table has them all.
	tails := 2*len(jobs) <= maxSeries
	var series []map[string]any
	var lats []float64
	for i, nj := range jobs {
		color := palette[i%len(palette)]
		var mean, tail [][]any
		for _, d := range p.DIRTH {
			if d.NumJobs != nj || d.Window.Rounds == 0 {
				continue
			}
			iops, m, t := d.Window.TotalIOPS(), d.Window.MeanLat/1e3, d.Window.P9999/1e3
			mean = append(mean, []any{iops, m, "OIO " + strconv.Itoa(d.OIO())})
			tail = append(tail, []any{iops, t, "OIO " + strconv.Itoa(d.OIO())})
			lats = append(lats, m, t)
			c.Rows = append(c.Rows, []string{strconv.Itoa(nj), strconv.Itoa(d.IODepth), strconv.Itoa(d.OIO()), num(iops), num(m), num(t)})
		}
		name := strconv.Itoa(nj) + " jobs"
		series = append(series, map[string]any{"type": "line", "name": name + " mean", "data": mean, "color": color, "symbolSize": 7,
			"lineStyle": map[string]any{"width": 2, "color": color},
			"label":     map[string]any{"show": true, "position": "top", "formatter": "{@[2]}", "fontSize": 10}})
		if tails {
			series = append(series, map[string]any{"type": "line", "name": name + " p99.99", "data": tail, "color": color, "symbol": "triangle", "symbolSize": 6,
				"lineStyle": map[string]any{"width": 1, "type": "dashed", "color": color}})
		}
	}
	sub := describeRuns(runs[:1]) + " · each point jobs × iodepth (OIO), over the steady-state window; solid the mean"
	if tails {
		sub += ", dashed the 99.99th percentile"
	} else {
		c.Hidden = "The 99.99th percentiles' lines are left out (8 lines at most): the CSV and the report's table have them."
	}
	c.Option, err = rawOption(c.Title, sub, map[string]any{
		"tooltip": map[string]any{"show": true, "trigger": "item"},
		"xAxis":   valueAxis("IOPS", false, map[string]any{"nameLocation": "middle"}),
		"yAxis":   valueAxis("response time (µs)", logAxis(lats), nil),
		"series":  series,
	})
	return c, err
}
