package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/launch"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/bench/testdev"
	"iolab/db"
)

// TestMain lets a test run iolab itself as a child process (to kill it).
func TestMain(m *testing.M) {
	if os.Getenv("IOLAB_TEST_MAIN") == "1" {
		err := run(os.Args[1:], os.Stdout, os.Stderr)
		if err != nil {
			fmt.Fprintf(os.Stderr, "iolab: %v\n", err)
		}
		os.Exit(exitCode(err))
	}
	// Runs without --db go to the default store: keep it out of $HOME.
	data, err := os.MkdirTemp("", "iolab-test-data")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_DATA_HOME", data)
	// Device locks of this package's runs (and of the children they
	// start) are kept apart from other packages' tests running at once.
	os.Setenv("IOLAB_LOCK_DIR", filepath.Join(data, "locks"))
	code := m.Run()
	os.RemoveAll(data)
	os.Exit(code)
}

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for loop devices and schedulers")
	}
}

// testLoop attaches a blank file of size bytes to a loop device with direct
// I/O, detached when the test ends.
func testLoop(t *testing.T, size int64) string {
	t.Helper()
	return testdev.Loop(t, size)
}

func activeScheduler(t *testing.T, dev string) string {
	t.Helper()
	active, _, err := (system.FS{}).Schedulers(filepath.Base(dev))
	if err != nil {
		t.Fatal(err)
	}
	return active
}

func openTestStore(t *testing.T, path string) *db.Store {
	t.Helper()
	store, err := db.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}

// TestSweepStoresEveryStep: 2 iodepths × 2 engines × 2 repeats is 8 steps,
// each stored with its results.
func TestSweepStoresEveryStep(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "iolab.db")
	var stdout, stderr bytes.Buffer
	err := run([]string{"run", "--db", dbPath, "--sweep", "iodepth=1,4", "--sweep=ioengine=io_uring,libaio", "--repeat", "2",
		"--name=s", "--filename=" + filepath.Join(dir, "f"), "--size=4m", "--rw=randread", "--direct=1", "--runtime=100ms", "--time_based"},
		&stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	store := openTestStore(t, dbPath)
	runs, err := store.ListRuns(context.Background(), db.RunFilter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	if runs[0].Status != "done" {
		t.Fatalf("status %s", runs[0].Status)
	}
	steps, err := store.Steps(context.Background(), runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 8 {
		t.Fatalf("%d steps stored, want 8", len(steps))
	}
	seen := map[string]int{}
	for _, s := range steps {
		if s.Status != sweep.StepDone || s.Result == nil || s.Result.Groups[0].Jobs[0].Dirs[bench.Read].IOs == 0 {
			t.Fatalf("step %s: %s %s", &s.Step, s.Status, s.Error)
		}
		seen[s.Step.Value(sweep.AxisIODepth)+"/"+s.Step.Value(sweep.AxisEngine)]++
	}
	for _, k := range []string{"1/io_uring", "1/libaio", "4/io_uring", "4/libaio"} {
		if seen[k] != 2 {
			t.Fatalf("%s ran %d times, want 2", k, seen[k])
		}
	}
	if !strings.Contains(stdout.String(), "io_uring") {
		t.Fatalf("no summary table:\n%s", stdout.String())
	}
}

// TestSchedulerSweepRestores: each step runs under its scheduler (as read
// back from sysfs), and the original is active afterwards, also when steps
// fail.
func TestSchedulerSweepRestores(t *testing.T) {
	dev := testLoop(t, 64<<20)
	original := activeScheduler(t, dev)
	_, avail, _ := (system.FS{}).Schedulers(filepath.Base(dev))
	var names []string
	for _, s := range avail {
		if s != original {
			names = append(names, s)
		}
	}
	if len(names) == 0 {
		t.Skip("the loop device offers one scheduler only")
	}
	dbPath := filepath.Join(t.TempDir(), "iolab.db")
	var stdout, stderr bytes.Buffer
	// io_uring+hipri cannot run on a loop device (no poll queues): the plan
	// is refused up front, naming why, and nothing is stored.
	args := []string{"run", "--db", dbPath, "--sweep=scheduler=" + strings.Join(names, ","), "--sweep=ioengine=libaio,io_uring+hipri",
		"--name=s", "--filename=" + dev, "--rw=randread", "--direct=1", "--runtime=100ms", "--time_based"}
	err := run(args, &stdout, &stderr)
	var pe *sweep.PreflightError
	if !errors.As(err, &pe) || exitCode(err) != 2 || !strings.Contains(err.Error(), "io_poll") || !strings.Contains(err.Error(), "--skip-impossible") {
		t.Fatalf("hipri on a loop device: %v (exit %d); want the plan refused with the poll-queue reason", err, exitCode(err))
	}
	if _, serr := os.Stat(dbPath); serr == nil {
		if runs, _ := openTestStore(t, dbPath).ListRuns(context.Background(), db.RunFilter{}); len(runs) != 0 {
			t.Fatalf("a refused plan stored %d runs", len(runs))
		}
	}
	// With --skip-impossible the hipri steps are left out and recorded;
	// the scheduler is restored after the rest.
	if err := run(append(args, "--skip-impossible"), &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if got := activeScheduler(t, dev); got != original {
		t.Fatalf("scheduler %s after the run, want %s back", got, original)
	}
	store := openTestStore(t, dbPath)
	runs, _ := store.ListRuns(context.Background(), db.RunFilter{})
	if len(runs) != 1 || runs[0].Status != db.StatusDone {
		t.Fatalf("runs %+v", runs)
	}
	if len(runs[0].Plan.Skipped) != len(names) || !strings.Contains(runs[0].Plan.Skipped[0].Reason, "io_poll") {
		t.Fatalf("skipped %+v, want the %d hipri combinations with the reason", runs[0].Plan.Skipped, len(names))
	}
	steps, err := store.Steps(context.Background(), runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != len(names) {
		t.Fatalf("%d steps, want the %d libaio ones", len(steps), len(names))
	}
	for _, s := range steps {
		if got := s.Schedulers[filepath.Base(dev)]; got != s.Step.Scheduler {
			t.Fatalf("step %s ran under %q", &s.Step, got)
		}
		if s.Step.Value(sweep.AxisEngine) != "libaio" || s.Status != sweep.StepDone {
			t.Fatalf("step %s: %s %s", &s.Step, s.Status, s.Error)
		}
	}
}

// TestKilledRunIsRecovered: a run killed with SIGKILL halfway keeps its
// finished steps, is marked interrupted when the store is next opened, and
// the scheduler it had switched is put back then.
func TestKilledRunIsRecovered(t *testing.T) {
	dev := testLoop(t, 64<<20)
	original := activeScheduler(t, dev)
	_, avail, _ := (system.FS{}).Schedulers(filepath.Base(dev))
	other := ""
	for _, s := range avail {
		if s != original {
			other = s
		}
	}
	if other == "" {
		t.Skip("the loop device offers one scheduler only")
	}
	dbPath := filepath.Join(t.TempDir(), "iolab.db")
	cmd := exec.Command(os.Args[0], "run", "--db", dbPath, "--sweep=scheduler="+other, "--sweep=iodepth=1,2,4,8,16,32", "--name=k",
		"--filename="+dev, "--rw=randread", "--direct=1", "--ioengine=libaio", "--runtime=300ms", "--time_based")
	cmd.Env = append(os.Environ(), "IOLAB_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once two steps are stored.
	deadline := time.Now().Add(20 * time.Second)
	for {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no steps stored in time\n%s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
		if n := storedSteps(t, dbPath); n >= 2 {
			break
		}
	}
	// The next start restores the scheduler and marks the run interrupted.
	if out := killAndRestart(t, cmd, dbPath, dev, original, other); !strings.Contains(out, "interrupted") {
		t.Fatalf("run not marked interrupted:\n%s", out)
	}
	if n := storedSteps(t, dbPath); n < 2 || n >= 6 {
		t.Fatalf("%d steps kept, want the finished ones (2..5)", n)
	}
}

func storedSteps(t *testing.T, dbPath string) int {
	t.Helper()
	if _, err := os.Stat(dbPath); err != nil {
		return 0
	}
	store, err := db.Open(context.Background(), dbPath)
	if err != nil {
		return 0
	}
	defer store.Close()
	runs, err := store.ListRuns(context.Background(), db.RunFilter{})
	if err != nil || len(runs) == 0 {
		return 0
	}
	steps, err := store.Steps(context.Background(), runs[0].ID)
	if err != nil {
		return 0
	}
	return len(steps)
}

// TestPresetsOnLoop runs two of the write-ups' presets on a loop device with
// short runtimes: the fairness summary shows both jobs per scheduler; in
// engines-randwrite the io_uring+hipri steps fail with the poll-queue
// reason and the others succeed. A kernel built without one of the
// fairness preset's schedulers (some have no bfq) runs the others, with
// --skip-impossible, and the run records the one left out and why.
func TestPresetsOnLoop(t *testing.T) {
	dev := testLoop(t, 256<<20)
	dbPath := filepath.Join(t.TempDir(), "iolab.db")

	_, offered, err := (system.FS{}).Schedulers(filepath.Base(dev))
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, s := range []string{"none", "mq-deadline", "bfq", "kyber"} {
		if !slices.Contains(offered, s) {
			missing = append(missing, s)
		}
	}
	args := []string{"run", "--db", dbPath, "--preset", "sched-fairness", "--filename=" + dev, "--runtime=200ms", "--repeat=1"}
	if len(missing) > 0 {
		args = append(args, "--skip-impossible")
	}
	var stdout, stderr bytes.Buffer
	if err := run(args, &stdout, &stderr); err != nil {
		t.Fatalf("sched-fairness: %v\n%s", err, stderr.String())
	}
	if len(missing) > 0 {
		store := openTestStore(t, dbPath)
		runs, err := store.ListRuns(context.Background(), db.RunFilter{})
		if err != nil || len(runs) != 1 {
			t.Fatalf("runs %v: %v", runs, err)
		}
		skipped := runs[0].Plan.Skipped
		if len(skipped) != len(missing) || !strings.Contains(skipped[0].Reason, "is not one of them") {
			t.Fatalf("skipped %+v, want the schedulers %s the kernel does not offer, with the reason", skipped, missing)
		}
	}
	summary := stdout.String()
	for _, want := range []string{"bg-writer", "fg-reader", "none", "mq-deadline", "IOPS and bandwidth per job by scheduler"} {
		if !strings.Contains(summary, want) {
			t.Fatalf("fairness summary lacks %q:\n%s", want, summary)
		}
	}
	// iolab show: a row per job, each with its own options; the writer
	// and the reader are never added up.
	stdout.Reset()
	if err := run([]string{"show", "--db", dbPath, "1"}, &stdout, &stderr); err != nil {
		t.Fatalf("show: %v\n%s", err, stderr.String())
	}
	shown := stdout.String()
	for _, want := range []string{"bg-writer write 1m iodepth 16", "fg-reader randread 4k iodepth 1", "rests on too few I/Os"} {
		if !strings.Contains(shown, want) {
			t.Errorf("iolab show lacks %q:\n%s", want, shown)
		}
	}
	if strings.Contains(shown, " total ") {
		t.Errorf("iolab show adds the writer to the reader:\n%s", shown)
	}

	stdout.Reset()
	stderr.Reset()
	err = run([]string{"run", "--db", dbPath, "--preset", "engines-randwrite", "--filename=" + dev, "--runtime=100ms", "--ramp_time=0",
		"--repeat=1", "--sweep=iodepth=1,16", "--skip-impossible"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("engines-randwrite: %v\n%s", err, stderr.String())
	}
	store := openTestStore(t, dbPath)
	runs, _ := store.ListRuns(context.Background(), db.RunFilter{})
	steps, err := store.Steps(context.Background(), runs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	// 5 engine variants × 2 iodepths, less the 4 hipri combinations the
	// loop device cannot poll.
	if len(steps) != 2*3 {
		t.Fatalf("%d steps, want 6", len(steps))
	}
	for _, s := range steps {
		if strings.HasSuffix(s.Step.Value(sweep.AxisEngine), "hipri") || s.Status != sweep.StepDone {
			t.Fatalf("step %s: %s %s", &s.Step, s.Status, s.Error)
		}
	}
	skipped := runs[0].Plan.Skipped
	if len(skipped) != 4 || !strings.Contains(skipped[0].Reason, "poll_queues") {
		t.Fatalf("skipped %+v, want the 4 hipri combinations with the poll-queue reason", skipped)
	}
}

// TestTwoProcessesOneDevice starts two iolab processes on one loop device
// at once: one waits for the other, saying who holds the device, and no
// step of one overlaps a step of the other.
func TestTwoProcessesOneDevice(t *testing.T) {
	dev := testLoop(t, 64<<20)
	dir := t.TempDir()
	type proc struct {
		cmd    *exec.Cmd
		db     string
		stderr bytes.Buffer
	}
	procs := make([]*proc, 2)
	for i := range procs {
		p := &proc{db: filepath.Join(dir, fmt.Sprintf("p%d.db", i))}
		p.cmd = exec.Command(os.Args[0], "run", "--db", p.db, "--sweep=iodepth=1,4", fmt.Sprintf("--name=p%d", i),
			"--filename="+dev, "--rw=randread", "--direct=1", "--ioengine=libaio", "--runtime=300ms", "--time_based")
		p.cmd.Env = append(os.Environ(), "IOLAB_TEST_MAIN=1")
		p.cmd.Stderr = &p.stderr
		procs[i] = p
	}
	for _, p := range procs {
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
	}
	waited := 0
	type window struct{ start, end time.Time }
	var windows [2][]window
	for i, p := range procs {
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, p.stderr.String())
		}
		if strings.Contains(p.stderr.String(), "waiting for "+filepath.Base(dev)) {
			waited++
			if !strings.Contains(p.stderr.String(), "pid ") {
				t.Errorf("process %d waited without saying who holds the device:\n%s", i, p.stderr.String())
			}
		}
		store := openTestStore(t, p.db)
		runs, err := store.ListRuns(context.Background(), db.RunFilter{})
		if err != nil || len(runs) != 1 {
			t.Fatalf("process %d: %d runs, %v", i, len(runs), err)
		}
		steps, err := store.Steps(context.Background(), runs[0].ID)
		if err != nil || len(steps) != 2 {
			t.Fatalf("process %d: %d steps, %v", i, len(steps), err)
		}
		for _, s := range steps {
			windows[i] = append(windows[i], window{s.Start, s.End})
		}
	}
	if waited != 1 {
		t.Errorf("%d processes said they waited for %s; want exactly one", waited, dev)
	}
	for _, a := range windows[0] {
		for _, b := range windows[1] {
			if a.start.Before(b.end) && b.start.Before(a.end) {
				t.Errorf("steps overlap: %v–%v and %v–%v", a.start, a.end, b.start, b.end)
			}
		}
	}
}

// TestRunPreparesOnce: `iolab run` expands its plan's steps and resolves
// its targets once (launch.Prepare), not again to store, lock or execute
// it.
func TestRunPreparesOnce(t *testing.T) {
	dir := t.TempDir()
	e0, r0 := launch.Counts()
	var stdout, stderr bytes.Buffer
	err := run([]string{"run", "--db", filepath.Join(dir, "iolab.db"), "--sweep", "bs=4k,8k", "--name=s",
		"--filename=" + filepath.Join(dir, "f"), "--size=1m", "--rw=randread", "--runtime=50ms", "--time_based"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "run 1 done") {
		t.Fatalf("the run did not end done:\n%s", stderr.String())
	}
	if e, r := launch.Counts(); e-e0 != 1 || r-r0 != 1 {
		t.Errorf("%d expansions and %d resolutions of the plan; want 1 each", e-e0, r-r0)
	}
}
