package launch

import (
	"strings"
	"testing"
	"time"

	"iolab/bench/testdev"
)

// TestProgressClatP99: while a step measures, each tick carries the clat
// p99 of its jobs so far, from the jobs' own snapshots (the ones
// --status-interval prints), once enough I/Os completed for it; never
// while the step prepares or ramps, and never for unlike jobs, whose
// latencies together mean nothing (as their IOPS are not added up).
func TestProgressClatP99(t *testing.T) {
	path := testdev.TempFile(t, 4<<20)
	t.Run("alike", func(t *testing.T) {
		_, ticks := progressOf(t, 100*time.Millisecond, 0, "--ioengine=psync", "--filename="+path, "--rw=randread",
			"--bs=4k", "--ramp_time=300ms", "--runtime=1", "--time_based")
		known := 0
		for _, tk := range ticks {
			if tk.Phase != PhaseMeasure && tk.ClatP99 != 0 {
				t.Errorf("a %s tick has a clat p99 of %v", tk.Phase, tk.ClatP99)
			}
			if tk.ClatP99 == 0 {
				continue
			}
			known++
			if tk.ClatP99 > time.Second {
				t.Errorf("clat p99 %v for a 4k read of a file", tk.ClatP99)
			}
			ev := ProgressEventOf(tk, false)
			if ev.ClatP99 != float64(tk.ClatP99)/1e3 || !strings.HasPrefix(ev.LatText(), "clat p99 ") {
				t.Errorf("event %v µs, %q for a tick's %v", ev.ClatP99, ev.LatText(), tk.ClatP99)
			}
		}
		if known == 0 {
			t.Fatalf("no tick of %d had a clat p99", len(ticks))
		}
	})
	t.Run("unlike", func(t *testing.T) {
		_, ticks := progressOf(t, 100*time.Millisecond, 0, "--ioengine=psync", "--filename="+path, "--rw=randread",
			"--bs=4k", "--runtime=500ms", "--time_based", "--name=w", "--filename="+path, "--ioengine=psync", "--rw=read", "--bs=64k",
			"--runtime=500ms", "--time_based")
		for _, tk := range ticks {
			if tk.ClatP99 != 0 || tk.Summed {
				t.Errorf("unlike jobs: a tick with a clat p99 of %v (summed %v)", tk.ClatP99, tk.Summed)
			}
		}
	})
}
