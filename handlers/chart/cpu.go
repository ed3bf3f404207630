package chart

import (
	"slices"
	"strconv"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/bench/system"
)

// CPU is per step: us+sy, hi+si, iowait, idle as stacked bars.
const CPU Kind = "cpu"

// buildCPU draws the whole machine's CPU time over each step, in top's
// terms: us+sy is work, hi+si interrupts, iowait is idle time with I/O
// outstanding (a thread blocked in io_uring_enter shows up there), idle.
func buildCPU(q Query, runs []*runView) (*Chart, error) {
	parts := []struct {
		name, column string
		of           func(*system.CPUBreakdown) float64
	}{
		{"busy (us+sy)", "busy_pct", func(c *system.CPUBreakdown) float64 { return c.User + c.System }},
		{"irq (hi+si)", "irq_pct", func(c *system.CPUBreakdown) float64 { return c.IRQ + c.SoftIRQ }},
		{"iowait", "iowait_pct", func(c *system.CPUBreakdown) float64 { return c.IOWait }},
		{"idle", "idle_pct", func(c *system.CPUBreakdown) float64 { return c.Idle }},
		{"steal", "steal_pct", func(c *system.CPUBreakdown) float64 { return c.Steal }},
	}
	// Steal only on machines that have it (VMs).
	steal := false
	var axes []sweep.Axis
	var xs []int
	for _, r := range runs {
		for _, s := range r.plan.Swept() {
			if !slices.Contains(axes, s.Axis) {
				axes = append(axes, s.Axis)
			}
		}
		for i := range r.steps {
			st := &r.steps[i]
			steal = steal || (done(st) && st.CPU.Steal > 0)
			if n := st.Step.Seq + 1; !slices.Contains(xs, n) {
				xs = append(xs, n)
			}
		}
	}
	if !steal {
		parts = parts[:len(parts)-1]
	}
	slices.Sort(xs)
	cats := make([]string, len(xs))
	for i, n := range xs {
		cats[i] = strconv.Itoa(n)
	}

	c := &Chart{Title: "CPU time per step"}
	if len(runs) > 1 {
		c.Columns = append(c.Columns, "run")
	}
	c.Columns = append(c.Columns, "step")
	for _, a := range axes {
		c.Columns = append(c.Columns, string(a))
	}
	c.Columns = append(c.Columns, "repeat", "status")
	for _, p := range parts {
		c.Columns = append(c.Columns, p.column)
	}

	bar := echarts.NewBar()
	bar.SetGlobalOptions(plotOptions(c.Title, describeRuns(runs)+" · all CPUs, % of their time over each step",
		fileName(q.Kind, runs), "axis",
		xAxisOpts("step", "category"), opts.YAxis{Name: "% of CPU time", Type: "value", Max: 100})...)
	bar.SetXAxis(cats)
	for _, r := range runs {
		data := make([][]opts.BarData, len(parts))
		for k := range data {
			data[k] = make([]opts.BarData, len(xs))
			for i := range data[k] {
				data[k][i] = opts.BarData{Value: missing}
			}
		}
		for i := range r.steps {
			st := &r.steps[i]
			var row []string
			if len(runs) > 1 {
				row = append(row, strconv.FormatInt(r.id, 10))
			}
			row = append(row, strconv.Itoa(st.Step.Seq+1))
			for _, a := range axes {
				row = append(row, r.value(st.Step.Axes, a))
			}
			status := summary.StepStatus(st)
			row = append(row, strconv.Itoa(st.Step.Repeat+1), status)
			x := slices.Index(xs, st.Step.Seq+1)
			for k, p := range parts {
				if status != sweep.StepDone {
					row = append(row, "")
					continue
				}
				v := p.of(&st.CPU)
				data[k][x] = opts.BarData{Value: v}
				row = append(row, num(v))
			}
			c.Rows = append(c.Rows, row)
		}
		for k, p := range parts {
			name := p.name
			if len(runs) > 1 {
				name = r.label + " " + name
			}
			bar.AddSeries(name, data[k], echarts.WithBarChartOpts(opts.BarChart{Stack: r.label}))
		}
	}
	var err error
	c.Option, err = optionJSON(bar)
	return c, err
}
