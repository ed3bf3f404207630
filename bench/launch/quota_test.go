package launch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"

	"golang.org/x/sys/unix"
)

// TestQuotaCheck: what a plan would lay out or grow in the data
// directory, at the most its jobs may make each file hold, beside what
// the directory holds, against the quota; refused with the option, the
// quota and the flag to raise it, and without a file made.
func TestQuotaCheck(t *testing.T) {
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	other := t.TempDir()
	outside := filepath.Join(other, "allowed.img")
	link := filepath.Join(other, "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	quota := Quota{Dir: dir, Bytes: 64 << 20, Files: 20, RunBytes: 32 << 20, RunFiles: 10}
	in := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		name   string
		args   []string
		sweeps []sweep.Sweep
		held   map[string]int64 // files in the directory before, by size
		option string           // the option refused; "" when taken
		want   string
	}{
		{"a small file", []string{"--filename=" + in("a"), "--size=8m"}, nil, nil, "", ""},
		{"size=1t", []string{"--filename=" + in("a"), "--size=1t"}, nil, nil, "size",
			"lay out 1.00TiB in the data directory " + dir + " (job j: size=1t); a run may add at most 32m there (--run-max-size)"},
		{"nrfiles=100000", []string{"--directory=" + dir, "--size=1m", "--nrfiles=100000"}, nil, nil, "nrfiles",
			"nrfiles=100000 makes 100000 files in the data directory " + dir + "; a run may make at most 10 (--run-max-files)"},
		{"nrfiles within the run's", []string{"--directory=" + dir, "--size=1m", "--nrfiles=10"}, nil, nil, "", ""},
		{"numjobs times nrfiles", []string{"--directory=" + dir, "--size=1m", "--nrfiles=4", "--numjobs=3"}, nil, nil, "nrfiles",
			"the run uses more than 10 files"},
		{"a sweep of numjobs", []string{"--directory=" + dir, "--size=1m", "--nrfiles=4"},
			[]sweep.Sweep{{Axis: sweep.AxisNumJobs, Values: []string{"1", "2", "4"}}}, nil, "nrfiles", "the run uses more than 10 files"},
		{"size shared among the files", []string{"--directory=" + dir, "--size=30m", "--nrfiles=3"}, nil, nil, "", ""},
		{"size per clone", []string{"--directory=" + dir, "--size=12m", "--numjobs=3"}, nil, nil, "size", "lay out 36.0MiB"},
		{"a sweep of size", []string{"--filename=" + in("a"), "--size=1m"},
			[]sweep.Sweep{{Axis: "size", Values: []string{"1m", "40m"}}}, nil, "size", "lay out 40.0MiB"},
		{"filesize at the top of its range", []string{"--directory=" + dir, "--filesize=1m-20m", "--nrfiles=2"}, nil, nil, "filesize",
			"filesize=1m-20m, at most 20m a file"},
		{"offset beyond the size", []string{"--filename=" + in("a"), "--size=8m", "--offset=30m"}, nil, nil, "size", "lay out 38.0MiB"},
		{"an existing file counts what it grows by", []string{"--filename=" + in("a"), "--size=40m"}, nil,
			map[string]int64{"a": 30 << 20}, "", ""},
		{"the directory's files count", []string{"--filename=" + in("b"), "--size=20m"}, nil,
			map[string]int64{"a": 30 << 20, "c": 20 << 20}, "size",
			"holds 50.0MiB; this run's 20.0MiB more (job j: size=20m) would pass its quota of 64m (--data-max-size)"},
		{"the directory's file count", []string{"--directory=" + dir, "--size=1m", "--nrfiles=5"}, nil,
			map[string]int64{"1": 0, "2": 0, "3": 0, "4": 0, "5": 0, "6": 0, "7": 0, "8": 0, "9": 0, "10": 0, "11": 0, "12": 0, "13": 0, "14": 0, "15": 0, "16": 0},
			"nrfiles", "holds 16 files; this run's 5 more would pass its quota of 20 (--data-max-files)"},
		{"a file already there adds nothing", []string{"--filename=" + in("a"), "--size=30m"}, nil,
			map[string]int64{"a": 30 << 20, "c": 40 << 20}, "", ""},
		{"fill_device", []string{"--filename=" + in("a"), "--fill_device=1"}, nil, nil, "fill_device", "fills the filesystem"},
		{"a file outside the data directory is the allow-list's", []string{"--filename=" + outside, "--size=1g"}, nil, nil, "", ""},
		{"through a symlink to the data directory", []string{"--filename=" + filepath.Join(link, "a"), "--size=40m"}, nil, nil, "size", "lay out 40.0MiB"},
		{"nrfiles through a symlink", []string{"--directory=" + link, "--size=1m", "--nrfiles=100000"}, nil, nil, "nrfiles", "makes 100000 files"},
		{"nrfiles whose filename_format leads into the data directory", []string{"--directory=" + other, "--filename_format=../" + filepath.Base(dir) + "/x.$filenum",
			"--size=1m", "--nrfiles=100000"}, nil, nil, "nrfiles", "makes 100000 files"},
		{"nrfiles elsewhere are the allow-list's", []string{"--directory=" + other, "--size=1m", "--nrfiles=1048576", "--numjobs=64"}, nil, nil, "", ""},
		{"a file list", []string{"--filename=" + in("x") + ":" + in("y"), "--size=40m"}, nil, nil, "size", "lay out 40.0MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			entries, _ := os.ReadDir(dir)
			for _, e := range entries {
				os.Remove(filepath.Join(dir, e.Name()))
			}
			for name, size := range tt.held {
				if err := os.WriteFile(in(name), nil, 0o600); err != nil {
					t.Fatal(err)
				}
				os.Truncate(in(name), size)
			}
			q := quota
			plan, err := NewPlan(Spec{Args: append([]string{"--name=j", "--rw=randwrite", "--ioengine=psync"}, tt.args...), Sweeps: tt.sweeps, Quota: &q})
			if tt.option == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if plan == nil {
					t.Fatal("no plan")
				}
			} else {
				oe, ok := err.(*bench.OptionError)
				if !ok || oe.Option != tt.option || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("NewPlan: %v; want a refusal on %s saying %q", err, tt.option, tt.want)
				}
			}
			after, _ := os.ReadDir(dir)
			if len(after) != len(tt.held) {
				t.Errorf("the check left %d files in the data directory, want the %d that were there", len(after), len(tt.held))
			}
		})
	}
}

// TestQuotaCheckedAtStart: a run that passed the quota when launched is
// refused when it starts if the directory filled meanwhile, before
// anything is laid out; the run is stored failed with why.
func TestQuotaCheckedAtStart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	store, err := db.Open(ctx, filepath.Join(t.TempDir(), "iolab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	q := Quota{Dir: dir, Bytes: 16 << 20, Files: 10}
	target := filepath.Join(dir, "t.dat")
	plan, err := NewPlan(Spec{Args: []string{"--name=n", "--filename=" + target, "--size=8m", "--rw=randwrite", "--ioengine=psync", "--runtime=100ms", "--time_based"}, Quota: &q})
	if err != nil {
		t.Fatal(err)
	}
	runner := &bench.Runner{Sys: system.FS{}}
	prep, err := PreparePlan(plan, runner, Options{Check: CheckExisting})
	if err != nil {
		t.Fatal(err)
	}
	rec := prep.Record
	if _, err := store.CreateRun(ctx, rec); err != nil {
		t.Fatal(err)
	}
	// Meanwhile another run filled the directory.
	os.WriteFile(filepath.Join(dir, "other.dat"), nil, 0o600)
	os.Truncate(filepath.Join(dir, "other.dat"), 12<<20)
	_, status, err := Execute(ctx, store, runner, rec.ID, prep, Hooks{Quota: &q})
	if status != db.StatusFailed || err == nil || !strings.Contains(err.Error(), "not started") || !strings.Contains(err.Error(), "--data-max-size") {
		t.Fatalf("Execute: status %s, %v; want failed, not started, on the quota", status, err)
	}
	if _, err := os.Stat(target); err == nil {
		t.Error("the refused run laid out its file")
	}
	run, err := store.GetRun(ctx, rec.ID)
	if err != nil || run.Status != db.StatusFailed || !strings.Contains(run.Error, "--data-max-size") {
		t.Errorf("stored run: %s %q, %v", run.Status, run.Error, err)
	}
}

// BenchmarkQuotaManyFiles is the check of a job of 100,000 files in the
// data directory: refused before the files are named.
func BenchmarkQuotaManyFiles(b *testing.B) {
	dir := b.TempDir()
	q := Quota{Dir: dir}
	args := []string{"--name=j", "--directory=" + dir, "--size=100m", "--nrfiles=100000", "--rw=randread"}
	for b.Loop() {
		if _, err := NewPlan(Spec{Args: args, Quota: &q}); err == nil {
			b.Fatal("taken")
		}
	}
}

// TestQuotaLeavesFree: whatever the quota, a run may not take its data
// directory's filesystem to its last 5 % (4 GiB at most).
func TestQuotaLeavesFree(t *testing.T) {
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	free, total := int64(st.Bavail)*int64(st.Bsize), int64(st.Blocks)*int64(st.Bsize)
	keep := min(total/20, 4<<30)
	q := Quota{Dir: dir, Bytes: 1 << 60, RunBytes: 1 << 60}
	for _, tc := range []struct {
		size int64
		ok   bool
	}{
		{(free - keep) / 2 &^ (1<<20 - 1), true},
		{(free - keep + 1<<30) &^ (1<<20 - 1), false},
	} {
		args := []string{"--name=j", "--filename=" + filepath.Join(dir, "f"), "--rw=write", "--ioengine=psync", fmt.Sprintf("--size=%d", tc.size)}
		_, err := NewPlan(Spec{Args: args, Quota: &q})
		if tc.ok != (err == nil) || (err != nil && !strings.Contains(err.Error(), "free of")) {
			t.Errorf("size=%d with %d free of %d: %v; want taken %v", tc.size, free, total, err, tc.ok)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "f")); err == nil {
		t.Error("the check made the file")
	}
}
