package bench

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"iolab/bench/system"
)

// loggedRun runs a null-engine job of ios I/Os at depth 4, with every
// per-I/O log written under dir when dir is not "".
func loggedRun(t *testing.T, dir string, ios int64) JobResult {
	t.Helper()
	j := NewJob()
	j.Name, j.IOEngine, j.RW, j.IODepth, j.IODepthBatchSubmit = "l", "null", "randrw", 4, 4
	j.Size, j.IOSize = 1<<20, ios*j.BS
	if dir != "" {
		p := filepath.Join(dir, "l")
		j.LogOptions = LogOptions{WriteBWLog: true, BWLogFile: p, WriteIOPSLog: true, IOPSLogFile: p, WriteLatLog: true, LatLogFile: p,
			WriteHistLog: true, HistLogFile: p, LogHistMsec: 1, LogOffset: true, PerJobLogs: true}
	}
	res, err := (&Runner{Sys: system.FS{}, LogFiles: dir != ""}).Run(context.Background(), &Config{Groups: Expand([]Job{j})})
	if err != nil {
		t.Fatal(err)
	}
	return res.Groups[0].Jobs[0]
}

// Logging every I/O allocates nothing per I/O: a run twenty times longer
// allocates no more (the kept copy grows by doubling, a few times); and
// it reads the clock no more often than a run without logs, so what is
// measured is measured the same way.
func TestJobLogsAllocFree(t *testing.T) {
	dir := t.TempDir()
	mallocs := func(ios int64) (uint64, JobResult) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		res := loggedRun(t, dir, ios)
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs, res
	}
	small, _ := mallocs(2000)
	large, res := mallocs(40000)
	t.Logf("%d allocations for 2000 logged I/Os, %d for 40000", small, large)
	if large > small+200 { // a per-I/O allocation would be tens of thousands
		t.Errorf("%d allocations for 2000 logged I/Os, %d for 40000", small, large)
	}
	b, err := os.ReadFile(filepath.Join(dir, "l_lat.1.log"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != 40000 {
		t.Errorf("%d lines in the lat log, want 40000", n)
	}
	plain := loggedRun(t, "", 40000)
	if res.ClockReads != plain.ClockReads {
		t.Errorf("%d clock reads with logs, %d without", res.ClockReads, plain.ClockReads)
	}
}
