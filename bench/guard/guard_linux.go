package guard

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Guard decides what a run may open, and opens it. The zero value is not
// usable: build one with New or Unrestricted. A Guard is safe for
// concurrent use; it holds descriptors (the data directory, the
// directories of allowed files not made yet) for as long as it lives.
type Guard struct {
	restricted bool
	whose      string
	allowed    string              // what is allowed, for refusals
	devices    map[uint64]string   // rdev → the entry that allowed it
	files      map[Identity]string // a file's identity → its entry
	pending    map[string]*pending // an allowed file not there at start, by its clean path
	pinned     map[string]bool     // the names of the entries pinned by identity
	data       *dataDir
}

// pending is an allowed file that did not exist when the guard was built:
// its directory, pinned, and its name there.
type pending struct {
	dir  *os.File // O_PATH
	base string
}

// dataDir is the data directory, opened once.
type dataDir struct {
	paths []string // its absolute name as given and as resolved
	dir   *os.File // O_PATH|O_DIRECTORY
}

// resolveBeneath is how every name under the data directory is looked up.
const resolveBeneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// Unrestricted is the CLI's guard: it allows any block device and any
// regular file (the caller applies the safety rules), but still opens by
// identity: what is opened for I/O is what was checked.
func Unrestricted() *Guard { return &Guard{} }

// New builds a restricted guard: targets (absolute paths) pinned by
// identity now, and dataDir ("" for none) opened now. whose names the
// list in refusals ("this server's", "this agent's"). An allowed device
// that does not exist, an entry that is neither a block device nor a
// regular file, and an allowed file whose directory does not exist are
// errors.
func New(targets []string, dataDir, whose string) (*Guard, error) {
	if whose == "" {
		whose = "this host's"
	}
	g := &Guard{restricted: true, whose: whose, devices: map[uint64]string{}, files: map[Identity]string{}, pending: map[string]*pending{}, pinned: map[string]bool{}}
	var names []string
	for _, p := range targets {
		if !filepath.IsAbs(p) {
			return nil, fmt.Errorf("allowed target %q: give an absolute path", p)
		}
		p = filepath.Clean(p)
		names = append(names, p)
		var st unix.Stat_t
		err := unix.Stat(p, &st) // a symlink is pinned by what it points to now
		if errors.Is(err, unix.ENOENT) {
			pd, perr := newPending(p)
			if perr != nil {
				return nil, perr
			}
			g.pending[p] = pd
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("allowed target %s: %w", p, err)
		}
		g.pinned[p] = true
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFBLK:
			g.devices[st.Rdev] = p
		case unix.S_IFREG:
			g.files[Identity{Dev: st.Dev, Ino: st.Ino}] = p
		default:
			return nil, fmt.Errorf("allowed target %s is neither a block device nor a regular file; allow only devices and files to run on", p)
		}
	}
	if dataDir != "" {
		d, err := openDataDir(dataDir)
		if err != nil {
			return nil, err
		}
		g.data = d
	}
	dd := ""
	if g.data != nil {
		dd = g.data.paths[len(g.data.paths)-1]
	}
	g.allowed = allowedText(names, dd)
	return g, nil
}

// newPending pins the directory of an allowed file not made yet. Under
// /dev (or any devtmpfs) nothing is made: a missing device is a mistake.
func newPending(p string) (*pending, error) {
	dir, base := filepath.Dir(p), filepath.Base(p)
	missingDevice := fmt.Errorf("allowed device %s does not exist; attach it (or correct the name: ls -l /dev/disk/by-id) and start again: iolab never creates files in /dev", p)
	if deviceDir(dir) {
		return nil, missingDevice
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("allowed file %s does not exist and neither does its directory %s: create the directory (or the file) first", p, dir)
	}
	if devtmpfs(fd) {
		unix.Close(fd)
		return nil, missingDevice
	}
	return &pending{dir: os.NewFile(uintptr(fd), dir), base: base}, nil
}

func openDataDir(p string) (*dataDir, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", p, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", p, err)
	}
	fd, err := unix.Open(real, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("data directory %s: %w", p, err)
	}
	d := &dataDir{dir: os.NewFile(uintptr(fd), real), paths: []string{filepath.Clean(abs)}}
	if real != d.paths[0] {
		d.paths = append(d.paths, real)
	}
	return d, nil
}

// where is how a name is reached: beneath the data directory, beneath an
// allowed file's pinned directory, or by the name itself.
type where struct {
	dir  *os.File // nil: by the name itself
	rel  string   // the name beneath dir
	kind int
}

const (
	byName = iota
	inDataDir
	inPending
)

// place says how path is reached, or refuses a name no rule can take.
func (g *Guard) place(path string) (where, error) {
	if path == "" {
		return where{}, &RefusedError{Path: path, Reason: "no name", Whose: g.whoseIf(), Allowed: g.allowed}
	}
	if !filepath.IsAbs(path) {
		if g.restricted {
			return where{}, &RefusedError{Path: path, Reason: "a relative path (name a file under the data directory or an allowed target by its absolute path)", Whose: g.whoseIf(), Allowed: g.allowed}
		}
		return where{rel: path}, nil
	}
	clean := filepath.Clean(path)
	if g.data != nil {
		for _, d := range g.data.paths {
			if rel, ok := beneath(d, clean); ok {
				return where{dir: g.data.dir, rel: rel, kind: inDataDir}, nil
			}
		}
	}
	if pd, ok := g.pending[clean]; ok {
		return where{dir: pd.dir, rel: pd.base, kind: inPending}, nil
	}
	return where{rel: path}, nil
}

// beneath reports path's name relative to dir when it is strictly inside.
func beneath(dir, path string) (string, bool) {
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || filepath.IsAbs(rel) {
		return "", false
	}
	return rel, true
}

// lookPath opens w with O_PATH: beneath its directory without following
// any symlink, or by name following them (an allowed symlink's target is
// what was pinned).
func lookPath(w where) (int, error) {
	switch w.kind {
	case inDataDir:
		return unix.Openat2(int(w.dir.Fd()), w.rel, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: resolveBeneath})
	case inPending:
		return unix.Openat(int(w.dir.Fd()), w.rel, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	}
	return unix.Open(w.rel, unix.O_PATH|unix.O_CLOEXEC, 0)
}

// Check looks path up without opening it for I/O and says whether this
// guard lets a run use it: its identity and what fstat says of it. A name
// that is not there yet but may be made (under the data directory, an
// allowed file not made yet, any file for the CLI) is an error wrapping
// fs.ErrNotExist; anything refused is a *RefusedError.
func (g *Guard) Check(path string) (Identity, unix.Stat_t, error) {
	w, err := g.place(path)
	if err != nil {
		return Identity{}, unix.Stat_t{}, err
	}
	fd, err := lookPath(w)
	if err != nil {
		return Identity{}, unix.Stat_t{}, g.lookupError(path, w, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return Identity{}, st, fmt.Errorf("%s: %w", path, err)
	}
	id, err := g.allow(path, w, &st)
	return id, st, err
}

// allow applies the rule of w's kind to what was found there.
func (g *Guard) allow(path string, w where, st *unix.Stat_t) (Identity, error) {
	mode := st.Mode & unix.S_IFMT
	refuse := func(reason string) (Identity, error) {
		return Identity{}, &RefusedError{Path: path, Reason: reason, Whose: g.whoseIf(), Allowed: g.allowed}
	}
	switch {
	case mode == unix.S_IFBLK:
		id := Identity{Block: true, Dev: st.Rdev}
		if w.kind != byName {
			return refuse("a block device node where only regular files are taken")
		}
		if _, ok := g.devices[st.Rdev]; ok || !g.restricted {
			return id, nil
		}
		return refuse(g.notAllowed(path, id))
	case mode == unix.S_IFREG:
		id := Identity{Dev: st.Dev, Ino: st.Ino}
		if w.kind != byName {
			if st.Nlink != 1 {
				return refuse(fmt.Sprintf("a file with %d hard links (another name of it may be outside the allowed places)", st.Nlink))
			}
			return id, nil
		}
		if _, ok := g.files[id]; ok || !g.restricted {
			return id, nil
		}
		return refuse(g.notAllowed(path, id))
	case mode == unix.S_IFCHR:
		return refuse("a character device, not a block device or a regular file")
	case mode == unix.S_IFDIR:
		return refuse("a directory, not a block device or a regular file")
	}
	return refuse("neither a block device nor a regular file")
}

// notAllowed says what path opened, which no entry allowed: for the name
// of an entry, that it changed since the list was pinned.
func (g *Guard) notAllowed(path string, id Identity) string {
	if g.pinned[filepath.Clean(path)] {
		return "now " + id.String() + ", not what it was when the allow-list was pinned at the start (swapped since?)"
	}
	return id.String() + ", which is not allowed"
}

// lookupError explains a failed look-up.
func (g *Guard) lookupError(path string, w where, err error) error {
	refuse := func(reason string) error {
		return &RefusedError{Path: path, Reason: reason, Whose: g.whoseIf(), Allowed: g.allowed}
	}
	switch {
	case errors.Is(err, unix.ENOENT):
		if w.kind == byName {
			if dir := filepath.Dir(path); filepath.IsAbs(path) && deviceDir(dir) {
				return refuse("no such device (nothing by that name in " + dir + "; check the name, e.g. ls -l /dev/disk/by-id; iolab never creates files there)")
			}
			if g.restricted {
				if err := g.gone(path); err != nil {
					return err
				}
				return refuse("does not exist and is not an allowed place to make a file")
			}
		}
		return fmt.Errorf("%s: %w", path, fs.ErrNotExist)
	case errors.Is(err, unix.ELOOP) && w.kind == inDataDir:
		return refuse("a symlink, or a path through one, under the data directory (symlinks are not followed there)")
	case errors.Is(err, unix.ELOOP) && w.kind == inPending:
		return refuse("now a symlink (the allowed file is taken only as a regular file)")
	case errors.Is(err, unix.EXDEV) && w.kind == inDataDir:
		return refuse("leads out of the data directory")
	case errors.Is(err, unix.ENOTDIR):
		return refuse("a path through something that is not a directory")
	}
	return fmt.Errorf("%s: %w", path, err)
}

// gone explains a missing allowed target (a device detached since the
// start); nil when path was never one.
func (g *Guard) gone(path string) error {
	if g.pinned[filepath.Clean(path)] {
		return &RefusedError{Path: path, Reason: "the allowed entry is no longer there (detached or removed since the start; what was allowed then is not made again)", Whose: g.whoseIf(), Allowed: g.allowed}
	}
	return nil
}

// Open opens path for I/O with flags (O_RDONLY or O_RDWR, O_DIRECT, …),
// and only if it is still want, the identity Check gave: it is looked up
// again with O_PATH and checked, then that descriptor is reopened through
// /proc/self/fd with the real flags, and the result checked again.
func (g *Guard) Open(path string, want Identity, flags int) (int, error) {
	w, err := g.place(path)
	if err != nil {
		return -1, err
	}
	pfd, err := lookPath(w)
	if err != nil {
		return -1, g.lookupError(path, w, err)
	}
	defer unix.Close(pfd)
	if err := g.same(path, w, pfd, want); err != nil {
		return -1, err
	}
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(pfd), flags|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	if err := g.same(path, w, fd, want); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// same checks that fd is allowed and is want.
func (g *Guard) same(path string, w where, fd int, want Identity) error {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	id, err := g.allow(path, w, &st)
	if err != nil {
		return fmt.Errorf("%w (%w)", err, ErrChanged)
	}
	if id != want {
		return fmt.Errorf("%s: %w: it is now %s, not the %s that was checked; refusing to do I/O on it", path, ErrChanged, id, want)
	}
	return nil
}

// Create makes and opens, for I/O with flags, a regular file the job
// creates as it opens it (create_on_open): beneath the data directory or
// an allowed file's directory, never through a symlink; the CLI's by name
// with O_NOFOLLOW. An existing file there is opened as it is if it is
// allowed.
func (g *Guard) Create(path string, flags int, perm uint32) (int, Identity, error) {
	w, err := g.place(path)
	if err != nil {
		return -1, Identity{}, err
	}
	flags |= unix.O_CREAT | unix.O_NOFOLLOW | unix.O_CLOEXEC
	var fd int
	switch w.kind {
	case inDataDir:
		fd, err = unix.Openat2(int(w.dir.Fd()), w.rel, &unix.OpenHow{Flags: uint64(flags), Mode: uint64(perm), Resolve: resolveBeneath})
	case inPending:
		fd, err = unix.Openat(int(w.dir.Fd()), w.rel, flags, perm)
	default:
		if g.restricted {
			// Only files pinned at the start are taken by name, and they exist.
			return -1, Identity{}, g.lookupError(path, w, unix.ENOENT)
		}
		if deviceDir(filepath.Dir(path)) {
			return -1, Identity{}, g.lookupError(path, w, unix.ENOENT)
		}
		fd, err = unix.Open(path, flags, perm)
	}
	if err != nil {
		return -1, Identity{}, g.lookupError(path, w, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, Identity{}, fmt.Errorf("%s: %w", path, err)
	}
	id, err := g.allow(path, w, &st)
	if err == nil && st.Mode&unix.S_IFMT != unix.S_IFREG {
		err = &RefusedError{Path: path, Reason: "not a regular file", Whose: g.whoseIf(), Allowed: g.allowed}
	}
	if err != nil {
		unix.Close(fd)
		return -1, Identity{}, err
	}
	return fd, id, nil
}

// CanCreate says whether a file not there yet at path may be made (laid
// out, or created as the job opens it): nil under the data directory
// (whose subdirectories are made as needed), for an allowed file not made
// yet, and for the CLI anywhere but /dev.
func (g *Guard) CanCreate(path string) error {
	w, err := g.place(path)
	if err != nil {
		return err
	}
	switch {
	case w.kind != byName:
		return nil
	case g.restricted:
		if err := g.gone(path); err != nil {
			return err
		}
		return &RefusedError{Path: path, Reason: "not an allowed place to make a file", Whose: g.whoseIf(), Allowed: g.allowed}
	case filepath.IsAbs(path) && deviceDir(filepath.Dir(path)):
		return g.lookupError(path, w, unix.ENOENT)
	}
	return nil
}

// whoseIf is whose list refusals name: none for the CLI's guard.
func (g *Guard) whoseIf() string {
	if !g.restricted {
		return ""
	}
	return g.whose
}

// devtmpfs reports whether fd is on devtmpfs, by its filesystem's device
// number in this process's mountinfo (statfs calls devtmpfs tmpfs).
func devtmpfs(fd int) bool {
	var fs unix.Statfs_t
	if unix.Fstatfs(fd, &fs) != nil || fs.Type != unix.TMPFS_MAGIC {
		return false // not tmpfs, so not devtmpfs: no need to read mountinfo
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	dev := fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[2] != dev {
			continue
		}
		for i := 6; i+1 < len(f); i++ {
			if f[i] == "-" {
				return f[i+1] == "devtmpfs"
			}
		}
	}
	return false
}

// deviceDir reports whether a file missing in dir is a device that is
// not there, not a file to make: dir is /dev or beneath it (but for
// /dev/shm, a tmpfs for files), or on devtmpfs wherever it is mounted.
func deviceDir(dir string) bool {
	dir = filepath.Clean(dir)
	if dir == "/dev/shm" || strings.HasPrefix(dir, "/dev/shm/") {
		return false
	}
	if dir == "/dev" || strings.HasPrefix(dir, "/dev/") {
		return true
	}
	return onDevtmpfsPath(dir)
}

// onDevtmpfsPath reports whether dir, or the deepest of its parents
// that exists, is on devtmpfs.
func onDevtmpfsPath(dir string) bool {
	for {
		fd, err := unix.Open(dir, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err == nil {
			defer unix.Close(fd)
			return devtmpfs(fd)
		}
		if dir == filepath.Dir(dir) {
			return false
		}
		dir = filepath.Dir(dir)
	}
}
