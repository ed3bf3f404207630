package bench

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"

	"iolab/bench/system"
)

// BenchmarkJobLoopNull is one submit/reap cycle of the job loop on the null
// engine: the harness's own cost per I/O (offset, stamp-free read, slots,
// timestamps, three latency records), with nothing allocated per I/O.
func BenchmarkJobLoopNull(b *testing.B) {
	for _, depth := range []int{1, 32} {
		b.Run(fmt.Sprintf("iodepth=%d", depth), func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			// As in Runner.Run: no collection while the loop runs.
			defer debug.SetGCPercent(debug.SetGCPercent(-1))
			j := NewJob()
			j.Name, j.IOEngine, j.RW, j.IODepth = "null", "null", "randread", depth
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
			var stop atomic.Bool
			b.ReportAllocs()
			b.ResetTimer()
			res := run.run(&stop, time.Hour, new(atomic.Uint64))
			b.StopTimer()
			if res.Error != "" || res.Dirs[Read].IOs != uint64(max(b.N, 1)) {
				b.Fatalf("%d I/Os, error %q", res.Dirs[Read].IOs, res.Error)
			}
			b.ReportMetric(res.IOPS(Read), "IOPS")
			// The job thread's CPU time per I/O: on a shared machine, what
			// the loop costs, where ns/op also counts the time it waited
			// for a CPU.
			b.ReportMetric(float64(res.UsrCPU+res.SysCPU)/float64(res.Dirs[Read].IOs), "cpu-ns/IO")
		})
	}
}

// BenchmarkURingReadFile is one read through the real io_uring path per
// op, on a small O_DIRECT file (mostly cached by the device), depth 32.
func BenchmarkURingReadFile(b *testing.B) {
	benchEngineFile(b, "io_uring")
}

// BenchmarkAIOReadFile is the same through libaio.
func BenchmarkAIOReadFile(b *testing.B) {
	benchEngineFile(b, "libaio")
}

func benchEngineFile(b *testing.B, engine string) {
	path := b.TempDir() + "/f"
	if err := os.WriteFile(path, make([]byte, 8<<20), 0o600); err != nil {
		b.Fatal(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	j := NewJob()
	j.Name, j.IOEngine, j.RW, j.IODepth, j.Direct, j.Filename = "f", engine, "randread", 32, true, path
	j.Size = 8 << 20
	jf, err := (&Runner{}).prepareJob(&j, map[string]system.Target{})
	if err != nil {
		b.Fatal(err)
	}
	run, err := openJob(system.FS{}, &j, 0, jf, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer run.close()
	var stop atomic.Bool
	// Exactly b.N I/Os: size-based, wrapping over the file.
	run.j.TimeBased = false
	run.j.IOSize = int64(b.N) * j.BS
	b.ReportAllocs()
	b.ResetTimer()
	res := run.run(&stop, time.Hour, new(atomic.Uint64))
	b.StopTimer()
	if res.Error != "" {
		b.Fatal(res.Error)
	}
	b.ReportMetric(res.IOPS(Read), "IOPS")
}
