package chart

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"iolab/bench/stats"
	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/bench/system"
)

// CPU is per swept point: us+sy, hi+si, iowait, idle as stacked bars
// that add up to 100 %.
const CPU Kind = "cpu"

// buildCPU draws the whole machine's CPU time over each step, in top's
// terms: us+sy is work, hi+si interrupts, iowait is idle time with I/O
// outstanding (a thread blocked in io_uring_enter shows up there), idle.
func buildCPU(q Query, runs []*runView) (*Chart, error) {
	axes, steal := cpuAxes(runs)
	parts := cpuParts
	if !steal {
		parts = parts[:len(parts)-1]
	}
	parts = append(parts[:len(parts):len(parts)], cpuOther)
	cats, points := cpuPoints(runs, axes)
	xName := "step"
	if len(axes) > 0 {
		names := make([]string, len(axes))
		for i, a := range axes {
			names[i] = string(a)
		}
		xName = strings.Join(names, " × ")
	}

	c := &Chart{Title: "CPU time per " + xName, Format: Format{Tooltip: "bars", Y: "pct", XName: xName}}
	if len(runs) > 1 {
		c.Columns = append(c.Columns, "run")
	}
	for _, a := range axes {
		c.Columns = append(c.Columns, string(a))
	}
	c.Columns = append(c.Columns, "repeats", "failed")
	for _, p := range parts {
		c.Columns = append(c.Columns, p.column)
	}

	bar := echarts.NewBar()
	bar.SetGlobalOptions(plotOptions(c.Title, subtitle(runs, nil, "all CPUs, % of their time over each step, median over repeats; iowait is idle time; other: what the parts' medians leave of 100 %"),
		"axis", cpuXAxis(xName, cats), opts.YAxis{Name: "% of CPU time", Type: "value", Max: 100, SplitLine: splitLine()})...)
	bar.SetXAxis(cats)
	for _, r := range runs {
		addCPURun(c, bar, r, len(runs) > 1, parts, cats, points)
	}
	raw, err := optionJSON(bar)
	if err != nil {
		return nil, err
	}
	c.Option, err = lineHeight(raw, 14)
	return c, err
}

// lineHeight sets the x axis labels' line height, which go-echarts
// writes as a string and echarts wants a number of: lines of a wrapped
// label 14 px apart, the first clear of the axis.
func lineHeight(raw json.RawMessage, px int) (json.RawMessage, error) {
	var opt map[string]any
	if err := json.Unmarshal(raw, &opt); err != nil {
		return nil, fmt.Errorf("chart: option: %w", err)
	}
	for _, x := range opt["xAxis"].([]any) {
		x := x.(map[string]any)
		label, _ := x["axisLabel"].(map[string]any)
		if label == nil {
			label = map[string]any{}
			x["axisLabel"] = label
		}
		label["lineHeight"] = px
	}
	return json.Marshal(opt)
}

// cpuPart is one part of the CPU's time the chart stacks: its series,
// its column, its colour and its share of a breakdown (nil: other).
type cpuPart struct {
	name, column, color string
	of                  func(*system.CPUBreakdown) float64
}

// cpuParts are the parts stacked, bottom up; steal, the last, only on
// machines that have it (VMs). Their colours are a ramp of slate, darker
// for more work, none of the palette's: on a page whose other charts
// draw libaio in the palette's vermilion, a vermilion "busy" would read
// as libaio's.
var cpuParts = []cpuPart{
	{"busy (us+sy)", "busy_pct", "#2f3b4c", func(c *system.CPUBreakdown) float64 { return c.User + c.System }},
	{"irq (hi+si)", "irq_pct", "#5f7187", func(c *system.CPUBreakdown) float64 { return c.IRQ + c.SoftIRQ }},
	{"iowait", "iowait_pct", "#9aabbf", func(c *system.CPUBreakdown) float64 { return c.IOWait }},
	{"idle", "idle_pct", "#e1e6ec", func(c *system.CPUBreakdown) float64 { return c.Idle }},
	{"steal", "steal_pct", "#8a7a66", func(c *system.CPUBreakdown) float64 { return c.Steal }},
}

// cpuOther is the top of every stack: what the other parts' medians
// leave of 100 %. Each step's parts add up to 100 % (system.CPUDelta),
// their medians over repeats need not (one repeat's idle, another's
// iowait), and a stack short of 100 % reads as CPU time unaccounted for.
var cpuOther = cpuPart{"other", "other_pct", "#d4c4a0", nil}

// cpuMedians are the medians over done of each of parts, the last
// (other) what the others leave of 100 %; where the medians add up to
// more, they are scaled down to 100 % and other is 0.
func cpuMedians(parts []cpuPart, done []*summary.StepView) []float64 {
	out := make([]float64, len(parts))
	sum := 0.0
	for k, p := range parts {
		if p.of == nil {
			continue
		}
		vals := make([]float64, len(done))
		for i, st := range done {
			vals[i] = p.of(&st.CPU)
		}
		out[k] = stats.Median(vals)
		sum += out[k]
	}
	for k, p := range parts {
		switch {
		case p.of == nil:
			out[k] = max(0, 100-sum)
		case sum > 100:
			out[k] *= 100 / sum
		}
	}
	return out
}

// cpuAxes are the axes any of runs sweeps, and whether any done step
// saw steal time.
func cpuAxes(runs []*runView) (axes []sweep.Axis, steal bool) {
	for _, r := range runs {
		for _, s := range r.plan.Swept() {
			if !slices.Contains(axes, s.Axis) {
				axes = append(axes, s.Axis)
			}
		}
		for i := range r.steps {
			steal = steal || (done(&r.steps[i]) && r.steps[i].CPU.Steal > 0)
		}
	}
	return axes, steal
}

// cpuPoint is one bar of a run: the steps at one combination of the
// swept values, those done and how many failed.
type cpuPoint struct {
	run    *runView
	values []string
	done   []*summary.StepView
	failed int
}

// cpuLabel is a bar's category: its values, one a line, each wrapped
// (wrapValue).
func cpuLabel(values []string) string {
	lines := make([]string, len(values))
	for i, v := range values {
		lines[i] = wrapValue(v)
	}
	return strings.Join(lines, "\n")
}

// wrapValue breaks a value longer than a bar is wide (8 characters, at
// 12 px, under a bar of a dozen) before each "+" (io_uring, +sqpoll) and
// after each "=" (fadvise_hint=, 0), so that neighbours' labels do not
// run into each other ("io_uring+sqpolllibaio").
func wrapValue(v string) string {
	if len(v) <= 8 {
		return v
	}
	v = strings.ReplaceAll(v, "+", "\n+")
	return strings.ReplaceAll(v, "=", "=\n")
}

// cpuPoints are the bars: the x axis is the swept values (cats), each
// point the median over its done repeats; a run without sweeps is one
// bar.
func cpuPoints(runs []*runView, axes []sweep.Axis) (cats []string, points []*cpuPoint) {
	for _, r := range runs {
		for i := range r.steps {
			st := &r.steps[i]
			values := make([]string, len(axes))
			for k, a := range axes {
				values[k] = r.value(st.Step.Axes, a)
			}
			k := slices.IndexFunc(points, func(p *cpuPoint) bool { return p.run == r && slices.Equal(p.values, values) })
			if k < 0 {
				points = append(points, &cpuPoint{run: r, values: values})
				k = len(points) - 1
			}
			switch summary.StatusOf(st) {
			case sweep.StepDone:
				points[k].done = append(points[k].done, st)
			case sweep.StepFailed:
				points[k].failed++
			}
			if l := cpuLabel(values); !slices.Contains(cats, l) {
				cats = append(cats, l)
			}
		}
	}
	return cats, points
}

// addCPURun adds run r's bars to bar, a stack of parts per category, and
// their rows to c; multi says whether several runs are drawn.
func addCPURun(c *Chart, bar *echarts.Bar, r *runView, multi bool, parts []cpuPart, cats []string, points []*cpuPoint) {
	data := make([][]item, len(parts))
	for k := range data {
		data[k] = make([]item, len(cats))
		for i := range data[k] {
			data[k][i] = item{Value: missing}
		}
	}
	for _, pt := range points {
		if pt.run != r {
			continue
		}
		var row []string
		if multi {
			row = append(row, strconv.FormatInt(r.id, 10))
		}
		row = append(row, pt.values...)
		row = append(row, strconv.Itoa(len(pt.done)), strconv.Itoa(pt.failed))
		x := slices.Index(cats, cpuLabel(pt.values))
		if len(pt.done) == 0 {
			row = append(row, make([]string, len(parts))...)
			c.Rows = append(c.Rows, row)
			continue
		}
		for k, v := range cpuMedians(parts, pt.done) {
			data[k][x] = item{Value: v, N: len(pt.done)}
			row = append(row, num(v))
		}
		c.Rows = append(c.Rows, row)
	}
	for k, p := range parts {
		name := p.name
		if multi {
			name = r.name + " " + name
		}
		bar.AddSeries(name, nil, echarts.WithBarChartOpts(opts.BarChart{Stack: r.label, BarCategoryGap: "35%"}),
			echarts.WithItemStyleOpts(opts.ItemStyle{Color: p.color}))
		setData(bar.MultiSeries, data[k])
	}
}

// cpuXAxis labels every bar: a bar of two swept axes has its values on
// two lines, a wrapped value on more; the axis' name goes below the
// tallest.
func cpuXAxis(name string, cats []string) opts.XAxis {
	x := xAxisOpts(name, "category")
	x.AxisLabel = &opts.AxisLabel{Interval: "0", Margin: 10}
	lines := 1
	for _, c := range cats {
		lines = max(lines, strings.Count(c, "\n")+1)
	}
	if lines > 1 {
		x.NameGap = 22 + 14*lines
	}
	return x
}
