package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"iolab/bench/system"
)

// Prepare checks every job before anything runs, so a bad target fails the
// run up front: it lays out missing files, resolves targets, refuses unsafe
// writes and hipri without poll queues, and checks O_DIRECT alignment. It
// returns each job's target, indexed like cfg.Groups[g].Jobs[i].
func (rn *Runner) Prepare(cfg *Config) ([][]system.Target, error) {
	targets := make([][]system.Target, len(cfg.Groups))
	seen := map[string]system.Target{}
	for g, grp := range cfg.Groups {
		targets[g] = make([]system.Target, len(grp.Jobs))
		for i := range grp.Jobs {
			j := &grp.Jobs[i]
			if j.Diskless() {
				continue
			}
			key := j.Filename + "\x00" + fmt.Sprint(j.Writes(), j.Hipri, j.Direct)
			t, ok := seen[key]
			if !ok {
				var err error
				if t, err = rn.prepareTarget(j); err != nil {
					return nil, err
				}
				seen[key] = t
			}
			// What the job covers is known now: a size beyond the device
			// or an offset past its end fails here, before anything runs.
			if _, err := regionSize(j, t); err != nil {
				return nil, err
			}
			targets[g][i] = t
		}
	}
	return targets, nil
}

func (rn *Runner) prepareTarget(j *Job) (system.Target, error) {
	if _, err := os.Stat(j.Filename); errors.Is(err, os.ErrNotExist) {
		if j.Size <= 0 {
			return system.Target{}, fmt.Errorf("job %s: %s does not exist; give --size so iolab can create it, or point filename at an existing file or device", j.Name, j.Filename)
		}
		if err := rn.layOut(j.Filename, j.Offset+j.Size); err != nil {
			return system.Target{}, fmt.Errorf("job %s: %w", j.Name, err)
		}
	}
	t, err := rn.Sys.ResolveTarget(j.Filename)
	if err != nil {
		return system.Target{}, fmt.Errorf("job %s: %w", j.Name, err)
	}
	if rn.Policy != nil {
		if err := rn.Policy(t); err != nil {
			return system.Target{}, fmt.Errorf("job %s: %w", j.Name, err)
		}
	}
	if j.Writes() && t.IsBlock && !j.AllowMountedWrite {
		if err := rn.Sys.CheckWritable(t); err != nil {
			return system.Target{}, err
		}
	}
	if j.Hipri {
		if err := rn.Sys.CheckPoll(t); err != nil {
			return system.Target{}, fmt.Errorf("job %s: %w", j.Name, err)
		}
	}
	if j.Direct {
		align := int64(t.LogicalBlockSize)
		if !t.IsBlock && t.DIOOffsetAlign > 0 {
			align = int64(t.DIOOffsetAlign)
		}
		if align > 0 && (j.BS%align != 0 || j.Offset%align != 0) {
			return system.Target{}, fmt.Errorf("job %s: direct I/O on %s needs bs and offset in multiples of %d bytes (bs=%d, offset=%d)", j.Name, t.Path, align, j.BS, j.Offset)
		}
	}
	return t, nil
}

// layOut creates a missing regular file of size bytes, written in full so
// reads hit real blocks (fio does the same: "Laying out IO file").
func (rn *Runner) layOut(path string, size int64) error {
	rn.log().Info("laying out IO file", "path", path, "size", size)
	// Written beside it and linked into place whole, so nothing ever sees
	// a file only partly laid out (another run checking its size, say),
	// and a run that dies halfway leaves no short file behind.
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".layout-*")
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	buf := make([]byte, 1<<20)
	rng := newRand(uint64(size))
	for i := 0; i+8 <= len(buf); i += 8 {
		v := rng.next()
		for k := range 8 {
			buf[i+k] = byte(v >> (8 * k))
		}
	}
	for done := int64(0); done < size; {
		n := min(int64(len(buf)), size-done)
		if _, err := f.Write(buf[:n]); err != nil {
			f.Close()
			return fmt.Errorf("lay out %s: %w", path, err)
		}
		done += n
	}
	if err := f.Sync(); err != nil {
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
	// link(2) does not replace: if another run laid the file out
	// meanwhile, its file stands.
	if err := os.Link(tmp, path); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("lay out %s: %w", path, err)
	}
	return nil
}

// Run runs cfg's groups in order: a group that does not wait (new_group)
// runs at the same time as the one before it. It returns what was measured
// even when a job failed; the error says which. ctx cancels the run: jobs
// stop, their in-flight I/O lands, and what they measured is kept.
func (rn *Runner) Run(ctx context.Context, cfg *Config) (*Result, error) {
	targets, err := rn.Prepare(cfg)
	if err != nil {
		return nil, err
	}
	interval := rn.Interval
	if interval <= 0 {
		interval = time.Second
	}
	host, _ := rn.Sys.Host()
	res := &Result{Start: time.Now(), Host: host}

	// The job loops allocate nothing per I/O, but a GC cycle would still
	// stop them; there is nothing to collect until the run ends.
	// A memory limit still lets the collector run if the rest of the
	// program allocates a lot during a long run.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(int64(ms.HeapAlloc) + 1<<30))

	var errs []error
	jobs := 0 // in the phases before: fio numbers its jobs across the run
	for first := 0; first < len(cfg.Groups); {
		last := first + 1
		for last < len(cfg.Groups) && !cfg.Groups[last].Wait {
			last++
		}
		phase, err := rn.runPhase(ctx, cfg.Groups[first:last], targets[first:last], interval, jobs)
		for _, g := range cfg.Groups[first:last] {
			jobs += len(g.Jobs)
		}
		res.Groups = append(res.Groups, phase...)
		if err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil || isSetupError(err) {
				break
			}
		}
		first = last
	}
	return res, errors.Join(errs...)
}

type setupError struct{ error }

func (e setupError) Unwrap() error { return e.error }

func isSetupError(err error) bool {
	var se setupError
	return errors.As(err, &se)
}

// runPhase runs the jobs of groups at the same time. Every job sets up on
// its own locked thread first; they start together only when all are ready.
// The run's jobs before these number first.
func (rn *Runner) runPhase(ctx context.Context, groups []Group, targets [][]system.Target, interval time.Duration, first int) ([]GroupResult, error) {
	type slotRef struct{ g, i int }
	var refs []slotRef
	for g := range groups {
		for i := range groups[g].Jobs {
			refs = append(refs, slotRef{g, i})
		}
	}
	results := make([][]JobResult, len(groups))
	for g := range groups {
		results[g] = make([]JobResult, len(groups[g].Jobs))
	}
	// Job threads keep their P through blocking raw system calls (see
	// engine.go); give the rest of the program the Ps it had.
	procs := runtime.GOMAXPROCS(0)
	runtime.GOMAXPROCS(procs + len(refs))
	defer runtime.GOMAXPROCS(procs)

	var stop atomic.Bool
	start := make(chan struct{})
	ready := make(chan error, len(refs))
	var wg sync.WaitGroup
	for k, ref := range refs {
		j := &groups[ref.g].Jobs[ref.i]
		index := first + k // the job's place in the run, fio's thread_number - 1
		wg.Add(1)
		go func() {
			defer wg.Done()
			lockThread()
			run, err := openJob(rn.Sys, j, index, targets[ref.g][ref.i])
			ready <- err
			if err != nil {
				return
			}
			defer run.close()
			<-start
			if stop.Load() {
				return
			}
			r := run.run(&stop, interval, &rn.completed)
			r.GroupID = groups[ref.g].ID
			results[ref.g][ref.i] = r
		}()
	}
	var setupErrs []error
	for range refs {
		if err := <-ready; err != nil {
			setupErrs = append(setupErrs, err)
		}
	}
	if len(setupErrs) > 0 {
		stop.Store(true)
		close(start)
		wg.Wait()
		return nil, setupError{errors.Join(setupErrs...)}
	}

	disks := phaseDisks(targets)
	before, _ := rn.Sys.DiskStats()
	t0 := time.Now()
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			stop.Store(true)
		case <-done:
		}
	}()
	close(start)
	wg.Wait()
	close(done)
	elapsed := time.Since(t0)
	after, _ := rn.Sys.DiskStats()

	util := diskUtilization(disks, before, after, elapsed)
	countJobBytes(util, groups, targets, results)
	var out []GroupResult
	var errs []error
	for g, grp := range groups {
		gr := GroupResult{ID: grp.ID, Reporting: grp.Reporting, Jobs: results[g]}
		for _, r := range results[g] {
			if r.Error != "" {
				errs = append(errs, errors.New(r.Error))
			}
		}
		if grp.Reporting && len(gr.Jobs) > 1 {
			gr.Jobs = []JobResult{MergeJobs(gr.Jobs)}
		}
		gr.Disks = slices.Clone(util)
		out = append(out, gr)
	}
	if ctx.Err() != nil {
		errs = append(errs, fmt.Errorf("run cancelled: %w", context.Cause(ctx)))
	}
	return out, errors.Join(errs...)
}
