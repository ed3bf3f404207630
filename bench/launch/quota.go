package launch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/units"

	"golang.org/x/sys/unix"
)

// Quota bounds what runs may put in a data directory: what the directory
// may hold in all (Bytes, Files) and what one run may add to it
// (RunBytes, RunFiles). A zero field is DefaultQuota's. It is checked
// when a run is launched, before anything is written or queued, and
// again when the run starts: it may have waited while the directory
// filled.
type Quota struct {
	Dir      string // the data directory, absolute and resolved; "": no check
	Bytes    int64
	Files    int
	RunBytes int64
	RunFiles int
}

// DefaultQuota is a data directory's quota unless told otherwise: 16 GiB
// and 1000 files, for the directory and for one run. It is enough for
// the write-ups' runs (a few files of a few GiB), and small beside the
// disk that holds the store.
func DefaultQuota() Quota {
	return Quota{Bytes: 16 << 30, Files: 1000, RunBytes: 16 << 30, RunFiles: 1000}
}

// A run must leave part of the data directory's filesystem free
// whatever the quota says, for the store is often on it: 5 % of it, but
// no more than 4 GiB (5 % of a large disk is far more than a store
// needs).
const (
	freeShare = 20 // 1/20: 5 %
	freeMax   = 4 << 30
)

func (q Quota) withDefaults() Quota {
	d := DefaultQuota()
	if q.Bytes <= 0 {
		q.Bytes = d.Bytes
	}
	if q.Files <= 0 {
		q.Files = d.Files
	}
	if q.RunBytes <= 0 {
		q.RunBytes = min(d.RunBytes, q.Bytes)
	}
	if q.RunFiles <= 0 {
		q.RunFiles = min(d.RunFiles, q.Files)
	}
	return q
}

// quotaError is a plan refused by the quota: a *bench.OptionError on
// size or nrfiles, so front doors show it beside the option.
func quotaError(option, format string, args ...any) error {
	return &bench.OptionError{Option: option, Msg: fmt.Sprintf(format, args...)}
}

// Check refuses a plan whose jobs would lay out or grow, in the data
// directory, more files or bytes than the quota leaves: every step's
// jobs (clones, and sweeps of size, filesize or numjobs, included), each
// file at the most its job may make it hold (bench.Job.GrowsTo), beside
// what the directory already holds. Nothing is laid out or created; a
// job of more files than the quota allows is refused before its files
// are even named.
func (q Quota) Check(plan *sweep.Plan) error {
	if q.Dir == "" {
		return nil
	}
	q = q.withDefaults()
	steps, err := fileSteps(plan)
	if err != nil {
		return nil // the plan's own checks say why
	}
	u := quotaUse{q: q, maxFiles: min(q.Files, q.RunFiles), files: map[string]*quotaFile{}, seen: map[string]bool{}}
	for _, st := range steps {
		if st.Repeat > 0 {
			continue // a repeat's jobs are its first round's
		}
		for _, g := range st.Config.Groups {
			for i := range g.Jobs {
				if err := u.addJob(&g.Jobs[i]); err != nil {
					return err
				}
			}
		}
	}
	t := u.totals()
	if err := q.checkRun(t); err != nil || (t.files == 0 && t.bytes == 0) {
		return err // nil when it adds nothing: what is there already passed
	}
	if err := q.checkHeld(t); err != nil {
		return err
	}
	return q.checkFree(t)
}

// quotaFile is one file of the data directory a plan uses: its size now,
// the most a job may make it hold, and that job.
type quotaFile struct {
	cur, need int64
	exists    bool
	job       *bench.Job
}

// quotaUse is what a plan's jobs use of the data directory, file by file,
// in the order the jobs name them.
type quotaUse struct {
	q        Quota
	maxFiles int
	files    map[string]*quotaFile
	order    []string
	seen     map[string]bool // jobs already counted, by what decides their files
}

// addJob counts job j's files in the data directory, refusing a job of
// more files than the quota allows before they are named.
func (u *quotaUse) addJob(j *bench.Job) error {
	if j.Diskless() {
		return nil
	}
	key := fmt.Sprint(j.Name, "\x00", j.JobNum, j.Filename, "\x00", j.Directory, "\x00", j.FilenameFormat, "\x00", j.NrFiles,
		j.Size, j.FileSize, j.Offset, j.OffsetIncrement, j.OffsetPercent, j.SizePercent, j.MinBS(), j.FillDevice)
	if u.seen[key] {
		return nil
	}
	u.seen[key] = true
	q := u.q
	if n := max(j.NrFiles, 1); j.Filename == "" && n > u.maxFiles {
		// Not one of them is named: a job may have 2^20.
		if q.inside(jobDir(j)) || q.inside(filepath.Dir(firstFile(j))) {
			return quotaError("nrfiles", "job %s: nrfiles=%d makes %d files in the data directory %s; %s: lower nrfiles, or raise %s",
				j.Name, j.NrFiles, n, q.Dir, q.filesLimit(), q.filesFlag())
		}
		return nil // elsewhere: the allow-list's to refuse
	}
	paths := j.FilePaths()
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil || !q.inside(abs) {
			continue // not the data directory's: the allow-list's
		}
		f, ok := u.files[abs]
		if !ok {
			f = &quotaFile{}
			if fi, err := os.Stat(abs); err == nil && fi.Mode().IsRegular() {
				f.cur, f.exists = fi.Size(), true
			} else if err == nil {
				continue // not a regular file: the allow-list refuses it
			}
			f.need = f.cur
			u.files[abs] = f
			u.order = append(u.order, abs)
			if len(u.files) > u.maxFiles {
				return quotaError("nrfiles", "the run uses more than %d files in the data directory %s (job %s has %d); %s: lower nrfiles or numjobs, or raise %s",
					u.maxFiles, q.Dir, j.Name, len(paths), q.filesLimit(), q.filesFlag())
			}
		}
		grows := j.GrowsTo(f.cur, len(paths))
		if grows < 0 {
			return quotaError("fill_device", "job %s: fill_device without a size fills the filesystem of the data directory %s; give size= (at most %s, --run-max-size)",
				j.Name, q.Dir, sizeValue(q.RunBytes))
		}
		if grows > f.need {
			f.need, f.job = grows, j
		}
	}
	return nil
}

// quotaTotals is what a plan adds to the data directory: new files, new
// bytes, and the option and job that add the most, for messages.
type quotaTotals struct {
	files      int
	bytes      int64
	sizeOption string // size, or filesize when the biggest file's job sets it
	what       string // the biggest file's job's size
}

func (u *quotaUse) totals() quotaTotals {
	t := quotaTotals{sizeOption: "size"}
	var biggest *quotaFile
	for _, p := range u.order {
		f := u.files[p]
		if !f.exists {
			t.files++
		}
		if f.need > f.cur {
			t.bytes += f.need - f.cur
			if biggest == nil || f.need-f.cur > biggest.need-biggest.cur {
				biggest = f
			}
		}
	}
	if biggest != nil {
		t.what = sizeOf(biggest.job)
		if biggest.job.FileSize[0] > 0 {
			t.sizeOption = "filesize"
		}
	}
	return t
}

// checkRun holds a run to --run-max-files and --run-max-size.
func (q Quota) checkRun(t quotaTotals) error {
	if t.files > q.RunFiles {
		return quotaError("nrfiles", "the run would make %d files in the data directory %s; a run may make at most %d (--run-max-files): lower nrfiles or numjobs, or raise --run-max-files",
			t.files, q.Dir, q.RunFiles)
	}
	if t.bytes > q.RunBytes {
		return quotaError(t.sizeOption, "the run would lay out %s in the data directory %s (%s); a run may add at most %s there (--run-max-size): lower %s, or raise --run-max-size",
			units.Bytes(float64(t.bytes)), q.Dir, t.what, sizeValue(q.RunBytes), t.sizeOption)
	}
	return nil
}

// checkHeld holds the data directory, with what it holds already, to
// --data-max-files and --data-max-size.
func (q Quota) checkHeld(t quotaTotals) error {
	held, err := q.held()
	if err != nil {
		return fmt.Errorf("data directory %s: %w", q.Dir, err)
	}
	if held.files+t.files > q.Files {
		return quotaError("nrfiles", "the data directory %s holds %d files; this run's %d more would pass its quota of %d (--data-max-files): remove files from it, lower nrfiles or numjobs, or raise --data-max-files",
			q.Dir, held.files, t.files, q.Files)
	}
	if held.bytes+t.bytes > q.Bytes {
		return quotaError(t.sizeOption, "the data directory %s holds %s; this run's %s more (%s) would pass its quota of %s (--data-max-size): remove files from it, lower %s, or raise --data-max-size",
			q.Dir, units.Bytes(float64(held.bytes)), units.Bytes(float64(t.bytes)), t.what, sizeValue(q.Bytes), t.sizeOption)
	}
	return nil
}

// checkFree leaves part of the data directory's filesystem free, whatever
// the quota says (freeShare, freeMax).
func (q Quota) checkFree(t quotaTotals) error {
	var sfs unix.Statfs_t
	if err := unix.Statfs(q.Dir, &sfs); err != nil {
		return nil
	}
	free, total := int64(sfs.Bavail)*int64(sfs.Bsize), int64(sfs.Blocks)*int64(sfs.Bsize)
	if keep := min(total/freeShare, freeMax); t.bytes > free-keep {
		return quotaError(t.sizeOption, "the run would lay out %s in the data directory %s, whose filesystem has %s free of %s: a run leaves %s of it free (the store may be there); lower %s, or free space there",
			units.Bytes(float64(t.bytes)), q.Dir, units.Bytes(float64(max(free, 0))), units.Bytes(float64(total)), units.Bytes(float64(keep)), t.sizeOption)
	}
	return nil
}

// noFileAxes are sweep axes that change nothing of a job's files: their
// names, number and sizes. Any other axis may (size, filesize, numjobs,
// offset, bs: a block rounds a size up) and is kept.
var noFileAxes = []sweep.Axis{sweep.AxisIODepth, sweep.AxisEngine, sweep.AxisScheduler, sweep.AxisRateIOPS,
	"rate", "rate_min", "rwmixread", "runtime", "ramp_time", "thinktime", "direct", "hipri", "nice", "prio", "prioclass",
	"cpus_allowed", "iodepth_batch_submit", "iodepth_batch_complete_min", "iodepth_batch_complete_max"}

// fileSteps are the steps of plan that may differ in their jobs' files:
// its first round, over the axes not in noFileAxes. A sweep of 5,000
// rates over 200 clones is one step here, not 5,000.
func fileSteps(plan *sweep.Plan) ([]sweep.Step, error) {
	reduced := *plan
	reduced.Repeat, reduced.AutoRepeat, reduced.Skipped = 1, nil, nil
	reduced.Sweeps = slices.DeleteFunc(slices.Clone(plan.Sweeps), func(sw sweep.Sweep) bool {
		return slices.Contains(noFileAxes, sw.Axis)
	})
	return reduced.Steps()
}

// inside reports whether p (absolute) is in the data directory, named
// so or reached through symlinks (an agent's allow-list takes a file by
// where it resolves to).
func (q Quota) inside(p string) bool {
	p = filepath.Clean(p)
	if p == q.Dir || Within(q.Dir, p) {
		return true
	}
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		r, err = plannedPath(p) // to be made
	}
	return err == nil && (r == q.Dir || Within(q.Dir, r))
}

// filesFlag is the flag whose file count binds first.
func (q Quota) filesFlag() string {
	if q.RunFiles <= q.Files {
		return "--run-max-files"
	}
	return "--data-max-files"
}

func (q Quota) filesLimit() string {
	if q.RunFiles <= q.Files {
		return fmt.Sprintf("a run may make at most %d (--run-max-files)", q.RunFiles)
	}
	return fmt.Sprintf("the data directory may hold at most %d (--data-max-files)", q.Files)
}

// jobDir is where a job without filename makes its files: its directory
// (the clone's, of several), or the working directory.
func jobDir(j *bench.Job) string {
	dir := "."
	if dirs := bench.SplitFileList(j.Directory); len(dirs) > 0 {
		dir = dirs[j.JobNum%len(dirs)]
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	return abs
}

// firstFile is the path of a job's first file (of nrfiles, named by
// filename_format, which may lead elsewhere than its directory).
func firstFile(j *bench.Job) string {
	one := *j
	one.NrFiles = 1
	if p := one.FilePaths(); len(p) > 0 {
		abs, err := filepath.Abs(p[0])
		if err == nil {
			return abs
		}
	}
	return jobDir(j)
}

// sizeOf says what sets a job's file sizes, for messages: size=1t ×
// 3 files, filesize=1g-2g.
func sizeOf(j *bench.Job) string {
	if j == nil {
		return ""
	}
	if lo, hi := j.FileSize[0], j.FileSize[1]; lo > 0 {
		if hi > lo {
			return fmt.Sprintf("job %s: filesize=%s-%s, at most %s a file", j.Name, sizeValue(lo), sizeValue(hi), sizeValue(hi))
		}
		return fmt.Sprintf("job %s: filesize=%s", j.Name, sizeValue(lo))
	}
	s := fmt.Sprintf("job %s: size=%s", j.Name, sizeValue(j.Size))
	if n := max(j.NrFiles, 1); n > 1 && j.Filename == "" {
		s += fmt.Sprintf(" over %d files", n)
	}
	return s
}

// usage is what a data directory holds.
type usage struct {
	bytes int64
	files int
}

// held walks the data directory: its files' bytes (their sizes: a sparse
// file may fill in) and count. It stops past the file quota, which is
// then passed anyway.
func (q Quota) held() (usage, error) {
	var u usage
	errFull := errors.New("past the quota")
	err := filepath.WalkDir(q.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == q.Dir {
				return err
			}
			return nil // gone meanwhile, or unreadable: not ours to count
		}
		if d.IsDir() {
			return nil
		}
		u.files++
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				u.bytes += fi.Size()
			}
		}
		if u.files > q.Files {
			return errFull
		}
		return nil
	})
	if errors.Is(err, errFull) {
		err = nil
	}
	return u, err
}

// sizeValue writes a size as an option value: with t for whole TiB,
// else as units.FormatSize does (1t, 16g, 4k).
func sizeValue(b int64) string {
	if b > 0 && b%(1<<40) == 0 {
		return fmt.Sprintf("%dt", b>>40)
	}
	return units.FormatSize(b)
}

// plannedPath is where p will be once made: its deepest existing
// directory resolved, the rest as named. The quota counts by it; the
// guard, not this, decides where a file may be made.
func plannedPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	dir, rest := filepath.Dir(abs), filepath.Base(abs)
	for {
		r, err := filepath.EvalSymlinks(dir)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) || dir == filepath.Dir(dir) {
			return "", err
		}
		dir, rest = filepath.Dir(dir), filepath.Join(filepath.Base(dir), rest)
	}
}
