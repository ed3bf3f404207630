package sweeptest

import (
	"time"

	"iolab/bench"
)

// SubmitJob is a one-second job of 1000 4 KiB reads by engine at
// iodepth 1, as libaio and io_uring do them on zram: libaio submits
// synchronously (slat 4 µs, clat 200 ns), io_uring's submission is short
// and its completion long (slat 500 ns, clat 3 µs). Each I/O's lat is
// its slat + clat, so libaio's clat is 15× below io_uring's and its lat
// above it. Repeat r takes r % longer in every kind, so that repeats
// differ.
func SubmitJob(name, engine string, r int) bench.JobResult {
	j := bench.JobResult{Name: name, Runtime: time.Second, Jobs: 1}
	j.Job.Name, j.Job.IOEngine, j.Job.RW, j.Job.BS, j.Job.IODepth = name, engine, "randread", 4096, 1
	d := &j.Dirs[bench.Read]
	d.IOs, d.Bytes = 1000, 1000*4096
	slat, clat := SubmitLat(engine, "slat"), SubmitLat(engine, "clat")
	stretch := func(t time.Duration) uint64 { return uint64(t) * uint64(100+r) / 100 }
	for range d.IOs {
		d.Slat.Add(stretch(slat))
		d.Clat.Add(stretch(clat))
		d.Lat.Add(stretch(slat) + stretch(clat))
	}
	return j
}

// SubmitLat is what each of SubmitJob's I/Os by engine takes in repeat
// 0, in fio's latency kind: "slat", "clat" or "lat".
func SubmitLat(engine, kind string) time.Duration {
	slat, clat := 4*time.Microsecond, 200*time.Nanosecond
	if engine == "io_uring" {
		slat, clat = 500*time.Nanosecond, 3*time.Microsecond
	}
	switch kind {
	case "slat":
		return slat
	case "clat":
		return clat
	}
	return slat + clat
}
