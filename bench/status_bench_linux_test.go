package bench

import (
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"

	"iolab/bench/system"
)

// BenchmarkJobLoopNullStatus is BenchmarkJobLoopNull at iodepth 1 with
// --status-interval's asks ten times a second, as Runner.Status makes them:
// the loop's one atomic load an I/O, and a copy of its counts and
// histograms each time it answers. Its cpu-ns/IO beside
// BenchmarkJobLoopNull/iodepth=1's is what the snapshots cost the I/O
// path.
func BenchmarkJobLoopNullStatus(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	j := NewJob()
	j.Name, j.IOEngine, j.RW = "null", "null", "randread"
	j.Size = int64(max(b.N, 1)) * j.BS
	jf, err := (&Runner{}).prepareJob(&j, map[string]system.Target{})
	if err != nil {
		b.Fatal(err)
	}
	run, err := openJob(system.FS{}, &j, 0, jf, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer run.close()
	run.status = newJobStatus(0)
	quit, asked := make(chan struct{}), make(chan int)
	go func() {
		n := 0
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				asked <- n
				return
			case <-tick.C:
			}
			if run.status.ask() {
				select {
				case <-run.status.served:
					n++
				case <-quit:
					asked <- n
					return
				}
			}
		}
	}()
	var stop atomic.Bool
	b.ReportAllocs()
	b.ResetTimer()
	res := run.run(&stop, time.Hour, new(atomic.Uint64))
	b.StopTimer()
	close(quit)
	answered := <-asked
	if res.Error != "" || res.Dirs[Read].IOs != uint64(max(b.N, 1)) {
		b.Fatalf("%d I/Os, error %q", res.Dirs[Read].IOs, res.Error)
	}
	b.ReportMetric(res.IOPS(Read), "IOPS")
	b.ReportMetric(float64(res.UsrCPU+res.SysCPU)/float64(res.Dirs[Read].IOs), "cpu-ns/IO")
	b.ReportMetric(float64(answered), "snapshots")
}
