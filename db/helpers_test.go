package db

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/system"
)

// openTest opens a store in a fresh temporary directory and closes it when
// the test ends.
func openTest(t testing.TB) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sub", "iolab.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

// at is a time as the store reads it back: local zone, no monotonic clock.
func at(sec int) time.Time { return time.Unix(1_780_000_000+int64(sec), 123_456_789) }

func testHost() system.HostInfo {
	return system.HostInfo{
		Hostname: "lab1", KernelRelease: "6.12.0-test", KernelVersion: "#1 SMP PREEMPT_DYNAMIC",
		Arch: "x86_64", CPUModel: "Test CPU @ 3.0GHz", CPUCount: 16, MemTotal: 64 << 30,
		Cmdline: "root=/dev/vda1 intel_iommu=on iommu=pt",
		IOMMU: system.IOMMUInfo{Mode: "passthrough", CmdlineFlags: []string{"intel_iommu=on", "iommu=pt"},
			Devices: []string{"dmar0"}, Groups: 12, GroupTypes: map[string]int{"identity": 12}},
		Governor: "performance",
	}
}

func testTarget() system.Target {
	return system.Target{Path: "/dev/nvme0n1", Resolved: "/dev/nvme0n1", IsBlock: true, Size: 512 << 30,
		Dev: "259:0", Disk: "nvme0n1", Model: "Test NVMe", Driver: "nvme", LogicalBlockSize: 512,
		PhysicalBlockSize: 4096, Scheduler: "none", Schedulers: []string{"none", "mq-deadline", "kyber", "bfq"},
		NrRequests: 1023, IOPoll: true, NUMANode: -1, DIOMemAlign: 4, DIOOffsetAlign: 512}
}

func testJob(name, rw string, iodepth int, engine string) bench.Job {
	j := bench.NewJob()
	j.Name, j.Filename, j.RW, j.IODepth, j.IOEngine = name, "/dev/nvme0n1", rw, iodepth, engine
	j.RWMixRead = 70
	j.Direct, j.TimeBased = true, true
	j.Runtime, j.RampTime = 60*time.Second, 10*time.Second
	j.CPUsAllowed = []int{0, 2}
	j.Options = []bench.Option{{Name: "rw", Value: rw}, {Name: "time_based"}}
	return j
}

func testPlan() sweep.Plan {
	j := testJob("t", "randrw", 8, "io_uring")
	return sweep.Plan{
		Name: "sweep", Preset: "engines-randwrite", Args: []string{"--rw=randrw", "--iodepth=8"},
		Base: bench.Config{Groups: []bench.Group{{ID: 0, Jobs: []bench.Job{j}}}, OutputFormat: "normal"},
		Sweeps: []sweep.Sweep{
			{Axis: sweep.AxisIODepth, Values: []string{"1", "8"}},
			{Axis: sweep.AxisEngine, Values: []string{"io_uring", "io_uring+sqpoll", "io_uring+hipri"}},
		},
		Repeat: 3, Discard: true, Runtime: 60 * time.Second, RampTime: 10 * time.Second,
	}
}

func testRun() *Run {
	return &Run{
		Name: "sweep", Status: StatusRunning, Created: at(0), Tags: []string{"nightly", "nvme"},
		Plan: testPlan(), Host: testHost(), Targets: []system.Target{testTarget()},
	}
}

// latency draws a log-normal latency in ns around median, so a few thousand
// I/Os fill a couple of hundred histogram buckets, as real ones do.
func latency(rng *rand.Rand, median float64, sigma float64) uint64 {
	return uint64(median * math.Exp(rng.NormFloat64()*sigma))
}

// testJobResult measures n I/Os per direction through hist.Lat.Add, as the
// engines do, with samples every second.
func testJobResult(rng *rand.Rand, job bench.Job, n int, samples int) bench.JobResult {
	jr := bench.JobResult{
		Name: job.Name, GroupID: 0, Job: job, Start: at(10), Runtime: 60 * time.Second,
		Interval: time.Second, UsrCPU: 1200 * time.Millisecond, SysCPU: 3400 * time.Millisecond,
		Ctx: 123456, MinFlt: 789, MajFlt: 1, Jobs: 1, EngineSetup: "io_uring CQSIZE DEFER_TASKRUN; sq 8, cq 8",
	}
	for d := range jr.Dirs {
		dr := &jr.Dirs[d]
		for range n {
			slat := latency(rng, 1500, 0.3)
			clat := latency(rng, 80_000*float64(d+1), 0.4)
			dr.Slat.Add(slat)
			dr.Clat.Add(clat)
			dr.Lat.Add(slat + clat)
			dr.IOs++
			dr.Bytes += uint64(job.BS)
		}
		dr.Short = uint64(d)
	}
	// cmdprio's latencies per priority, on the reads.
	jr.Dirs[bench.Read].Prios = []bench.PrioLat{{Prio: bench.IOPrioValue(bench.IOPrioClassIdle, 0)}, {Prio: bench.IOPrioValue(bench.IOPrioClassRT, 0)}}
	for k := range 2 * n {
		jr.Dirs[bench.Read].Prios[k%2].Lat.Add(latency(rng, 80_000*float64(k%2+1), 0.4))
	}
	for i := range samples {
		f := uint64(i + 1)
		jr.Samples = append(jr.Samples, bench.Sample{
			At:    time.Duration(i+1) * time.Second,
			IOs:   bench.DirCounts{jr.Dirs[0].IOs * f / uint64(samples), jr.Dirs[1].IOs * f / uint64(samples)},
			Bytes: bench.DirCounts{jr.Dirs[0].Bytes * f / uint64(samples), jr.Dirs[1].Bytes * f / uint64(samples)},
		})
	}
	return jr
}

func testDisk() system.DiskUtilization {
	d := system.DiskDelta(
		system.DiskStat{ReadIOs: 100, WriteIOs: 50, ReadSectors: 800, WriteSectors: 400, ReadTicks: 10, WriteTicks: 20, IOTicks: 100, TimeInQueue: 300},
		system.DiskStat{ReadIOs: 700_100, WriteIOs: 300_050, ReadSectors: 5_600_800, WriteSectors: 2_400_400, ReadTicks: 50_010, WriteTicks: 40_020, IOTicks: 59_000, TimeInQueue: 480_300},
		60*time.Second)
	d.Name = "nvme0n1"
	return d
}

// testStep builds step seq of a sweep: one randrw job with n I/Os per
// direction, or with two groups (a merged reporting group of two jobs, then
// a plain one) when twoGroups is set.
func testStep(rng *rand.Rand, seq, n, samples int, twoGroups bool) sweep.StepResult {
	depth := []string{"1", "8"}[seq%2]
	engine := []string{"io_uring", "io_uring+sqpoll"}[(seq/2)%2]
	iodepth, _ := strconv.Atoi(depth)
	job := testJob("t", "randrw", iodepth, "io_uring")
	job.SQThreadPoll = engine == "io_uring+sqpoll"
	cfg := bench.Config{Groups: []bench.Group{{ID: 0, Jobs: []bench.Job{job}}}, OutputFormat: "normal"}
	res := &bench.Result{Start: at(seq*70 + 10), Host: testHost(), Groups: []bench.GroupResult{{
		ID: 0, Jobs: []bench.JobResult{testJobResult(rng, job, n, samples)},
		Disks: []system.DiskUtilization{testDisk()},
	}}}
	if twoGroups {
		a, b := testJobResult(rng, job, n, samples), testJobResult(rng, job, n/2, samples)
		a.Merge(&b)
		a.GroupID = 1
		plain := testJobResult(rng, job, n/4, 0) // no samples: reads back nil
		plain.GroupID, plain.Error = 2, "io_uring_enter: resource temporarily unavailable"
		// Errors it went on after (continue_on_error): kept too.
		a.TotalErr, a.FirstError, a.FirstErrorMsg = 16, 5, "job t: read of 4096 bytes at offset 1048576 on /dev/loop4: input/output error"
		res.Groups = append(res.Groups,
			bench.GroupResult{ID: 1, Reporting: true, Jobs: []bench.JobResult{a}},
			bench.GroupResult{ID: 2, Jobs: []bench.JobResult{plain}})
	}
	return sweep.StepResult{
		Step: sweep.Step{Seq: seq, Repeat: seq / 4, Config: cfg, Scheduler: "mq-deadline",
			Axes: []sweep.AxisValue{{Axis: sweep.AxisIODepth, Value: depth}, {Axis: sweep.AxisEngine, Value: engine}}},
		Status:     sweep.StepDone,
		Start:      at(seq * 70),
		End:        at(seq*70 + 70),
		Schedulers: map[string]string{"nvme0n1": "mq-deadline"},
		Result:     res,
		CPU: system.CPUDelta(system.CPUTimes{User: 100, System: 50, Idle: 1000, IOWait: 10},
			system.CPUTimes{User: 400, Nice: 3, System: 950, Idle: 5000, IOWait: 900, IRQ: 20, SoftIRQ: 180, Steal: 1}),
		Proc: system.ProcCPU{User: 1234 * time.Millisecond, System: 5678 * time.Millisecond,
			VoluntaryCtx: 1000, InvoluntaryCtx: 20, MinorFaults: 300, MajorFaults: 2},
	}
}

// failedStep is a step that failed before any I/O.
func failedStep(seq int) sweep.StepResult {
	return sweep.StepResult{
		Step: sweep.Step{Seq: seq, Axes: []sweep.AxisValue{{Axis: sweep.AxisIODepth, Value: "1"},
			{Axis: sweep.AxisEngine, Value: "io_uring+hipri"}}},
		Status: sweep.StepFailed,
		Error:  "io_uring: IOPOLL: operation not supported: the device has no poll queues",
		Start:  at(seq * 70), End: at(seq*70 + 1),
	}
}

// storeNineSteps stores a run of nine steps of 300 I/Os (after a run was
// deleted, its steps take the freed ids) and returns its id.
func storeNineSteps(t *testing.T, s *Store) int64 {
	t.Helper()
	ctx := context.Background()
	id, err := s.CreateRun(ctx, testRun())
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for seq := range 9 {
		st := testStep(rng, seq, 300, 4, false)
		if err := s.SaveStep(ctx, id, &st); err != nil {
			t.Fatal(err)
		}
	}
	return id
}
