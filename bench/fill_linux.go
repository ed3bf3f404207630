package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"iolab/bench/system"

	"golang.org/x/sys/unix"
)

// fill_device and create_serialize, after fio 3.33 (init.c, filesetup.c,
// backend.c).

// fills says whether j fills its files to the end of their filesystem:
// fill_device without a size (fio's init.c makes the size "something
// really large" only then).
func (j *Job) fills() bool {
	return j.FillDevice && j.Size == 0 && j.SizePercent == 0 && j.FileSize[0] == 0 && !j.Diskless()
}

// fillLayout is j's layout, with fill_device's size when it fills: a
// device is its size, as always; a regular file may grow by its
// filesystem's free space (fio writes until ENOSPC, and its ETA counts
// get_fs_free_counts). A file that exists is not laid out again, and a
// missing one is made empty (fio's fallocate_file does nothing under
// fill_device): the job's writes make it.
func (j *Job) fillLayout(states []fileState, seed uint64) (jobLayout, error) {
	if !j.fills() {
		return j.layout(states, seed)
	}
	var total int64
	for _, f := range states {
		if !f.Regular {
			total += f.Size
			continue
		}
		free, err := fsFree(f.Path)
		if err != nil {
			return jobLayout{}, fmt.Errorf("job %s: fill_device: %w", j.Name, err)
		}
		total += f.Size + free
	}
	fj := *j
	fj.Size = total - total%max(j.MinBS(), 1)
	lay, err := fj.layout(states, seed)
	if err != nil {
		return lay, err
	}
	for i := range lay.Files {
		if _, err := os.Stat(lay.Files[i].Path); err == nil {
			lay.Files[i].Extend = false
		}
	}
	return lay, nil
}

// fsFree is the free space of the filesystem path is (or would be) on.
func fsFree(path string) (int64, error) {
	dir := path
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		dir = filepath.Dir(path)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("statfs %s: %w", dir, err)
	}
	// Bfree, not Bavail: root writes into the reserved blocks too, and
	// ENOSPC, not this size, is what ends the job.
	return int64(st.Bfree) * int64(st.Bsize), nil
}

// filledUp says whether slot s's failed I/O is fill_device's end: a
// write that found the filesystem full (ENOSPC) or the quota used
// (EDQUOT). fio's td_io_queue/io_completed clear the error and end the
// job (fio_mark_td_terminate): what was written stands, the job has no
// error, and the failed write counts among its I/Os (fio's total_io_u
// counts what was issued; ioFailed, which the loop asks first, counts it)
// but not its bytes.
func (l *loop) filledUp(s int32, d uint8, res int32) bool {
	if !l.j.FillDevice || d != Write {
		return false
	}
	if !fullErr(unix.Errno(-res)) {
		return false
	}
	l.filled = true
	if l.vfy != nil {
		l.vfy.unlogWrite(l, s)
	}
	return true
}

// fullErr says whether err is ENOSPC or EDQUOT: fill_device's end, on a
// write or on laying out its file.
func fullErr(err error) bool {
	return errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT)
}

// prepareParallel works out and lays out, at the start of a phase, the
// files of its create_serialize=0 jobs, all at once (fio's thread_main
// calls setup_files in each such job's thread): a file an earlier phase
// wrote is there to be read, sized as it is then.
func (rn *Runner) prepareParallel(groups []Group, files [][]JobFiles) error {
	var mu sync.Mutex
	par := &Runner{Sys: rn.Sys, Log: rn.Log, Guard: rn.Guard, LogFiles: rn.LogFiles, StateDir: rn.StateDir}
	if rn.Notice != nil {
		par.Notice = func(msg string) {
			mu.Lock()
			defer mu.Unlock()
			rn.Notice(msg)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 0)
	for g := range groups {
		for i := range groups[g].Jobs {
			if !files[g][i].parallel {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				jf, err := par.prepareJob(&groups[g].Jobs[i], map[string]system.Target{})
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
					return
				}
				files[g][i] = jf
			}()
		}
	}
	wg.Wait()
	return errors.Join(errs...)
}

// unlogWrite forgets the write of slot s, which failed at fill_device's
// end, so the verify phase does not read back a block that was never
// written (fio's unlog_io_piece): the last logged piece at its offset.
func (v *verifier) unlogWrite(l *loop, s int32) {
	off, file := l.offOf[s], v.fileOf[s]
	for i := len(v.log) - 1; i >= 0; i-- {
		if v.log[i].off == off && v.log[i].file == file {
			v.log = append(v.log[:i], v.log[i+1:]...)
			return
		}
	}
}
