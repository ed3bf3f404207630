package bench

import (
	"os"
	"path/filepath"
	"testing"
)

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

// loopDevice attaches a blank file of size bytes to a free loop device with
// direct I/O, detached when the test ends.
func loopDevice(t *testing.T, size int64) string {
	t.Helper()
	needLoopTools(t)
	return attachLoop(t, size, nil, false)
}
