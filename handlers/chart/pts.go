package chart

import (
	"encoding/json"
	"fmt"
	"math"

	"iolab/bench/pts"
	"iolab/bench/summary"
)

// The PTS kinds draw one PTS run (bench/summary's PTSReport of it): its
// report's plots, the specification's. A query of several runs draws
// the first's; the compare page has its own view of two PTS runs.

// ptsAvailable: every run is a PTS test; with ok, one ok takes.
func ptsAvailable(ok func(*summary.PTSReport) bool) func(runs []*runView) bool {
	return func(runs []*runView) bool {
		return every(runs, func(r *runView) bool {
			p := r.pts()
			return p != nil && len(p.Rounds) > 0 && (ok == nil || ok(p))
		})
	}
}

// pts is the run's PTS report, read once for the kinds' availability
// and builders alike (every step's histograms merged); nil when the run
// is not a PTS test.
func (r *runView) pts() *summary.PTSReport {
	if r.plan == nil || r.plan.PTS == nil {
		return nil
	}
	if r.ptsReport == nil {
		r.ptsReport = summary.PTSReportOf(r.plan, r.steps)
	}
	return r.ptsReport
}

// ptsOf is the first run's PTS report, or the query error of a run that
// is not a PTS test.
func ptsOf(q Query, runs []*runView) (*summary.PTSReport, error) {
	if len(runs) == 0 {
		return nil, queryError("run", "the %s chart draws a PTS run", q.Kind)
	}
	p := runs[0].pts()
	if p == nil || len(p.Rounds) == 0 {
		return nil, queryError("kind", "the %s chart draws a PTS test, and %s is not one", q.Kind, runs[0].label)
	}
	return p, nil
}

// ptsMetric is the value of element e's figures the test tracks, with
// its unit as Format.Y says it and an axis name.
func ptsMetric(p *summary.PTSReport) (value func(f *summary.PTSFigures) float64, unit, name string) {
	metric := pts.MetricIOPS
	if len(p.Tracking) > 0 {
		metric = p.Tracking[0].Metric
	}
	switch metric {
	case pts.MetricWriteBW, pts.MetricReadBW:
		return func(f *summary.PTSFigures) float64 { return f.TotalBW() / 1e6 }, "", "bandwidth (MB/s)"
	case pts.MetricMeanLat:
		return func(f *summary.PTSFigures) float64 { return f.MeanLat() / 1e3 }, "us", "mean response time (µs)"
	}
	return func(f *summary.PTSFigures) float64 { return f.TotalIOPS() }, "iops", "IOPS"
}

// ptsScale is what ptsMetric's value is of a tracking variable's raw
// value (bytes/s and ns as MB/s and µs).
func ptsScale(p *summary.PTSReport) float64 {
	if len(p.Tracking) == 0 {
		return 1
	}
	switch p.Tracking[0].Metric {
	case pts.MetricWriteBW, pts.MetricReadBW:
		return 1e-6
	case pts.MetricMeanLat:
		return 1e-3
	}
	return 1
}

// logAxis reports whether values span a decade or more: a log axis
// then shows the small ones.
func logAxis(values []float64) bool {
	lo, hi := math.Inf(1), 0.0
	for _, v := range values {
		if v > 0 {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	return hi > 0 && hi/lo >= 10
}

// ptsTitle is the chart's title with the test's.
func ptsTitle(p *summary.PTSReport, what string) string {
	return fmt.Sprintf("PTS %s: %s", p.Test.Title, what)
}

// rawOption is an option built as a map (what go-echarts' types lack:
// two x axes, visual maps, mark lines' styles).
func rawOption(title, subtitle string, option map[string]any) (json.RawMessage, error) {
	base := map[string]any{
		"title": map[string]any{"text": title, "subtext": subtitle, "left": "10", "top": "6",
			"textStyle": map[string]any{"fontSize": 16}, "subtextStyle": map[string]any{"fontSize": 12, "color": "#555"}},
		"legend":    map[string]any{"show": true, "type": "scroll", "bottom": "0"},
		"tooltip":   map[string]any{"show": true, "trigger": "axis"},
		"animation": false,
		"color":     palette,
		"grid":      map[string]any{"top": "72", "bottom": "64", "left": "24", "right": "40", "containLabel": true},
	}
	for k, v := range option {
		// Axes are lists, as go-echarts writes them and the pages'
		// scripts read them.
		if a, ok := v.(map[string]any); ok && (k == "xAxis" || k == "yAxis") {
			v = []map[string]any{a}
		}
		base[k] = v
	}
	b, err := json.Marshal(base)
	if err != nil {
		return nil, fmt.Errorf("chart: option: %w", err)
	}
	return b, nil
}

// valueAxis is a value axis named name, logarithmic when log: a y
// axis's name above it, an x axis's under its middle (extra's
// "nameLocation").
func valueAxis(name string, log bool, extra map[string]any) map[string]any {
	a := map[string]any{"type": "value", "name": name,
		"splitLine": map[string]any{"show": true, "lineStyle": map[string]any{"color": "#e6e9ee"}}}
	if extra["nameLocation"] == "middle" {
		a["nameGap"] = 30
	}
	if log {
		a["type"] = "log"
	}
	for k, v := range extra {
		a[k] = v
	}
	return a
}
