package summary

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/stats"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

// synthLoad is what a synthetic job did in one direction: ios I/Os of bs
// bytes, each taking lat.
type synthLoad struct {
	ios uint64
	bs  uint64
	lat time.Duration
}

// jobResult builds a job's result over a window of runtime.
func synthJob(name string, runtime time.Duration, read, write synthLoad) bench.JobResult {
	r := bench.JobResult{Name: name, Runtime: runtime, Jobs: 1}
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
func synthPlan(repeat int, sweeps ...sweep.Sweep) *sweep.Plan {
	return &sweep.Plan{Name: "test", Sweeps: sweeps, Repeat: repeat}
}

// The synthetic steps are sweeptest's, which the charts' tests share.
var (
	synthSteps = sweeptest.Steps
	doneStep   = sweeptest.Done
	failedStep = sweeptest.Failed
)

// randWrites is a one-second 4 KiB random-write job doing iops I/Os.
func synthRandWrites(iops uint64) bench.JobResult {
	return synthJob("randwrite", time.Second, synthLoad{}, synthLoad{ios: iops, bs: 4096, lat: 50 * time.Microsecond})
}

func summaryText(t *testing.T, plan *sweep.Plan, results []sweep.StepResult) string {
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

func TestSummarizeIODepthEngine(t *testing.T) {
	plan := synthPlan(3,
		sweep.Sweep{Axis: sweep.AxisIODepth, Values: []string{"1", "16"}},
		sweep.Sweep{Axis: sweep.AxisEngine, Values: []string{"io_uring", "libaio"}},
	)
	// IOPS per repeat, by iodepth and engine: the median is the middle
	// value whichever repeat produced it.
	iops := map[[2]string][3]uint64{
		{"1", "io_uring"}:  {12000, 10000, 11000},
		{"1", "libaio"}:    {9000, 9500, 9400},
		{"16", "io_uring"}: {150000, 160000, 155000},
		{"16", "libaio"}:   {120000, 100000, 130000},
	}
	results := synthSteps(plan, func(s sweep.Step) sweep.StepResult {
		return doneStep(synthRandWrites(iops[[2]string{s.Value(sweep.AxisIODepth), s.Value(sweep.AxisEngine)}][s.Repeat]))
	})
	// Results may come in any order (e.g. read back from the store).
	results[0], results[len(results)-1] = results[len(results)-1], results[0]

	cells := Summarize(plan, results)
	want := []SummaryCell{
		{Axes: avs("iodepth", "1", "ioengine", "io_uring"), IOPS: stats.Spread{Min: 10000, Median: 11000, Max: 12000}, BW: stats.Spread{Min: 10000 * 4096, Median: 11000 * 4096, Max: 12000 * 4096}, Repeats: 3},
		{Axes: avs("iodepth", "1", "ioengine", "libaio"), IOPS: stats.Spread{Min: 9000, Median: 9400, Max: 9500}, BW: stats.Spread{Min: 9000 * 4096, Median: 9400 * 4096, Max: 9500 * 4096}, Repeats: 3},
		{Axes: avs("iodepth", "16", "ioengine", "io_uring"), IOPS: stats.Spread{Min: 150000, Median: 155000, Max: 160000}, BW: stats.Spread{Min: 150000 * 4096, Median: 155000 * 4096, Max: 160000 * 4096}, Repeats: 3},
		{Axes: avs("iodepth", "16", "ioengine", "libaio"), IOPS: stats.Spread{Min: 100000, Median: 120000, Max: 130000}, BW: stats.Spread{Min: 100000 * 4096, Median: 120000 * 4096, Max: 130000 * 4096}, Repeats: 3},
	}
	if !reflect.DeepEqual(cells, want) {
		t.Errorf("Summarize =\n%+v\nwant\n%+v", cells, want)
	}

	checkGolden(t, "iodepth_engine", plan, results)
}

// axes builds axis values from axis, value pairs.
func avs(kv ...string) []sweep.AxisValue {
	var out []sweep.AxisValue
	for i := 0; i < len(kv); i += 2 {
		out = append(out, sweep.AxisValue{Axis: sweep.Axis(kv[i]), Value: kv[i+1]})
	}
	return out
}

func TestSummaryFailedSteps(t *testing.T) {
	// The engine sweep listed first: the rows are still the iodepths.
	plan := synthPlan(3,
		sweep.Sweep{Axis: sweep.AxisEngine, Values: []string{"io_uring", "io_uring+hipri", "libaio"}},
		sweep.Sweep{Axis: sweep.AxisIODepth, Values: []string{"1", "4"}},
	)
	const pollErr = "io_uring+hipri: IORING_SETUP_IOPOLL: operation not supported (EOPNOTSUPP)\n" +
		"/dev/nvme0n1 has no poll queues: load nvme with poll_queues=N"
	results := synthSteps(plan, func(s sweep.Step) sweep.StepResult {
		switch {
		case s.Value(sweep.AxisEngine) == "io_uring+hipri":
			return failedStep(pollErr)
		case s.Value(sweep.AxisEngine) == "libaio" && s.Value(sweep.AxisIODepth) == "4" && s.Repeat == 1:
			return failedStep("libaio: io_submit: resource temporarily unavailable")
		case s.Value(sweep.AxisEngine) == "io_uring" && s.Value(sweep.AxisIODepth) == "4" && s.Repeat == 2:
			return sweep.StepResult{Status: sweep.StepCancelled}
		}
		return doneStep(synthRandWrites(uint64(1000 * (s.Repeat + 1))))
	})
	cells := Summarize(plan, results)
	if len(cells) != 6 {
		t.Fatalf("%d cells, want 6", len(cells))
	}
	hipri := cells[2]
	if hipri.Failed != 3 || hipri.Repeats != 0 || !reflect.DeepEqual(hipri.Errors, []string{pollErr}) || hipri.IOPS != (stats.Spread{}) {
		t.Errorf("io_uring+hipri cell = %+v, want 3 failed repeats and their one error", hipri)
	}
	libaio4 := cells[5]
	if libaio4.Failed != 1 || libaio4.Repeats != 2 || libaio4.IOPS != (stats.Spread{Min: 1000, Median: 2000, Max: 3000}) {
		t.Errorf("libaio iodepth 4 cell = %+v, want 2 done repeats (1000, 3000) and 1 failed", libaio4)
	}

	checkGolden(t, "failed_steps", plan, results)
}

func TestSummaryJobErrorFailsStep(t *testing.T) {
	plan := synthPlan(1, sweep.Sweep{Axis: sweep.AxisIODepth, Values: []string{"1"}})
	bad := synthRandWrites(10)
	bad.Error = "pwrite: input/output error"
	results := []sweep.StepResult{doneStep(bad), {Status: sweep.StepDone}}
	results[0].Step = sweep.Step{Seq: 0, Axes: avs("iodepth", "1")}
	results[1].Step = sweep.Step{Seq: 1, Repeat: 1, Axes: avs("iodepth", "1")}
	cells := Summarize(plan, results)
	want := []string{"randwrite: pwrite: input/output error", "step left no result"}
	if len(cells) != 1 || cells[0].Failed != 2 || !reflect.DeepEqual(cells[0].Errors, want) {
		t.Errorf("Summarize = %+v, want 2 failed repeats with errors %q", cells, want)
	}
}

func TestStepStatus(t *testing.T) {
	jobFailed := doneStep(synthJob("a", time.Second, synthLoad{ios: 1, bs: 4096}, synthLoad{}))
	jobFailed.Result.Groups[0].Jobs[0].Error = "EIO"
	for _, tc := range []struct {
		name string
		r    sweep.StepResult
		want string
	}{
		{"done", doneStep(synthJob("a", time.Second, synthLoad{ios: 1, bs: 4096}, synthLoad{})), sweep.StepDone},
		{"failed", failedStep("boom"), sweep.StepFailed},
		{"cancelled", sweep.StepResult{Status: sweep.StepCancelled}, sweep.StepCancelled},
		{"done without a result", sweep.StepResult{Status: sweep.StepDone}, sweep.StepFailed},
		{"done with a failed job", jobFailed, sweep.StepFailed},
	} {
		if got := StepStatus(&tc.r); got != tc.want {
			t.Errorf("%s: StepStatus = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestSummaryNumJobsScaling(t *testing.T) {
	plan := synthPlan(3, sweep.Sweep{Axis: sweep.AxisNumJobs, Values: []string{"1", "2", "4", "8", "16"}})
	// Median IOPS 100k, 180k, 198k, (8 failed), 250k.
	base := map[string]uint64{"1": 100000, "2": 180000, "4": 198000, "16": 250000}
	results := synthSteps(plan, func(s sweep.Step) sweep.StepResult {
		nj := s.Value(sweep.AxisNumJobs)
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
	checkGolden(t, "numjobs_scaling", plan, results)
}

func TestSummaryNumJobsByEngine(t *testing.T) {
	// numjobs × engine: the IOPS matrix, then the scaling per engine.
	plan := synthPlan(1,
		sweep.Sweep{Axis: sweep.AxisNumJobs, Values: []string{"1", "2"}},
		sweep.Sweep{Axis: sweep.AxisEngine, Values: []string{"io_uring", "libaio"}},
	)
	iops := map[[2]string]uint64{{"1", "io_uring"}: 100000, {"2", "io_uring"}: 150000, {"1", "libaio"}: 80000, {"2", "libaio"}: 100000}
	results := synthSteps(plan, func(s sweep.Step) sweep.StepResult {
		return doneStep(synthRandWrites(iops[[2]string{s.Value(sweep.AxisNumJobs), s.Value(sweep.AxisEngine)}]))
	})
	checkGolden(t, "numjobs_engine", plan, results)
}

func TestSummaryFairness(t *testing.T) {
	plan := synthPlan(3, sweep.Sweep{Axis: sweep.AxisScheduler, Values: []string{"none", "bfq"}})
	plan.Base = bench.Config{Groups: []bench.Group{{Jobs: []bench.Job{{Name: "bg-writer"}, {Name: "fg-reader"}}}}}
	results := synthSteps(plan, func(s sweep.Step) sweep.StepResult {
		rep := time.Duration(s.Repeat)
		if s.Value(sweep.AxisScheduler) == "bfq" {
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
	if reader.Job != "fg-reader" || axisValueOf(reader.Axes, sweep.AxisScheduler) != "none" || reader.Repeats != 3 ||
		reader.LatMean != (stats.Spread{Min: 4e6, Median: 4.1e6, Max: 4.2e6}) || reader.BW != (stats.Spread{Min: 250 * 4096, Median: 260 * 4096, Max: 270 * 4096}) {
		t.Errorf("fg-reader under none = %+v", reader)
	}
	bfqWriter := jobs[2]
	if bfqWriter.Job != "bg-writer" || bfqWriter.Repeats != 2 || bfqWriter.Failed != 1 || bfqWriter.LatMean != (stats.Spread{Min: 50e6, Median: 50.5e6, Max: 51e6}) {
		t.Errorf("bg-writer under bfq = %+v", bfqWriter)
	}

	checkGolden(t, "fairness", plan, results)
}

func TestSummaryLatencyWeightedByIOs(t *testing.T) {
	// 100 reads at 1 ms and 300 writes at 3 ms: the mean is 2.5 ms, not
	// the 2 ms of the two directions' means.
	plan := synthPlan(1)
	results := []sweep.StepResult{doneStep(synthJob("mixed", time.Second,
		synthLoad{ios: 100, bs: 4096, lat: time.Millisecond},
		synthLoad{ios: 300, bs: 4096, lat: 3 * time.Millisecond}))}
	jobs := SummarizeJobs(plan, results)
	if len(jobs) != 1 || jobs[0].LatMean.Median != 2.5e6 || jobs[0].IOPS.Median != 400 {
		t.Errorf("SummarizeJobs = %+v, want lat mean 2.5 ms and 400 IOPS", jobs)
	}
	// Clones of one job add up under its name.
	results = []sweep.StepResult{doneStep(
		synthJob("reader", time.Second, synthLoad{ios: 100, bs: 4096, lat: time.Millisecond}, synthLoad{}),
		synthJob("reader", time.Second, synthLoad{ios: 100, bs: 4096, lat: 2 * time.Millisecond}, synthLoad{}),
	)}
	jobs = SummarizeJobs(plan, results)
	if len(jobs) != 1 || jobs[0].LatMean.Median != 1.5e6 || jobs[0].BW.Median != 200*4096 {
		t.Errorf("SummarizeJobs of two clones = %+v, want one job at 1.5 ms and 800 KiB/s", jobs)
	}
	checkGolden(t, "no_axes", plan, results)
}

func TestSummaryEmpty(t *testing.T) {
	checkSummary(t, summaryText(t, nil, nil), "No steps ran.\n")
}
