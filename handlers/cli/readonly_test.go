package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReadOnlyStoreCommands: a store on a file system remounted
// read-only (where `iolab runs` used to fail with "unable to open
// database file (14)") still lists, shows, exports and reports its runs;
// a new run is refused with "read-only store" and the path.
func TestReadOnlyStoreCommands(t *testing.T) {
	dir := t.TempDir()
	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", mnt, "tmpfs", 0, "size=64m"); err != nil {
		t.Fatalf("mount a tmpfs (the test needs root): %v", err)
	}
	t.Cleanup(func() { unix.Unmount(mnt, unix.MNT_DETACH) })
	dbPath := filepath.Join(mnt, "iolab.db")
	var out, errOut bytes.Buffer
	if err := run([]string{"run", "--db", dbPath, "--name=kept", "--filename=" + filepath.Join(dir, "target"), "--size=1m",
		"--rw=read", "--ioengine=psync"}, &out, &errOut); err != nil {
		t.Fatalf("seed run: %v\n%s", err, errOut.String())
	}
	if err := unix.Mount("", mnt, "", unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(dir, "report.html")
	for _, args := range [][]string{
		{"runs", "--db", dbPath},
		{"show", "--db", dbPath, "1"},
		{"export", "--db", dbPath, "1"},
		{"report", "--db", dbPath, "-o", report, "1"},
	} {
		out.Reset()
		errOut.Reset()
		if err := run(args, &out, &errOut); err != nil {
			t.Errorf("iolab %s on a read-only store: %v\n%s", strings.Join(args, " "), err, errOut.String())
			continue
		}
		if args[0] != "report" && !strings.Contains(out.String(), "kept") {
			t.Errorf("iolab %s: the run is not in\n%.500s", args[0], out.String())
		}
	}
	if b, err := os.ReadFile(report); err != nil || !bytes.Contains(b, []byte("kept")) {
		t.Errorf("the report of a read-only store: %v", err)
	}
	err := run([]string{"run", "--db", dbPath, "--name=new", "--filename=" + filepath.Join(dir, "target"), "--size=1m",
		"--rw=read", "--ioengine=psync"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "read-only store ("+dbPath+")") {
		t.Errorf("a new run on a read-only store: %v", err)
	}
}
