package launch

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckDataDir: every directory runs must not write into is refused
// with what to do; a private directory of the user's own is taken,
// resolved.
func TestCheckDataDir(t *testing.T) {
	base := t.TempDir()
	mk := func(name string, mode os.FileMode) string {
		p := filepath.Join(base, name)
		if err := os.Mkdir(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // past the umask
			t.Fatal(err)
		}
		return p
	}
	link := func(name, to string) string {
		p := filepath.Join(base, name)
		if err := os.Symlink(to, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := mk("good", 0o700)
	open := mk("open", 0o755)
	groupOnly := mk("group", 0o750)
	others := mk("others", 0o700)
	// Only root may give a directory away.
	chowned := os.Chown(others, 4242, 4242) == nil
	world := mk("world", 0o777) // writable by all, no sticky bit
	inWorld := filepath.Join(world, "data")
	if err := os.Mkdir(inWorld, 0o700); err != nil {
		t.Fatal(err)
	}
	withStore := mk("withstore", 0o700)
	file := filepath.Join(base, "file")
	os.WriteFile(file, nil, 0o600)
	shmDir, err := os.MkdirTemp("/dev/shm", "iolab-datadir-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(shmDir)
	os.Chmod(shmDir, 0o700)
	home, _ := os.UserHomeDir()
	homeWhy := "your home directory"
	if home == "/root" {
		homeWhy = "system directory"
	}

	tests := []struct {
		name, dir string
		keep      string
		want      string // "" when taken
	}{
		{"a private directory of one's own", good, "", ""},
		{"a symlink to one", link("good-link", good), "", ""},
		{"/", "/", "", "system directory"},
		{"/etc", "/etc", "", "in /etc, which is never data"},
		{"inside /etc", "/etc/iolab", "", "in /etc, which is never data"},
		{"/sys", "/sys", "", "in /sys"},
		{"a file of /sys's", "/sys/block", "", "in /sys"},
		{"/proc", "/proc/self/root", "", "in /proc"},
		{"/dev", "/dev", "", "in /dev"},
		{"/dev/shm/x", shmDir, "", "in /dev"},
		{"/usr/lib", "/usr/lib", "", "in /usr"},
		{"/var", "/var", "", "system directory"},
		{"/root itself", "/root", "", "system directory"},
		{"/tmp", "/tmp", "", "system directory"},
		{"/run", "/run", "", "system directory"},
		{"/var/../etc", "/var/../etc", "", "in /etc"},
		{"home", home, "", homeWhy},
		{"a symlink to /etc", link("etc-link", "/etc"), "", "symlink to /etc, which is in /etc"},
		{"a symlink to /sys/block", link("sys-link", "/sys/block"), "", "symlink to /sys/block, which is in /sys"},
		{"a symlink to /", link("root-link", "/"), "", "symlink to /,"},
		{"through a symlink to /dev", filepath.Join(link("dev-link", "/dev"), "shm"), "", "symlink to /dev/shm, which is in /dev"},
		{"mode 0755", open, "", "chmod 700 " + open},
		{"mode 0750", groupOnly, "", "chmod 700 " + groupOnly},
		{"owned by another uid", others, "", fmt.Sprintf("owned by uid 4242, not by uid %d", os.Geteuid())},
		{"under a directory all may write", inWorld, "", "writable by others"},
		{"missing", filepath.Join(base, "missing"), "", "mkdir -m 700"},
		{"a file", file, "", "not a directory"},
		{"holding the store", withStore, filepath.Join(withStore, "sub", "iolab.db"), "runs would overwrite"},
		{"beside the store", good, filepath.Join(base, "iolab.db"), ""},
		{"holding the store through a symlink", good, filepath.Join(link("good-link2", good), "iolab.db"), "runs would overwrite"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.dir == others && !chowned {
				t.Skip("needs root: a directory owned by another uid is made with chown")
			}
			got, err := CheckDataDir(tt.dir, tt.keep)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("CheckDataDir(%s) = %v, want it taken", tt.dir, err)
				}
				if real, _ := filepath.EvalSymlinks(tt.dir); got != real {
					t.Errorf("CheckDataDir(%s) = %s, want %s", tt.dir, got, real)
				}
				return
			}
			var de *DataDirError
			if !errors.As(err, &de) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.dir) {
				t.Fatalf("CheckDataDir(%s) = %q, %v; want a refusal naming the directory and saying %q", tt.dir, got, err, tt.want)
			}
		})
	}
}

// TestDefaultDataDir: the default data directory is made 0700; one an
// earlier iolab made 0755 is tightened, and said so; another mode is
// refused as a given one would be.
func TestDefaultDataDir(t *testing.T) {
	base := t.TempDir()
	fresh := filepath.Join(base, "fresh", "data")
	if _, err := DefaultDataDir(fresh, nil); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("made %v, %v; want mode 0700", fi.Mode(), err)
	}
	old := filepath.Join(base, "old")
	os.Mkdir(old, 0o755)
	os.Chmod(old, 0o755)
	var logged bytes.Buffer
	if _, err := DefaultDataDir(old, slog.New(slog.NewTextHandler(&logged, nil))); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(old); fi.Mode().Perm() != 0o700 || !strings.Contains(logged.String(), "now 0700") || !strings.Contains(logged.String(), "dir="+old) {
		t.Fatalf("mode %v, logged %q; want 0700, said", fi.Mode().Perm(), logged.String())
	}
	odd := filepath.Join(base, "odd")
	os.Mkdir(odd, 0o775)
	os.Chmod(odd, 0o775)
	if _, err := DefaultDataDir(odd, nil); err == nil || !strings.Contains(err.Error(), "chmod 700") {
		t.Fatalf("a 0775 default data directory: %v, want a refusal saying chmod 700", err)
	}
}

// TestUnderSame: a directory is found above a path by identity, whatever
// the path calls it (a bind mount does as this symlink).
func TestUnderSame(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "a", "b"), 0o700)
	other := filepath.Join(t.TempDir(), "other")
	os.Symlink(dir, other)
	fi, _ := os.Stat(dir)
	if !underSame(fi, filepath.Join(other, "a", "b")) {
		t.Error("not found above a path through another name")
	}
	if underSame(fi, t.TempDir()) {
		t.Error("found above an unrelated directory")
	}
}
