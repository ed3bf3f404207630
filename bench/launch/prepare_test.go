package launch

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/record"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"
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
	prep, err := PreparePlan(plan, runner, Options{Check: CheckExisting})
	if err != nil {
		t.Fatal(err)
	}
	rec := prep.Record
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
	keys := prep.Devices
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

// TestPrepareOnce: a launch expands its plan's steps and resolves its
// targets once, in Prepare, whether Execute runs it (the CLI, an agent)
// or a Launcher queues it (the dashboard); neither does either again.
func TestPrepareOnce(t *testing.T) {
	ctx := context.Background()
	args := []string{"--name=n", "--ioengine=null", "--size=4m", "--runtime=50ms", "--time_based"}
	sweeps := []sweep.Sweep{{Axis: sweep.AxisIODepth, Values: []string{"1", "4"}}}
	t.Run("execute", func(t *testing.T) {
		e0, r0 := Counts()
		prep, err := Prepare(Spec{Args: args, Sweeps: sweeps}, &bench.Runner{Sys: system.FS{}}, Options{Check: CheckTargets})
		if err != nil {
			t.Fatal(err)
		}
		results, status, err := Execute(ctx, nil, &bench.Runner{Sys: system.FS{}}, 0, prep, Hooks{})
		if err != nil || status != record.StatusDone || len(results) != 2 {
			t.Fatalf("Execute: %v, status %s, %d results", err, status, len(results))
		}
		if e, r := Counts(); e-e0 != 1 || r-r0 != 1 {
			t.Errorf("%d expansions and %d resolutions of the plan; want 1 each", e-e0, r-r0)
		}
	})
	t.Run("launcher", func(t *testing.T) {
		store, err := db.Open(ctx, filepath.Join(t.TempDir(), "iolab.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		l := NewLauncher(store, func() *bench.Runner { return &bench.Runner{Sys: system.FS{}} }, slog.New(slog.DiscardHandler), 10*time.Millisecond)
		e0, r0 := Counts()
		prep, err := Prepare(Spec{Args: args, Sweeps: sweeps}, &bench.Runner{Sys: system.FS{}}, Options{Check: CheckExisting})
		if err != nil {
			t.Fatal(err)
		}
		id, err := l.Launch(ctx, prep)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Wait(ctx, id); err != nil {
			t.Fatal(err)
		}
		if run, err := store.GetRun(ctx, id); err != nil || run.Status != record.StatusDone || run.Steps != 2 {
			t.Fatalf("run %d: %+v, %v; want done with 2 steps", id, run, err)
		}
		if e, r := Counts(); e-e0 != 1 || r-r0 != 1 {
			t.Errorf("%d expansions and %d resolutions of the plan; want 1 each", e-e0, r-r0)
		}
	})
}

// TestPrepareStages: Prepare's error says at which stage it failed, with
// the error's own message.
func TestPrepareStages(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name  string
		spec  Spec
		opts  Options
		stage Stage
		msg   string
	}{
		{"option", Spec{Args: []string{"--name=n", "--bs=what"}}, Options{}, StagePlan, "bs"},
		{"admit", Spec{Args: []string{"--name=n", "--ioengine=null", "--size=1m"}},
			Options{Admit: func(*sweep.Plan) error { return errors.New("not allowed") }}, StageAdmit, "not allowed"},
		{"device", Spec{Args: []string{"--name=n", "--filename=/dev/iolab-none", "--size=1m"}}, Options{Check: CheckExisting}, StageTargets, "no such device"},
		{"no size", Spec{Args: []string{"--name=n", "--filename=" + filepath.Join(dir, "f")}}, Options{Check: CheckExisting}, StageTargets, "give size="},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Prepare(tc.spec, &bench.Runner{Sys: system.FS{}}, tc.opts)
			pe, ok := errors.AsType[*PrepareError](err)
			if !ok || pe.Stage != tc.stage || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Prepare: %v (%#v); want stage %s saying %q", err, err, tc.stage, tc.msg)
			}
		})
	}
}
