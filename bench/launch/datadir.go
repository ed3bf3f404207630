package launch

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// The data directory is where web and agent runs may make, grow and
// overwrite files at will, so it must be a directory of iolab's own:
// never a system directory (runs would overwrite /etc's files or write
// kernel settings under /sys), never one another user may change under
// it or read from it.

// systemTrees are never data, nor is anything inside them: kernel
// interfaces (/proc, /sys, /dev: a "file" there is a setting or a
// device) and the system's own files.
var systemTrees = []string{"/proc", "/sys", "/dev", "/boot", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/usr"}

// systemDirs may hold a data directory deeper down (/var/lib/iolab/data,
// /root/iolab-data) but are not one themselves: their files are the
// system's, or every user's.
var systemDirs = []string{"/", "/root", "/home", "/run", "/var", "/var/lib", "/var/log", "/var/tmp", "/var/cache", "/var/spool",
	"/tmp", "/opt", "/srv", "/mnt", "/media", "/snap", "/lost+found"}

// DataDirError is a refusal of a data directory: the directory and what
// to do about it.
type DataDirError struct {
	Dir string
	Msg string
}

func (e *DataDirError) Error() string { return "--data-dir " + e.Dir + ": " + e.Msg }

// CheckDataDir checks that dir may be a data directory and returns it
// absolute with its symlinks resolved. It refuses a system directory or
// anything inside /proc, /sys, /dev and the like, whether named or
// reached through a symlink; a directory that holds one of keep (the
// store: runs would overwrite it); one not owned by the user running
// iolab, or open to others (any group or other bit: runs' files are
// that user's to read and write alone); and one under a directory others
// may write to without the sticky bit (they could swap it for a link).
func CheckDataDir(dir string, keep ...string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", &DataDirError{Dir: dir, Msg: err.Error()}
	}
	if why := systemPath(abs); why != "" {
		return "", &DataDirError{Dir: dir, Msg: why + "; give a directory of iolab's own, e.g. " + suggestion()}
	}
	real, err := filepath.EvalSymlinks(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", &DataDirError{Dir: dir, Msg: "it does not exist; create it (mkdir -m 700 " + abs + ")"}
	}
	if err != nil {
		return "", &DataDirError{Dir: dir, Msg: err.Error()}
	}
	if why := systemPath(real); why != "" {
		return "", &DataDirError{Dir: dir, Msg: "it is a symlink to " + real + ", which " + strings.TrimPrefix(why, "it ") + "; give a directory of iolab's own, e.g. " + suggestion()}
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", &DataDirError{Dir: dir, Msg: err.Error()}
	}
	if !fi.IsDir() {
		return "", &DataDirError{Dir: dir, Msg: "not a directory"}
	}
	uid := os.Geteuid()
	if owner := ownerOf(fi); owner != uid {
		return "", &DataDirError{Dir: dir, Msg: fmt.Sprintf("owned by uid %d, not by uid %d who runs iolab; give a directory of your own (or chown %d %s)", owner, uid, uid, real)}
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return "", &DataDirError{Dir: dir, Msg: fmt.Sprintf("mode %04o lets others in; runs' files are yours alone: chmod 700 %s", perm, real)}
	}
	for _, k := range keep {
		if k == "" {
			continue
		}
		kabs, err := filepath.Abs(k)
		if err != nil {
			continue
		}
		if kr, err := filepath.EvalSymlinks(filepath.Dir(kabs)); err == nil {
			kabs = filepath.Join(kr, filepath.Base(kabs))
		}
		if Within(real, kabs) || underSame(fi, filepath.Dir(kabs)) {
			return "", &DataDirError{Dir: dir, Msg: fmt.Sprintf("it holds %s, which runs would overwrite; give a directory of its own (e.g. %s)", kabs, filepath.Join(filepath.Dir(kabs), "data"))}
		}
	}
	for p := filepath.Dir(real); ; p = filepath.Dir(p) {
		pi, err := os.Stat(p)
		if err != nil {
			return "", &DataDirError{Dir: dir, Msg: err.Error()}
		}
		owner := ownerOf(pi)
		open := pi.Mode().Perm()&0o022 != 0 && pi.Mode()&fs.ModeSticky == 0
		if (owner != 0 && owner != uid) || open {
			return "", &DataDirError{Dir: dir, Msg: fmt.Sprintf("%s above it is %s (mode %04o, uid %d): another user could replace the data directory; use a directory under one only you and root may change",
				p, map[bool]string{true: "writable by others", false: "another user's"}[open], pi.Mode().Perm(), owner)}
		}
		if p == "/" {
			break
		}
	}
	return real, nil
}

// systemPath says why p (absolute) is not a data directory: a system
// directory, or inside a system tree; "" when it is neither.
func systemPath(p string) string {
	p = filepath.Clean(p)
	for _, d := range systemDirs {
		if p == d {
			return "it is a system directory"
		}
	}
	for _, d := range systemTrees {
		if p == d || Within(d, p) {
			return "it is in " + d + ", which is never data"
		}
	}
	if home, err := os.UserHomeDir(); err == nil && filepath.Clean(home) == p {
		return "it is your home directory"
	}
	return ""
}

// suggestion is a data directory to propose: data/ beside the default
// store.
func suggestion() string {
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "iolab", "data")
	}
	return "/var/lib/iolab/data"
}

// underSame reports whether dir or a directory above it is the
// directory of fi, by device and inode: the store in a bind mount of
// the data directory is in it though no path says so.
func underSame(fi fs.FileInfo, dir string) bool {
	for p := dir; ; p = filepath.Dir(p) {
		if pi, err := os.Stat(p); err == nil && os.SameFile(fi, pi) {
			return true
		}
		if p == filepath.Dir(p) {
			return false
		}
	}
}

func ownerOf(fi fs.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// DefaultDataDir makes dir, the data directory iolab chooses itself
// (data/ beside the store), private to the user (0700), and checks it.
// Earlier versions made it 0755: one found so, owned by the user, is
// tightened to 0700 and logged, since iolab made it and nothing else
// should be there that others need; any other mode is left to the user,
// as for a directory given with --data-dir.
func DefaultDataDir(dir string, log *slog.Logger, keep ...string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", &DataDirError{Dir: dir, Msg: err.Error()}
	}
	if fi, err := os.Lstat(dir); err == nil && fi.IsDir() && fi.Mode().Perm() == 0o755 && ownerOf(fi) == os.Geteuid() {
		if err := os.Chmod(dir, 0o700); err != nil {
			return "", &DataDirError{Dir: dir, Msg: "tightening it to 0700: " + err.Error()}
		}
		if log != nil {
			log.Info("data directory made private: an earlier iolab made it 0755, now 0700", "dir", dir)
		}
	}
	return CheckDataDir(dir, keep...)
}
