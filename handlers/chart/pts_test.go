package chart

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/pts"
	"iolab/bench/summary"
	"iolab/bench/sweep"
)

// goldenPTS is a PTS run of spec over rounds rounds, a test's fixture:
// each element's IOPS falls from twice its steady value towards it
// round by round (a device leaving its fresh-out-of-box state), smaller
// blocks and more reads doing more; DIRTH's points saturate with the
// outstanding I/O, their response time Little's law's.
func goldenPTS(id int64, spec pts.Spec, rounds int) LoadedRun {
	test, _ := pts.Lookup(spec.Test)
	plan := &sweep.Plan{Name: "pts-" + spec.Test, PTS: &spec, Repeat: rounds}
	for _, a := range spec.Matrix(test) {
		plan.Sweeps = append(plan.Sweeps, sweepOf(sweep.Axis(a.Option), a.Values...))
	}
	return goldenRun(id, plan, 29, func(s sweep.Step, job bench.Job, rng *rand.Rand) goldenFigures {
		bs := 4096.0
		if v := s.Value("bs"); v != "" {
			n, err := strconv.ParseFloat(strings.TrimSuffix(v, "k"), 64)
			if err == nil && strings.HasSuffix(v, "k") {
				n *= 1024
			}
			bs = n
		}
		reads := 0.0
		if v := s.Value("rwmixread"); v != "" {
			reads, _ = strconv.ParseFloat(v, 64)
		}
		iops := 4e8 / (bs + 8192) * (0.5 + 0.5*reads/100)
		if job.NumJobs > 0 {
			oio := float64(job.NumJobs * job.IODepth)
			iops = 90000 * oio / (oio + 6)
		}
		iops *= (1 + math.Exp(-1.5*float64(s.Repeat))) * (1 + 0.02*rng.NormFloat64())
		lat := time.Duration(float64(max(job.NumJobs, 1)*job.IODepth) / iops * 1e9)
		return goldenFigures{iops: iops, median: lat, spread: 0.4}
	})
}

// goldenPTSRuns are a fixture of each PTS chart's test.
func goldenPTSIOPS() LoadedRun { return goldenPTS(7, pts.Spec{Test: "iops", MaxRounds: 8}, 8) }
func goldenPTSWSAT() LoadedRun { return goldenPTS(8, pts.Spec{Test: "wsat"}, 12) }
func goldenPTSDIRTH() LoadedRun {
	return goldenPTS(9, pts.Spec{Test: "dirth", Axes: []pts.Axis{{Option: "numjobs", Values: []string{"4", "2", "1"}},
		{Option: "iodepth", Values: []string{"16", "4", "1"}}}}, 6)
}

// The PTS kinds are available on PTS runs alone, each on the tests it
// draws, first on the run page; each chart's table is the report's
// analysis of the run (summary.PTSReportOf).
func TestPTSCharts(t *testing.T) {
	iops, wsat, dirth := goldenPTSIOPS(), goldenPTSWSAT(), goldenPTSDIRTH()
	for _, tc := range []struct {
		run  LoadedRun
		want []Kind
	}{
		{iops, []Kind{PTSConvergence, PTSWindow, PTSMatrix}},
		{wsat, []Kind{PTSWSAT}},
		{dirth, []Kind{PTSConvergence, PTSWindow, PTSDIRTH, PTSDIRTHHist}},
	} {
		t.Run(tc.run.Run.Name, func(t *testing.T) {
			got := kindsOf(Available([]LoadedRun{tc.run}, RunPage))
			var ptsKinds []Kind
			for _, k := range got {
				if strings.HasPrefix(string(k), "pts-") {
					ptsKinds = append(ptsKinds, k)
				}
			}
			if !slices.Equal(ptsKinds, tc.want) || !slices.Equal(got[:len(tc.want)], tc.want) {
				t.Errorf("Available = %q, want %q first", got, tc.want)
			}
			if slices.ContainsFunc(kindsOf(Available([]LoadedRun{tc.run}, ComparePage)), func(k Kind) bool { return slices.Contains(tc.want, k) }) {
				t.Error("a PTS kind on the compare page")
			}
		})
	}
	p := summary.PTSReportOf(&iops.Run.Plan, iops.summaries())
	c := mustBuild(t, Query{Kind: PTSMatrix}, iops)
	if len(c.Rows) != 56 {
		t.Fatalf("%d cells of the IOPS matrix, want 7 × 8", len(c.Rows))
	}
	for _, row := range c.Rows {
		e := p.Element(map[string]string{"bs": row[0], "rwmixread": row[1]})
		if want := num(p.Window[e].TotalIOPS()); row[2] != want {
			t.Errorf("cell %s %s: %s, the window's average %s", row[0], row[1], row[2], want)
		}
	}
	w := mustBuild(t, Query{Kind: PTSWindow}, iops)
	if len(w.Rows) != pts.WindowRounds || w.Rows[0][2] != num(p.Outcome.Windows[0].Average) {
		t.Errorf("window rows %q, want %d rounds averaging %v", w.Rows, pts.WindowRounds, p.Outcome.Windows[0].Average)
	}
	conv := mustBuild(t, Query{Kind: PTSConvergence}, iops)
	if len(conv.Rows) != 8*8 { // 8 block sizes at 0/100 over 8 rounds
		t.Errorf("%d convergence rows, want 64", len(conv.Rows))
	}
	ws := mustBuild(t, Query{Kind: PTSWSAT}, wsat)
	if len(ws.Rows) != 12 {
		t.Errorf("%d WSAT rows, want 12", len(ws.Rows))
	}
	d := mustBuild(t, Query{Kind: PTSDIRTH}, dirth)
	if len(d.Rows) != 9 || d.Rows[0][2] != "64" {
		t.Errorf("DIRTH rows %q, want 9 points from OIO 64", d.Rows)
	}
	// The specification's DIRTH matrix: 6 numbers of jobs, their means
	// alone within the 8 lines.
	full := mustBuild(t, Query{Kind: PTSDIRTH}, goldenPTS(10, pts.Spec{Test: "dirth"}, 5))
	if doc := checkOption(t, full); len(doc.Series) != 6 || full.Hidden == "" || len(full.Rows) != 36 {
		t.Errorf("full DIRTH: %d series, %d rows, hidden %q; want 6 mean lines, 36 points, the tails said left out", len(doc.Series), len(full.Rows), full.Hidden)
	}
	if _, err := Build(Query{Kind: PTSMatrix}, []LoadedRun{wsat}); err == nil {
		t.Error("a WSAT run drew the IOPS matrix")
	}
}

// A PTS run cut short in its first round (running, or its tracking
// element failed) has no window yet: its page offers only what it can
// draw, and every kind asked for anyway answers, none panics (a CI run's
// page of such a run crashed the server's handler).
func TestPTSChartsCutShort(t *testing.T) {
	for _, full := range []LoadedRun{goldenPTSIOPS(), goldenPTSDIRTH(), goldenPTSWSAT()} {
		run := full
		if run.Summary != nil {
			run.Summary = run.Summary[:3]
		}
		if run.Steps != nil {
			run.Steps = run.Steps[:3]
		}
		// The IOPS test's tracking element (4 KiB 100 % write) is far
		// from its first three elements: no round of it measured.
		for _, k := range Available([]LoadedRun{run}, RunPage) {
			if run.Run.Plan.PTS.Test == "iops" && (k.Name == PTSWindow || k.Name == PTSMatrix) {
				t.Errorf("%s: %s offered with no round measured", run.Run.Name, k.Name)
			}
		}
		for _, k := range []Kind{PTSConvergence, PTSWindow, PTSMatrix, PTSWSAT, PTSDIRTH, PTSDIRTHHist} {
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("%s: %s panicked: %v", run.Run.Name, k, r)
					}
				}()
				_, _ = Build(Query{Kind: k}, []LoadedRun{run})
			}()
		}
	}
}
