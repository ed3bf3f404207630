package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// requireRoot skips tests that need root (loop devices, mounts); CI runs
// them as root, so there they always run.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for loop devices")
	}
}

// tempFile creates a zero-filled file of size bytes in a test directory.
func tempFile(t *testing.T, size int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "target")
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

// loopDevice attaches a zero-filled file of size bytes to a free loop
// device with direct I/O and detaches it when the test ends.
func loopDevice(t *testing.T, size int64) string {
	t.Helper()
	requireRoot(t)
	if _, err := exec.LookPath("losetup"); err != nil {
		t.Skip("losetup is not installed (util-linux)")
	}
	file := tempFile(t, size)
	out, err := exec.Command("losetup", "-f", "--show", "--direct-io=on", file).CombinedOutput()
	if err != nil {
		t.Fatalf("losetup: %v: %s", err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "-d", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup -d %s: %v: %s", dev, err, out)
		}
	})
	return dev
}
