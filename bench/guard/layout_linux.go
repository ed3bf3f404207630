package guard

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// parent opens the directory that holds path's file (O_PATH) and gives
// the file's name in it: beneath the data directory component by
// component, without following symlinks, making missing directories when
// mkdir is set (fio's create_work_dirs); an allowed file's pinned
// directory; for the CLI, the directory by name. close releases it.
func (g *Guard) parent(path string, mkdir bool) (dirfd int, base string, closeDir func(), err error) {
	w, err := g.place(path)
	if err != nil {
		return -1, "", nil, err
	}
	nop := func() {}
	switch w.kind {
	case inPending:
		return int(w.dir.Fd()), w.rel, nop, nil
	case inDataDir:
		parts := strings.Split(w.rel, "/")
		cur := int(w.dir.Fd())
		owned := -1
		release := func() {
			if owned >= 0 {
				unix.Close(owned)
			}
		}
		for _, p := range parts[:len(parts)-1] {
			next, err := unix.Openat2(cur, p, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: resolveBeneath})
			if errors.Is(err, unix.ENOENT) && mkdir {
				if err = unix.Mkdirat(cur, p, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
					next, err = unix.Openat2(cur, p, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: resolveBeneath})
				}
			}
			if err != nil {
				release()
				if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV) {
					return -1, "", nil, g.lookupError(path, w, err)
				}
				return -1, "", nil, fmt.Errorf("create %s: %w", filepath.Dir(path), err)
			}
			release()
			owned, cur = next, next
		}
		return cur, parts[len(parts)-1], release, nil
	}
	if g.restricted {
		return -1, "", nil, g.CanCreate(path)
	}
	dir := filepath.Dir(path)
	if err := g.CanCreate(path); err != nil {
		return -1, "", nil, err
	}
	if mkdir {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return -1, "", nil, fmt.Errorf("create %s: %w", dir, err)
		}
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", nil, fmt.Errorf("%s: %w", dir, err)
	}
	return fd, filepath.Base(path), func() { unix.Close(fd) }, nil
}

// LayOut makes path a regular file of at least size bytes, as fio's
// extend_file does, where this guard may make one: fill writes a new file
// made beside it, which is then linked into place (or renamed over a
// shorter file there that is a regular file with one link: fio unlinks
// such a file and lays it out anew). If another run laid the file out
// meanwhile, its file stands. An allowed file pinned at the start is never
// replaced (that would make it another file): it must be long enough.
func (g *Guard) LayOut(path string, size int64, fill func(f *os.File) error) error {
	if g.restricted {
		if w, err := g.place(path); err == nil && w.kind == byName {
			if _, _, err := g.Check(path); err == nil {
				return &RefusedError{Path: path, Reason: fmt.Sprintf("an allowed file shorter than the %d bytes the job covers; it is not replaced (that would make it another file): make it longer first (truncate -s %d %s) or lower size=", size, size, path), Whose: g.whoseIf(), Allowed: g.allowed}
			}
		}
	}
	dirfd, base, release, err := g.parent(path, true)
	if err != nil {
		return err
	}
	defer release()
	fd, tmp, err := createTemp(dirfd, base, "layout", unix.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	defer unix.Unlinkat(dirfd, tmp, 0)
	f := os.NewFile(uintptr(fd), filepath.Join(filepath.Dir(path), tmp))
	if err := fill(f); err != nil {
		f.Close()
		return fmt.Errorf("lay out %s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return fmt.Errorf("lay out %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("lay out %s: %w", path, err)
	}
	// linkat(2) does not replace.
	err = unix.Linkat(dirfd, tmp, dirfd, base, 0)
	if err == nil {
		return nil
	}
	if !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("lay out %s: %w", path, err)
	}
	var st unix.Stat_t
	if unix.Fstatat(dirfd, base, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink == 1 && st.Size < size {
		if err := unix.Renameat(dirfd, tmp, dirfd, base); err != nil {
			return fmt.Errorf("lay out %s: %w", path, err)
		}
	}
	return nil
}

// Unlink removes the file a job used when it ends (fio's unlink=1), if
// the name still holds want: beneath the data directory or an allowed
// file's directory, or the CLI's by name. An allowed file pinned at the
// start is left (it is the list's, not the run's).
func (g *Guard) Unlink(path string, want Identity) error {
	if want.Block {
		return nil
	}
	if w, err := g.place(path); err != nil || (g.restricted && w.kind == byName) {
		return err
	}
	dirfd, base, release, err := g.parent(path, false)
	if err != nil {
		return err
	}
	defer release()
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("unlink %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || (Identity{Dev: st.Dev, Ino: st.Ino}) != want {
		return fmt.Errorf("unlink %s: %w: not the file the job used; left as it is", path, ErrChanged)
	}
	if err := unix.Unlinkat(dirfd, base, 0); err != nil {
		return fmt.Errorf("unlink %s: %w", path, err)
	}
	return nil
}

// WriteFile writes data to path whole (verify state, dumps): a new file
// made beside it and renamed over it, beneath the data directory for a
// restricted guard (anywhere else is refused), by name for the CLI.
func (g *Guard) WriteFile(path string, data []byte) error {
	if g.restricted {
		if w, err := g.place(path); err != nil || w.kind != inDataDir {
			if err == nil {
				err = &RefusedError{Path: path, Reason: "not under the data directory, where state files go", Whose: g.whoseIf(), Allowed: g.allowed}
			}
			return err
		}
	}
	dirfd, base, release, err := g.parent(path, true)
	if err != nil {
		return err
	}
	defer release()
	fd, tmp, err := createTemp(dirfd, base, "tmp", unix.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dirfd, tmp, dirfd, base)
	}
	if err != nil {
		unix.Unlinkat(dirfd, tmp, 0)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadFile reads a regular file the guard allows (a verify state beneath
// the data directory), opened as Check saw it, at most limit bytes.
func (g *Guard) ReadFile(path string, limit int64) ([]byte, error) {
	id, st, err := g.Check(path)
	if err != nil {
		return nil, err
	}
	if id.Block {
		return nil, &RefusedError{Path: path, Reason: "a block device, not a file to read", Whose: g.whoseIf(), Allowed: g.allowed}
	}
	if st.Size > limit {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d expected", path, st.Size, limit)
	}
	fd, err := g.Open(path, id, unix.O_RDONLY)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}

// createTemp makes a new file beside base in dirfd, named
// ".BASE.KIND-RANDOM", without following a link: the file a layout or a
// state file is written to before it is moved into place.
func createTemp(dirfd int, base, kind string, access, mode int) (fd int, name string, err error) {
	var rnd [6]byte
	rand.Read(rnd[:])
	name = "." + base + "." + kind + "-" + hex.EncodeToString(rnd[:])
	fd, err = unix.Openat(dirfd, name, unix.O_CREAT|unix.O_EXCL|access|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(mode))
	return fd, name, err
}
