package chart

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/golden"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
	"iolab/bench/system"
	"iolab/web/render"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.svg")

// The size a report draws each chart at (handlers/report.ChartWidth,
// ChartHeight; report imports chart, so not from there).
const goldenWidth, goldenHeight = 960, 480

// goldenT0 is when every golden fixture's first step started: fixed, so
// that no time of day reaches a chart.
var goldenT0 = time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)

// goldenFigures is what one job of a golden step did: I/Os per second,
// the median completion latency and the log-normal spread around it.
type goldenFigures struct {
	iops   float64
	median time.Duration
	spread float64
}

// goldenJob is one job of a golden step: a log-normal clat histogram
// (fio's lat 2 µs above it, slat 2 µs), samples every 100 ms over 1 s
// with their intervals' latency, drawn from rng.
func goldenJob(job bench.Job, f goldenFigures, start time.Time, rng *rand.Rand) bench.JobResult {
	const (
		runtime = time.Second
		every   = 100 * time.Millisecond
		draws   = 600
	)
	job.RampTime, job.Runtime = 200*time.Millisecond, runtime
	jr := bench.JobResult{Name: job.Name, Job: job, Start: start, Runtime: runtime, Jobs: 1, Interval: every}
	d := bench.Read
	if job.RW == "randwrite" || job.RW == "write" {
		d = bench.Write
	}
	dr := &jr.Dirs[d]
	for k := range draws {
		v := float64(f.median) * math.Exp(f.spread*rng.NormFloat64())
		if k%100 == 0 {
			v *= 5 // a few slow I/Os: the tail
		}
		dr.Clat.Add(uint64(v))
		dr.Slat.Add(2000)
		dr.Lat.Add(uint64(v) + 2000)
	}
	n := uint64(f.iops * runtime.Seconds())
	dr.IOs, dr.Bytes = n, n*uint64(job.BS)
	samples := int(runtime / every)
	var done uint64
	for s := 1; s <= samples; s++ {
		at := float64(n) * float64(s) / float64(samples)
		if s < samples {
			at += 0.05 * float64(n) / float64(samples) * rng.NormFloat64()
		}
		done = max(done, uint64(at))
		sm := bench.Sample{At: time.Duration(s) * every}
		sm.IOs[d], sm.Bytes[d] = done, done*uint64(job.BS)
		sm.Lat = &bench.IntervalLat{N: n / uint64(samples), P50: uint64(f.median),
			P99: uint64(float64(f.median) * math.Exp(2.33*f.spread)), Max: 5 * uint64(f.median)}
		jr.Samples = append(jr.Samples, sm)
	}
	jr.Moved[d] = dr.Bytes
	return jr
}

// goldenRun is a run of plan on a fixed host, every step done, its jobs'
// figures from figures, its randomness from a seed of its own, its
// steps 1.5 s apart from goldenT0 with the machine's CPU growing with the
// load.
func goldenRun(id int64, plan *sweep.Plan, seed uint64, figures func(s sweep.Step, job bench.Job, rng *rand.Rand) goldenFigures) LoadedRun {
	plan.Discard = true
	if len(plan.Base.Jobs) == 0 {
		plan.Base.Jobs = []bench.Job{{Name: "randwrite", RW: "randwrite", BS: 4096, IODepth: 1, IOEngine: "io_uring"}}
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	steps := sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		start := goldenT0.Add(time.Duration(s.Seq) * 1500 * time.Millisecond)
		var jobs []bench.JobResult
		var load float64
		for _, job := range plan.Base.Jobs {
			if v := s.Value(sweep.AxisIODepth); v != "" {
				job.IODepth, _ = strconv.Atoi(v)
			}
			if v := s.Value(sweep.AxisEngine); v != "" {
				job.IOEngine = v
			}
			if v := s.Value(sweep.AxisNumJobs); v != "" {
				job.NumJobs, _ = strconv.Atoi(v)
			}
			f := figures(s, job, rng)
			jobs = append(jobs, goldenJob(job, f, start.Add(300*time.Millisecond), rng))
			load += f.iops
		}
		r := sweeptest.Done(jobs...)
		r.Start, r.End = start, start.Add(1300*time.Millisecond)
		r.Result.Start = start.Add(300 * time.Millisecond)
		busy := math.Min(70, 4+load/20000)
		r.CPU = system.CPUBreakdown{User: busy * 0.3, System: busy * 0.5, IRQ: busy * 0.05, SoftIRQ: busy * 0.15, IOWait: math.Min(25, 30-busy/3)}
		r.CPU.Idle = 100 - r.CPU.User - r.CPU.System - r.CPU.IRQ - r.CPU.SoftIRQ - r.CPU.IOWait
		if s := s.Value(sweep.AxisScheduler); s != "" {
			r.Schedulers = map[string]string{"nvme1n1": s}
		}
		return r
	})
	run := testRun(id, plan, steps)
	run.Run.Host = system.HostInfo{Hostname: "lab-a", KernelRelease: "6.12.0-lab", CPUModel: "Lab CPU", CPUCount: 16}
	run.Run.Kernel = run.Run.Host.KernelRelease
	run.Run.Created = goldenT0
	return run
}

// goldenEngines is the third write-up's sweep, small: io_uring, libaio
// and psync over iodepth 1…32, 2 repeats; speed scales every IOPS.
func goldenEngines(id int64, speed float64) LoadedRun {
	plan := testPlan(2, sweepOf(sweep.AxisIODepth, "1", "4", "16", "32"), sweepOf(sweep.AxisEngine, "io_uring", "libaio", "psync"))
	plan.Name = "libaio vs io_uring"
	base := map[string]float64{"libaio": 14e3, "io_uring": 16e3, "psync": 12e3}
	ceiling := map[string]float64{"libaio": 420e3, "io_uring": 610e3, "psync": 12.5e3}
	return goldenRun(id, plan, uint64(id), func(s sweep.Step, job bench.Job, rng *rand.Rand) goldenFigures {
		qd := float64(job.IODepth)
		iops := speed * math.Min(ceiling[job.IOEngine], base[job.IOEngine]*qd) * (1 + 0.03*rng.NormFloat64())
		if job.IOEngine == "psync" {
			qd = 1
		}
		return goldenFigures{iops: iops, median: time.Duration(qd / iops * 1e9), spread: 0.18}
	})
}

// goldenScaling is the second write-up's: numjobs 1…16 of an io_uring
// reader at iodepth 8, flattening past the device's limit.
func goldenScaling(id int64) LoadedRun {
	plan := testPlan(2, sweepOf(sweep.AxisNumJobs, "1", "2", "4", "8", "16"))
	plan.Name = "numjobs scaling"
	plan.Base.Jobs = []bench.Job{{Name: "reader", RW: "randread", BS: 4096, IODepth: 8, IOEngine: "io_uring"}}
	return goldenRun(id, plan, uint64(id), func(s sweep.Step, job bench.Job, rng *rand.Rand) goldenFigures {
		n := float64(job.NumJobs)
		iops := 700e3 * (1 - math.Exp(-n*95e3/700e3)) * (1 + 0.04*rng.NormFloat64())
		return goldenFigures{iops: iops / n, median: time.Duration(8 * n / iops * 1e9), spread: 0.2}
	})
}

// goldenFairness is the first write-up's: a 1 MiB writer at iodepth 16
// and a 4 KiB reader at iodepth 1 under three schedulers.
func goldenFairness(id int64) LoadedRun {
	plan := testPlan(2, sweepOf(sweep.AxisScheduler, "none", "mq-deadline", "bfq"))
	plan.Name, plan.Preset = "sched-fairness", "sched-fairness"
	plan.Base.Jobs = []bench.Job{
		{Name: "bg-writer", RW: "write", BS: 1 << 20, IODepth: 16, IOEngine: "libaio"},
		{Name: "fg-reader", RW: "randread", BS: 4096, IODepth: 1, IOEngine: "libaio"},
	}
	readerLat := map[string]float64{"none": 4000, "mq-deadline": 3400, "bfq": 950} // µs
	writerBW := map[string]float64{"none": 1900, "mq-deadline": 1850, "bfq": 1500} // MiB/s
	return goldenRun(id, plan, uint64(id), func(s sweep.Step, job bench.Job, rng *rand.Rand) goldenFigures {
		if job.RW == "randread" {
			lat := readerLat[s.Value(sweep.AxisScheduler)] * (1 + 0.1*rng.NormFloat64())
			return goldenFigures{iops: 1e6 / lat, median: time.Duration(lat * 1e3), spread: 0.35}
		}
		iops := writerBW[s.Value(sweep.AxisScheduler)] * (1 + 0.05*rng.NormFloat64())
		return goldenFigures{iops: iops, median: time.Duration(16 / iops * 1e9), spread: 0.25}
	})
}

// goldenTimeSplit is goldenFairness traced: the reader's lat split
// into submit, queue, device and completion, mostly queueing behind the
// writer under none and mq-deadline; under mq-deadline a fifth of its
// reads merged, and bfq's trace lost events.
func goldenTimeSplit(id int64) LoadedRun {
	run := goldenFairness(id)
	shares := map[string][4]float64{"none": {0.02, 0.72, 0.24, 0.02}, "mq-deadline": {0.02, 0.66, 0.30, 0.02}, "bfq": {0.06, 0.22, 0.66, 0.06}}
	for i := range run.Steps {
		st := &run.Steps[i]
		sched := st.Step.Value(sweep.AxisScheduler)
		oneToOne := 1.0
		if sched == "mq-deadline" {
			oneToOne = 0.8
		}
		g := &st.Result.Groups[0]
		for j := range g.Jobs {
			if g.Jobs[j].Name == "fg-reader" {
				sweeptest.Traced(&g.Jobs[j], bench.Read, shares[sched], oneToOne)
			} else {
				sweeptest.Traced(&g.Jobs[j], bench.Write, [4]float64{0.01, 0.1, 0.88, 0.01}, 1)
			}
		}
		g.Trace = &bench.BlockTrace{Devices: []string{"7:0"}}
		if sched == "bfq" {
			g.Trace.Dropped = 12
		}
	}
	return run
}

// goldenQoS is a rate_iops sweep of one reader: its probe at full speed,
// then 20 %…80 % of it, latency from intended starts rising with the
// rate.
func goldenQoS(id int64) LoadedRun {
	plan := testPlan(1, sweepOf(sweep.AxisRateIOPS, "max", "20%", "40%", "60%", "80%"))
	plan.Name = "qos"
	slo := sweep.DefaultSLO
	plan.SLO = &slo
	plan.Base.Jobs = []bench.Job{{Name: "reader", RW: "randread", BS: 4096, IODepth: 32, IOEngine: "io_uring"}}
	lat := map[string]float64{"max": 900, "20%": 80, "40%": 110, "60%": 240, "80%": 1500} // µs
	run := goldenRun(id, plan, uint64(id), func(s sweep.Step, job bench.Job, rng *rand.Rand) goldenFigures {
		v := s.Value(sweep.AxisRateIOPS)
		iops := 300e3
		if v != "max" {
			p, _ := strconv.Atoi(v[:len(v)-1])
			iops *= float64(p) / 100
		}
		return goldenFigures{iops: iops, median: time.Duration(lat[v] * 1e3), spread: 0.3}
	})
	// A paced step's latency counts from each I/O's intended start: its
	// rate in the step's job, its clat as the intended latency.
	for i := range run.Steps {
		st := &run.Steps[i]
		v := st.Step.Value(sweep.AxisRateIOPS)
		if v == "max" {
			continue
		}
		jr := &st.Result.Groups[0].Jobs[0]
		jr.Dirs[bench.Read].Intended = jr.Dirs[bench.Read].Clat
		j := jr.Job
		j.RateIOPS = [2]int64{int64(jr.Dirs[bench.Read].IOs), 0}
		st.Step.Config.Groups = []bench.Group{{Jobs: []bench.Job{j}}}
	}
	return run
}

// goldenCharts is each kind's golden chart: its query and the runs it
// draws, one of the three experiments or two kernels compared.
func goldenCharts() []struct {
	kind Kind
	q    Query
	runs []LoadedRun
} {
	engines := goldenEngines(1, 1)
	older := goldenEngines(2, 0.8)
	older.Run.Kernel = "6.1.0-lab"
	return []struct {
		kind Kind
		q    Query
		runs []LoadedRun
	}{
		{IOPS, Query{}, []LoadedRun{engines}},
		{Latency, Query{}, []LoadedRun{engines}},
		{Distribution, Query{}, []LoadedRun{engines}},
		{Timeline, Query{Step: 1}, []LoadedRun{goldenScaling(3)}},
		{LatencyTimeline, Query{Step: 1}, []LoadedRun{goldenScaling(3)}},
		{CPU, Query{}, []LoadedRun{engines}},
		{Scaling, Query{}, []LoadedRun{goldenScaling(3)}},
		{Fairness, Query{}, []LoadedRun{goldenFairness(4)}},
		{TimeSplit, Query{Job: "fg-reader"}, []LoadedRun{goldenTimeSplit(6)}},
		{MaxIOPS, Query{}, []LoadedRun{engines, older}},
		{QoS, Query{}, []LoadedRun{goldenQoS(5)}},
		{PTSConvergence, Query{}, []LoadedRun{goldenPTSIOPS()}},
		{PTSWindow, Query{}, []LoadedRun{goldenPTSIOPS()}},
		{PTSMatrix, Query{}, []LoadedRun{goldenPTSIOPS()}},
		{PTSWSAT, Query{}, []LoadedRun{goldenPTSWSAT()}},
		{PTSDIRTH, Query{}, []LoadedRun{goldenPTSDIRTH()}},
		{PTSDIRTHHist, Query{}, []LoadedRun{goldenPTSDIRTH()}},
	}
}

// svgIDs are the ids echarts' SVG renderer numbers its gradients, clip
// paths and patterns by: a count over the whole process, so a chart's
// ids depend on what was drawn before it.
var svgIDs = regexp.MustCompile(`\bzr\d+-[a-z]+\d+\b`)

// normalSVG is doc as a golden file holds it: one element a line, ids
// numbered from the first in the document.
func normalSVG(doc []byte) []byte {
	ids := map[string]string{}
	doc = svgIDs.ReplaceAllFunc(doc, func(id []byte) []byte {
		s, ok := ids[string(id)]
		if !ok {
			s = fmt.Sprintf("id%d", len(ids))
			ids[string(id)] = s
		}
		return []byte(s)
	})
	return append(bytes.ReplaceAll(doc, []byte("><"), []byte(">\n<")), '\n')
}

// TestGoldenSVG draws each kind of chart from a fixed fixture of the
// experiment it is for (fixed seeds, times and host) through the server's
// renderer, as a report does, and compares the SVG with
// testdata/golden/KIND.svg; `go test ./handlers/chart -run TestGoldenSVG
// -update` rewrites them (look at them as images before committing).
func TestGoldenSVG(t *testing.T) {
	if testing.Short() {
		t.Skip("loads echarts into goja (seconds)")
	}
	seen := map[Kind]bool{}
	for _, g := range goldenCharts() {
		seen[g.kind] = true
		t.Run(string(g.kind), func(t *testing.T) {
			q := g.q
			q.Kind = g.kind
			for _, r := range g.runs {
				q.Runs = append(q.Runs, r.Run.ID)
			}
			draw := func() []byte {
				c := mustBuild(t, q, g.runs...)
				svg, err := render.SVG(c.Option, goldenWidth, goldenHeight)
				if err != nil {
					t.Fatal(err)
				}
				return normalSVG(svg)
			}
			svg := draw()
			if again := draw(); !bytes.Equal(svg, again) {
				t.Fatalf("two renders of one chart differ:\n%s", golden.Diff(string(svg), string(again)))
			}
			golden.Check(t, *update, filepath.Join("testdata", "golden", string(g.kind)+".svg"), svg)
		})
	}
	for _, k := range Kinds() {
		if !seen[k.Name] {
			t.Errorf("kind %s has no golden chart", k.Name)
		}
	}
}
