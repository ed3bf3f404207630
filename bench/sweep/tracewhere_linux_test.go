package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/system"
	"iolab/bench/testdev"
)

// TestTraceBlockWhereAble: a plan that traces where it can (a preset's)
// traces a block device — the plan and every step, those made again after
// impossible ones were left out included — and a file on a filesystem
// with a block device, and runs untraced on a file on tmpfs, with a note
// that says why; asked outright (Base.TraceBlock), that file is refused.
func TestTraceBlockWhereAble(t *testing.T) {
	plan := func(target string) *Plan {
		cfg, err := fio.ParseArgs([]string{"--name=p", "--filename=" + target, "--size=16m", "--rw=randread", "--direct=1", "--runtime=100ms", "--time_based"})
		if err != nil {
			t.Fatal(err)
		}
		return &Plan{Name: "p", Base: *cfg, Repeat: 1, TraceBlockWhereAble: true, SkipImpossible: true,
			Sweeps: []Sweep{{Axis: AxisEngine, Values: []string{"libaio", "io_uring+hipri"}}}}
	}
	rn := &bench.Runner{Sys: system.FS{}}

	dev := plan(testdev.Loop(t, 32<<20))
	if err := Check(rn, dev); err != nil {
		t.Fatal(err)
	}
	steps, err := dev.Steps()
	if err != nil {
		t.Fatal(err)
	}
	if !dev.Base.TraceBlock || len(steps) != 1 || !steps[0].Config.TraceBlock || len(dev.Notes) != 0 {
		t.Errorf("on a loop device: plan traced %v, %d steps (hipri left out), first traced %v, notes %q", dev.Base.TraceBlock, len(steps), len(steps) > 0 && steps[0].Config.TraceBlock, dev.Notes)
	}

	// A file on a filesystem with a block device under it is traced.
	onDisk := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(onDisk, make([]byte, 16<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	if tg, err := rn.Sys.ResolveTarget(onDisk); err == nil && bench.CheckTraceFile(tg) == nil {
		traced := plan(onDisk)
		traced.Sweeps = nil
		if err := Check(rn, traced); err != nil || !traced.Base.TraceBlock || len(traced.Notes) != 0 {
			t.Errorf("a file on %s (%s): %v, traced %v, notes %q", tg.Disk, tg.Filesystem, err, traced.Base.TraceBlock, traced.Notes)
		}
	}

	// One on tmpfs is not.
	shm := shmDir(t)
	path := filepath.Join(shm, "f")
	if err := os.WriteFile(path, make([]byte, 16<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	file := plan(path)
	file.SkipImpossible = false
	file.Sweeps = nil
	if err := Check(rn, file); err != nil {
		t.Fatalf("a file, traced where able: %v", err)
	}
	if file.Base.TraceBlock || len(file.Notes) != 1 || !strings.Contains(file.Notes[0], "not traced") || !strings.Contains(file.Notes[0], path) {
		t.Errorf("on a file: traced %v, notes %q (want one saying why not, naming the file)", file.Base.TraceBlock, file.Notes)
	}
	if err := Check(rn, file); err != nil || len(file.Notes) != 1 {
		t.Errorf("checked again: %v, notes %q (want the note once)", err, file.Notes)
	}
	file.Base.TraceBlock = true
	if err := Check(rn, file); err == nil || !strings.Contains(err.Error(), "trace-block") {
		t.Errorf("a file, traced as asked: %v, want a refusal", err)
	}

	// A target the run lays out (not there yet) on tmpfs is not either.
	later := plan(filepath.Join(shm, "later"))
	later.Sweeps = nil
	if err := CheckOffline(later); err != nil || later.Base.TraceBlock || len(later.Notes) != 1 || !strings.Contains(later.Notes[0], "is a file on tmpfs, which has no block device") {
		t.Errorf("a file laid out later, traced where able: %v, traced %v, notes %q", err, later.Base.TraceBlock, later.Notes)
	}
	later.Base.TraceBlock = true
	if err := CheckOffline(later); err == nil || !strings.Contains(err.Error(), "--trace-block") {
		t.Errorf("a file laid out later, traced as asked: %v, want a refusal", err)
	}
}

// shmDir is a directory on tmpfs (/dev/shm), removed when the test ends.
func shmDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "iolab-test-")
	if err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
