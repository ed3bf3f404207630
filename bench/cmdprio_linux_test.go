package bench

import (
	"context"
	"runtime"
	"testing"

	"iolab/bench/system"
	"iolab/bench/testdev"
)

// cmdprio allocates nothing per I/O, on either engine that has it, and
// every measured I/O lands in one priority's latency — the job's own or
// cmdprio's, as many as fio 3.33 gives the same job (40000 I/Os of 4 KiB
// randrw at iodepth 4 over 1 MiB, cmdprio_percentage=30,60): 6250 of
// 20621 reads and 10317 of 19379 writes real-time. Not quite 60 % of the
// writes: one prio_state serves both directions, and which of its draws
// are the writes' is the mix's draw; iolab draws both as fio does, so the
// counts are fio's to the I/O.
func TestCmdprioAllocFree(t *testing.T) {
	path := testdev.TempFile(t, 1<<20)
	for _, engine := range []string{"io_uring", "libaio"} {
		t.Run(engine, func(t *testing.T) {
			run := func(ios int64) (uint64, JobResult) {
				j := NewJob()
				j.Name, j.Filename, j.IOEngine, j.RW, j.IODepth = "p", path, engine, "randrw", 4
				j.IOSize = ios * j.BS
				j.IOPrioSet, j.IOPrioClass = true, IOPrioClassIdle
				j.CmdprioPercentage = [2]int{30, 60}
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				res, err := (&Runner{Sys: system.FS{}}).Run(context.Background(), &Config{Groups: Expand([]Job{j})})
				runtime.ReadMemStats(&after)
				if err != nil {
					t.Fatal(err)
				}
				return after.Mallocs - before.Mallocs, res.Groups[0].Jobs[0]
			}
			small, _ := run(2000)
			large, res := run(40000)
			if large > small+200 {
				t.Errorf("%d allocations for 2000 I/Os, %d for 40000", small, large)
			}
			for d, want := range [2][2]uint64{{6250, 20621}, {10317, 19379}} {
				dr := &res.Dirs[d]
				if len(dr.Prios) != 2 || dr.Prios[0].Prio != IOPrioValue(IOPrioClassIdle, 0) || dr.Prios[1].Prio != IOPrioValue(IOPrioClassRT, 0) {
					t.Fatalf("direction %d: priorities %+v", d, dr.Prios)
				}
				n0, n1 := dr.Prios[0].Lat.Stat.N, dr.Prios[1].Lat.Stat.N
				if n0+n1 != dr.IOs || n0+n1 != dr.Clat.Stat.N {
					t.Errorf("direction %d: %d + %d I/Os by priority, %d in all", d, n0, n1, dr.IOs)
				}
				if n1 != want[0] || dr.IOs != want[1] {
					t.Errorf("direction %d: %d of %d I/Os real-time, fio %d of %d", d, n1, dr.IOs, want[0], want[1])
				}
				if dr.Prios[1].Lat.Hist.N() != n1 {
					t.Errorf("direction %d: the real-time histogram holds %d of %d", d, dr.Prios[1].Lat.Hist.N(), n1)
				}
			}
		})
	}
}
