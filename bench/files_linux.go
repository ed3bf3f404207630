package bench

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"iolab/bench/guard"
	"iolab/bench/randgen"
	"iolab/bench/system"

	"golang.org/x/sys/unix"
)

// JobFiles is what Prepare works out for one job: its files' regions and,
// for each, the target checked (zero for a diskless job, or a file that
// create_on_open makes when the job opens it), and the guard that checked
// them, which opens them.
type JobFiles struct {
	Targets []system.Target
	layout  jobLayout
	guard   *guard.Guard
	// parallel: create_serialize=0, worked out when the job's phase
	// starts (prepareParallel).
	parallel bool
}

// opener is the guard that checked the job's files, or the CLI's for
// files worked out without one.
func (jf JobFiles) opener() *guard.Guard {
	if jf.guard == nil {
		return guard.Unrestricted()
	}
	return jf.guard
}

// prepareJob lays out j's files where fio would, then checks each through
// the runner's guard and resolves it; seen caches targets already checked
// for the same use. Every file is looked up through the guard before any
// is laid out, so a refused name is refused before anything is written.
func (rn *Runner) prepareJob(j *Job, seen map[string]system.Target) (JobFiles, error) {
	g := rn.guard()
	jf := JobFiles{guard: g}
	paths := j.FilePaths()
	for _, dir := range SplitFileList(j.Directory) {
		// fio's str_directory_cb: each directory must be there.
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return jf, fmt.Errorf("job %s: directory %s is not a directory", j.Name, dir)
		}
	}
	states, err := fileStates(g, paths, j.CreateOnOpen)
	if err != nil {
		return jf, fmt.Errorf("job %s: %w", j.Name, err)
	}
	if jf.layout, err = j.fillLayout(states, j.RandSeed+uint64(j.JobNum)); err != nil {
		return jf, err
	}
	if err := rn.layOutFiles(j, jf.layout); err != nil {
		return jf, fmt.Errorf("job %s: %w", j.Name, err)
	}
	if j.Diskless() {
		return jf, nil
	}
	jf.Targets = make([]system.Target, len(paths))
	for i, p := range paths {
		if j.CreateOnOpen {
			if _, _, err := g.Check(p); errors.Is(err, fs.ErrNotExist) {
				if j.NoFileCreate {
					return jf, fmt.Errorf("job %s: %w", j.Name, noFileCreate(p, 0))
				}
				// Made when the job opens it, through the guard (a
				// target with no identity yet).
				if err := g.CanCreate(p); err != nil {
					return jf, fmt.Errorf("job %s: %w", j.Name, err)
				}
				jf.Targets[i] = system.Target{Path: p, Resolved: p}
				continue
			}
		}
		key := p + "\x00" + fmt.Sprint(j.Modifies(), j.Hipri, j.Direct)
		t, ok := seen[key]
		if !ok {
			if t, err = rn.checkTarget(j, g, p); err != nil {
				return jf, err
			}
			seen[key] = t
		}
		if err := directAligned(j, t, jf.layout.Files[i]); err != nil {
			return jf, err
		}
		jf.Targets[i] = t
	}
	// A file laid out since the size was read: its regions stand, but a
	// device's size is the one resolved.
	for i, t := range jf.Targets {
		if t.IsBlock && t.Size != states[i].Size {
			states[i].Size, states[i].Regular = t.Size, false
			if jf.layout, err = j.fillLayout(states, j.RandSeed+uint64(j.JobNum)); err != nil {
				return jf, err
			}
		}
	}
	return jf, nil
}

// fileStates reads each path's size and kind through the guard: missing
// files are regular files of size 0, to be laid out where the guard may
// make them (or, with create_on_open, made as the job opens them).
func fileStates(g *guard.Guard, paths []string, createOnOpen bool) ([]fileState, error) {
	out := make([]fileState, len(paths))
	for i, p := range paths {
		out[i] = fileState{Path: p, Regular: true}
		id, st, err := g.Check(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if !createOnOpen {
				if err := g.CanCreate(p); err != nil {
					return nil, err
				}
			}
			continue
		case err != nil:
			return nil, err
		case id.Block:
			out[i].Regular = false
			out[i].Size = blockDeviceSize(g, p, id)
		default:
			out[i].Size = st.Size
		}
	}
	return out, nil
}

func blockDeviceSize(g *guard.Guard, path string, id guard.Identity) int64 {
	fd, err := g.Open(path, id, unix.O_RDONLY)
	if err != nil {
		return 0
	}
	defer unix.Close(fd)
	size, err := unix.IoctlGetUint64(fd, unix.BLKGETSIZE64)
	if err != nil {
		return 0
	}
	return int64(size)
}

// identityOf is the identity of a target resolved and checked: the guard
// opens the job's files only if they still are.
func identityOf(t system.Target) guard.Identity {
	var maj, min uint32
	fmt.Sscanf(t.Dev, "%d:%d", &maj, &min)
	if t.IsBlock {
		return guard.Identity{Block: true, Dev: unix.Mkdev(maj, min)}
	}
	return guard.Identity{Dev: unix.Mkdev(maj, min), Ino: t.Inode}
}

// checkTarget checks path through the guard, resolves it, and applies the
// safety rules.
func (rn *Runner) checkTarget(j *Job, g *guard.Guard, path string) (system.Target, error) {
	id, _, err := g.Check(path)
	if err != nil {
		return system.Target{}, fmt.Errorf("job %s: %w", j.Name, err)
	}
	t, err := rn.Sys.ResolveTarget(path)
	if err != nil {
		return system.Target{}, fmt.Errorf("job %s: %w", j.Name, err)
	}
	if got := identityOf(t); got != id {
		return system.Target{}, fmt.Errorf("job %s: %s: %w while it was being checked (%s, then %s)", j.Name, path, guard.ErrChanged, id, got)
	}
	if j.Modifies() && t.IsBlock && !j.AllowMountedWrite {
		if err := rn.Sys.CheckWritable(t); err != nil {
			return system.Target{}, err
		}
	}
	if j.Hipri {
		if err := rn.Sys.CheckPoll(t); err != nil && j.NeedsPollQueues() {
			return system.Target{}, fmt.Errorf("job %s: %w", j.Name, err)
		} else if err != nil {
			rn.log().Warn("hipri: the kernel will not poll this job's I/O", "job", j.Name, "engine", j.IOEngine, "why", err)
		}
	}
	return t, nil
}

// directAligned checks that every block size and offset of the job is a
// multiple of what O_DIRECT needs on t.
func directAligned(j *Job, t system.Target, r fileRegion) error {
	if !j.Direct {
		return nil
	}
	align := int64(t.LogicalBlockSize)
	if !t.IsBlock && t.DIOOffsetAlign > 0 {
		align = int64(t.DIOOffsetAlign)
	}
	if align <= 0 {
		return nil
	}
	sizes := []int64{r.Offset, j.RWSeqAdd, j.ZoneRange + j.ZoneSkip}
	for d := range 2 {
		lo, hi := j.BlockSizes(d)
		sizes = append(sizes, lo, hi, j.BlockAlign[d])
		for _, e := range j.BSSplit[d] {
			sizes = append(sizes, e.BS)
		}
	}
	for _, n := range sizes {
		if n%align != 0 {
			return fmt.Errorf("job %s: direct I/O on %s needs bs and offset in multiples of %d bytes (bs=%d, offset=%d)", j.Name, t.Path, align, j.BS, r.Offset)
		}
	}
	return nil
}

// layOutFiles lays out the job's regular files that are missing or
// shorter than its regions need, as fio's extend_file does, and says so
// as fio does ("Laying out IO file").
func (rn *Runner) layOutFiles(j *Job, lay jobLayout) error {
	g := rn.guard()
	var todo []fileRegion
	var total int64
	for _, r := range lay.Files {
		if !r.Extend || j.Diskless() {
			continue
		}
		if id, st, err := g.Check(r.Path); err == nil && (st.Size >= r.RealSize || rn.laidOutBefore(r.Path, id.Ino, r.RealSize)) {
			continue // laid out since (another job of the run), or by this runner
		}
		todo = append(todo, r)
		total += r.RealSize
	}
	if len(todo) == 0 {
		return nil
	}
	if j.NoFileCreate {
		return noFileCreate(todo[0].Path, todo[0].RealSize)
	}
	msg := fmt.Sprintf("%s: Laying out IO file (1 file / %dMiB)", j.Name, total>>20)
	if len(todo) > 1 {
		msg = fmt.Sprintf("%s: Laying out IO files (%d files / total %dMiB)", j.Name, len(todo), total>>20)
	}
	if j.fills() {
		// fill_device's file is made empty: its writes make it.
	} else if rn.Notice != nil {
		rn.Notice(msg)
	} else {
		rn.log().Info("laying out IO file", "job", j.Name, "files", len(todo), "size", total)
	}
	for _, r := range todo {
		if err := rn.layOut(j, g, r.Path, r.RealSize); err != nil {
			return err
		}
		if id, st, err := g.Check(r.Path); err == nil && st.Size < r.RealSize {
			rn.laidOut.Store(r.Path, laidOutFile{ino: id.Ino, size: r.RealSize})
		}
	}
	return nil
}

// laidOutFile is a file the runner laid out short (Runner.laidOut): the
// inode it made and the size it laid it out for.
type laidOutFile struct {
	ino  uint64
	size int64
}

// laidOutBefore reports whether the runner laid out the file at path,
// still the one it made (inode ino), for at least size bytes.
func (rn *Runner) laidOutBefore(path string, ino uint64, size int64) bool {
	v, ok := rn.laidOut.Load(path)
	if !ok {
		return false
	}
	lf := v.(laidOutFile)
	return lf.ino == ino && lf.size >= size
}

// noFileCreate is the error for a file allow_file_create=0 forbids
// making: missing, or shorter than size, which fio's extend_file would
// unlink and create anew (and, forbidden to, fail the job after the
// unlink; iolab leaves the file as it is).
func noFileCreate(path string, size int64) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s does not exist, and allow_file_create=0 forbids creating it (fio: file creation disallowed by allow_file_create=0)", path)
	}
	return fmt.Errorf("%s is %d bytes, short of the %d the job covers, and allow_file_create=0 forbids laying it out anew (fio would unlink it first, then fail)", path, fi.Size(), size)
}

// layOut makes path a file of size bytes the way fio's extend_file does:
// a job that reads gets the file written in full (random data, in blocks
// of the largest write size, then fsync'd) so reads hit real blocks; a
// job that only writes gets it allocated (fallocate) but not written.
// The guard makes it beside its place and moves it there whole, so
// nothing sees it half laid out and a run that dies leaves nothing short,
// and only where it may make a file (guard.LayOut).
func (rn *Runner) layOut(j *Job, g *guard.Guard, path string, size int64) error {
	return g.LayOut(path, size, func(f *os.File) error {
		if j.fills() {
			// fio's fallocate_file and ftruncate skip fill_device's file.
		} else if err := fallocate(f, j.Fallocate, size); err != nil {
			return err
		}
		if !j.Reads() {
			return nil
		}
		if j.fills() {
			// written until the filesystem is full, below
		} else if err := f.Truncate(size); err != nil {
			return err
		}
		bs := min(j.MaxBS(), size)
		if _, hi := j.BlockSizes(Write); j.Writes() {
			bs = min(hi, size)
		}
		buf := make([]byte, max(bs, 1))
		rng := randgen.NewSplitMix(uint64(size))
		for i := 0; i+8 <= len(buf); i += 8 {
			v := rng.Next()
			for k := range 8 {
				buf[i+k] = byte(v >> (8 * k))
			}
		}
		for done := int64(0); done < size; {
			n := min(int64(len(buf)), size-done)
			if _, err := f.Write(buf[:n]); err != nil {
				if j.fills() && fullErr(err) {
					break // fio's extend_file under fill_device
				}
				if errors.Is(err, unix.ENOSPC) {
					err = fmt.Errorf("%w: the filesystem is full (fio stops the same way: ENOSPC on laying out file)", err)
				}
				return err
			}
			done += n
		}
		return f.Sync()
	})
}

// fallocate allocates a new file's blocks as fio's fallocate option says
// (fallocate_file in fio's filesetup.c): native tries fallocate(2) and
// ignores a failure, posix allocates for sure (as posix_fallocate(3)),
// keep allocates without changing the size, truncate only sets the size,
// none does nothing.
func fallocate(f *os.File, mode string, size int64) error {
	fd := int(f.Fd())
	switch mode {
	case "", "native":
		unix.Fallocate(fd, 0, 0, size)
	case "posix":
		if err := unix.Fallocate(fd, 0, 0, size); err != nil {
			if !errors.Is(err, unix.EOPNOTSUPP) {
				return fmt.Errorf("posix_fallocate: %w", err)
			}
			return f.Truncate(size)
		}
	case "keep":
		if err := unix.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, 0, size); err != nil {
			return fmt.Errorf("fallocate: %w", err)
		}
	case "truncate":
		return f.Truncate(size)
	}
	return nil
}

// refreshJob lays out again, before a later phase, the files an earlier
// one removed (unlink), and checks them anew.
func (rn *Runner) refreshJob(j *Job, jf JobFiles) (JobFiles, error) {
	if j.Diskless() || jf.parallel {
		return jf, nil
	}
	for _, r := range jf.layout.Files {
		fi, err := os.Stat(r.Path)
		if j.CreateOnOpen || (err == nil && !fi.Mode().IsRegular()) {
			continue
		}
		// Only a missing file: one short after laying out (fallocate=keep
		// or none, for a job that only writes) stays as it is.
		if err != nil {
			return rn.prepareJob(j, map[string]system.Target{})
		}
	}
	return jf, nil
}

// invalidate drops what the page cache holds of a file's region (fio's
// file_invalidate_cache): fadvise DONTNEED for a file, BLKFLSBUF for a
// device.
func invalidate(fd int, t system.Target, r fileRegion) {
	if t.IsBlock {
		unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.BLKFLSBUF, 0)
		return
	}
	unix.Fadvise(fd, r.Offset, r.IOSize, unix.FADV_DONTNEED)
}

// unlinkFiles removes a job's regular files when it ends (fio's unlink),
// through the guard: only the file the job used, never through a symlink.
func unlinkFiles(g *guard.Guard, j *Job, files []jobFile) {
	if !j.Unlink {
		return
	}
	for _, f := range files {
		if f.path != "" && !f.target.IsBlock {
			g.Unlink(f.path, f.id)
		}
	}
}
