package cli

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/hist"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"
)

// loadRunEngines and loadRunDepths are the load run's sweep: the third
// write-up's engines × iodepths, repeated until the run has its steps.
var (
	loadRunEngines = []string{"libaio", "io_uring", "io_uring+hipri", "io_uring+sqpoll", "io_uring+sqpoll+hipri"}
	loadRunDepths  = []string{"1", "2", "4", "8", "16", "32", "64", "128", "256", "512"}
)

// seedLoadRun stores a finished run of steps steps (a multiple of 50) that
// looks like a long real one: engines × iodepths × repeats, each step
// three job results — a 70/30 random reader with numjobs=2 (two clones)
// and a 1 MiB sequential writer — with slat, clat and lat histograms in
// every direction a job moves (log-normal, a few hundred buckets each,
// with a tail), a sample a second over a minute, CPU, the process's CPU
// and a disk's iostat figures. Every 97th step failed before any I/O.
func seedLoadRun(t testing.TB, store *db.Store, steps int) *db.Run {
	t.Helper()
	ctx := context.Background()
	args := []string{"--filename=/dev/nvme1n1", "--direct=1", "--ioengine=io_uring", "--runtime=60", "--time_based",
		"--name=reader", "--rw=randrw", "--rwmixread=70", "--bs=4k", "--numjobs=2",
		"--name=writer", "--rw=write", "--bs=1m"}
	cfg, err := fio.ParseArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	per := len(loadRunEngines) * len(loadRunDepths)
	if steps%per != 0 {
		t.Fatalf("a load run has a multiple of %d steps, not %d", per, steps)
	}
	plan := &sweep.Plan{Name: "engines × iodepth, long", Args: args, Base: *cfg, Repeat: steps / per, Sweeps: []sweep.Sweep{
		{Axis: sweep.AxisEngine, Values: loadRunEngines},
		{Axis: sweep.AxisIODepth, Values: loadRunDepths}}}
	planned, err := plan.Steps()
	if err != nil {
		t.Fatal(err)
	}
	host := system.HostInfo{Hostname: "lab-7", KernelRelease: "6.12.9-lab", CPUModel: "Lab CPU @ 3.0GHz", CPUCount: 16, MemTotal: 64 << 30}
	run := &db.Run{Name: plan.Name, Status: db.StatusRunning, Plan: *plan, Host: host,
		Targets: []system.Target{{Path: "/dev/nvme1n1", Disk: "nvme1n1", Model: "Lab NVMe", Scheduler: "none",
			Schedulers: []string{"none", "mq-deadline", "bfq", "kyber"}}}}
	if _, err := store.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(42, 7))
	const (
		runtime = 60 * time.Second
		every   = time.Second
	)
	speed := map[string]float64{"libaio": 0.85, "io_uring": 1, "io_uring+hipri": 1.15, "io_uring+sqpoll": 1.05, "io_uring+sqpoll+hipri": 1.2}
	t0 := time.Now().Add(-10 * time.Hour).Truncate(time.Second)
	for i, st := range planned {
		start := t0.Add(time.Duration(i) * (runtime + 2*time.Second))
		res := sweep.StepResult{Step: st, Status: sweep.StepDone, Start: start, End: start.Add(runtime + time.Second),
			Schedulers: map[string]string{"nvme1n1": "none"}}
		if i%97 == 96 {
			res.Status, res.Error = sweep.StepFailed, "io_uring_setup: EOPNOTSUPP (the device has no poll queues)"
			if err := store.SaveStep(ctx, run.ID, &res); err != nil {
				t.Fatal(err)
			}
			continue
		}
		qd, _ := strconv.ParseFloat(st.Value(sweep.AxisIODepth), 64)
		k := speed[st.Value(sweep.AxisEngine)]
		var jobs []bench.JobResult
		var load float64
		for _, job := range st.Config.Groups[0].Jobs {
			job.Runtime = runtime
			jr := bench.JobResult{Name: job.Name, Job: job, Start: start, Runtime: runtime, Jobs: 1, Interval: every,
				UsrCPU: time.Duration(2+rng.IntN(8)) * time.Second, SysCPU: time.Duration(10+rng.IntN(20)) * time.Second,
				Ctx: uint64(1e5 + rng.IntN(1e5)), MinFlt: uint64(200 + rng.IntN(50)), TID: 4000 + i}
			dirs := map[int]float64{bench.Read: 0.7, bench.Write: 0.3} // share of the job's I/Os
			iops := k * math.Min(600e3, 18e3*qd) * (1 + 0.04*rng.NormFloat64()) / 2
			if job.RW == "write" {
				dirs = map[int]float64{bench.Write: 1}
				iops = k * math.Min(1800, 300*qd) * (1 + 0.05*rng.NormFloat64())
			}
			median := qd / math.Max(iops, 1) * 1e9
			for d, share := range dirs {
				dr := &jr.Dirs[d]
				n := uint64(iops * share * runtime.Seconds())
				addLatencies(rng, &dr.Slat, n, 1500, 0.3)
				addLatencies(rng, &dr.Clat, n, median, 0.25+0.1*rng.Float64())
				addLatencies(rng, &dr.Lat, n, median+1500, 0.25)
				dr.IOs, dr.Bytes = n, n*uint64(job.BS)
				jr.Dist.Issued[d] = n
			}
			for s := 1; s <= int(runtime/every); s++ {
				sm := bench.Sample{At: time.Duration(s) * every}
				for d := range dirs {
					n := float64(jr.Dirs[d].IOs) * float64(s) / (runtime.Seconds() / every.Seconds())
					if s < int(runtime/every) {
						n *= 1 + 0.02*rng.NormFloat64()
					}
					sm.IOs[d], sm.Bytes[d] = uint64(n), uint64(n)*uint64(job.BS)
				}
				// Each interval's latency, as a run keeps it.
				sm.Lat = &bench.IntervalLat{N: uint64(iops * every.Seconds()), P50: uint64(median), P99: uint64(2.5 * median), Max: uint64(6 * median)}
				jr.Samples = append(jr.Samples, sm)
			}
			jr.Dist.Submits, jr.Dist.Reaps = jr.Dirs[0].IOs+jr.Dirs[1].IOs, (jr.Dirs[0].IOs+jr.Dirs[1].IOs)/2
			jobs = append(jobs, jr)
			load += iops
		}
		busy := math.Min(80, 5+load/15000)
		res.CPU = system.CPUBreakdown{User: busy * 0.3, System: busy * 0.6, IRQ: busy * 0.04, SoftIRQ: busy * 0.06, IOWait: math.Max(0, 15-busy/6)}
		res.CPU.Idle = 100 - res.CPU.User - res.CPU.System - res.CPU.IRQ - res.CPU.SoftIRQ - res.CPU.IOWait
		res.Proc = system.ProcCPU{User: time.Duration(busy) * 150 * time.Millisecond, System: time.Duration(busy) * 450 * time.Millisecond,
			VoluntaryCtx: uint64(load), InvoluntaryCtx: uint64(load / 50)}
		res.Result = &bench.Result{Start: start, Host: host, Groups: []bench.GroupResult{{ID: 0, Jobs: jobs,
			Disks: []system.DiskUtilization{{Name: "nvme1n1", ReadIOs: uint64(load * 42), WriteIOs: uint64(load * 18),
				ReadsPerSec: load * 0.7, WritesPerSec: load * 0.3, ReadKBPerSec: load * 2.8, WriteKBPerSec: load * 300,
				ReadAwait: qd / 30, WriteAwait: qd / 10, AvgQueueSize: qd * 2.5, Util: math.Min(100, 20+qd*5), ElapsedMs: 60000}}}}}
		if err := store.SaveStep(ctx, run.ID, &res); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.SetRunStatus(ctx, run.ID, db.StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	got, err := store.GetRun(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// addLatencies adds n latencies to l, log-normal around median (ns) with
// sigma spread and one in 400 six times slower: 3000 draws, each standing
// for its share of n, so that the histogram counts n I/Os and its shape
// is a real device's without n draws.
func addLatencies(rng *rand.Rand, l *hist.Lat, n uint64, median, spread float64) {
	const draws = 3000
	if n == 0 {
		return
	}
	for k := range uint64(draws) {
		v := median * math.Exp(spread*rng.NormFloat64())
		if k%400 == 0 {
			v *= 6
		}
		c := n / draws
		if k < n%draws {
			c++
		}
		if c == 0 {
			continue
		}
		ns := uint64(max(v, 1))
		l.Hist.Counts[hist.BucketIndex(ns)] += c
		one := hist.LatStat{N: c, Min: ns, Max: ns, Mean: float64(ns)}
		l.Stat.Merge(&one)
	}
}
