package chart

import (
	"fmt"
	"math"
	"strconv"
	"time"

	echarts "github.com/go-echarts/go-echarts/v2/charts"
	"github.com/go-echarts/go-echarts/v2/opts"

	"iolab/bench"
	"iolab/bench/summary"
)

// LatencyTimeline is one job's latency per interval — p50, p99 and max
// from each interval's own histogram — of one step, or of every step one
// after the other, drawn beside the IOPS timeline so a p99 spike can be
// placed in time.
const LatencyTimeline Kind = "lattime"

func buildLatencyTimeline(q Query, runs []*runView) (*Chart, error) {
	c := &Chart{Title: "Latency over time, every step", Format: Format{Tooltip: "time", X: "s", Y: "us"}}
	if q.Step > 0 {
		c.Title = fmt.Sprintf("Latency over time, step %d", q.Step)
	}
	if len(runs) > 1 {
		c.Columns = append(c.Columns, "run")
	}
	c.Columns = append(c.Columns, "step", "job", "time_s", "run_time_s", "latency", "ios", "p50_us", "p99_us", "max_us")
	line := echarts.NewLine()
	latencies := map[string]bool{}
	clones := false
	var areas []phase
	for i, r := range runs {
		var steps []*summary.StepView
		for k := range r.steps {
			if q.Step == 0 || r.steps[k].Step.Seq == q.Step-1 {
				steps = append(steps, &r.steps[k])
			}
		}
		if q.Step > 0 && len(steps) == 0 {
			return nil, queryError("step", "%s has no step %d", r.label, q.Step)
		}
		data := make([][]item, 3)
		t0 := steps0(steps)
		next := 0.0
		for _, st := range steps {
			measure, phases := placeStep(st, t0, next, r.plan.Discard, q.Step > 0)
			if i == 0 {
				areas = append(areas, phases...)
			}
			next = phases[len(phases)-1].to
			jr, n := firstResult(st)
			clones = clones || n > 1
			if jr == nil || !done(st) {
				continue
			}
			lat := "clat"
			if jr.Paced(bench.Read) || jr.Paced(bench.Write) {
				lat = bench.LatIntended
			}
			for _, s := range jr.Samples {
				if s.Lat == nil {
					continue
				}
				latencies[lat] = true
				t := s.At.Seconds()
				at := measure + t
				name := "step " + strconv.Itoa(st.Step.Seq+1)
				for k, v := range []uint64{s.Lat.P50, s.Lat.P99, s.Lat.Max} {
					it := item{Value: []float64{at, float64(v) / 1e3}, Name: name, Extra: [][3]any{{"I/Os", float64(s.Lat.N), ""}}}
					if k == 1 && s.Lat.N < 1000 {
						it.Note = fmt.Sprintf("unreliable: %d I/Os in the interval, p99 needs 1000", s.Lat.N)
					}
					data[k] = append(data[k], it)
				}
				var row []string
				if len(runs) > 1 {
					row = append(row, strconv.FormatInt(r.id, 10))
				}
				row = append(row, strconv.Itoa(st.Step.Seq+1), jr.Name, num(t), num(at), lat, strconv.FormatUint(s.Lat.N, 10),
					num(float64(s.Lat.P50)/1e3), num(float64(s.Lat.P99)/1e3), num(float64(s.Lat.Max)/1e3))
				c.Rows = append(c.Rows, row)
			}
			for k := range data {
				if n := len(data[k]); n > 0 && data[k][n-1].Value != missing {
					data[k] = append(data[k], item{Value: missing})
				}
			}
		}
		for k, name := range []string{"p50", "p99", "max"} {
			if len(runs) > 1 {
				name = r.name + " " + name
			}
			color := palette[(3*i+k)%len(palette)]
			line.AddSeries(name, nil, lineStyle(color, 0, 0, len(data[k]) <= 40)...)
			setData(line.MultiSeries, data[k])
		}
	}
	how := "from each interval's own histogram"
	switch {
	case len(latencies) == 0:
		how = "no per-interval latency recorded (runs before iolab kept it, or latencies off)"
	case len(latencies) == 1 && latencies[bench.LatIntended]:
		how = "latency from each I/O's intended start (coordinated omission corrected), " + how
	case len(latencies) == 1:
		how = "clat, " + how
	default:
		how = "latency from the intended start for paced steps, clat for the others, " + how
	}
	if clones {
		how += " · the job's first clone (numjobs): intervals' percentiles do not add up"
	}
	c.File = fileName(LatencyTimeline, runs)
	if q.Step > 0 {
		c.File += "-step" + strconv.Itoa(q.Step)
	}
	xName := "time since the run's first step (s)"
	if q.Step > 0 {
		xName = "time since the measurement began (s)"
	}
	x := timeAxis(xName)
	if len(areas) > 0 && areas[0].from < 0 {
		x.Min = math.Floor(areas[0].from*10) / 10
	}
	line.SetGlobalOptions(plotOptions(c.Title, subtitle(runs, nil, how), "axis",
		x, opts.YAxis{Name: "latency (µs)", Type: "log", SplitLine: splitLine()})...)
	raw, err := optionJSON(line)
	if err != nil {
		return nil, err
	}
	c.Option, err = withPhases(raw, areas, len(areas) <= 36)
	return c, err
}

// steps0 is when the first of steps started.
func steps0(steps []*summary.StepView) (t0 time.Time) {
	for _, st := range steps {
		if !st.Start.IsZero() {
			return st.Start
		}
	}
	return t0
}

// firstResult is a step's first job result (the drawn job's, once the
// view selected it) and how many the step has.
func firstResult(st *summary.StepView) (*summary.JobView, int) {
	if st.Result == nil {
		return nil, 0
	}
	n := 0
	var first *summary.JobView
	for g := range st.Result.Groups {
		for k := range st.Result.Groups[g].Jobs {
			if first == nil {
				first = &st.Result.Groups[g].Jobs[k]
			}
			n++
		}
	}
	return first, n
}
