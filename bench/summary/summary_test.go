package summary

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/stats"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
	"iolab/bench/system"
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
	lat := stats.SpreadOf([]float64{50e3, 50e3, 50e3})
	cell := func(depth, engine string, iops ...float64) SummaryCell {
		bw := make([]float64, len(iops))
		for i, v := range iops {
			bw[i] = v * 4096
		}
		return SummaryCell{Axes: avs("iodepth", depth, "ioengine", engine), Job: "randwrite",
			IOPS: stats.SpreadOf(iops), BW: stats.SpreadOf(bw), LatMean: lat, Repeats: 3}
	}
	want := []SummaryCell{
		cell("1", "io_uring", 12000, 10000, 11000),
		cell("1", "libaio", 9000, 9500, 9400),
		cell("16", "io_uring", 150000, 160000, 155000),
		cell("16", "libaio", 120000, 100000, 130000),
	}
	if !reflect.DeepEqual(cells, want) {
		t.Errorf("Summarize =\n%+v\nwant\n%+v", cells, want)
	}
	if m := cells[2].IOPS; m.Median != 155000 || m.Min != 150000 || m.Max != 160000 {
		t.Errorf("iodepth 16 io_uring = %+v, want 155k (150k–160k)", m)
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
	if libaio4.Failed != 1 || libaio4.Repeats != 2 || libaio4.IOPS != stats.SpreadOf([]float64{1000, 3000}) {
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
	plan.Base = bench.Config{Jobs: []bench.Job{
		{Name: "bg-writer", RW: "write", BS: 1 << 20, IODepth: 16},
		{Name: "fg-reader", RW: "randread", BS: 4096, IODepth: 1},
	}}
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
	// A writer and a reader are never added up: two cells per
	// scheduler, no total.
	jobs := Summarize(plan, results)
	if len(jobs) != 4 {
		t.Fatalf("Summarize = %+v, want 2 jobs × 2 schedulers", jobs)
	}
	for _, c := range jobs {
		if c.Total || c.Job == "" {
			t.Errorf("a fairness step summed: %+v", c)
		}
	}
	reader := jobs[1]
	if reader.Job != "fg-reader" || axisValueOf(reader.Axes, sweep.AxisScheduler) != "none" || reader.Repeats != 3 ||
		reader.LatMean != stats.SpreadOf([]float64{4e6, 4.1e6, 4.2e6}) || reader.BW != stats.SpreadOf([]float64{250 * 4096, 260 * 4096, 270 * 4096}) ||
		reader.IOPS.Median != 260 {
		t.Errorf("fg-reader under none = %+v", reader)
	}
	bfqWriter := jobs[2]
	if bfqWriter.Job != "bg-writer" || bfqWriter.Repeats != 2 || bfqWriter.Failed != 1 || bfqWriter.LatMean != stats.SpreadOf([]float64{50e6, 51e6}) {
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
	jobs := Summarize(plan, results)
	if len(jobs) != 1 || jobs[0].LatMean.Median != 2.5e6 || jobs[0].IOPS.Median != 400 {
		t.Errorf("Summarize = %+v, want lat mean 2.5 ms and 400 IOPS", jobs)
	}
	// Clones of one job add up under its name.
	results = []sweep.StepResult{doneStep(
		synthJob("reader", time.Second, synthLoad{ios: 100, bs: 4096, lat: time.Millisecond}, synthLoad{}),
		synthJob("reader", time.Second, synthLoad{ios: 100, bs: 4096, lat: 2 * time.Millisecond}, synthLoad{}),
	)}
	jobs = Summarize(plan, results)
	if len(jobs) != 1 || jobs[0].Job != "reader" || jobs[0].Total || jobs[0].LatMean.Median != 1.5e6 || jobs[0].BW.Median != 200*4096 {
		t.Errorf("Summarize of two clones = %+v, want one job at 1.5 ms and 800 KiB/s", jobs)
	}
	checkGolden(t, "no_axes", plan, results)
}

func TestSummaryEmpty(t *testing.T) {
	checkSummary(t, summaryText(t, nil, nil), "No steps ran.\n")
}

// withConfig gives a synthetic step its config: jobs as the plan's base
// runs them, in one group.
func withConfig(r sweep.StepResult, jobs ...bench.Job) sweep.StepResult {
	r.Step.Config = bench.Config{Jobs: jobs, Groups: bench.Expand(jobs)}
	return r
}

// Jobs that do the same I/O at the same time add up in a total row;
// any difference in rw, bs or group and there is none.
func TestSummaryTotalOfLikeJobs(t *testing.T) {
	plan := synthPlan(2, sweep.Sweep{Axis: sweep.AxisScheduler, Values: []string{"none", "bfq"}})
	readers := []bench.Job{{Name: "r1", RW: "randread", BS: 4096, IODepth: 1}, {Name: "r2", RW: "randread", BS: 4096, IODepth: 16}}
	plan.Base.Jobs = readers
	reader := func(name string, ios uint64) bench.JobResult {
		return synthJob(name, time.Second, synthLoad{ios: ios, bs: 4096, lat: 100 * time.Microsecond}, synthLoad{})
	}
	results := synthSteps(plan, func(s sweep.Step) sweep.StepResult {
		k := uint64(s.Repeat)
		if s.Value(sweep.AxisScheduler) == "bfq" {
			k += 10
		}
		return doneStep(reader("r1", 1000+k), reader("r2", 5000+k))
	})
	cells := Summarize(plan, results)
	var names []string
	for _, c := range cells {
		names = append(names, axisValueOf(c.Axes, sweep.AxisScheduler)+" "+c.Name())
	}
	if want := []string{"none r1", "none r2", "none total", "bfq r1", "bfq r2", "bfq total"}; !slices.Equal(names, want) {
		t.Fatalf("cells = %q, want %q", names, want)
	}
	if total := cells[2]; !total.Total || total.Job != "" || total.IOPS.Median != 6001 || total.Repeats != 2 {
		t.Errorf("total under none = %+v, want 6001 IOPS over 2 repeats", total)
	}
	checkGolden(t, "like_jobs", plan, results)

	job := func(name, rw string, bs int64) stepJob {
		return stepJob{name: name, job: &bench.Job{Name: name, RW: rw, BS: bs}}
	}
	for _, tc := range []struct {
		name string
		jobs []stepJob
		want bool
	}{
		{"two readers", []stepJob{job("a", "randread", 4096), job("b", "randread", 4096)}, true},
		{"writer and reader", []stepJob{job("w", "write", 1<<20), job("r", "randread", 4096)}, false},
		{"block sizes differ", []stepJob{job("a", "randread", 4096), job("b", "randread", 8192)}, false},
		{"one after the other", []stepJob{job("a", "randread", 4096), {name: "b", job: &bench.Job{RW: "randread", BS: 4096}, group: 1}}, false},
		{"rw unknown", []stepJob{{name: "a"}, {name: "b"}}, false},
		{"one job", []stepJob{job("a", "randread", 4096)}, false},
	} {
		if got := alikeJobs(tc.jobs); got != tc.want {
			t.Errorf("%s: alikeJobs = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Repeats that disagree are flagged noisy, and repeats another process
// disturbed are flagged too, with the marks explained.
func TestSummaryNoisyAndDisturbed(t *testing.T) {
	plan := synthPlan(3, sweep.Sweep{Axis: sweep.AxisScheduler, Values: []string{"none", "bfq", "kyber"}})
	// sched-mixed as a user saw it: bfq from 208 to 42.3k IOPS.
	iops := map[string][3]uint64{"none": {10000, 45600, 40000}, "bfq": {208, 42300, 30000}, "kyber": {40000, 40500, 39800}}
	results := synthSteps(plan, func(s sweep.Step) sweep.StepResult {
		r := doneStep(synthRandWrites(iops[s.Value(sweep.AxisScheduler)][s.Repeat]))
		if s.Value(sweep.AxisScheduler) == "kyber" && s.Repeat == 1 {
			// The disk moved twice the jobs' bytes.
			r.Result.Groups[0].Disks = []system.DiskUtilization{{Name: "sdb", JobBytes: 1 << 30, WriteSectors: 2 << 30 / 512}}
		}
		return r
	})
	cells := Summarize(plan, results)
	if !cells[0].IOPS.Noisy() || !cells[1].IOPS.Noisy() || cells[2].IOPS.Noisy() {
		t.Errorf("noisy: none %v, bfq %v, kyber %v; want true, true, false (CVs %.2f %.2f %.2f)",
			cells[0].IOPS.Noisy(), cells[1].IOPS.Noisy(), cells[2].IOPS.Noisy(), cells[0].IOPS.CV, cells[1].IOPS.CV, cells[2].IOPS.CV)
	}
	if cells[2].Disturbed != 1 || cells[0].Disturbed != 0 {
		t.Errorf("disturbed repeats: none %d, kyber %d; want 0, 1", cells[0].Disturbed, cells[2].Disturbed)
	}
	checkGolden(t, "noisy_disturbed", plan, results)
}

// A sweep of one value (numjobs=1 from a form's default) overrides every
// job; no table treats it as an axis.
func TestSummaryOneValueSweep(t *testing.T) {
	plan := synthPlan(1,
		sweep.Sweep{Axis: sweep.AxisNumJobs, Values: []string{"1"}},
		sweep.Sweep{Axis: sweep.AxisScheduler, Values: []string{"none", "bfq"}},
	)
	results := synthSteps(plan, func(s sweep.Step) sweep.StepResult { return doneStep(synthRandWrites(1000)) })
	for _, c := range Summarize(plan, results) {
		if len(c.Axes) != 1 || c.Axes[0].Axis != sweep.AxisScheduler {
			t.Errorf("cell axes = %v, want the scheduler alone", c.Axes)
		}
	}
	if s := SummarizeScaling(plan, results); s != nil {
		t.Errorf("SummarizeScaling of a one-value numjobs sweep = %+v, want none", s)
	}
	got := summaryText(t, plan, results)
	if strings.Contains(got, "numjobs") || !strings.Contains(got, "IOPS and bandwidth by scheduler") {
		t.Errorf("summary of a one-value numjobs sweep:\n%s", got)
	}
	// Only numjobs, with one value: no axis at all, no scaling table.
	plan.Sweeps = plan.Sweeps[:1]
	results = synthSteps(plan, func(s sweep.Step) sweep.StepResult { return doneStep(synthRandWrites(1000)) })
	if got := summaryText(t, plan, results); strings.Contains(got, "numjobs") || strings.Contains(got, "Scaling") {
		t.Errorf("summary of numjobs=1 alone:\n%s", got)
	}
}

// clatJob is a job whose completions each took lat, counted in the clat
// histogram the step figures' percentiles come from.
func clatJob(name string, ios uint64, bs uint64, lat time.Duration) bench.JobResult {
	r := bench.JobResult{Name: name, Runtime: time.Second, Jobs: 1}
	r.Dirs[bench.Read].IOs, r.Dirs[bench.Read].Bytes = ios, ios*bs
	for range ios {
		r.Dirs[bench.Read].Clat.Add(uint64(lat))
	}
	return r
}

// A step's figures are per job: a writer and a reader get a row each
// with their own options and no total; alike jobs get their total.
func TestFiguresOfPerJob(t *testing.T) {
	writer := bench.Job{Name: "bg-writer", RW: "write", BS: 1 << 20, IODepth: 16}
	reader := bench.Job{Name: "fg-reader", RW: "randread", BS: 4096, IODepth: 1}
	w := clatJob("bg-writer", 400, 1<<20, 40*time.Millisecond)
	w.UsrCPU, w.SysCPU = 500*time.Millisecond, 450*time.Millisecond // 95 % of a core
	r := clatJob("fg-reader", 15000, 4096, 100*time.Microsecond)
	step := withConfig(doneStep(w, r), writer, reader)
	f := FiguresOf(&step)
	if len(f.Jobs) != 2 {
		t.Fatalf("figures of a fairness step = %+v, want the writer and the reader apart", f.Jobs)
	}
	fw, fr := f.Jobs[0], f.Jobs[1]
	if fw.Name != "bg-writer" || fw.RW != "write" || fw.BS != 1<<20 || fw.IODepth != 16 || fw.IOPS != 400 || fw.P50 < 39*time.Millisecond || fw.P50 > 41*time.Millisecond {
		t.Errorf("writer = %+v", fw)
	}
	if fr.Name != "fg-reader" || fr.RW != "randread" || fr.IODepth != 1 || fr.IOPS != 15000 || fr.P99 == 0 || fr.P99 > 110*time.Microsecond {
		t.Errorf("reader = %+v, want its own 100 µs p99, not the writer's", fr)
	}
	if !fw.Saturated || fr.Saturated || math.Abs(fw.CPU-0.95) > 1e-9 {
		t.Errorf("saturated: writer %v (%.2f), reader %v; want the writer's thread flagged", fw.Saturated, fw.CPU, fr.Saturated)
	}
	if fw.Options() != "write 1m iodepth 16" || fr.Options() != "randread 4k iodepth 1" {
		t.Errorf("options: writer %q, reader %q", fw.Options(), fr.Options())
	}
	if got := f.IOPSText(); got != "bg-writer 400 IOPS, fg-reader 15k IOPS" {
		t.Errorf("IOPSText = %q, want each job's", got)
	}
	// 15,000 I/Os vouch for p99 (1,000 needed) but not p99.99 (100,000).
	if !fr.Reliable(99) || fr.Reliable(99.99) || fw.Reliable(99) {
		t.Errorf("reliable: reader p99 %v p99.99 %v, writer p99 %v; want true, false, false", fr.Reliable(99), fr.Reliable(99.99), fw.Reliable(99))
	}

	// Two like readers: each, then their total.
	r2 := reader
	r2.Name, r2.IODepth = "fg-reader2", 8
	step = withConfig(doneStep(r, clatJob("fg-reader2", 5000, 4096, 200*time.Microsecond)), reader, r2)
	f = FiguresOf(&step)
	if len(f.Jobs) != 3 || f.Jobs[2].Name != TotalName || !f.Jobs[2].Total || f.Jobs[2].IOPS != 20000 || f.Jobs[2].IODepth != 0 || f.Jobs[2].RW != "randread" {
		t.Errorf("figures of two like readers = %+v, want both and a total of 20000 IOPS", f.Jobs)
	}

	// Clones of a job are one job.
	clones := reader
	clones.NumJobs = 2
	step = withConfig(doneStep(clatJob("fg-reader", 100, 4096, time.Millisecond), clatJob("fg-reader", 100, 4096, time.Millisecond)), clones)
	if f = FiguresOf(&step); len(f.Jobs) != 1 || f.Jobs[0].IOPS != 200 || f.Jobs[0].Threads != 2 || f.Jobs[0].Options() != "randread 4k iodepth 1 ×2" {
		t.Errorf("figures of two clones = %+v, want one job of 200 IOPS over 2 threads", f.Jobs)
	}

	failed := failedStep("boom")
	if f = FiguresOf(&failed); f.HasResult || f.Jobs != nil {
		t.Errorf("figures of a failed step = %+v", f)
	}
}
