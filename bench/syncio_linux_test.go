package bench

import (
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"iolab/bench/engine"
	"iolab/bench/system"
	"iolab/bench/testdev"
)

// runLoop runs job j's loop on this thread, as a job thread does.
func runLoop(t testing.TB, j *Job) JobResult {
	t.Helper()
	return runLoopWith(t, j, time.Hour, nil)
}

// runLoopWith is runLoop sampling every interval, with the job's engine
// wrapped by wrap when it is not nil.
func runLoopWith(t testing.TB, j *Job, interval time.Duration, wrap func(engine.IO) engine.IO) JobResult {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	jf, err := (&Runner{Sys: system.FS{}}).prepareJob(j, map[string]system.Target{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := openJob(system.FS{}, j, 0, jf, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.close()
	if wrap != nil {
		r.eng = wrap(r.eng)
	}
	var stop atomic.Bool
	res := r.run(&stop, interval, new(atomic.Uint64))
	if res.Error != "" {
		t.Fatal(res.Error)
	}
	return res
}

// TestJobLoopSyncs: fsync=N and fdatasync=N are counted and timed as
// fio's sync block; end_fsync happens but is not counted.
func TestJobLoopSyncs(t *testing.T) {
	for _, engine := range []string{"null", "psync", "pvsync2", "libaio", "io_uring"} {
		t.Run(engine, func(t *testing.T) {
			j := NewJob()
			j.Name, j.IOEngine, j.RW, j.Size = "s", engine, "randwrite", 64<<10
			j.FsyncBlocks, j.FdatasyncBlocks, j.EndFsync = 4, 6, true
			if engine != "null" {
				j.Filename = testdev.TempFile(t, 1<<20)
			}
			res := runLoop(t, &j)
			// 16 writes: fsyncs after 4, 8, 12; fdatasyncs after 6 (and
			// not 12, where the fsync comes first).
			if s := res.Sync; s.Fsyncs != 3 || s.Fdatasyncs != 1 || s.Lat.Stat.N != 4 || s.Lat.Hist.N() != 4 {
				t.Errorf("%d fsyncs, %d fdatasyncs, %d timed; want 3, 1, 4", s.Fsyncs, s.Fdatasyncs, s.Lat.Stat.N)
			}
			if res.Dirs[Write].IOs != 16 || res.Dirs[Write].Slat.Stat.N > 16 {
				t.Errorf("%d writes, %d slat samples", res.Dirs[Write].IOs, res.Dirs[Write].Slat.Stat.N)
			}
		})
	}
}

// TestJobLoopAllocFree: with writes, fsyncs and buffers refilled, the job
// loop still allocates nothing per I/O, on every engine kind: a run ten
// times longer allocates no more.
func TestJobLoopAllocFree(t *testing.T) {
	for _, engine := range []string{"null", "sync", "vsync", "pvsync", "pvsync2", "libaio", "io_uring"} {
		t.Run(engine, func(t *testing.T) {
			path := ""
			if engine != "null" {
				path = testdev.TempFile(t, 1<<20)
			}
			mallocs := func(ios int64) uint64 {
				j := NewJob()
				j.Name, j.IOEngine, j.RW, j.Filename, j.IODepth = "a", engine, "randrw", path, 4
				j.Size, j.IOSize = 1<<20, ios*j.BS
				j.FsyncBlocks, j.DedupePercentage, j.RefillBuffers, j.Hipri = 64, 20, true, engine == "pvsync2"
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				runLoop(t, &j)
				runtime.ReadMemStats(&after)
				return after.Mallocs - before.Mallocs
			}
			small, large := mallocs(500), mallocs(5000)
			if large > small+20 {
				t.Errorf("%d allocations for 500 I/Os, %d for 5000", small, large)
			}
		})
	}
}

// TestNowaitError: an I/O RWF_NOWAIT turned back (data not in the page
// cache; whether it is depends on readahead racing the read, in fio as
// here) fails the job saying why.
func TestNowaitError(t *testing.T) {
	j := NewJob()
	j.Name, j.NoWait = "n", true
	err := ioError(&j, system.Target{Path: "/f"}, Read, 0, 4096, unix.EAGAIN)
	if !strings.Contains(err.Error(), "RWF_NOWAIT") || !errors.Is(err, unix.EAGAIN) {
		t.Errorf("%v", err)
	}
}
