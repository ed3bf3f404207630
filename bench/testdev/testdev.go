// Package testdev gives tests real devices to work on: files, loop devices
// over them (with direct I/O, as the write-ups use) and scratch mounts,
// each removed when the test ends. Tests that need root or a tool the
// machine lacks are skipped with the reason.
package testdev

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// NeedLoopTools skips a live device test that cannot run here, naming why:
// it needs root, the loop driver, losetup and tools.
func NeedLoopTools(t testing.TB, tools ...string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to set up loop devices")
	}
	for _, tool := range append([]string{"losetup"}, tools...) {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		t.Skipf("no loop driver: %v", err)
	}
}

// Run runs a command and returns its trimmed output, failing the test if
// it fails.
func Run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// AttachLoop attaches a fresh sparse file of size bytes (with head written
// at its start) to a loop device with direct I/O, detached again when the
// test ends; partscan asks the kernel to scan it for partitions.
func AttachLoop(t testing.TB, size int64, head []byte, partscan bool) string {
	t.Helper()
	NeedLoopTools(t)
	f := filepath.Join(t.TempDir(), "backing")
	if err := os.WriteFile(f, head, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(f, size); err != nil {
		t.Fatal(err)
	}
	args := []string{"--direct-io=on"}
	if partscan {
		args = append(args, "-P")
	}
	return attach(t, f, args...)
}

// attach attaches file to a free loop device with losetup's further
// args, detached when the test ends.
func attach(t testing.TB, file string, args ...string) string {
	t.Helper()
	dev := Run(t, "losetup", append(append([]string{"-f", "--show"}, args...), file)...)
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "-d", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup -d %s: %v\n%s", dev, err, out)
		}
	})
	return dev
}

// Loop attaches a blank file of size bytes to a free loop device with
// direct I/O, detached when the test ends.
func Loop(t testing.TB, size int64) string {
	t.Helper()
	return AttachLoop(t, size, nil, false)
}

// MountTemp mounts dev on a new directory, unmounted when the test ends.
func MountTemp(t testing.TB, dev string) string {
	t.Helper()
	dir := t.TempDir()
	Run(t, "mount", dev, dir)
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v\n%s", dir, err, out)
		}
	})
	return dir
}

// TempFile creates a zero-filled file of size bytes in a test directory.
func TempFile(t testing.TB, size int64) string {
	t.Helper()
	return TempFileIn(t, t.TempDir(), "target", size)
}

// TempFileIn creates a zero-filled file of size bytes at dir/name.
func TempFileIn(t testing.TB, dir, name string, size int64) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(make([]byte, size)); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}
