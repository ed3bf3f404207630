package system

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"iolab/bench/testdev"

	"golang.org/x/sys/unix"
)

// schedFixture has what the server fixture lacks: a disk whose kyber and bfq
// modules are not loaded (sdx) and a blk-mq disk with no elevator registered
// at all (nvme1n1), both as the kernel prints them, trailing space included.
func schedFixture() FS { return FS{Sys: filepath.Join("testdata", "sched", "sys")} }

func TestSchedulersFixture(t *testing.T) {
	for _, tc := range []struct {
		name      string
		s         FS
		disk      string
		active    string
		available []string
		errIs     error    // when the call must fail
		errHas    []string // and what its message says
	}{
		{name: "sata", s: sysFixture("server"), disk: "sda",
			active: "mq-deadline", available: []string{"mq-deadline", "kyber", "bfq", "none"}},
		{name: "nvme", s: sysFixture("server"), disk: "nvme0n1",
			active: "none", available: []string{"none", "mq-deadline", "kyber", "bfq"}},
		{name: "modules not loaded", s: schedFixture(), disk: "sdx",
			active: "mq-deadline", available: []string{"none", "mq-deadline"}},
		{name: "no elevator registered", s: schedFixture(), disk: "nvme1n1",
			active: "none", available: []string{"none"}},
		{name: "zram: no scheduler file", s: sysFixture("server"), disk: "zram0", errIs: ErrNoScheduler,
			errHas: []string{"zram0 has no I/O scheduler", "bio-based", "no testdata/sys/server/sys/block/zram0/queue/scheduler"}},
		{name: "dm: bare none", s: sysFixture("server"), disk: "dm-0", errIs: ErrNoScheduler,
			errHas: []string{"dm-0 has no I/O scheduler", `bare "none"`, "scheduled by the disks under it (sda)"}},
		{name: "md: bare none, no slaves in the fixture", s: sysFixture("server"), disk: "md127", errIs: ErrNoScheduler,
			errHas: []string{"md127 has no I/O scheduler"}},
		{name: "no such disk", s: sysFixture("server"), disk: "sdz", errIs: fs.ErrNotExist,
			errHas: []string{"no block device sdz"}},
		{name: "path, not a name", s: sysFixture("server"), disk: "../../../etc", errHas: []string{"not a disk name"}},
		{name: "device path", s: sysFixture("server"), disk: "/dev/sda", errHas: []string{`"/dev/sda" is not a disk name`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			active, available, err := tc.s.Schedulers(tc.disk)
			if tc.errHas != nil {
				if err == nil {
					t.Fatalf("got %q %q, want an error", active, available)
				}
				if tc.errIs != nil && !errors.Is(err, tc.errIs) {
					t.Errorf("error %q does not match %v", err, tc.errIs)
				}
				for _, s := range tc.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not say %q", err, s)
					}
				}
				if tc.errIs != ErrNoScheduler && errors.Is(err, ErrNoScheduler) {
					t.Errorf("error %q matches ErrNoScheduler", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if active != tc.active || !slices.Equal(available, tc.available) {
				t.Errorf("got %q %q, want %q %q", active, available, tc.active, tc.available)
			}
		})
	}
}

func TestCheckSchedulerFixture(t *testing.T) {
	for _, tc := range []struct {
		s          FS
		disk, name string
		want       string // the whole message; "" when the name is fine
	}{
		{sysFixture("server"), "loop0", "cfq",
			`loop0 offers none, mq-deadline, kyber, bfq; "cfq" is not one of them (cfq went with the legacy block layer in Linux 5.0; bfq is its blk-mq successor)`},
		{sysFixture("server"), "loop0", "BFQ", `loop0 offers none, mq-deadline, kyber, bfq; "BFQ" is not one of them`},
		{sysFixture("server"), "loop0", "deadline", `loop0 offers none, mq-deadline, kyber, bfq; "deadline" is not one of them (deadline went with the legacy block layer in Linux 5.0; mq-deadline is its blk-mq successor)`},
		{sysFixture("server"), "loop0", "", `loop0 offers none, mq-deadline, kyber, bfq; "" is not one of them`},
		{schedFixture(), "sdx", "bfq", `sdx offers none, mq-deadline; "bfq" is not one of them (bfq is not loaded: modprobe bfq, if this kernel has it as a module)`},
		{schedFixture(), "sdx", "kyber", `sdx offers none, mq-deadline; "kyber" is not one of them (kyber is not loaded: modprobe kyber-iosched, if this kernel has it as a module)`},
		{schedFixture(), "nvme1n1", "mq-deadline", `nvme1n1 offers none; "mq-deadline" is not one of them (mq-deadline is not loaded: modprobe mq-deadline, if this kernel has it as a module)`},
		{sysFixture("server"), "sda", "kyber", ""},
		{schedFixture(), "sdx", "none", ""},
	} {
		err := tc.s.CheckScheduler(tc.disk, tc.name)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s %q: %v", tc.disk, tc.name, err)
		case tc.want == "":
		case err == nil:
			t.Errorf("%s %q: no error, want %q", tc.disk, tc.name, tc.want)
		case err.Error() != tc.want:
			t.Errorf("%s %q:\n got %q\nwant %q", tc.disk, tc.name, err, tc.want)
		}
	}
	if err := sysFixture("server").CheckScheduler("dm-0", "none"); !errors.Is(err, ErrNoScheduler) {
		t.Errorf("dm-0: got %v, want ErrNoScheduler", err)
	}

	// SetScheduler checks before it writes: a refused name leaves the
	// (fixture) file as it was.
	s := sysFixture("server")
	path := s.schedulerPath("loop0")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetScheduler("loop0", "cfq"); err == nil {
		t.Error("SetScheduler cfq: no error")
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Errorf("refused switch changed %s: %q → %q", path, before, after)
	}
}

func TestSchedulerPermissionMessages(t *testing.T) {
	path := "/sys/block/loop0/queue/scheduler"
	for _, tc := range []struct {
		errno unix.Errno
		want  string
	}{
		{unix.EACCES, "switching the I/O scheduler of loop0 needs root (write to /sys/block/loop0/queue/scheduler)"},
		{unix.EPERM, "switching the I/O scheduler of loop0 needs root (write to /sys/block/loop0/queue/scheduler)"},
		{unix.EROFS, "switching the I/O scheduler of loop0 needs root and a writable /sys/block/loop0/queue/scheduler, which is on a read-only mount here (a container?)"},
	} {
		err := deniedError("switching the I/O scheduler of loop0", path, &fs.PathError{Op: "open", Path: path, Err: tc.errno})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v:\n got %v\nwant %s", tc.errno, err, tc.want)
			continue
		}
		if !errors.Is(err, tc.errno) {
			t.Errorf("%v: the errno is lost: %v", tc.errno, err)
		}
	}
	if err := deniedError("x", path, unix.EINVAL); err != nil {
		t.Errorf("EINVAL taken for a permission problem: %v", err)
	}
}

func TestSchedulerDisk(t *testing.T) {
	var s FS
	for _, tc := range []struct {
		name   string
		target Target
		allow  bool
		want   string   // the disk, or
		errHas []string // what the refusal says
	}{
		{name: "whole disk", target: Target{Path: "/dev/sdb", IsBlock: true, Disk: "sdb"}, want: "sdb"},
		{name: "partition", target: Target{Path: "/dev/sda2", IsBlock: true, Disk: "sda", Partition: "sda2"}, want: "sda"},
		{name: "file refused", target: Target{Path: "/data/f", Disk: "sda", Partition: "sda1", Filesystem: "ext4"},
			errHas: []string{"/data/f is a file on sda (partition sda1)", "everything on sda", "--allow-disk-scheduler"}},
		{name: "file allowed", target: Target{Path: "/data/f", Disk: "sda", Partition: "sda1"}, allow: true, want: "sda"},
		{name: "tmpfs", target: Target{Path: "/dev/shm/f", Filesystem: "tmpfs"}, allow: true,
			errHas: []string{"/dev/shm/f is a file on a tmpfs filesystem, which has no disk under it"}},
		{name: "block without disk", target: Target{Path: "/dev/weird", IsBlock: true, Dev: "7:99"}, errHas: []string{"no disk"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.SchedulerDisk(tc.target, tc.allow)
			if tc.errHas == nil {
				if err != nil || got != tc.want {
					t.Errorf("got %q, %v; want %q", got, err, tc.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("got %q, want an error", got)
			}
			for _, s := range tc.errHas {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not say %q", err, s)
				}
			}
		})
	}
}

// sysfsActive reads a disk's active scheduler straight from sysfs, apart
// from the code under test.
func sysfsActive(t *testing.T, disk string) string {
	t.Helper()
	b, err := os.ReadFile("/sys/block/" + disk + "/queue/scheduler")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(b)) {
		if strings.HasPrefix(f, "[") && strings.HasSuffix(f, "]") {
			return f[1 : len(f)-1]
		}
	}
	t.Fatalf("no active scheduler in %q", b)
	return ""
}

// loopForScheduler attaches a fresh loop device and, in t.Cleanup (which
// runs before attachLoop's detach), puts its scheduler back: loop devices
// outlive their backing files, and the next user gets what was left.
func loopForScheduler(t *testing.T) (disk string, original string, available []string) {
	t.Helper()
	testdev.NeedLoopTools(t)
	dev := testdev.AttachLoop(t, 16<<20, nil, false)
	disk = filepath.Base(dev)
	var s FS
	original, available, err := s.Schedulers(disk)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.WriteFile("/sys/block/"+disk+"/queue/scheduler", []byte(original), 0); err != nil {
			t.Errorf("put back %s on %s: %v", original, disk, err)
		}
	})
	return disk, original, available
}

func TestSchedulersLive(t *testing.T) {
	disk, original, available := loopForScheduler(t)
	raw, err := os.ReadFile("/sys/block/" + disk + "/queue/scheduler")
	if err != nil {
		t.Fatal(err)
	}
	if want := sysfsActive(t, disk); original != want {
		t.Errorf("active %q, sysfs says %q (%q)", original, want, raw)
	}
	if !slices.Contains(available, "none") || !slices.Contains(available, original) {
		t.Errorf("available %q for %q", available, raw)
	}
	if len(available) != len(strings.Fields(string(raw))) {
		t.Errorf("available %q: not every entry of %q", available, raw)
	}
	t.Logf("%s: %q", disk, raw)
}

func TestSetSchedulerLive(t *testing.T) {
	disk, _, available := loopForScheduler(t)
	var s FS
	for _, name := range append(slices.Clone(available), available[0]) { // end with a switch back
		if err := s.SetScheduler(disk, name); err != nil {
			t.Fatalf("switch to %s: %v", name, err)
		}
		if got := sysfsActive(t, disk); got != name {
			t.Errorf("switched to %s, sysfs shows %s", name, got)
		}
		// Switching to the active one again is fine.
		if err := s.SetScheduler(disk, name); err != nil {
			t.Errorf("switch to %s again: %v", name, err)
		}
	}

	before := sysfsActive(t, disk)
	err := s.SetScheduler(disk, "cfq")
	want := disk + " offers " + strings.Join(available, ", ") + `; "cfq" is not one of them`
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("cfq: got %v, want %q…", err, want)
	}
	if got := sysfsActive(t, disk); got != before {
		t.Errorf("refused switch changed %s from %s to %s", disk, before, got)
	}
}

func TestSwitchSchedulerLive(t *testing.T) {
	disk, original, available := loopForScheduler(t)
	var others []string
	for _, a := range available {
		if a != original {
			others = append(others, a)
		}
	}
	if len(others) == 0 {
		t.Fatalf("%s offers only %q: nothing to switch to", disk, available)
	}
	first, second := others[0], others[len(others)-1]

	var s FS
	restore, got, err := s.SwitchScheduler(disk, first)
	if err != nil {
		t.Fatal(err)
	}
	if got != original {
		t.Errorf("original %q, want %q", got, original)
	}
	if a := sysfsActive(t, disk); a != first {
		t.Errorf("after the switch %s runs %s, want %s", disk, a, first)
	}
	// A later step switches again; restore still goes back to the first
	// original, not to the scheduler before the last switch.
	if err := s.SetScheduler(disk, second); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := restore(); err != nil {
			t.Fatalf("restore #%d: %v", i+1, err)
		}
		if a := sysfsActive(t, disk); a != original {
			t.Errorf("after restore #%d %s runs %s, want %s", i+1, disk, a, original)
		}
	}

	// A refused switch changes nothing and hands back no restore.
	restore, _, err = s.SwitchScheduler(disk, "cfq")
	if err == nil || restore != nil {
		t.Errorf("cfq: err %v, restore %v", err, restore != nil)
	}
	if a := sysfsActive(t, disk); a != original {
		t.Errorf("refused switch left %s on %s", disk, a)
	}

	// Recovery from a record, as at the next start after a kill.
	if err := s.SetScheduler(disk, first); err != nil {
		t.Fatal(err)
	}
	if err := s.RestoreScheduler(SchedulerSwitch{Disk: disk, Original: original}); err != nil {
		t.Fatal(err)
	}
	if a := sysfsActive(t, disk); a != original {
		t.Errorf("RestoreScheduler left %s on %s", disk, a)
	}
}

func TestSchedulerDiskLive(t *testing.T) {
	var s FS
	file := filepath.Join(t.TempDir(), "f")
	tg, err := s.ResolveTarget(file)
	if err != nil {
		t.Fatal(err)
	}
	disk, err := s.SchedulerDisk(tg, false)
	if tg.Disk == "" { // TMPDIR on tmpfs
		if err == nil || !strings.Contains(err.Error(), "no disk under it") {
			t.Errorf("file on %s: got %q, %v; want a no-disk error", tg.Filesystem, disk, err)
		}
		return
	}
	if err == nil {
		t.Fatalf("file on %s: got %q without allowDisk", tg.Disk, disk)
	}
	for _, want := range []string{file + " is a file on " + tg.Disk, "everything on " + tg.Disk, "--allow-disk-scheduler"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if disk, err = s.SchedulerDisk(tg, true); err != nil || disk != tg.Disk {
		t.Fatalf("allowed: got %q, %v; want %s", disk, err, tg.Disk)
	}
	// Only read the disk under the tests (the root disk here): never switch it.
	active, available, err := s.Schedulers(disk)
	if errors.Is(err, ErrNoScheduler) {
		t.Logf("%s: %v", disk, err)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if want := sysfsActive(t, disk); active != want || !slices.Contains(available, active) {
		t.Errorf("%s: got %q of %q, sysfs says %q", disk, active, available, want)
	}
}

func TestSchedulerDiskLoopLive(t *testing.T) {
	testdev.NeedLoopTools(t)
	dev := testdev.AttachLoop(t, 1<<20, nil, false)
	var s FS
	tg, err := s.ResolveTarget(dev)
	if err != nil {
		t.Fatal(err)
	}
	disk, err := s.SchedulerDisk(tg, false)
	if err != nil || disk != filepath.Base(dev) {
		t.Errorf("%s: got %q, %v", dev, disk, err)
	}
}

func TestDiscardLive(t *testing.T) {
	testdev.NeedLoopTools(t)
	const size = 8 << 20
	dev := testdev.AttachLoop(t, size, bytes.Repeat([]byte{0xa5}, size), false)
	disk := filepath.Base(dev)
	readAll := func() []byte {
		t.Helper()
		b, err := os.ReadFile(dev)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != size {
			t.Fatalf("read %d bytes of %s, want %d", len(b), dev, size)
		}
		return b
	}
	if b := readAll(); b[0] != 0xa5 || b[size-1] != 0xa5 {
		t.Fatalf("%s does not hold the pattern before the discard", dev)
	}

	maxBytes, err := readSysInt("/sys/block/" + disk + "/queue/discard_max_bytes")
	if err != nil {
		t.Fatal(err)
	}
	err = Discard(dev)
	if maxBytes == 0 {
		// The backing filesystem cannot punch holes: the refusal must say so.
		want := dev + " does not support discard (/sys/block/" + disk + "/queue/discard_max_bytes is 0)"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %q", err, want)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if n := size - bytes.Count(readAll(), []byte{0}); n != 0 {
		t.Errorf("%s reads %d non-zero bytes after the discard", dev, n)
	}
}

func TestDiscardRefuses(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Discard(file); err == nil || !strings.Contains(err.Error(), "not a block device") {
		t.Errorf("regular file: %v", err)
	}
	if err := Discard("/dev/null"); err == nil || !strings.Contains(err.Error(), "not a block device") {
		t.Errorf("character device: %v", err)
	}
	if err := Discard(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing: %v", err)
	}
	if b, _ := os.ReadFile(file); string(b) != "data" {
		t.Errorf("refused discard changed the file: %q", b)
	}

	// A device held exclusively (as a mount or dm would) is refused.
	testdev.NeedLoopTools(t)
	dev := testdev.AttachLoop(t, 1<<20, bytes.Repeat([]byte{1}, 4096), false)
	fd, err := unix.Open(dev, unix.O_RDONLY|unix.O_EXCL|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	err = Discard(dev)
	unix.Close(fd)
	if !errors.Is(err, unix.EBUSY) || !strings.Contains(err.Error(), "in use") {
		t.Errorf("held device: %v", err)
	}
}

func TestDropCachesFixture(t *testing.T) {
	proc := t.TempDir()
	path := filepath.Join(proc, "sys", "vm", "drop_caches")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := (FS{Proc: proc}).DropCaches(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "3" {
		t.Errorf("wrote %q, want 3", b)
	}
	if err := (FS{Proc: t.TempDir()}).DropCaches(); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no drop_caches: %v", err)
	}
}

func TestDropCachesLive(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("dropping caches needs root")
	}
	var s FS
	if err := s.DropCaches(); err != nil {
		t.Fatal(err)
	}
}
