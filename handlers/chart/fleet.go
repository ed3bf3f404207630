package chart

import (
	"fmt"
	"slices"
	"strconv"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"iolab/bench/summary"
	"iolab/bench/units"
)

// Fleet is a group's IOPS over time: the fleet's, every host's I/Os on
// the wall clock summed (summary.FleetTime), and each host's own line. It
// is drawn from a group, not from runs, so it is no row of kindTable: the
// group page draws it, and its CSV is the group's fleet.csv.
const Fleet Kind = "fleet"

// fleetColour is the fleet's line: darker than any host's.
const fleetColour = "#222222"

// FleetTimeline draws job (0-based) of step seq (1-based) of f; a
// picker chooses the step (the query parameter fleet_step). Its table is
// the series: the interval's end, the fleet's IOPS and each host's.
func FleetTimeline(f *summary.Fleet, seq, job int, runs []LoadedRun) (*Chart, error) {
	k := slices.IndexFunc(f.Steps, func(s summary.FleetStep) bool { return s.Seq == seq })
	if k < 0 || job < 0 || job >= len(f.Steps[k].Jobs) {
		return nil, &QueryError{Field: "fleet_step", Msg: fmt.Sprintf("fleet_step: the group has no step %d with a job %d", seq, job+1)}
	}
	st := &f.Steps[k]
	j := &st.Jobs[job]
	c := &Chart{Kind: Fleet, Title: fmt.Sprintf("Fleet IOPS over time, step %d", seq),
		Format: Format{Tooltip: "time", X: "s", Y: "iops"}, File: fmt.Sprintf("iolab-fleet-step%d", seq)}
	c.Columns = []string{"time_s", "fleet_iops"}
	names := make([]string, len(j.Hosts))
	for i, h := range j.Hosts {
		names[i] = h.Host
		c.Columns = append(c.Columns, h.Host+"_iops")
	}
	col := hostColours(slices.Sorted(slices.Values(names)), runs)
	line := echarts.NewLine()
	fleet := make([]opts.LineData, len(j.Time.Series))
	hosts := make([][]opts.LineData, len(j.Hosts))
	for i, p := range j.Time.Series {
		x := p.At.Seconds()
		fleet[i] = opts.LineData{Value: []any{x, p.Fleet}}
		row := []string{num(x), num(p.Fleet)}
		for h, v := range p.Hosts {
			if v == nil {
				hosts[h] = append(hosts[h], opts.LineData{Value: []any{x, missing}})
				row = append(row, "")
				continue
			}
			hosts[h] = append(hosts[h], opts.LineData{Value: []any{x, *v}})
			row = append(row, num(*v))
		}
		c.Rows = append(c.Rows, row)
	}
	few := len(j.Time.Series) <= 40
	line.AddSeries("fleet", fleet, echarts.WithLineChartOpts(opts.LineChart{ShowSymbol: opts.Bool(few), SymbolSize: 6}),
		echarts.WithItemStyleOpts(opts.ItemStyle{Color: fleetColour}),
		echarts.WithLineStyleOpts(opts.LineStyle{Color: fleetColour, Width: 3}))
	// The stragglers first, then the group's order, up to maxSeries
	// lines in all: a reader cannot tell more apart. The CSV has every
	// host.
	order := make([]int, len(j.Hosts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return boolOrder(j.Hosts[b].Straggler != "") - boolOrder(j.Hosts[a].Straggler != "")
	})
	drawn := order[:min(len(order), maxSeries-1)]
	slices.Sort(drawn)
	for m, h := range drawn {
		name := j.Hosts[h].Host
		if j.Hosts[h].Straggler != "" {
			name += " (straggler)"
		}
		line.AddSeries(name, hosts[h], lineStyle(col.of(j.Hosts[h].Host), 1, m, few)...)
	}
	if left := len(j.Hosts) - len(drawn); left > 0 {
		c.Hidden = fmt.Sprintf("%d hosts left out to stay readable (the stragglers are drawn first); the CSV has every host", left)
	}
	how := fmt.Sprintf("%s · every host's I/Os on the wall clock, summed per %s", j.Name, units.Nanos(float64(j.Time.Interval)))
	switch {
	case j.Time.Apart:
		how = j.Name + " · the hosts did not run at the same time: no fleet IOPS"
	case !j.Time.Aligned:
		how = j.Name + " · a host kept no samples: no IOPS over time"
	}
	if len(st.Missing) > 0 {
		how += " · without " + strconv.Itoa(len(st.Missing)) + " hosts (step not done)"
	}
	line.SetGlobalOptions(plotOptions(c.Title, how, "axis",
		timeAxis("time since the first host's start (s)"), opts.YAxis{Name: "IOPS", Type: "value", SplitLine: splitLine()})...)
	raw, err := optionJSON(line)
	if err != nil {
		return nil, err
	}
	c.Option = raw
	return c, nil
}

func boolOrder(b bool) int {
	if b {
		return 1
	}
	return 0
}

// FleetStepPicker picks the step the fleet chart draws, of those whose
// first job has IOPS over time.
func FleetStepPicker(f *summary.Fleet, seq int) Picker {
	p := Picker{Param: "fleet_step", Label: "step", Single: true}
	for _, st := range f.Steps {
		if len(st.Jobs) == 0 || len(st.Jobs[0].Time.Series) == 0 {
			continue
		}
		p.Options = append(p.Options, PickerOption{Value: strconv.Itoa(st.Seq), Label: fmt.Sprintf("%d: %s", st.Seq, st.Label), On: st.Seq == seq})
	}
	return p
}

// hostColours are the hosts' colours on the fleet chart: those the
// group page's other charts give them where hosts are their series (one
// colourSet), the pinned colours of the values the runs' plans sweep (the
// engines, the schedulers, which those charts colour when they are their
// series) kept apart, so that a host never wears an engine's colour on
// the same page.
func hostColours(names []string, runs []LoadedRun) colours {
	var values []string
	for _, r := range runs {
		for _, sw := range r.Run.Plan.Sweeps {
			for _, v := range sw.Values {
				if _, ok := pinned[v]; ok && !slices.Contains(values, v) {
					values = append(values, v)
				}
			}
		}
	}
	return colourSet(append(values, names...))
}
