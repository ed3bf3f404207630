package sweep

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/system"
	"iolab/bench/testdev"
)

// TestIOSchedulerPlan: a job's ioscheduler is held by the plan like a
// scheduler sweep's disk (recorded before the run, put back after it),
// the step records the scheduler its jobs ran under, and the plan refuses
// what the sweep refuses: a file's disk without --allow-disk-scheduler,
// and a disk both swept and set.
func TestIOSchedulerPlan(t *testing.T) {
	dev := testdev.Loop(t, 32<<20)
	disk := filepath.Base(dev)
	original, other := testdev.OtherScheduler(t, dev)
	plan := func(args ...string) *Plan {
		cfg, err := fio.ParseArgs(append([]string{"--name=s", "--ioengine=psync", "--runtime=100ms", "--time_based"}, args...))
		if err != nil {
			t.Fatal(err)
		}
		return &Plan{Name: "s", Base: *cfg, Repeat: 1}
	}
	rn := &bench.Runner{Sys: system.FS{}}
	var recorded, cleared []string
	hooks := PlanHooks{
		SchedulerSwitched: func(d, orig string) (int64, error) {
			recorded = append(recorded, d+":"+orig)
			return int64(len(recorded)), nil
		},
		SchedulerRestored: func(int64) { cleared = append(cleared, "x") },
	}
	res, err := Run(context.Background(), rn, plan("--filename="+dev, "--ioscheduler="+other), hooks)
	if err != nil {
		t.Fatal(err)
	}
	if len(recorded) != 1 || recorded[0] != disk+":"+original || len(cleared) != 1 {
		t.Errorf("recorded %v, cleared %d", recorded, len(cleared))
	}
	if got := res[0].Schedulers[disk]; got != other {
		t.Errorf("the step ran under %q, want %s", got, other)
	}
	if active, _, _ := (system.FS{}).Schedulers(disk); active != original {
		t.Errorf("after the plan %s has %s, want %s", disk, active, original)
	}

	swept := plan("--filename="+dev, "--ioscheduler="+other)
	swept.Sweeps = []Sweep{{Axis: AxisScheduler, Values: []string{original}}}
	if err := Check(rn, swept); err == nil || !strings.Contains(err.Error(), "sweeps") {
		t.Errorf("a swept disk set by ioscheduler: %v", err)
	}
	f := filepath.Join(t.TempDir(), "f")
	if _, err := Run(context.Background(), rn, plan("--filename="+f, "--size=1m", "--ioscheduler="+other), PlanHooks{}); err == nil || !strings.Contains(err.Error(), "--allow-disk-scheduler") {
		// A file on tmpfs has no disk at all: that is refused too.
		if err == nil || !strings.Contains(err.Error(), "no disk under it") {
			t.Errorf("ioscheduler on a file: %v", err)
		}
	}
}
