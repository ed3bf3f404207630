package handlers

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
	"iolab/bench/system"
	"iolab/db"
)

// labStep is what a synthetic step did: per job, I/Os per second, the
// median completion latency and how widely it spreads.
type labStep struct {
	iops   float64
	median time.Duration
	spread float64 // sigma of the log-normal latency
	// intervals: each sample gets its interval's latency (bench.IntervalLat);
	// latencyTarget, latencyDepth: the job searched with latency_target and
	// ended at that depth.
	intervals     bool
	latencyTarget time.Duration
	latencyDepth  int
	// rate: the job ran paced at rate_iops=rate (a rate_iops sweep's N%
	// resolved from its probe), its latency from each I/O's intended
	// start the clat drawn here, plus queued: the time each I/O waited
	// behind its schedule (a device that could not keep up).
	rate   int64
	queued time.Duration
	// split: the step was traced (--trace-block), each I/O's lat split
	// into submit, queue, device and completion in these shares, of a
	// share oneToOne of the I/Os (sweeptest.Traced); lost: events its
	// trace lost.
	split    *[4]float64
	oneToOne float64
	lost     uint64
}

// seedLab stores a run of plan whose steps look like a real device's: a
// log-normal clat histogram per job, samples every 100 ms over a 2 s
// measurement after a 0.5 s ramp, a discard before each step, CPU that
// grows with the load. figures gives each step's numbers per job (by the
// job's place in the step).
func seedLab(t testing.TB, store *db.Store, plan *sweep.Plan, host system.HostInfo, figures func(st sweep.Step, job int, rng *rand.Rand) labStep) *db.Run {
	t.Helper()
	ctx := context.Background()
	steps, err := plan.Steps()
	if err != nil {
		t.Fatal(err)
	}
	run := &db.Run{Name: plan.Name, Status: db.StatusRunning, Plan: *plan, Host: host,
		Targets: []system.Target{{Path: "/dev/nvme1n1", Disk: "nvme1n1", Model: "Lab NVMe", Scheduler: "none", Schedulers: []string{"none", "mq-deadline", "bfq", "kyber"}}}}
	if _, err := store.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(uint64(len(plan.Name)), 7))
	const (
		discard = 300 * time.Millisecond
		ramp    = 500 * time.Millisecond
		runtime = 2 * time.Second
		every   = 100 * time.Millisecond
	)
	t0 := time.Now().Add(-2 * time.Hour).Truncate(time.Second)
	for i, st := range steps {
		start := t0.Add(time.Duration(i) * (discard + ramp + runtime + 200*time.Millisecond))
		measure := start.Add(discard + ramp)
		res := sweep.StepResult{Step: st, Status: sweep.StepDone, Start: start, End: measure.Add(runtime + 50*time.Millisecond),
			Schedulers: map[string]string{"nvme1n1": st.Scheduler}}
		var jobs []bench.JobResult
		var load float64
		var trace *bench.BlockTrace
		for ji, job := range st.Config.Groups[0].Jobs {
			// The ramp in the step's config too, as a run stores it (the
			// dashboard's timelines read it there).
			st.Config.Groups[0].Jobs[ji].RampTime = ramp
			job.RampTime, job.Runtime = ramp, runtime
			f := figures(st, ji, rng)
			if f.rate > 0 {
				job.RateIOPS = [2]int64{f.rate, 0}
				st.Config.Groups[0].Jobs[ji].RateIOPS = job.RateIOPS
			}
			jr := bench.JobResult{Name: job.Name, Job: job, Start: measure, Runtime: runtime, Jobs: 1, Interval: every}
			d := bench.Read
			if job.RW == "randwrite" || job.RW == "write" {
				d = bench.Write
			}
			n := uint64(f.iops * runtime.Seconds())
			dr := &jr.Dirs[d]
			// The histogram from a sample of latencies, each standing for
			// n/len of the I/Os.
			const draws = 4000
			for k := range uint64(draws) {
				v := float64(f.median) * math.Exp(f.spread*rng.NormFloat64())
				if k%500 == 0 {
					v *= 6 // the tail: a few slow I/Os
				}
				c := uint64(v)
				times := n / draws
				if k < n%draws {
					times++
				}
				for range times {
					dr.Clat.Add(c)
					dr.Lat.Add(c + 2000)
					if f.rate > 0 {
						dr.Intended.Add(c + 2000 + uint64(f.queued))
					}
				}
			}
			dr.IOs, dr.Bytes = n, n*uint64(job.BS)
			var done uint64
			samples := int(runtime / every)
			for s := 1; s <= samples; s++ {
				// Around the mean rate, ending on the step's total.
				at := float64(n) * float64(s) / float64(samples)
				if s < samples {
					at += 0.05 * float64(n) / float64(samples) * rng.NormFloat64()
				}
				done = max(done, uint64(at))
				var sm bench.Sample
				sm.At = time.Duration(s) * every
				sm.IOs[d], sm.Bytes[d] = done, done*uint64(job.BS)
				if f.intervals {
					sm.Lat = &bench.IntervalLat{N: n / uint64(samples), P50: uint64(f.median),
						P99: uint64(float64(f.median) * math.Exp(2.33*f.spread)), Max: 6 * uint64(f.median)}
				}
				jr.Samples = append(jr.Samples, sm)
			}
			jr.Moved[d] = dr.Bytes
			if f.split != nil {
				sweeptest.Traced(&jr, d, *f.split, f.oneToOne)
				if trace == nil {
					trace = &bench.BlockTrace{Devices: []string{"259:1"}}
				}
				trace.Dropped += f.lost
			}
			jr.Job.LatencyTarget, jr.LatencyDepth = f.latencyTarget, f.latencyDepth
			jobs = append(jobs, jr)
			load += f.iops
		}
		busy := math.Min(70, 4+load/20000)
		res.CPU = system.CPUBreakdown{User: busy * 0.3, System: busy * 0.7, IRQ: busy * 0.1, SoftIRQ: busy * 0.2, IOWait: math.Min(25, 30-busy/3), Idle: 0}
		res.CPU.Idle = 100 - res.CPU.User - res.CPU.System - res.CPU.IRQ - res.CPU.SoftIRQ - res.CPU.IOWait
		res.Proc = system.ProcCPU{User: time.Duration(busy) * 10 * time.Millisecond, System: time.Duration(busy) * 20 * time.Millisecond}
		res.Result = &bench.Result{Start: measure, Groups: []bench.GroupResult{{ID: 0, Jobs: jobs, Trace: trace,
			Disks: []system.DiskUtilization{{Name: "nvme1n1", ReadsPerSec: load, Util: math.Min(100, load/3000), AvgQueueSize: 1.5}}}}}
		if err := store.SaveStep(ctx, run.ID, &res); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.SetRunStatus(ctx, run.ID, db.StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	return run
}

func labPlan(t testing.TB, name string, args []string, repeat int, sweeps ...sweep.Sweep) *sweep.Plan {
	t.Helper()
	cfg, err := fio.ParseArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	return &sweep.Plan{Name: name, Args: args, Base: *cfg, Repeat: repeat, Discard: true, Sweeps: sweeps}
}

// seedEnginesLab is the third write-up's sweep: random 4 KiB writes,
// engines × iodepth 1…128, 3 repeats. speed scales every IOPS (another
// kernel, another IOMMU mode).
func seedEnginesLab(t testing.TB, store *db.Store, name string, host system.HostInfo, speed float64) *db.Run {
	plan := labPlan(t, name, []string{"--name=randwrite", "--filename=/dev/nvme1n1", "--rw=randwrite", "--bs=4k", "--direct=1", "--ioengine=io_uring"}, 3,
		sweep.Sweep{Axis: sweep.AxisIODepth, Values: []string{"1", "2", "4", "8", "16", "32", "64", "128"}},
		sweep.Sweep{Axis: sweep.AxisEngine, Values: []string{"libaio", "io_uring", "psync"}})
	base := map[string]float64{"libaio": 14e3, "io_uring": 16e3, "psync": 12e3}
	ceiling := map[string]float64{"libaio": 420e3, "io_uring": 610e3, "psync": 12.5e3}
	return seedLab(t, store, plan, host, func(st sweep.Step, _ int, rng *rand.Rand) labStep {
		qd, _ := strconv.ParseFloat(st.Value(sweep.AxisIODepth), 64)
		eng := st.Value(sweep.AxisEngine)
		iops := speed * math.Min(ceiling[eng], base[eng]*qd) * (1 + 0.03*rng.NormFloat64())
		if eng == "psync" {
			qd = 1 // a sync engine keeps one I/O in flight
		}
		return labStep{iops: iops, median: time.Duration(qd / iops * 1e9), spread: 0.18, intervals: true}
	})
}

// seedScalingLab is the second write-up's sweep: numjobs 1…32 of an
// io_uring reader, 3 repeats, flattening past the device's limit.
func seedScalingLab(t testing.TB, store *db.Store, host system.HostInfo) *db.Run {
	plan := labPlan(t, "numjobs scaling", []string{"--name=reader", "--filename=/dev/nvme1n1", "--rw=randread", "--bs=4k", "--direct=1", "--ioengine=io_uring", "--iodepth=8"}, 3,
		sweep.Sweep{Axis: sweep.AxisNumJobs, Values: []string{"1", "2", "4", "8", "16", "32"}})
	return seedLab(t, store, plan, host, func(st sweep.Step, _ int, rng *rand.Rand) labStep {
		n, _ := strconv.ParseFloat(st.Value(sweep.AxisNumJobs), 64)
		iops := 700e3 * (1 - math.Exp(-n*95e3/700e3)) * (1 + 0.04*rng.NormFloat64())
		// Each of the n clones does its share.
		return labStep{iops: iops / n, median: time.Duration(8 * n / iops * 1e9), spread: 0.2}
	})
}

// seedFairnessLab is the first write-up's fairness test on four
// schedulers: a 1 MiB writer at iodepth 16 and a 4 KiB reader at
// iodepth 1; bfq protects the reader (about 4× lower latency) at ~20 % of
// the writer's bandwidth.
func seedFairnessLab(t testing.TB, store *db.Store, host system.HostInfo) *db.Run {
	preset, err := sweep.PresetByName("sched-fairness")
	if err != nil {
		t.Fatal(err)
	}
	plan := labPlan(t, "sched-fairness", preset.Args("/dev/nvme1n1", nil), 3,
		sweep.Sweep{Axis: sweep.AxisScheduler, Values: []string{"none", "mq-deadline", "bfq", "kyber"}})
	plan.Preset = preset.Name
	readerLat := map[string]float64{"none": 4000, "mq-deadline": 3400, "bfq": 950, "kyber": 2100} // µs
	writerBW := map[string]float64{"none": 1900, "mq-deadline": 1850, "bfq": 1500, "kyber": 1750} // MiB/s
	return seedLab(t, store, plan, host, func(st sweep.Step, job int, rng *rand.Rand) labStep {
		s := st.Scheduler
		if st.Config.Groups[0].Jobs[job].RW == "randread" {
			lat := readerLat[s] * (1 + 0.1*rng.NormFloat64())
			return labStep{iops: 1e6 / lat, median: time.Duration(lat * 1e3), spread: 0.35}
		}
		iops := writerBW[s] * (1 + 0.05*rng.NormFloat64())
		return labStep{iops: iops, median: time.Duration(16 / iops * 1e9), spread: 0.25}
	})
}
