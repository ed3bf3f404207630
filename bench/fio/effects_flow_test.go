package fio

import (
	"fmt"
	"testing"
	"time"

	"iolab/bench"
)

// The flow family's effect probes: a job held to a slow one's pace by
// their flow, its sleeps while held, and what is refused.

func init() {
	// slowFast runs, for half a second, a job held to 200 IOPS and one
	// free to go as fast as the page cache lets it, each with its own
	// options, and returns the I/Os each did.
	slowFast := func(t *testing.T, slow, fast []string) (uint64, uint64) {
		args := []string{"--filename=" + file(t, 1<<20), "--ioengine=psync", "--time_based", "--runtime=500ms", "--name=slow", "--rate_iops=200"}
		args = append(append(append(args, slow...), "--name=fast"), fast...)
		r := run(t, args...)
		var n [2]uint64
		for i, j := range resultJobs(r) {
			if j.Error != "" {
				t.Fatal(j.Error)
			}
			n[i] = j.Dirs[bench.Read].IOs
		}
		return n[0], n[1]
	}
	effects["flow"] = func(t *testing.T) {
		// The flow keeps the fast job at three times the slow one's I/Os.
		flowTried(t, func() string {
			slow, fast := slowFast(t, []string{"--flow=1"}, []string{"--flow=3"})
			if err := within("fast job's I/Os per slow job's, flow 3:1", float64(fast)/float64(slow), 3, 0.1); err != nil || slow < 50 {
				return fmt.Sprintf("%v (%d and %d I/Os)", err, slow, fast)
			}
			return ""
		})
		if slow, fast := slowFast(t, nil, nil); fast < 20*slow {
			t.Errorf("without flow the fast job did %d I/Os to the slow one's %d", fast, slow)
		}
		// A flow counts every job's weight from the start: one that runs
		// only after a stonewall would hold the first back for good.
		refused(t, runErr(t, "--filename="+file(t, 1<<20), "--name=a", "--flow=1", "--name=b", "--stonewall", "--flow=1"), "held back for good")
		refused(t, runErr(t, "--filename="+file(t, 1<<20), "--name=a", "--flow=1", "--name=b", "--wait_for=a", "--flow=1"), "waits for it")
		if r := run(t, "--filename="+file(t, 1<<20), "--name=a", "--flow=1", "--time_based", "--runtime=100ms", "--name=b", "--stonewall", "--flow=1", "--size=64k"); job(r).Dirs[bench.Read].IOs > 2 {
			t.Errorf("a job with a flow whose other job comes after a stonewall did %d I/Os; fio holds it back after its first", job(r).Dirs[bench.Read].IOs)
		}
	}
	effects["flow_id"] = func(t *testing.T) {
		flowTried(t, func() string {
			if slow, fast := slowFast(t, []string{"--flow=1", "--flow_id=4"}, []string{"--flow=1", "--flow_id=4"}); fast > slow+slow/10 {
				return fmt.Sprintf("one flow_id: the fast job did %d I/Os to the slow one's %d, want as many", fast, slow)
			}
			return ""
		})
		if slow, fast := slowFast(t, []string{"--flow=1", "--flow_id=1"}, []string{"--flow=1", "--flow_id=2"}); fast < 20*slow {
			t.Errorf("flow_ids 1 and 2: the fast job did %d I/Os to the slow one's %d; each is alone in its flow", fast, slow)
		}
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--flow_id=2"), "flow_id has no effect without flow")
	}
	effects["flow_sleep"] = func(t *testing.T) {
		// Held back, the fast job sleeps flow_sleep at a time.
		held := func(extra ...string) int {
			args := append([]string{"--filename=" + file(t, 1<<20), "--ioengine=psync", "--time_based", "--runtime=300ms",
				"--name=slow", "--rate_iops=200", "--flow=1", "--name=fast", "--flow=1"}, extra...)
			n := 0
			for _, d := range sleepRequests(traced(t, "clock_nanosleep", args...), 0) {
				if d == 1234*time.Microsecond {
					n++
				}
			}
			return n
		}
		flowTried(t, func() string {
			if with, without := held("--flow_sleep=1234"), held(); with < 5 || without != 0 {
				return fmt.Sprintf("sleeps of 1234 µs: %d with flow_sleep=1234, %d without", with, without)
			}
			return ""
		})
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--flow_sleep=100"), "flow_sleep has no effect without flow")
		refused(t, runErr(t, "--flow_sleep=100", "--filename="+file(t, 1<<20), "--name=e"), "no job of the run is in a flow")
	}
}

// flowTried runs check, which says what is wrong or "", up to three times:
// on a loaded machine one job of a flow can start late enough that the
// other, its runtime over, leaves the flow while it runs on alone.
func flowTried(t *testing.T, check func() string) {
	t.Helper()
	for try := 1; ; try++ {
		msg := check()
		if msg == "" {
			return
		}
		if try == 3 {
			t.Error(msg)
			return
		}
		t.Log(msg + "; again")
	}
}
