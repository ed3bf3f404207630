package bench

import (
	"os"
	"path/filepath"
	"testing"

	"iolab/bench/system"
)

// TestLaidOutOnce: a job that only writes leaves its file unwritten after
// laying it out (fallocate=none: fio's extend_file allocates nothing), so
// the file stays short of the job's size; the check before a run, the run
// and a second step still lay it out once, saying so once. A file removed
// since is laid out again.
func TestLaidOutOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.dat")
	j := NewJob()
	j.Name, j.Filename, j.RW, j.Size, j.Fallocate, j.IOEngine = "w", path, "write", 1<<20, "none", "psync"
	cfg := &Config{Jobs: []Job{j}, Groups: Expand([]Job{j})}
	var notices []string
	rn := &Runner{Sys: system.FS{}, Notice: func(msg string) { notices = append(notices, msg) }}
	for range 2 {
		if _, err := rn.Prepare(cfg); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != 0 {
		t.Fatalf("after laying out: %v, want an empty file (fallocate=none)", err)
	}
	if len(notices) != 1 {
		t.Errorf("notices %q, want one", notices)
	}
	os.Remove(path)
	if _, err := rn.Prepare(cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil || len(notices) != 2 {
		t.Errorf("a file removed since: %v, notices %q, want it laid out again", err, notices)
	}
}
