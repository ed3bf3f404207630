package sweep

import (
	"errors"
	"strings"
	"testing"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/system"
	"iolab/bench/testdev"
)

// TestPreflightFindsEveryProblem checks a plan on a loop device (no poll
// queues) whose sweeps hold three kinds of impossible step: hipri, an
// iodepth psync ignores, a block size O_DIRECT refuses. The refusal names
// each once with the steps it hits; SkipImpossible runs the rest.
func TestPreflightFindsEveryProblem(t *testing.T) {
	dev := testdev.Loop(t, 64<<20)
	cfg, err := fio.ParseArgs([]string{"--name=p", "--filename=" + dev, "--rw=randread", "--direct=1", "--runtime=100ms", "--time_based"})
	if err != nil {
		t.Fatal(err)
	}
	plan := &Plan{Name: "p", Base: *cfg, Repeat: 2, Sweeps: []Sweep{
		{Axis: AxisEngine, Values: []string{"psync", "libaio", "io_uring+hipri"}},
		{Axis: AxisIODepth, Values: []string{"1", "8"}},
		{Axis: AxisBS, Values: []string{"4k", "256"}},
	}}
	rn := &bench.Runner{Sys: system.FS{}}
	err = Check(rn, plan)
	var pe *PreflightError
	if !errors.As(err, &pe) {
		t.Fatalf("Check = %v, want a PreflightError", err)
	}
	if pe.Combos != 12 || len(pe.Problems) != 3 {
		t.Fatalf("%d combos, %d problems: %v", pe.Combos, len(pe.Problems), err)
	}
	want := map[string]int{"io_poll": 4, "does one I/O at a time": 2, "multiples of 512": 6}
	for _, p := range pe.Problems {
		found := false
		for k, n := range want {
			if strings.Contains(p.Reason, k) {
				found = true
				if len(p.Axes) != n {
					t.Errorf("%q hits %d combinations, want %d: %v", k, len(p.Axes), n, p.Axes)
				}
			}
		}
		if !found {
			t.Errorf("unexpected problem %q", p.Reason)
		}
	}
	// psync at iodepth=8 with bs=256 is two problems, one step: the
	// impossible steps are 4 (hipri) + 2 (psync depth) + 6 (bs 256) less
	// the overlaps.
	plan.SkipImpossible = true
	if err := Check(rn, plan); err != nil {
		t.Fatal(err)
	}
	steps, err := plan.Steps()
	if err != nil {
		t.Fatal(err)
	}
	// Left: bs=4k and (libaio at 1 and 8, psync at 1) = 3 combos × 2 repeats.
	if len(steps) != 6 {
		t.Fatalf("%d steps after skipping, want 6: %v", len(steps), plan.Skipped)
	}
	for _, st := range steps {
		if st.Value(AxisBS) != "4k" || strings.HasSuffix(st.Value(AxisEngine), "hipri") ||
			(st.Value(AxisEngine) == "psync" && st.Value(AxisIODepth) != "1") {
			t.Errorf("step %s should have been skipped", &st)
		}
	}
	if len(plan.Skipped) != 9 {
		t.Errorf("%d combinations recorded as skipped, want 9", len(plan.Skipped))
	}
}

// TestPreflightDiscardOnFile: --discard on a file target is refused before
// anything runs.
func TestPreflightDiscardOnFile(t *testing.T) {
	path := testdev.TempFile(t, 1<<20)
	cfg, err := fio.ParseArgs([]string{"--name=d", "--filename=" + path, "--rw=randwrite", "--runtime=100ms", "--time_based"})
	if err != nil {
		t.Fatal(err)
	}
	plan := &Plan{Name: "d", Base: *cfg, Repeat: 1, Discard: true}
	err = Check(&bench.Runner{Sys: system.FS{}}, plan)
	if err == nil || !strings.Contains(err.Error(), "BLKDISCARD applies to block devices") {
		t.Fatalf("Check = %v", err)
	}
}
