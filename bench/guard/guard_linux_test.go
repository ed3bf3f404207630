package guard_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/guard"
	"iolab/bench/testdev"

	"golang.org/x/sys/unix"
)

// frontDoorNames are the files a job with filename (and directory) opens,
// named as the dashboard and agents hand them to the runner: a relative
// name taken under the data directory.
func frontDoorNames(e testdev.HostileEnv, tc testdev.HostileTarget) (names, raw []string) {
	prefix := ""
	if tc.Directory != nil {
		prefix = tc.Directory(e) + "/"
	}
	for _, n := range bench.SplitFileList(tc.Filename(e)) {
		n = prefix + n
		raw = append(raw, n)
		if !filepath.IsAbs(n) {
			n = filepath.Join(e.DataDir, n)
		}
		names = append(names, n)
	}
	return names, raw
}

// scribble writes over the start of what the guard opens, as a write job
// would.
func scribble(t *testing.T, g *guard.Guard, name string, id guard.Identity) error {
	fd, err := g.Open(name, id, unix.O_RDWR)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if _, err := unix.Pwrite(fd, bytes.Repeat([]byte{0xab}, 4096), 0); err != nil {
		t.Errorf("%s: write: %v", name, err)
	}
	return nil
}

// TestHostileTargets replays testdev.HostileTargets against a guard
// built over the environment's allow-list: every case is refused, at the
// check or, for a swap while queued, at the open after it, with an error
// naming the path; no victim byte changes.
func TestHostileTargets(t *testing.T) {
	e := testdev.NewHostileEnv(t, "", 4<<20)
	g, err := guard.New(e.Targets(), e.DataDir, "this test's")
	if err != nil {
		t.Fatal(err)
	}
	before := e.Victims(t)
	for _, tc := range testdev.HostileTargets {
		t.Run(tc.Name, func(t *testing.T) {
			names, raw := frontDoorNames(e, tc)
			for _, n := range raw {
				if !filepath.IsAbs(n) {
					if _, _, err := g.Check(n); !isRefusal(err, n) {
						t.Errorf("relative %s: %v; want it refused", n, err)
					}
				}
			}
			if tc.Swap != nil {
				name := names[0]
				id, _, err := g.Check(name)
				if err != nil {
					t.Fatalf("%s before the swap: %v; want it allowed", name, err)
				}
				if err := tc.Swap(e); err != nil {
					t.Fatal(err)
				}
				if err := scribble(t, g, name, id); !isRefusal(err, name) {
					t.Errorf("open after the swap: %v; want a refusal naming %s", err, name)
				}
				if _, _, err := g.Check(name); !isRefusal(err, name) {
					t.Errorf("check after the swap: %v; want a refusal naming %s", err, name)
				}
				return
			}
			refused := 0
			for _, n := range names {
				id, _, err := g.Check(n)
				switch {
				case err == nil:
					scribble(t, g, n, id) // an allowed member of a list
				case errors.Is(err, fs.ErrNotExist):
					if err := g.LayOut(n, 4096, func(*os.File) error { return nil }); err != nil {
						t.Errorf("%s, missing: %v; the check let it be made", n, err)
					}
				case isRefusal(err, n):
					refused++
				default:
					t.Errorf("%s: %v", n, err)
				}
			}
			if refused == 0 {
				t.Errorf("%q: nothing refused", names)
			}
		})
	}
	e.CheckVictims(t, before)
}

// isRefusal reports whether err refuses path and says so by name.
func isRefusal(err error, path string) bool {
	var re *guard.RefusedError
	return (errors.As(err, &re) || errors.Is(err, guard.ErrChanged)) && strings.Contains(err.Error(), path)
}

// TestNewRefuses: an allow-list entry that is not there under /dev, or
// is neither a block device nor a regular file, stops the guard from
// being built; nothing is made.
func TestNewRefuses(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ target, want string }{
		{"/dev/iolab-never-there", "allowed device /dev/iolab-never-there does not exist"},
		{"/dev/null", "neither a block device nor a regular file"},
		{dir, "neither a block device nor a regular file"},
		{filepath.Join(dir, "no", "f"), "create the directory"},
		{"rel/f", "give an absolute path"},
	} {
		_, err := guard.New([]string{tc.target}, "", "this test's")
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "size") {
			t.Errorf("%s: %v; want %q", tc.target, err, tc.want)
		}
	}
	if _, err := os.Lstat("/dev/iolab-never-there"); err == nil {
		t.Error("/dev/iolab-never-there was made")
	}
}

// TestUnrestrictedOpensWhatWasChecked: the CLI's guard allows any file
// or device, but opens only what it checked: a file swapped for a
// symlink to another between the check and the open is refused, and a
// character device is refused without being opened for real.
func TestUnrestrictedOpensWhatWasChecked(t *testing.T) {
	g := guard.Unrestricted()
	dir := t.TempDir()
	a := testdev.TempFileIn(t, dir, "a", 4096)
	other := testdev.TempFileIn(t, dir, "other", 4096)
	id, _, err := g.Check(a)
	if err != nil {
		t.Fatal(err)
	}
	fd, err := g.Open(a, id, unix.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	sum := testdev.Fingerprint(t, other)
	os.Remove(a)
	if err := os.Symlink(other, a); err != nil {
		t.Fatal(err)
	}
	if err := scribble(t, g, a, id); !errors.Is(err, guard.ErrChanged) || !strings.Contains(err.Error(), a) {
		t.Errorf("open after the swap: %v", err)
	}
	if testdev.Fingerprint(t, other) != sum {
		t.Error("the file behind the swapped name was written")
	}
	if _, _, err := g.Check("/dev/null"); err == nil || !strings.Contains(err.Error(), "character device") {
		t.Errorf("/dev/null: %v", err)
	}
	if err := g.CanCreate("/dev/iolab-never-there"); err == nil || !strings.Contains(err.Error(), "no such device") {
		t.Errorf("a file in /dev: %v", err)
	}
}

// TestDataDirFiles: under the data directory the guard makes, opens and
// removes regular files only through its descriptor: a file laid out in
// a new subdirectory, unlinked when it is the file used, left when the
// name now holds another; state files written there and refused
// elsewhere.
func TestDataDirFiles(t *testing.T) {
	data, _ := filepath.EvalSymlinks(t.TempDir())
	g, err := guard.New(nil, data, "this test's")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(data, "sub", "f")
	if _, _, err := g.Check(p); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing %s: %v", p, err)
	}
	if err := g.LayOut(p, 8192, func(f *os.File) error { return f.Truncate(8192) }); err != nil {
		t.Fatal(err)
	}
	id, st, err := g.Check(p)
	if err != nil || st.Size != 8192 {
		t.Fatalf("%s after laying out: %v, %d bytes", p, err, st.Size)
	}
	if err := g.Unlink(p, guard.Identity{Dev: id.Dev, Ino: id.Ino + 1}); !errors.Is(err, guard.ErrChanged) {
		t.Errorf("unlink of another identity: %v", err)
	}
	if err := g.Unlink(p, id); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s still there: %v", p, err)
	}
	state := filepath.Join(data, "local-a-0-verify.state")
	if err := g.WriteFile(state, []byte("state")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(state); err != nil || string(b) != "state" {
		t.Errorf("state file: %q %v", b, err)
	}
	outside := filepath.Join(t.TempDir(), "x.state")
	if err := g.WriteFile(outside, []byte("x")); err == nil {
		t.Errorf("wrote %s outside the data directory", outside)
	}
	fd, cid, err := g.Create(filepath.Join(data, "made-on-open"), unix.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)
	if cid.Block || cid.Ino == 0 {
		t.Errorf("created file's identity %v", cid)
	}
}

// BenchmarkCheckOpen is the guard's cost per target opened: a look-up
// with O_PATH, fstat, the reopen through /proc/self/fd and a second
// fstat, against a plain open(2), for a file beneath the data directory.
func BenchmarkCheckOpen(b *testing.B) {
	data, _ := filepath.EvalSymlinks(b.TempDir())
	p := testdev.TempFileIn(b, data, "f", 4096)
	g, err := guard.New(nil, data, "this benchmark's")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("guard", func(b *testing.B) {
		for b.Loop() {
			id, _, err := g.Check(p)
			if err != nil {
				b.Fatal(err)
			}
			fd, err := g.Open(p, id, unix.O_RDWR)
			if err != nil {
				b.Fatal(err)
			}
			unix.Close(fd)
		}
	})
	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			fd, err := unix.Open(p, unix.O_RDWR|unix.O_CLOEXEC, 0)
			if err != nil {
				b.Fatal(err)
			}
			unix.Close(fd)
		}
	})
}

// TestLookUpHasNoSideEffect: what the guard refuses it never opened for
// real. A FIFO stands for a device whose open does something (a
// watchdog): opened for reading it would block until a writer came;
// looked up with O_PATH, it is refused at once, by both guards.
func TestLookUpHasNoSideEffect(t *testing.T) {
	data, _ := filepath.EvalSymlinks(t.TempDir())
	fifo := filepath.Join(data, "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	restricted, err := guard.New(nil, data, "this test's")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		g    *guard.Guard
	}{{"unrestricted", guard.Unrestricted()}, {"restricted", restricted}} {
		done := make(chan error, 1)
		go func() {
			_, _, err := tc.g.Check(fifo)
			done <- err
		}()
		select {
		case err := <-done:
			if !isRefusal(err, fifo) || !strings.Contains(err.Error(), "neither a block device nor a regular file") {
				t.Errorf("%s: %v", tc.name, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the look-up of a FIFO blocked: it was opened for real", tc.name)
		}
	}
}
