package bench

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"iolab/bench/system"
)

// BenchmarkJobLoopNullFlowed is a null job in a flow of its own: the
// flow's test and count before every I/O, never held.
func BenchmarkJobLoopNullFlowed(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	j := nullJob(int64(max(b.N, 1)))
	j.Flow = 1
	jf, err := (&Runner{}).prepareJob(&j, map[string]system.Target{})
	if err != nil {
		b.Fatal(err)
	}
	r, err := openJob(system.FS{}, &j, 0, jf, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer r.close()
	r.flow = newFlows(&Config{Groups: []Group{{Jobs: []Job{j}}}}).join(&j)
	var stop atomic.Bool
	b.ReportAllocs()
	b.ResetTimer()
	res := r.run(&stop, time.Hour, new(atomic.Uint64))
	b.StopTimer()
	if res.Error != "" || res.Dirs[Read].IOs != uint64(max(b.N, 1)) || r.flow.ios < int64(b.N) {
		b.Fatalf("%d I/Os, %d counted in the flow, error %q", res.Dirs[Read].IOs, r.flow.ios, res.Error)
	}
	b.ReportMetric(res.IOPS(Read), "IOPS")
}

func TestFlowedLoopAllocatesNothing(t *testing.T) {
	r := testing.Benchmark(BenchmarkJobLoopNullFlowed)
	if a := r.AllocsPerOp(); a != 0 {
		t.Errorf("%d allocations per I/O in a flow", a)
	}
}
