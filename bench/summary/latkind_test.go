package summary

import (
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

// enginePlan sweeps ioengine over libaio and io_uring (and scheduler
// over scheds, when given), repeat times, a SubmitJob each step.
func enginePlan(repeat int, scheds ...string) (*sweep.Plan, []sweep.StepResult) {
	sweeps := []sweep.Sweep{{Axis: sweep.AxisEngine, Values: []string{"libaio", "io_uring"}}}
	if len(scheds) > 0 {
		sweeps = append(sweeps, sweep.Sweep{Axis: sweep.AxisScheduler, Values: scheds})
	}
	plan := synthPlan(repeat, sweeps...)
	plan.Base = bench.Config{Jobs: []bench.Job{{Name: "r", RW: "randread", BS: 4096, IODepth: 1}}}
	return plan, synthSteps(plan, func(s sweep.Step) sweep.StepResult {
		return doneStep(sweeptest.SubmitJob("r", s.Value(sweep.AxisEngine), s.Repeat))
	})
}

// near says got is want within the 10 % a histogram bucket spans.
func near(got, want time.Duration) bool {
	return float64(got) >= 0.9*float64(want) && float64(got) <= 1.1*float64(want)
}

// A step's figures are of the kind asked for: clat by default, lat and
// slat from their own histograms, each naming its kind.
func TestFiguresAs(t *testing.T) {
	for _, engine := range []string{"libaio", "io_uring"} {
		st := doneStep(sweeptest.SubmitJob("r", engine, 0))
		f := FiguresOf(&st)
		if j := f.Jobs[0]; j.Lat != LatClat || !near(j.P50, sweeptest.SubmitLat(engine, "clat")) {
			t.Errorf("%s: default figures are %s p50 %v, want clat %v", engine, j.Lat, j.P50, sweeptest.SubmitLat(engine, "clat"))
		}
		for _, k := range LatKinds {
			j := f.As(k).Jobs[0]
			if want := sweeptest.SubmitLat(engine, k.Name()); j.Lat != k || !near(j.P50, want) || !near(j.P99, want) || j.IOs != 1000 {
				t.Errorf("%s %s: %s p50 %v p99 %v over %d I/Os, want %v over 1000", engine, k, j.Lat, j.P50, j.P99, j.IOs, want)
			}
		}
		if f.Jobs[0].Lat != LatClat {
			t.Errorf("As changed the figures it was called on")
		}
	}
}

// The diff compares engines on lat unless told otherwise, and names the
// kind in its rows; values of another axis within one engine on clat.
func TestDiffLatKind(t *testing.T) {
	plan, steps := enginePlan(5)
	for _, tc := range []struct {
		lat  LatKind
		want LatKind
	}{{"", LatTotal}, {LatClat, LatClat}, {LatSlat, LatSlat}} {
		diffs, err := CompareSides([]DiffSide{{Label: "run 1", Plan: plan, Steps: steps, Lat: tc.lat}}, sweep.AxisEngine, "libaio", DiffConf)
		if err != nil {
			t.Fatal(err)
		}
		d := diffs[0]
		if d.Lat != tc.want {
			t.Errorf("lat=%q: the diff compares %s, want %s", tc.lat, d.Lat, tc.want)
		}
		r := rowOf(t, d, "r", tc.want.Name()+" p50")
		if a, b := r.A.Median(), r.B.Median(); !near(time.Duration(a*1e3), sweeptest.SubmitLat("libaio", tc.want.Name())*102/100) ||
			!near(time.Duration(b*1e3), sweeptest.SubmitLat("io_uring", tc.want.Name())*102/100) {
			t.Errorf("lat=%q: libaio %vµs, io_uring %vµs", tc.lat, a, b)
		}
	}
	// libaio's lat is above io_uring's, its clat 15× below: the verdicts
	// differ by kind.
	diffs, _ := CompareSides([]DiffSide{{Plan: plan, Steps: steps}}, sweep.AxisEngine, "libaio", DiffConf)
	if r := rowOf(t, diffs[0], "r", "lat p50"); !r.Better() {
		t.Errorf("on lat io_uring is not better than libaio: %+v", r.Cmp)
	}

	// One engine: two runs of libaio compare on clat; libaio against
	// io_uring in two runs, or one engine on two hosts, on lat.
	run := func(engine string) DiffSide {
		p := synthPlan(3)
		p.Base = bench.Config{Jobs: []bench.Job{{Name: "r", IOEngine: engine}}}
		return DiffSide{Label: engine, Plan: p, Steps: synthSteps(p, func(s sweep.Step) sweep.StepResult {
			st := doneStep(sweeptest.SubmitJob("r", engine, s.Repeat))
			st.Step.Config = p.Base
			return st
		})}
	}
	onHost := func(s DiffSide, h string) DiffSide { s.Host = h; return s }
	for _, tc := range []struct {
		name string
		a, b DiffSide
		want LatKind
	}{
		{"one engine", run("libaio"), run("libaio"), LatClat},
		{"two engines", run("libaio"), run("io_uring"), LatTotal},
		{"one host", onHost(run("libaio"), "a"), onHost(run("libaio"), "a"), LatClat},
		{"two hosts", onHost(run("libaio"), "a"), onHost(run("libaio"), "b"), LatTotal},
	} {
		d := DiffRuns(tc.a, tc.b, DiffConf)
		if d.Lat != tc.want || d.Rows[2].Metric.Name != tc.want.Name()+" p50" {
			t.Errorf("%s: compared on %s (%s), want %s", tc.name, d.Lat, d.Rows[2].Metric.Name, tc.want)
		}
	}
}

func TestParseLatKind(t *testing.T) {
	for in, want := range map[string]LatKind{"": "", "total": LatTotal, "lat": LatTotal, "clat": LatClat, "slat": LatSlat} {
		if got, err := ParseLatKind(in); err != nil || got != want {
			t.Errorf("ParseLatKind(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseLatKind("p99"); err == nil {
		t.Errorf("p99 is taken as a latency kind")
	}
}

// Engines compared default to lat, unless no step kept lat's histogram
// (fio's JSON has clat's alone; runs stored before iolab kept lat's):
// clat then, which they have, not an empty lat. A kind asked for stays.
func TestLatKindOfWithoutLatHistograms(t *testing.T) {
	plan, steps := enginePlan(1)
	views := func(steps []sweep.StepResult) [][]StepView {
		v := make([]StepView, len(steps))
		for i := range steps {
			v[i] = StepViewOf(&steps[i])
		}
		return [][]StepView{v}
	}
	plans := []*sweep.Plan{plan}
	if k := LatKindOf("", plans, views(steps)); k != LatTotal {
		t.Errorf("engines with lat histograms: %s, want lat", k)
	}
	for i := range steps {
		for j := range steps[i].Result.Groups[0].Jobs {
			for d := range steps[i].Result.Groups[0].Jobs[j].Dirs {
				steps[i].Result.Groups[0].Jobs[j].Dirs[d].Lat.Hist = hist.Histogram{} // the stat (mean, max) stays, as fio's JSON has it
			}
		}
	}
	if k := LatKindOf("", plans, views(steps)); k != LatClat {
		t.Errorf("engines without lat histograms: %s, want clat", k)
	}
	if k := LatKindOf(LatTotal, plans, views(steps)); k != LatTotal {
		t.Errorf("lat asked for: %s", k)
	}
}
