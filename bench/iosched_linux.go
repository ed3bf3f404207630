package bench

import (
	"errors"
	"fmt"

	"iolab/bench/system"
)

// A job's ioscheduler (fio's switch_ioscheduler, backend.c) switches the
// disk under its target to that I/O scheduler before its group runs, as a
// scheduler sweep does (system.FS.SwitchScheduler), and puts the disk's
// own back once the group is done. fio switches without restoring; a plan
// run from the store also records the disk's scheduler before the run
// (sweep), so a run killed halfway is put right at the next start.

// ioSchedulerDisk is the disk whose scheduler j's ioscheduler switches,
// or "" when there is nothing to switch and j asks for none, which such a
// target has anyway (a bio-based device like zram, a file on tmpfs).
func (rn *Runner) ioSchedulerDisk(j *Job, t system.Target) (string, error) {
	disk, err := rn.Sys.SchedulerDisk(t, true)
	if err == nil {
		_, _, err = rn.Sys.Schedulers(disk)
	}
	switch {
	case err != nil && j.IOScheduler == "none":
		return "", nil
	case err != nil:
		return "", fmt.Errorf("job %s: ioscheduler=%s: %w", j.Name, j.IOScheduler, err)
	}
	return disk, nil
}

// checkIOSchedulers checks before anything runs that every ioscheduler
// can be switched to, and that the jobs running at the same time do not
// ask one disk for two schedulers.
func (rn *Runner) checkIOSchedulers(cfg *Config, files [][]JobFiles) error {
	var want map[string]string
	var asker map[string]string
	for g, grp := range cfg.Groups {
		if grp.Wait {
			want, asker = nil, nil // a new phase
		}
		for i := range grp.Jobs {
			j := &grp.Jobs[i]
			if j.IOScheduler == "" || j.Diskless() {
				continue
			}
			for _, t := range files[g][i].Targets {
				disk, err := rn.ioSchedulerDisk(j, t)
				if err != nil {
					return err
				}
				if disk == "" {
					continue
				}
				if err := rn.Sys.CheckScheduler(disk, j.IOScheduler); err != nil {
					return fmt.Errorf("job %s: ioscheduler=%s: %w", j.Name, j.IOScheduler, err)
				}
				if other, ok := want[disk]; ok && other != j.IOScheduler {
					return fmt.Errorf("jobs %s and %s run at the same time on %s but ask for ioscheduler=%s and %s; give them the same one, or put stonewall between them",
						asker[disk], j.Name, disk, other, j.IOScheduler)
				}
				if want == nil {
					want, asker = map[string]string{}, map[string]string{}
				}
				want[disk], asker[disk] = j.IOScheduler, j.Name
			}
		}
	}
	return nil
}

// switchSchedulers switches the disks of a phase's jobs to their
// ioscheduler. It returns what it switched (disk → scheduler) and the
// function that puts each disk's scheduler back; on error nothing stays
// switched.
func (rn *Runner) switchSchedulers(groups []Group, files [][]JobFiles) (map[string]string, func() error, error) {
	var switched map[string]string
	var restores []func() error
	restore := func() error {
		var errs []error
		for i := len(restores) - 1; i >= 0; i-- {
			errs = append(errs, restores[i]())
		}
		return errors.Join(errs...)
	}
	for g, grp := range groups {
		for i := range grp.Jobs {
			j := &grp.Jobs[i]
			if j.IOScheduler == "" || j.Diskless() {
				continue
			}
			for _, t := range files[g][i].Targets {
				disk, err := rn.ioSchedulerDisk(j, t)
				if err == nil && disk == "" {
					continue
				}
				if _, done := switched[disk]; done && err == nil {
					continue
				}
				var undo func() error
				if err == nil {
					undo, _, err = rn.Sys.SwitchScheduler(disk, j.IOScheduler)
				}
				if err != nil {
					return nil, nil, errors.Join(fmt.Errorf("job %s: ioscheduler=%s: %w", j.Name, j.IOScheduler, err), restore())
				}
				rn.log().Info("switched the I/O scheduler for a job", "job", j.Name, "disk", disk, "scheduler", j.IOScheduler)
				restores = append(restores, undo)
				if switched == nil {
					switched = map[string]string{}
				}
				switched[disk] = j.IOScheduler
			}
		}
	}
	return switched, restore, nil
}
