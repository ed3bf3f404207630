package chart

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
	"iolab/db"
)

func TestBuildChartEmpty(t *testing.T) {
	plan := testPlan(1, sweepOf(sweep.AxisIODepth, "1", "4"))
	run := testRun(1, plan, nil)
	for _, k := range []Kind{IOPS, Latency, Distribution, CPU, Fairness} {
		t.Run(string(k), func(t *testing.T) {
			c := mustBuild(t, Query{Kind: k}, run)
			if c.Kind != k || c.Rows == nil || len(c.Rows) != 0 {
				t.Errorf("kind %q, rows %#v", c.Kind, c.Rows)
			}
			// Series may be there, without points.
			doc := checkOption(t, c)
			for i, s := range doc.Series {
				for _, v := range seriesValues(doc, i) {
					if v != "-" {
						t.Errorf("series %q has a point: %v", s.Name, seriesValues(doc, i))
						break
					}
				}
			}
		})
	}
	_, err := Build(Query{Kind: Timeline, Step: 1}, []LoadedRun{run})
	var ve *QueryError
	if !errors.As(err, &ve) || !strings.Contains(ve.Msg, "no steps yet") {
		t.Errorf("timeline of a run without steps: %v", err)
	}
}

// TestBuildChartEveryKind draws every kind from one run with every axis
// a kind needs, as a page does.
func TestBuildChartEveryKind(t *testing.T) {
	plan := testPlan(2, sweepOf(sweep.AxisScheduler, "none", "bfq"), sweepOf(sweep.AxisNumJobs, "1", "2"), sweepOf(sweep.AxisIODepth, "1", "4"))
	plan.Base.Jobs = []bench.Job{{Name: "w", IOEngine: "io_uring"}, {Name: "r", IOEngine: "io_uring"}}
	run := testRun(1, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		w := testWrites(1000 + uint64(s.Seq))
		w.Name = "w"
		w.Samples = []bench.Sample{{At: time.Second, IOs: bench.DirCounts{0, 1000}, Lat: &bench.IntervalLat{N: 1000, P50: 50000, P99: 90000, Max: 200000}}}
		r := testJob("r", time.Second, testLoad{ios: 10, bs: 4096, lat: time.Millisecond}, testLoad{})
		sweeptest.Traced(&r, bench.Read, [4]float64{0.1, 0.3, 0.5, 0.1}, 1)
		return sweeptest.Done(w, r)
	}))
	// Every kind but a PTS test's (pts_test.go draws those).
	all := slices.DeleteFunc(kindsOf(Kinds()), func(k Kind) bool { return strings.HasPrefix(string(k), "pts-") })
	// The charts of the swept axes first, in the plan's order of them.
	want := append([]Kind{Fairness, Scaling, IOPS}, slices.DeleteFunc(slices.Clone(all), func(k Kind) bool { return k == Fairness || k == Scaling || k == IOPS })...)
	if got := kindsOf(Available([]LoadedRun{run}, RunPage|ComparePage)); !slices.Equal(got, want) {
		t.Fatalf("Available = %q, want every kind, swept axes' first: %q", got, want)
	}
	for _, k := range all {
		t.Run(string(k), func(t *testing.T) {
			c := mustBuild(t, Query{Kind: k, Step: 1}, run)
			if len(c.Rows) == 0 {
				t.Errorf("no rows")
			}
			doc := checkOption(t, c)
			if len(doc.Series) == 0 {
				t.Errorf("no series")
			}
			if k == IOPS {
				// scheduler makes the series; numjobs tells them apart.
				if got := seriesNames(doc); !slices.Equal(got, []string{"none numjobs=1", "none numjobs=2", "bfq numjobs=1", "bfq numjobs=2"}) {
					t.Errorf("series = %q", got)
				}
			}
		})
	}
}

// kindsOf is the names of kinds.
func kindsOf(kinds []KindSpec) []Kind {
	var out []Kind
	for _, k := range kinds {
		out = append(out, k.Name)
	}
	return out
}

func TestAvailable(t *testing.T) {
	perStep := []Kind{IOPS, Latency, Distribution, Timeline, LatencyTimeline, CPU}
	sched := testPlan(1, sweepOf(sweep.AxisScheduler, "none", "bfq"))
	sched.Base.Jobs = []bench.Job{{Name: "bg-writer"}, {Name: "fg-reader"}}
	schedOneJob := testPlan(1, sweepOf(sweep.AxisScheduler, "none", "bfq"))
	schedOneJob.Base.Jobs = []bench.Job{{Name: "mixed", NumJobs: 4}}
	done := func(plan *sweep.Plan) []sweep.StepResult {
		return sweeptest.Steps(plan, func(sweep.Step) sweep.StepResult { return sweeptest.Done(testWrites(1)) })
	}
	nj := numjobsRun(1, nil)
	failed := testRun(3, sched, sweeptest.Steps(sched, func(sweep.Step) sweep.StepResult { return sweeptest.Failed("boom") }))
	// The first step cancelled halfway, with what it had done; the others
	// never started.
	cancelled := testRun(4, sched, sweeptest.Steps(sched, func(st sweep.Step) sweep.StepResult {
		if st.Seq == 0 {
			r := sweeptest.Done(testWrites(1))
			r.Status = sweep.StepCancelled
			return r
		}
		return sweep.StepResult{Status: sweep.StepCancelled}
	}))
	oneDone := testRun(5, sched, sweeptest.Steps(sched, func(st sweep.Step) sweep.StepResult {
		if st.Seq == 0 {
			return sweeptest.Done(testWrites(1))
		}
		return sweeptest.Failed("boom")
	}))
	onCompare := []Kind{IOPS, Latency, Distribution}
	with := func(kinds []Kind, more ...Kind) []Kind { return append(slices.Clone(kinds), more...) }
	// The chart of the swept axis comes first (sweptFirst).
	first := func(k Kind, kinds []Kind) []Kind { return append([]Kind{k}, kinds...) }
	for _, tc := range []struct {
		name         string
		runs         []LoadedRun
		run, compare []Kind // Available on RunPage, on ComparePage
	}{
		{"no runs", nil, nil, nil},
		{"no steps yet", []LoadedRun{testRun(1, sched, nil)}, nil, nil},
		{"iodepth × engine", []LoadedRun{iodepthEngineRun(1, engineIOPS, [3]string{})}, with(perStep, QoS), with(onCompare, MaxIOPS, QoS)},
		{"numjobs", []LoadedRun{nj}, first(Scaling, perStep), first(Scaling, with(onCompare, MaxIOPS))},
		{"numjobs compared with iodepth", []LoadedRun{nj, iodepthEngineRun(2, engineIOPS, [3]string{})}, perStep, with(onCompare, MaxIOPS)},
		{"schedulers, two jobs", []LoadedRun{testRun(1, sched, done(sched))}, first(Fairness, perStep), first(Fairness, with(onCompare, MaxIOPS))},
		{"schedulers, one job", []LoadedRun{testRun(1, schedOneJob, done(schedOneJob))}, perStep, with(onCompare, MaxIOPS)},
		{"one of two runs has steps", []LoadedRun{testRun(1, sched, nil), testRun(2, sched, done(sched))},
			first(Fairness, perStep), first(Fairness, with(onCompare, MaxIOPS))},
		// No step did any I/O: nothing to draw, no frame of each kind.
		{"every step failed", []LoadedRun{failed}, nil, nil},
		{"cancelled before a step finished", []LoadedRun{cancelled}, nil, nil},
		// One step did: it is drawn, the failed ones counted beside it.
		{"one step done of the failed", []LoadedRun{oneDone}, first(Fairness, perStep), first(Fairness, with(onCompare, MaxIOPS))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := kindsOf(Available(tc.runs, RunPage)); !slices.Equal(got, tc.run) {
				t.Errorf("Available on the run page = %q, want %q", got, tc.run)
			}
			if got := kindsOf(Available(tc.runs, ComparePage)); !slices.Equal(got, tc.compare) {
				t.Errorf("Available on the compare page = %q, want %q", got, tc.compare)
			}
		})
	}
}

// Load reads what the kinds' Needs say, and the samples of the query's
// step alone.
func TestLoad(t *testing.T) {
	spec := func(k Kind) KindSpec {
		s, ok := LookupKind(k)
		if !ok {
			t.Fatalf("no kind %q", k)
		}
		return s
	}
	for _, tc := range []struct {
		name    string
		load    db.StepLoad
		hists   db.Hists
		samples []int // the seqs whose samples are read, of 0 to 4
	}{
		{"iops", Load(0, spec(IOPS)), 0, nil},
		{"latency", Load(0, spec(Latency)), db.AllHists, nil},
		{"timeline step 3", Load(3, spec(Timeline)), 0, []int{2}},
		{"the compare page", Load(0, On(ComparePage)...), db.AllHists, nil},
		{"nothing", Load(0), 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.load.Hists != tc.hists || tc.load.Jobs {
				t.Errorf("load = %+v, want hists %v and no jobs", tc.load, tc.hists)
			}
			var got []int
			for seq := range 5 {
				if tc.load.Samples != nil && tc.load.Samples(&sweep.StepResult{Step: sweep.Step{Seq: seq}}) {
					got = append(got, seq)
				}
			}
			if !slices.Equal(got, tc.samples) {
				t.Errorf("samples of steps %v, want %v", got, tc.samples)
			}
		})
	}
}

// JobValue reads an axis the run does not sweep from its base job,
// through the axis table.
func TestRunJobValue(t *testing.T) {
	job := bench.Job{Name: "w", IODepth: 32, IOEngine: "io_uring", Hipri: true, BS: 1 << 30, RW: "randwrite"}
	plan := testPlan(1, sweepOf(sweep.AxisNumJobs, "1", "2"))
	plan.Base.Jobs = []bench.Job{job}
	r := testRun(1, plan, nil)
	for a, want := range map[sweep.Axis]string{
		sweep.AxisIODepth:   "32",
		sweep.AxisEngine:    "io_uring+hipri",
		sweep.AxisBS:        "1g",
		sweep.AxisRW:        "randwrite",
		sweep.AxisNumJobs:   "", // 0: never set
		sweep.AxisScheduler: "", // a Step axis: not the job's
	} {
		if got := r.JobValue(a); got != want {
			t.Errorf("JobValue(%s) = %q, want %q", a, got, want)
		}
	}
	// A step's job speaks before the plan's.
	stepJob := job
	stepJob.BS = 4096
	r.Steps = []sweep.StepResult{{Step: sweep.Step{Config: bench.Config{Jobs: []bench.Job{stepJob}}}}}
	if got := r.JobValue(sweep.AxisBS); got != "4k" {
		t.Errorf("JobValue(bs) with a step = %q, want the step job's 4k", got)
	}
	if got := (&LoadedRun{}).JobValue(sweep.AxisBS); got != "" {
		t.Errorf("JobValue of a run without jobs = %q", got)
	}

	// The charts draw the fixed value: 1 GiB is 1g, as options write it.
	plan.Base.Jobs[0].NumJobs = 1
	r = testRun(1, plan, sweeptest.Steps(plan, func(sweep.Step) sweep.StepResult { return sweeptest.Done(testWrites(10)) }))
	c := mustBuild(t, Query{Kind: IOPS, X: sweep.AxisBS}, r)
	// One x value: the series side by side, named at bs 1g (oneX).
	if doc := checkOption(t, c); !slices.Equal(plottedNames(doc), []string{"bs 1g"}) || c.Title != "IOPS at bs 1g" {
		t.Errorf("series %q, title %q, want the one x value bs 1g", plottedNames(doc), c.Title)
	}
}
