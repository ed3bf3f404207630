package bench_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/guard"
	"iolab/bench/testdev"
)

// traceExt4 makes an ext4 filesystem on a loop device with direct I/O
// whose backing file is in memory (/dev/shm), mounted until the test ends.
func traceExt4(t *testing.T, size int64) (mnt, dev string) {
	t.Helper()
	testdev.NeedLoopTools(t, "mkfs.ext4", "mount")
	f, err := os.CreateTemp("/dev/shm", "iolab-test-")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	t.Cleanup(func() { os.Remove(f.Name()) })
	if err := os.Truncate(f.Name(), size); err != nil {
		t.Fatal(err)
	}
	dev = testdev.Run(t, "losetup", "-f", "--show", "--direct-io=on", f.Name())
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "-d", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup -d %s: %v\n%s", dev, err, out)
		}
	})
	setScheduler(t, dev, "mq-deadline")
	testdev.Run(t, "mkfs.ext4", "-q", "-F", dev)
	return testdev.MountTemp(t, dev), dev
}

// TestTraceBlockFile: a file on ext4, laid out by the run, its reads and
// writes placed on the filesystem's loop device through its extents and
// joined with their bios one-to-one, as on the device itself; and the
// writes of a file laid out with fallocate (unwritten extents) too.
func TestTraceBlockFile(t *testing.T) {
	mnt, dev := traceExt4(t, 128<<20)
	res := traceRun(t, `[global]
filename=`+filepath.Join(mnt, "f")+`
size=32m
ioengine=io_uring
direct=1
bs=4k
iodepth=8
runtime=1s
time_based

[reader]
rw=randread

[writer]
stonewall
rw=randwrite
ioengine=libaio

[fresh]
stonewall
filename=`+filepath.Join(mnt, "g")+`
rw=randwrite
ioengine=libaio
`)
	r, w, fresh := &res.Groups[0].Jobs[0], &res.Groups[1].Jobs[0], &res.Groups[2].Jobs[0]
	// fresh's file is laid out with fallocate, its extents unwritten: its
	// writes reach their places, and the filesystem's conversion of the
	// extent as each completes is in its completion part.
	for _, b := range []*bench.BlockTime{
		checkBlock(t, "file randread", &r.Dirs[bench.Read]),
		checkBlock(t, "file randwrite", &w.Dirs[bench.Write]),
		checkBlock(t, "fallocated file randwrite", &fresh.Dirs[bench.Write]),
	} {
		if b.Queue.Stat.N == 0 || b.Device.Stat.Min == 0 {
			t.Errorf("a request-based device's queue and device parts: %+v %+v", b.Queue.Stat, b.Device.Stat)
		}
	}
	if tr := res.Groups[0].Trace; tr == nil || len(tr.Devices) != 1 || tr.Devices[0] != devNum(t, dev) {
		t.Errorf("traced %+v, want the filesystem's device %s alone", tr, dev)
	}
}

// devNum is a block device's "major:minor".
func devNum(t *testing.T, dev string) string {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(dev, &st); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev))
}

// TestTraceBlockFileForeign: what else reaches the filesystem's device
// while the job runs — another process's file on it, written and synced,
// and the journal's commit of its metadata — is foreign, and the job's
// reads stay one-to-one.
func TestTraceBlockFileForeign(t *testing.T) {
	mnt, _ := traceExt4(t, 96<<20)
	const writes = 300
	res := tracedBeside(t, filepath.Join(mnt, "f"), "16m",
		"dd", "if=/dev/zero", "of="+filepath.Join(mnt, "other"), "bs=4k", "count="+strconv.Itoa(writes), "oflag=direct", "conv=fsync")
	checkBlock(t, "file randread beside dd", &res.Groups[0].Jobs[0].Dirs[bench.Read])
	tr := res.Groups[0].Trace
	if tr == nil || tr.Foreign < writes {
		t.Errorf("trace %+v: want at least dd's %d writes foreign, and the journal's", tr, writes)
	}
	t.Logf("foreign bios: %d (dd's %d direct writes, their metadata, the journal's commit)", tr.Foreign, writes)
}

// TestTraceBlockFileUnmapped: reads of a file's written part are
// one-to-one; of its fallocated, never written part (no bio: the
// filesystem returns zeroes) and of its hole, unmatched, as
// docs/trace.md says.
func TestTraceBlockFileUnmapped(t *testing.T) {
	mnt, _ := traceExt4(t, 64<<20)
	path := filepath.Join(mnt, "f")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fallocate(int(f.Fd()), 0, 1<<20, 1<<20); err != nil {
		t.Skipf("fallocate: %v", err)
	}
	if err := f.Truncate(3 << 20); err != nil { // the third MiB a hole
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	res := traceRun(t, `[global]
filename=`+path+`
ioengine=libaio
direct=1
bs=4k
iodepth=4
rw=randread
size=1m
runtime=500ms
time_based

[written]
offset=0

[unwritten]
offset=1m

[hole]
offset=2m
`)
	jobs := res.Groups[0].Jobs
	checkBlock(t, "written", &jobs[0].Dirs[bench.Read])
	for _, j := range jobs[1:] {
		d := &j.Dirs[bench.Read]
		if b := d.Block; b == nil || d.IOs == 0 || b.Unmatched != d.IOs {
			t.Errorf("%s: %d reads, block counts %+v: want every one unmatched", j.Name, d.IOs, b)
		}
	}
}

// TestTraceBlockRefusesFile: a file on a filesystem with no block device
// under it (tmpfs) cannot be traced, and the run is refused before it
// runs, saying so — one the run would lay out is not made — and so is a
// file the job makes only as it opens it (create_on_open).
func TestTraceBlockRefusesFile(t *testing.T) {
	shm, err := os.CreateTemp("/dev/shm", "iolab-test-")
	if err != nil {
		t.Fatal(err)
	}
	shm.Close()
	t.Cleanup(func() { os.Remove(shm.Name()) })
	missing := shm.Name() + "-laid-out"
	t.Cleanup(func() { os.Remove(missing) })
	later := filepath.Join(t.TempDir(), "f")
	for _, tc := range []struct{ file, options, want string }{
		{shm.Name(), "", shm.Name() + " is a file on tmpfs, which has no block device"},
		{missing, "", missing + " is a file on tmpfs, which has no block device"},
		{later, "create_on_open=1\n", later + " is made only as its job opens it (create_on_open)"},
	} {
		cfg, err := fio.ParseJobFile(strings.NewReader("[r]\nfilename="+tc.file+"\nrw=read\nsize=1m\n"+tc.options), "f.fio")
		if err != nil {
			t.Fatal(err)
		}
		cfg.TraceBlock = true
		res, err := (&bench.Runner{}).Run(context.Background(), cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v", tc.file, err)
		}
		if res != nil {
			t.Errorf("%s: a result for a refused run", tc.file)
		}
	}
	for _, f := range []string{missing, later} {
		if _, err := os.Stat(f); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was made for a refused run (%v)", f, err)
		}
	}
}

// TestTraceBlockFilePartition: a file on ext4 on a partition: its
// extents' addresses are the partition's, moved by its start onto the
// disk the requests carry, and its reads meet their bios one-to-one.
func TestTraceBlockFilePartition(t *testing.T) {
	testdev.NeedLoopTools(t, "mkfs.ext4", "mount")
	part := loopPartition(t, 64<<20)
	testdev.Run(t, "mkfs.ext4", "-q", "-F", part)
	mnt := testdev.MountTemp(t, part)
	res := traceRun(t, `[r]
filename=`+filepath.Join(mnt, "f")+`
size=16m
ioengine=libaio
direct=1
bs=4k
iodepth=4
rw=randread
runtime=1s
time_based
`)
	b := checkBlock(t, "file on a partition randread", &res.Groups[0].Jobs[0].Dirs[bench.Read])
	t.Logf("merged %d, split %d, unmatched %d; foreign %d", b.Merged, b.Split, b.Unmatched, res.Groups[0].Trace.Foreign)
	if tr := res.Groups[0].Trace; tr == nil || len(tr.Devices) != 2 || !slices.Contains(tr.Devices, devNum(t, part)) {
		t.Errorf("traced devices %+v, want the partition's %s and its disk's", tr, devNum(t, part))
	}
}

// TestTraceBlockFileSwapped: the file whose extents the trace takes is
// the one the run checked, opened through the guard as the job opens it.
// A file swapped after the check for another file, a symlink to one
// (here, to the machine's own /etc/hostname through /proc/self/root) or a
// FIFO (whose open would block) is refused as changed, and nothing of the
// new one is mapped.
func TestTraceBlockFileSwapped(t *testing.T) {
	dir := t.TempDir()
	other := filepath.Join(dir, "other")
	if err := os.WriteFile(other, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	swaps := map[string]func(path string) error{
		"another file": func(path string) error { return os.Rename(other, path) },
		"a symlink":    func(path string) error { return os.Symlink("/proc/self/root/etc/hostname", path) },
		"a fifo":       func(path string) error { return unix.Mkfifo(path, 0o644) },
	}
	for name, swap := range swaps {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, "f-"+strings.ReplaceAll(name, " ", "-"))
			if err := os.WriteFile(path, make([]byte, 1<<20), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := fio.ParseJobFile(strings.NewReader("[r]\nfilename="+path+"\nrw=read\nsize=1m\n"), "f.fio")
			if err != nil {
				t.Fatal(err)
			}
			cfg.TraceBlock = true
			rn := &bench.Runner{}
			files, err := rn.Prepare(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := swap(path); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- rn.CheckTraceBlock(files) }()
			select {
			case err = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the trace's check blocked on the swapped file")
			}
			if !errors.Is(err, guard.ErrChanged) {
				t.Fatalf("the file swapped for %s: %v; want refused as changed", name, err)
			}
			t.Logf("%s: %v", name, err)
		})
	}
}
