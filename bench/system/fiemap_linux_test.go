package system

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestFileExtents on the live machine: a file of a written MiB, a
// fallocated one and a hole, in a test directory. Its extents cover the
// written MiB at a place on the device, then the fallocated one unwritten,
// and nothing of the hole; tmpfs refuses FIEMAP.
func TestFileExtents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(make([]byte, 1<<20)); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fallocate(int(f.Fd()), 0, 1<<20, 1<<20); err != nil {
		t.Skipf("fallocate here: %v", err)
	}
	if err := f.Truncate(3 << 20); err != nil {
		t.Fatal(err)
	}
	ext, err := FileExtents(int(f.Fd()), path)
	if err != nil {
		t.Skipf("the test directory's filesystem: %v", err)
	}
	var written, unwritten uint64
	for _, e := range ext {
		switch {
		case e.Logical+e.Length > 2<<20:
			t.Errorf("extent %+v in the hole", e)
		case e.Flags&ExtentUnwritten != 0:
			unwritten += e.Length
			if e.Logical < 1<<20 {
				t.Errorf("unwritten extent %+v in the written MiB", e)
			}
		case e.Flags&ExtentsNotOnDevice == 0:
			written += e.Length
			if e.Logical >= 1<<20 {
				t.Errorf("written extent %+v in the fallocated MiB", e)
			}
		}
	}
	if written != 1<<20 || unwritten != 1<<20 {
		t.Errorf("extents %+v: %d bytes written, %d unwritten; want 1 MiB each (FIEMAP_FLAG_SYNC wrote the first back)", ext, written, unwritten)
	}
	if last := ext[len(ext)-1]; last.Flags&ExtentLast == 0 {
		t.Errorf("the last extent %+v is not marked last", last)
	}

	shm, err := os.CreateTemp("/dev/shm", "iolab-test-")
	if err != nil {
		t.Skip(err)
	}
	defer os.Remove(shm.Name())
	defer shm.Close()
	shm.Write(make([]byte, 4096))
	if ext, err := FileExtents(int(shm.Fd()), shm.Name()); err == nil {
		t.Errorf("tmpfs mapped its file: %+v", ext)
	} else {
		t.Logf("tmpfs: %v", err)
	}
	// Not a regular file: refused before the ioctl.
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	if ext, err := FileExtents(int(dir.Fd()), dir.Name()); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a directory: %+v, %v; want refused as not a regular file", ext, err)
	}
}
