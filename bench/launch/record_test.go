package launch

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"iolab/bench"
	"iolab/bench/system"
)

// TestRecordManyFiles: the targets of a job's many files, described once
// a directory for the files yet to be made, are what resolving each
// would give, and so are the device keys.
func TestRecordManyFiles(t *testing.T) {
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "j.0.1"), make([]byte, 4096), 0o600)
	plan, err := NewPlan(Spec{Args: []string{"--name=j", "--directory=" + link, "--nrfiles=4", "--size=64k", "--ioengine=psync"}})
	if err != nil {
		t.Fatal(err)
	}
	runner := &bench.Runner{Sys: system.FS{}}
	rec, err := NewRecord(plan, runner, nil)
	if err != nil {
		t.Fatal(err)
	}
	paths := bench.ConfigPaths(&plan.Base)
	if len(rec.Targets) != len(paths) {
		t.Fatalf("%d targets for %d files", len(rec.Targets), len(paths))
	}
	for i, p := range paths {
		want, err := runner.Sys.ResolveTarget(p)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(rec.Targets[i], want) {
			t.Errorf("target of %s:\n%+v\nwant\n%+v", p, rec.Targets[i], want)
		}
	}
	keys := TargetDevices(plan, runner)
	var want []string
	for _, p := range paths {
		tg, _ := runner.Sys.ResolveTarget(p)
		key := "dev " + tg.Dev
		if tg.Disk != "" {
			key = tg.Disk
		}
		if len(want) == 0 || want[0] != key {
			want = append(want, key)
		}
	}
	if !reflect.DeepEqual(keys, want) || len(keys) != 1 {
		t.Errorf("device keys %q, want %q (one filesystem)", keys, want)
	}
}
