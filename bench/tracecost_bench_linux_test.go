package bench

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"iolab/bench/blocktrace"
	"iolab/bench/stats"
	"iolab/bench/testdev"
)

// BenchmarkTracedZram is issue 27's bar for --trace-block: a 4 KiB random
// read at iodepth 32 on io_uring over a zram device, without and with the
// paired block tracer on the device, one pair per iteration (run it with
// -benchtime=9x or more), the order of each pair alternating. It reports
// the median of traced / untraced IOPS, and what tracing costs per I/O
// where a shared machine moves it less than IOPS: the process's CPU time
// per I/O (job thread, io-wq workers, the tracer's reader) with and
// without, the reader's thread alone per bio, and, when sysctl
// kernel.bpf_stats_enabled is 1, the programs' time in the kernel per
// I/O (which the kernel's counting itself inflates: leave it 0 for the
// IOPS). Needs root and the zram module; it adds a zram device of its own
// and removes it after.
func BenchmarkTracedZram(b *testing.B) {
	dev := zramDevice(b, 256<<20)
	devT := zramDevT(b, dev)
	runtimeEach := 2 * time.Second
	if s := os.Getenv("IOLAB_TRACE_BENCH_RUNTIME"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			b.Fatal(err)
		}
		runtimeEach = d
	}
	job := func() Job {
		j := NewJob()
		j.Name, j.IOEngine, j.RW, j.IODepth, j.Direct, j.Filename = "z", "io_uring", "randread", 32, true, dev
		j.Size, j.TimeBased, j.Runtime = 256<<20, true, runtimeEach
		return j
	}
	// One untraced or traced run: its IOPS and the process's CPU time per
	// I/O over it, and the tracer's stats.
	one := func(traced bool) (iops, cpuPerIO float64, st blocktrace.Stats) {
		var tr *blocktrace.Tracer
		var bios, q2c atomic.Int64
		if traced {
			var err error
			tr, err = blocktrace.OpenPaired(blocktrace.Options{Devs: []uint32{devT}, TGID: os.Getpid()}, func(bs []blocktrace.Bio) {
				// What a join does at least: look at each bio.
				var sum int64
				for i := range bs {
					if bs[i].Own {
						sum += bs[i].Complete - bs[i].Queue
					}
				}
				bios.Add(int64(len(bs)))
				q2c.Add(sum)
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		cpu0 := processCPU()
		j := job()
		res := runLoop(b, &j)
		cpu := processCPU() - cpu0
		if tr != nil {
			var err error
			if st, err = tr.Close(); err != nil {
				b.Fatal(err)
			}
			if st.Dropped > 0 || uint64(bios.Load()) < res.Dirs[Read].IOs {
				b.Fatalf("traced %d bios (%d dropped) of %d reads", bios.Load(), st.Dropped, res.Dirs[Read].IOs)
			}
		}
		ios := res.Dirs[Read].IOs
		return res.IOPS(Read), float64(cpu) / float64(ios), st
	}
	one(true) // the kernel's layout, read once per process, and a warm device
	var ratio, cpuOff, cpuOn, extra, reader, kernel []float64
	first := false
	for b.Loop() {
		var off, on float64
		var offCPU, onCPU float64
		var st blocktrace.Stats
		if first {
			on, onCPU, st = one(true)
			off, offCPU, _ = one(false)
		} else {
			off, offCPU, _ = one(false)
			on, onCPU, st = one(true)
		}
		first = !first
		ratio = append(ratio, on/off)
		cpuOff = append(cpuOff, offCPU)
		cpuOn = append(cpuOn, onCPU)
		extra = append(extra, onCPU-offCPU)
		reader = append(reader, float64(st.ReaderCPU)/float64(st.Events))
		if st.RunTime > 0 {
			kernel = append(kernel, float64(st.RunTime)/float64(st.Events))
		}
		b.Logf("untraced %.0f IOPS %.0f cpu-ns/IO, traced %.0f IOPS %.0f cpu-ns/IO (%.3f), reader %.0f ns/bio, programs %d runs %v%s",
			off, offCPU, on, onCPU, on/off, float64(st.ReaderCPU)/float64(st.Events), st.Runs, st.RunTime, perRun(st))
	}
	b.ReportMetric(stats.Median(ratio), "x-untraced-IOPS")
	b.ReportMetric(stats.Median(cpuOff), "untraced-cpu-ns/IO")
	b.ReportMetric(stats.Median(cpuOn), "traced-cpu-ns/IO")
	b.ReportMetric(stats.Median(extra), "extra-cpu-ns/IO")
	b.ReportMetric(stats.Median(reader), "reader-ns/bio")
	if len(kernel) > 0 {
		b.ReportMetric(stats.Median(kernel), "bpf-ns/bio")
	}
}

// perRun lists the programs' time per run, where the kernel counts it.
func perRun(st blocktrace.Stats) string {
	var s strings.Builder
	for name, p := range st.ByProgram {
		if p.Runs > 0 {
			fmt.Fprintf(&s, " %s %d × %.0f ns", name, p.Runs, float64(p.RunTime)/float64(p.Runs))
		}
	}
	return s.String()
}

// processCPU is the process's user and system time: every thread's, the
// io-wq workers' among them.
func processCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// zramDevice adds a zram device of size bytes, fills it with random data
// (so that reads decompress, as calibrate's zram target does) and removes
// it when the benchmark ends.
func zramDevice(b *testing.B, size int64) string {
	dev := testdev.Zram(b, size)
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for off := int64(0); off < size; off += int64(len(buf)) {
		rand.Read(buf)
		if _, err := f.WriteAt(buf, off); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	return dev
}

// zramDevT is the device's dev_t as the tracer takes it.
func zramDevT(b *testing.B, dev string) uint32 {
	s, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(dev), "dev"))
	if err != nil {
		b.Fatal(err)
	}
	var major, minor uint32
	if _, err := fmt.Sscanf(strings.TrimSpace(string(s)), "%d:%d", &major, &minor); err != nil {
		b.Fatal(err)
	}
	return blocktrace.DevT(major, minor)
}
