package summary

import (
	"context"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/hist"
	"iolab/bench/pts"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/bench/testdev"
)

// ptsPlan is a scaled-down PTS plan on dev, as `iolab pts` builds one
// (bench/launch's newPTSPlan): the test's options, the outstanding I/O,
// each element's round time, the active range, the matrix as sweeps.
func ptsPlan(t *testing.T, dev string, spec pts.Spec) *sweep.Plan {
	t.Helper()
	test, err := pts.Lookup(spec.Test)
	if err != nil {
		t.Fatal(err)
	}
	numjobs, iodepth := spec.OIO(test)
	args := []string{"--filename=" + dev, "--name=pts-" + test.Name, "--ioengine=libaio", "--direct=1",
		"--numjobs=" + strconv.Itoa(numjobs), "--iodepth=" + strconv.Itoa(iodepth),
		"--runtime=" + spec.Round().String(), "--time_based", "--group_reporting",
		"--size=" + strconv.FormatInt(spec.Size, 10)}
	cfg, err := fio.ParseArgs(append(args, test.Options...))
	if err != nil {
		t.Fatal(err)
	}
	plan := &sweep.Plan{Name: "pts-" + test.Name, Repeat: 1, PTS: &spec, Base: *cfg}
	for _, a := range spec.Matrix(test) {
		plan.Sweeps = append(plan.Sweeps, sweep.Sweep{Axis: sweep.Axis(a.Option), Values: a.Values})
	}
	return plan
}

// TestPTSReportOfRealRuns runs scaled IOPS, DIRTH and WSAT tests on a loop
// device and reads them as the report does: the rule's outcome and series
// agree with sweep's on the same steps, and every element's figures and
// window averages agree with the job results read directly.
func TestPTSReportOfRealRuns(t *testing.T) {
	dev := testdev.LoopInMemory(t, 32<<20)
	round := 300 * time.Millisecond
	cases := []pts.Spec{
		{Test: "iops", MaxRounds: 5, RoundTime: round, Size: 16 << 20, WIPCLoops: 1,
			Axes: []pts.Axis{{Option: "rwmixread", Values: []string{"100", "0"}}, {Option: "bs", Values: []string{"4k", "64k"}}}},
		{Test: "dirth", MaxRounds: 5, RoundTime: round, Size: 16 << 20, WIPCLoops: -1,
			Axes: []pts.Axis{{Option: "numjobs", Values: []string{"2", "1"}}, {Option: "iodepth", Values: []string{"4", "1"}}}},
		{Test: "wsat", RoundTime: 100 * time.Millisecond, Size: 8 << 20, WIPCLoops: -1, WSAT: 8},
	}
	for _, spec := range cases {
		t.Run(spec.Test, func(t *testing.T) {
			plan := ptsPlan(t, dev, spec)
			results, err := sweep.Run(context.Background(), &bench.Runner{Sys: system.FS{}}, plan, sweep.PlanHooks{})
			if err != nil {
				t.Fatal(err)
			}
			r := PTSReportOf(plan, StepViews(results))
			if r == nil {
				t.Fatal("no PTS report of a PTS plan")
			}
			checkPTSReport(t, plan, results, r)
		})
	}
}

func checkPTSReport(t *testing.T, plan *sweep.Plan, results []sweep.StepResult, r *PTSReport) {
	t.Helper()
	if r.Prep == nil || r.Prep.Device == "" || r.Prep.ActiveRange != plan.PTS.Size {
		t.Errorf("prep %+v, want the device's, active range %d", r.Prep, plan.PTS.Size)
	}
	if word := plan.PTS.RoundTime.String() + " a round"; !slices.ContainsFunc(r.Scaled, func(s string) bool { return strings.Contains(s, word) }) {
		t.Errorf("scaled %q: no word of the %s rounds", r.Scaled, plan.PTS.RoundTime)
	}
	rounds := 0
	for i := range results {
		rounds = max(rounds, results[i].Step.Repeat+1)
	}
	if len(r.Rounds) != rounds {
		t.Fatalf("%d rounds, the steps have %d", len(r.Rounds), rounds)
	}
	if want := plan.PTSOutcome(results); !reflect.DeepEqual(r.Outcome, want) {
		t.Errorf("outcome %+v\nsweep's %+v", r.Outcome, want)
	}
	if want := plan.PTSSeries(results); !r.Test.Saturate && !reflect.DeepEqual(r.Series, want) {
		t.Errorf("series %v\nsweep's %v", r.Series, want)
	}
	// Each element's figures from the job results themselves.
	for i := range results {
		res := &results[i]
		e := r.Element(axisValues(res.Step.Axes))
		if e < 0 {
			t.Fatalf("step %s: no element", res.Step.String())
		}
		got := r.Rounds[res.Step.Repeat].Figures[e]
		want := directFigures(res.Result)
		if got.TotalIOPS() != want.iops || got.MaxLat != want.maxLat || got.P9999 != want.p[0] || got.P99999 != want.p[1] || got.Written != want.written {
			t.Errorf("step %s: figures iops %v max %d p %d/%d written %d, want %+v", res.Step.String(),
				got.TotalIOPS(), got.MaxLat, got.P9999, got.P99999, got.Written, want)
		}
		if want.iops == 0 {
			t.Errorf("step %s did no I/O", res.Step.String())
		}
	}
	if r.Test.Saturate {
		checkWSAT(t, plan, results, r)
		return
	}
	if r.Outcome.Rounds < pts.WindowRounds && !r.Outcome.Reached {
		t.Errorf("outcome over %d rounds, want at least the window's %d", r.Outcome.Rounds, pts.WindowRounds)
	}
	// The window's averages, by hand.
	for e, el := range r.Elements {
		var iops, lat, p4 float64
		var maxLat uint64
		n := 0
		for i := range results {
			res := &results[i]
			if res.Step.Repeat < r.WindowFirst || res.Step.Repeat > r.WindowLast || !reflect.DeepEqual(axisValues(res.Step.Axes), el.Values) {
				continue
			}
			d := directFigures(res.Result)
			iops += d.iops
			lat += d.meanLat
			p4 += float64(d.p[0])
			maxLat = max(maxLat, d.maxLat)
			n++
		}
		if n != pts.WindowRounds {
			t.Fatalf("%s: %d rounds in the window %d–%d", el.Label, n, r.WindowFirst, r.WindowLast)
		}
		w := r.Window[e]
		if !ptsNear(w.TotalIOPS(), iops/float64(n)) || !ptsNear(w.MeanLat, lat/float64(n)) || !ptsNear(w.P9999, p4/float64(n)) || w.MaxLat != maxLat {
			t.Errorf("%s: window %+v, want iops %v lat %v p99.99 %v max %d", el.Label, w, iops/float64(n), lat/float64(n), p4/float64(n), maxLat)
		}
	}
	if r.Test.Name == "dirth" {
		if len(r.DIRTH) != 4 || r.DIRTH[0].OIO() != 8 || r.DIRTH[3].OIO() != 1 {
			t.Fatalf("dirth points %+v, want 2×4 … 1×1", r.DIRTH)
		}
		for _, p := range r.DIRTH {
			var h hist.Histogram
			p.Lat.AddTo(&h)
			if h.N() == 0 {
				t.Errorf("dirth %d×%d: an empty histogram", p.NumJobs, p.IODepth)
			}
		}
	}
}

func checkWSAT(t *testing.T, plan *sweep.Plan, results []sweep.StepResult, r *PTSReport) {
	t.Helper()
	if len(r.WSAT) != len(results) || len(r.WSAT) < 2 {
		t.Fatalf("%d WSAT points, %d steps", len(r.WSAT), len(results))
	}
	last := r.WSAT[len(r.WSAT)-1]
	if last.Written != sweep.PTSWritten(results) || float64(last.Written) < plan.PTS.WSATTimes()*float64(plan.PTS.Size) {
		t.Errorf("written %d, sweep's %d, want at least %g × %d", last.Written, sweep.PTSWritten(results), plan.PTS.WSATTimes(), plan.PTS.Size)
	}
	for i, p := range r.WSAT {
		if i > 0 && (p.Elapsed <= r.WSAT[i-1].Elapsed || p.Written <= r.WSAT[i-1].Written) {
			t.Errorf("round %d: elapsed %s written %d, not after round %d's", p.Round, p.Elapsed, p.Written, i-1)
		}
	}
}

type direct struct {
	iops, meanLat float64
	maxLat        uint64
	p             []uint64
	written       uint64
}

// directFigures are a step's figures from its bench.Result: rates added,
// lat histograms merged.
func directFigures(res *bench.Result) direct {
	var d direct
	var lat hist.Lat
	var n uint64
	for _, g := range res.Groups {
		for k := range g.Jobs {
			j := &g.Jobs[k]
			for dir := range 2 {
				d.iops += j.IOPS(dir)
				lat.Merge(&j.Dirs[dir].Lat)
				d.meanLat += j.Dirs[dir].Lat.Stat.Mean * float64(j.Dirs[dir].Lat.Stat.N)
				n += j.Dirs[dir].Lat.Stat.N
			}
			d.written += j.Dirs[bench.Write].Bytes
		}
	}
	d.meanLat /= float64(n)
	d.maxLat = lat.Stat.Max
	d.p = lat.Hist.Percentiles([]float64{99.99, 99.999})
	return d
}

func axisValues(avs []sweep.AxisValue) map[string]string {
	m := map[string]string{}
	for _, av := range avs {
		m[string(av.Axis)] = av.Value
	}
	return m
}

func ptsNear(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b)) }
