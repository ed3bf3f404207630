package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"iolab/bench/pts"
	"iolab/bench/sweep"
	"iolab/bench/testdev"
	"iolab/db"
)

// TestPTSIOPSOnLoop is issue 29's first done-when: `iolab pts iops` with
// scaled-down rounds on a loop device completes, stops by the
// specification's steady-state rule (reached, or not by its last round),
// and stores every round: every element of the matrix in every round, the
// purge and preconditioning with the first.
func TestPTSIOPSOnLoop(t *testing.T) {
	dev := testdev.LoopInMemory(t, 64<<20)
	dbPath := filepath.Join(t.TempDir(), "iolab.db")
	var stdout, stderr bytes.Buffer
	err := run([]string{"pts", "iops", "--filename=" + dev, "--yes-destroy", dev, "--runtime=300ms", "--rounds=6",
		"--size=16m", "--bs=4k,64k", "--rwmixread=100,0", "--db", dbPath, "--tag", "firmware-a"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	ctx := context.Background()
	store, err := db.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	rec, err := store.GetRun(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != db.StatusDone || !strings.Contains(strings.Join(rec.Tags, ","), "pts") || rec.Plan.PTS == nil {
		t.Fatalf("run: status %s tags %v pts %+v", rec.Status, rec.Tags, rec.Plan.PTS)
	}
	steps, err := store.StepsFor(ctx, 1, db.LoadAll())
	if err != nil {
		t.Fatal(err)
	}
	// Every round has the four elements, in the matrix's order.
	rounds := len(steps) / 4
	if len(steps)%4 != 0 || rounds < pts.WindowRounds || rounds > 6 {
		t.Fatalf("%d steps: want 4 elements × 5 or 6 rounds", len(steps))
	}
	want := []string{"rwmixread=100 bs=4k", "rwmixread=100 bs=64k", "rwmixread=0 bs=4k", "rwmixread=0 bs=64k"}
	for i, st := range steps {
		if st.Step.Repeat != i/4 || sweep.FormatAxes(st.Step.Axes) != want[i%4] || st.Status != sweep.StepDone || st.Result == nil {
			t.Fatalf("step %d: round %d %s %s, want round %d %s done", i, st.Step.Repeat, sweep.FormatAxes(st.Step.Axes), st.Status, i/4, want[i%4])
		}
		if j := st.Step.Config.Jobs[0]; j.Runtime.Milliseconds() != 300 || j.Size != 16<<20 || j.IODepth != 32 {
			t.Fatalf("step %d ran runtime %s size %d iodepth %d", i, j.Runtime, j.Size, j.IODepth)
		}
	}
	// Purged and preconditioned before the first round, recorded with it.
	p := steps[0].Prep
	if p == nil || p.Device != dev || p.Purge == pts.PurgeNone || p.WIPCLoops != 2 || p.WIPCBytes != 2*16<<20 || p.ActiveRange != 16<<20 || p.Capacity != 64<<20 {
		t.Fatalf("first step's prep %+v", p)
	}
	for _, st := range steps[1:] {
		if st.Prep != nil {
			t.Fatalf("step %d has a prep too", st.Step.Seq)
		}
	}
	// The rule, worked again on the stored tracking element (round r's
	// 4 KiB 100 % write IOPS, its one job's reads and writes).
	var series []float64
	for _, st := range steps {
		if sweep.FormatAxes(st.Step.Axes) == "rwmixread=0 bs=4k" {
			j := st.Result.Groups[0].Jobs[0]
			series = append(series, j.IOPS(0)+j.IOPS(1))
		}
	}
	o := pts.Assess([][]float64{series})
	switch {
	case o.Reached && o.Round != rounds-1:
		t.Errorf("steady state by round %d, but the test ran %d rounds", o.Round+1, rounds)
	case !o.Reached && rounds != 6:
		t.Errorf("steady state not reached, but the test stopped after %d rounds of 6", rounds)
	}
	line := fmt.Sprintf("steady state reached at round %d of 6", rounds)
	if !o.Reached {
		line = "steady state NOT reached in 6 rounds"
	}
	if !strings.Contains(stdout.String(), line) {
		t.Errorf("output does not say %q:\n%s", line, stdout.String())
	}
}

// TestPTSRefusals: the test writes the whole device, so it is refused
// without --yes-destroy naming it, on a mounted device, on a file, and
// for bad parameters — each before anything is written or stored.
func TestPTSRefusals(t *testing.T) {
	testdev.NeedLoopTools(t, "mkfs.ext4")
	dev := testdev.LoopInMemory(t, 32<<20)
	other := testdev.LoopInMemory(t, 32<<20)
	mounted := testdev.LoopInMemory(t, 32<<20)
	testdev.Run(t, "mkfs.ext4", "-q", mounted)
	testdev.MountTemp(t, mounted)
	file := testdev.TempFile(t, 1<<20)
	before := map[string]string{dev: testdev.Fingerprint(t, dev), mounted: testdev.Fingerprint(t, mounted)}
	dbPath := filepath.Join(t.TempDir(), "iolab.db")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"iops", "--filename=" + dev}, "add --yes-destroy " + dev},
		{[]string{"iops", "--filename=" + dev, "--yes-destroy", other}, "does not name the device the test overwrites"},
		{[]string{"iops", "--filename=" + mounted, "--yes-destroy", mounted}, "mounted"},
		{[]string{"iops", "--filename=" + file, "--yes-destroy", file}, "one block device"},
		{[]string{"smart", "--filename=" + dev, "--yes-destroy", dev}, `unknown PTS test "smart"`},
		{[]string{"--filename=" + dev, "--yes-destroy", dev}, "name the test first"},
		{[]string{"iops", "--filename=" + dev, "--yes-destroy", dev, "--rounds=3"}, "at least 5"},
		{[]string{"iops", "--filename=" + dev, "--yes-destroy", dev, "--purge=shred"}, `purge "shred"`},
		{[]string{"iops", "--filename=" + dev, "--yes-destroy", dev, "--bs=8k"}, "must include 4k"},
		{[]string{"latency", "--filename=" + dev, "--yes-destroy", dev, "--iodepth=8"}, "one job at iodepth 1"},
		{[]string{"iops", "--filename=" + dev, "--yes-destroy", dev, "--sweep", "iodepth=1,2"}, "--sweep: a PTS test's matrix is its sweeps"},
		{[]string{"iops", "--filename=" + dev, "--yes-destroy", dev, "--name=second"}, "runs one job of its own"},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		code := Main(append(append([]string{"pts"}, c.args...), "--db", dbPath), &stdout, &stderr)
		if code == 0 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("iolab pts %s: exit %d, stderr %q; want it refused saying %q", strings.Join(c.args, " "), code, stderr.String(), c.want)
		}
	}
	for d, fp := range before {
		if testdev.Fingerprint(t, d) != fp {
			t.Errorf("%s changed though every run was refused", d)
		}
	}
	if _, err := os.Stat(dbPath); err == nil {
		store, err := db.Open(context.Background(), dbPath)
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		if runs, err := store.ListRuns(context.Background(), db.RunFilter{}); err != nil || len(runs) != 0 {
			t.Errorf("refused runs stored: %d (%v)", len(runs), err)
		}
	}
}
