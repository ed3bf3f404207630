package bench

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"
)

// synthLoad is what a synthetic job did in one direction: ios I/Os of bs
// bytes, each taking lat.
type synthLoad struct {
	ios uint64
	bs  uint64
	lat time.Duration
}

// jobResult builds a job's result over a window of runtime.
func synthJob(name string, runtime time.Duration, read, write synthLoad) JobResult {
	r := JobResult{Name: name, Runtime: runtime, Jobs: 1}
	for d, l := range [2]synthLoad{read, write} {
		r.Dirs[d].IOs = l.ios
		r.Dirs[d].Bytes = l.ios * l.bs
		for range l.ios {
			r.Dirs[d].Lat.Add(uint64(l.lat))
		}
	}
	return r
}

// planOf is a plan sweeping the given axes, in order.
func synthPlan(repeat int, sweeps ...Sweep) *Plan {
	return &Plan{Name: "test", Sweeps: sweeps, Repeat: repeat}
}

// steps builds step results over every combination of the plan's sweeps
// (the first axis outermost) and each repeat, in Seq order, with result
// giving each one's stepOutcome.
func synthSteps(plan *Plan, result func(s Step) StepResult) []StepResult {
	var out []StepResult
	var walk func(i int, axes []AxisValue)
	walk = func(i int, axes []AxisValue) {
		if i == len(plan.Sweeps) {
			for rep := range plan.Repeat {
				s := Step{Seq: len(out), Repeat: rep, Axes: append([]AxisValue(nil), axes...)}
				r := result(s)
				r.Step = s
				out = append(out, r)
			}
			return
		}
		for _, v := range plan.Sweeps[i].Values {
			walk(i+1, append(axes, AxisValue{Axis: plan.Sweeps[i].Axis, Value: v}))
		}
	}
	walk(0, nil)
	return out
}

func doneStep(jobs ...JobResult) StepResult {
	return StepResult{Status: StepDone, Result: &Result{Groups: []GroupResult{{Jobs: jobs}}}}
}

func failedStep(err string) StepResult { return StepResult{Status: StepFailed, Error: err} }

// randWrites is a one-second 4 KiB random-write job doing iops I/Os.
func synthRandWrites(iops uint64) JobResult {
	return synthJob("randwrite", time.Second, synthLoad{}, synthLoad{ios: iops, bs: 4096, lat: 50 * time.Microsecond})
}

func summaryText(t *testing.T, plan *Plan, results []StepResult) string {
	t.Helper()
	var b strings.Builder
	if err := WriteSummary(&b, plan, results); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func checkSummary(t *testing.T, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("WriteSummary =\n%s\nwant\n%s", got, want)
	}
}

func TestSpreadOf(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want Spread
	}{
		{nil, Spread{}},
		{[]float64{5}, Spread{5, 5, 5}},
		{[]float64{3, 1, 2}, Spread{1, 2, 3}},
		{[]float64{4, 1, 3, 2}, Spread{1, 2.5, 4}},
	} {
		if got := spreadOf(tc.in); got != tc.want {
			t.Errorf("spreadOf(%v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

func TestSummarizeIODepthEngine(t *testing.T) {
	plan := synthPlan(3,
		Sweep{Axis: AxisIODepth, Values: []string{"1", "16"}},
		Sweep{Axis: AxisEngine, Values: []string{"io_uring", "libaio"}},
	)
	// IOPS per repeat, by iodepth and engine: the median is the middle
	// value whichever repeat produced it.
	iops := map[[2]string][3]uint64{
		{"1", "io_uring"}:  {12000, 10000, 11000},
		{"1", "libaio"}:    {9000, 9500, 9400},
		{"16", "io_uring"}: {150000, 160000, 155000},
		{"16", "libaio"}:   {120000, 100000, 130000},
	}
	results := synthSteps(plan, func(s Step) StepResult {
		return doneStep(synthRandWrites(iops[[2]string{s.Value(AxisIODepth), s.Value(AxisEngine)}][s.Repeat]))
	})
	// Results may come in any order (e.g. read back from the store).
	results[0], results[len(results)-1] = results[len(results)-1], results[0]

	cells := Summarize(plan, results)
	want := []SummaryCell{
		{Axes: avs("iodepth", "1", "ioengine", "io_uring"), IOPS: Spread{10000, 11000, 12000}, BW: Spread{10000 * 4096, 11000 * 4096, 12000 * 4096}, Repeats: 3},
		{Axes: avs("iodepth", "1", "ioengine", "libaio"), IOPS: Spread{9000, 9400, 9500}, BW: Spread{9000 * 4096, 9400 * 4096, 9500 * 4096}, Repeats: 3},
		{Axes: avs("iodepth", "16", "ioengine", "io_uring"), IOPS: Spread{150000, 155000, 160000}, BW: Spread{150000 * 4096, 155000 * 4096, 160000 * 4096}, Repeats: 3},
		{Axes: avs("iodepth", "16", "ioengine", "libaio"), IOPS: Spread{100000, 120000, 130000}, BW: Spread{100000 * 4096, 120000 * 4096, 130000 * 4096}, Repeats: 3},
	}
	if !reflect.DeepEqual(cells, want) {
		t.Errorf("Summarize =\n%+v\nwant\n%+v", cells, want)
	}

	checkSummary(t, summaryText(t, plan, results), `Total IOPS by iodepth × ioengine, median (min–max) of 3 repeats

iodepth  io_uring          libaio
1        11k (10k–12k)     9.4k (9k–9.5k)
16       155k (150k–160k)  120k (100k–130k)
`)
}

// axes builds axis values from axis, value pairs.
func avs(kv ...string) []AxisValue {
	var out []AxisValue
	for i := 0; i < len(kv); i += 2 {
		out = append(out, AxisValue{Axis: Axis(kv[i]), Value: kv[i+1]})
	}
	return out
}

func TestSummaryFailedSteps(t *testing.T) {
	// The engine sweep listed first: the rows are still the iodepths.
	plan := synthPlan(3,
		Sweep{Axis: AxisEngine, Values: []string{"io_uring", "io_uring+hipri", "libaio"}},
		Sweep{Axis: AxisIODepth, Values: []string{"1", "4"}},
	)
	const pollErr = "io_uring+hipri: IORING_SETUP_IOPOLL: operation not supported (EOPNOTSUPP)\n" +
		"/dev/nvme0n1 has no poll queues: load nvme with poll_queues=N"
	results := synthSteps(plan, func(s Step) StepResult {
		switch {
		case s.Value(AxisEngine) == "io_uring+hipri":
			return failedStep(pollErr)
		case s.Value(AxisEngine) == "libaio" && s.Value(AxisIODepth) == "4" && s.Repeat == 1:
			return failedStep("libaio: io_submit: resource temporarily unavailable")
		case s.Value(AxisEngine) == "io_uring" && s.Value(AxisIODepth) == "4" && s.Repeat == 2:
			return StepResult{Status: StepCancelled}
		}
		return doneStep(synthRandWrites(uint64(1000 * (s.Repeat + 1))))
	})
	cells := Summarize(plan, results)
	if len(cells) != 6 {
		t.Fatalf("%d cells, want 6", len(cells))
	}
	hipri := cells[2]
	if hipri.Failed != 3 || hipri.Repeats != 0 || !reflect.DeepEqual(hipri.Errors, []string{pollErr}) || hipri.IOPS != (Spread{}) {
		t.Errorf("io_uring+hipri cell = %+v, want 3 failed repeats and their one error", hipri)
	}
	libaio4 := cells[5]
	if libaio4.Failed != 1 || libaio4.Repeats != 2 || libaio4.IOPS != (Spread{1000, 2000, 3000}) {
		t.Errorf("libaio iodepth 4 cell = %+v, want 2 done repeats (1000, 3000) and 1 failed", libaio4)
	}

	checkSummary(t, summaryText(t, plan, results), `Total IOPS by iodepth × ioengine, median (min–max) of 3 repeats

iodepth  io_uring                   io_uring+hipri  libaio
1        2k (1k–3k)                 failed [1]      2k (1k–3k)
4        1.5k (1k–2k), 1 cancelled  failed [1]      2k (1k–3k), 1 failed [2]

[1] io_uring+hipri: IORING_SETUP_IOPOLL: operation not supported (EOPNOTSUPP)
[2] libaio: io_submit: resource temporarily unavailable
`)
}

func TestSummaryJobErrorFailsStep(t *testing.T) {
	plan := synthPlan(1, Sweep{Axis: AxisIODepth, Values: []string{"1"}})
	bad := synthRandWrites(10)
	bad.Error = "pwrite: input/output error"
	results := []StepResult{doneStep(bad), {Status: StepDone}}
	results[0].Step = Step{Seq: 0, Axes: avs("iodepth", "1")}
	results[1].Step = Step{Seq: 1, Repeat: 1, Axes: avs("iodepth", "1")}
	cells := Summarize(plan, results)
	want := []string{"randwrite: pwrite: input/output error", "step left no result"}
	if len(cells) != 1 || cells[0].Failed != 2 || !reflect.DeepEqual(cells[0].Errors, want) {
		t.Errorf("Summarize = %+v, want 2 failed repeats with errors %q", cells, want)
	}
}

func TestSummaryNumJobsScaling(t *testing.T) {
	plan := synthPlan(3, Sweep{Axis: AxisNumJobs, Values: []string{"1", "2", "4", "8", "16"}})
	// Median IOPS 100k, 180k, 198k, (8 failed), 250k.
	base := map[string]uint64{"1": 100000, "2": 180000, "4": 198000, "16": 250000}
	results := synthSteps(plan, func(s Step) StepResult {
		nj := s.Value(AxisNumJobs)
		if nj == "8" {
			return failedStep("numjobs=8: too many open files")
		}
		// With group_reporting, one merged result per step.
		r := synthRandWrites(base[nj] + uint64(s.Repeat)*1000 - 1000)
		return doneStep(r)
	})
	scaling := SummarizeScaling(plan, results)
	var growth []float64
	for _, s := range scaling {
		g := math.NaN()
		if s.Growth != nil {
			g = math.Round(*s.Growth*10) / 10
		}
		growth = append(growth, g)
	}
	want := []float64{math.NaN(), 80, 10, math.NaN(), math.NaN()}
	for i := range want {
		if len(growth) != len(want) || !(growth[i] == want[i] || math.IsNaN(growth[i]) && math.IsNaN(want[i])) {
			t.Fatalf("growth = %v, want %v (NaN: none)", growth, want)
		}
	}

	// Only numjobs swept: the scaling summaryTable is the whole summary.
	checkSummary(t, summaryText(t, plan, results), `Scaling with numjobs: total IOPS and bandwidth, median (min–max) of 3 repeats; growth of the median IOPS from the previous numjobs

numjobs  IOPS              bandwidth                     growth
1        100k (99k–101k)   391MiB/s (387MiB/s–395MiB/s)  -
2        180k (179k–181k)  703MiB/s (699MiB/s–707MiB/s)  +80.0%
4        198k (197k–199k)  773MiB/s (770MiB/s–777MiB/s)  +10.0%
8        failed [1]                                      -
16       250k (249k–251k)  977MiB/s (973MiB/s–980MiB/s)  -

[1] numjobs=8: too many open files
`)
}

func TestSummaryNumJobsByEngine(t *testing.T) {
	// numjobs × engine: the IOPS matrix, then the scaling per engine.
	plan := synthPlan(1,
		Sweep{Axis: AxisNumJobs, Values: []string{"1", "2"}},
		Sweep{Axis: AxisEngine, Values: []string{"io_uring", "libaio"}},
	)
	iops := map[[2]string]uint64{{"1", "io_uring"}: 100000, {"2", "io_uring"}: 150000, {"1", "libaio"}: 80000, {"2", "libaio"}: 100000}
	results := synthSteps(plan, func(s Step) StepResult {
		return doneStep(synthRandWrites(iops[[2]string{s.Value(AxisNumJobs), s.Value(AxisEngine)}]))
	})
	checkSummary(t, summaryText(t, plan, results), `Total IOPS by numjobs × ioengine

numjobs  io_uring  libaio
1        100k      80k
2        150k      100k

Scaling with numjobs: total IOPS and bandwidth; growth of the median IOPS from the previous numjobs

ioengine  numjobs  IOPS  bandwidth  growth
io_uring  1        100k  391MiB/s   -
          2        150k  586MiB/s   +50.0%
libaio    1        80k   312MiB/s   -
          2        100k  391MiB/s   +25.0%
`)
}

func TestSummaryFairness(t *testing.T) {
	plan := synthPlan(3, Sweep{Axis: AxisScheduler, Values: []string{"none", "bfq"}})
	plan.Base = Config{Groups: []Group{{Jobs: []Job{{Name: "bg-writer"}, {Name: "fg-reader"}}}}}
	results := synthSteps(plan, func(s Step) StepResult {
		rep := time.Duration(s.Repeat)
		if s.Value(AxisScheduler) == "bfq" {
			if s.Repeat == 2 {
				return failedStep("bfq: switching scheduler: permission denied")
			}
			// bfq: the writer loses 20 % of its throughput, the reader's
			// latency drops 4×.
			return doneStep(
				synthJob("bg-writer", time.Second, synthLoad{}, synthLoad{ios: 320 + uint64(s.Repeat)*10, bs: 1 << 20, lat: 50*time.Millisecond + rep*time.Millisecond}),
				synthJob("fg-reader", time.Second, synthLoad{ios: 1000, bs: 4096, lat: time.Millisecond}, synthLoad{}),
			)
		}
		return doneStep(
			synthJob("bg-writer", time.Second, synthLoad{}, synthLoad{ios: 400 + uint64(s.Repeat)*10, bs: 1 << 20, lat: 40*time.Millisecond + rep*time.Millisecond}),
			synthJob("fg-reader", time.Second, synthLoad{ios: 250 + uint64(s.Repeat)*10, bs: 4096, lat: 4*time.Millisecond + rep*100*time.Microsecond}, synthLoad{}),
		)
	})
	jobs := SummarizeJobs(plan, results)
	if len(jobs) != 4 {
		t.Fatalf("SummarizeJobs = %+v, want 2 jobs × 2 schedulers", jobs)
	}
	reader := jobs[1]
	if reader.Job != "fg-reader" || axisValueOf(reader.Axes, AxisScheduler) != "none" || reader.Repeats != 3 ||
		reader.LatMean != (Spread{4e6, 4.1e6, 4.2e6}) || reader.BW != (Spread{250 * 4096, 260 * 4096, 270 * 4096}) {
		t.Errorf("fg-reader under none = %+v", reader)
	}
	bfqWriter := jobs[2]
	if bfqWriter.Job != "bg-writer" || bfqWriter.Repeats != 2 || bfqWriter.Failed != 1 || bfqWriter.LatMean != (Spread{50e6, 50.5e6, 51e6}) {
		t.Errorf("bg-writer under bfq = %+v", bfqWriter)
	}

	checkSummary(t, summaryText(t, plan, results), `Total IOPS and bandwidth by scheduler, median (min–max) of 3 repeats

scheduler  IOPS                               bandwidth
none       670 (650–690)                      411MiB/s (401MiB/s–421MiB/s)
bfq        1.32k (1.32k–1.33k), 1 failed [1]  329MiB/s (324MiB/s–334MiB/s)

Per job: mean latency (lat, over reads and writes) and bandwidth, median (min–max) of 3 repeats

scheduler  job        lat mean                              bandwidth
none       bg-writer  41.0ms (40.0ms–42.0ms)                410MiB/s (400MiB/s–420MiB/s)
           fg-reader  4.10ms (4.00ms–4.20ms)                1.02MiB/s (1000KiB/s–1.05MiB/s)
bfq        bg-writer  50.5ms (50.0ms–51.0ms), 1 failed [1]  325MiB/s (320MiB/s–330MiB/s)
           fg-reader  1.00ms (1.00ms–1.00ms), 1 failed [1]  3.91MiB/s (3.91MiB/s–3.91MiB/s)

[1] bfq: switching scheduler: permission denied
`)
}

func TestSummaryLatencyWeightedByIOs(t *testing.T) {
	// 100 reads at 1 ms and 300 writes at 3 ms: the mean is 2.5 ms, not
	// the 2 ms of the two directions' means.
	plan := synthPlan(1)
	results := []StepResult{doneStep(synthJob("mixed", time.Second,
		synthLoad{ios: 100, bs: 4096, lat: time.Millisecond},
		synthLoad{ios: 300, bs: 4096, lat: 3 * time.Millisecond}))}
	jobs := SummarizeJobs(plan, results)
	if len(jobs) != 1 || jobs[0].LatMean.Median != 2.5e6 || jobs[0].IOPS.Median != 400 {
		t.Errorf("SummarizeJobs = %+v, want lat mean 2.5 ms and 400 IOPS", jobs)
	}
	// Clones of one job add up under its name.
	results = []StepResult{doneStep(
		synthJob("reader", time.Second, synthLoad{ios: 100, bs: 4096, lat: time.Millisecond}, synthLoad{}),
		synthJob("reader", time.Second, synthLoad{ios: 100, bs: 4096, lat: 2 * time.Millisecond}, synthLoad{}),
	)}
	jobs = SummarizeJobs(plan, results)
	if len(jobs) != 1 || jobs[0].LatMean.Median != 1.5e6 || jobs[0].BW.Median != 200*4096 {
		t.Errorf("SummarizeJobs of two clones = %+v, want one job at 1.5 ms and 800 KiB/s", jobs)
	}
	checkSummary(t, summaryText(t, plan, results), `Total IOPS and bandwidth

IOPS  bandwidth
200   800KiB/s
`)
}

func TestSummaryEmpty(t *testing.T) {
	checkSummary(t, summaryText(t, nil, nil), "No steps ran.\n")
}

func TestFmtNanos(t *testing.T) {
	for _, tc := range []struct {
		ns   float64
		want string
	}{
		{0, "0ns"}, {812, "812ns"}, {1000, "1.00µs"}, {81234, "81.2µs"},
		{812345, "812µs"}, {4.1e6, "4.10ms"}, {12.34e6, "12.3ms"}, {2.5e9, "2.50s"},
	} {
		if got := fmtNanos(tc.ns); got != tc.want {
			t.Errorf("fmtNanos(%v) = %q, want %q", tc.ns, got, tc.want)
		}
	}
}
