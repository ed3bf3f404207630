package sweep

import (
	"errors"
	"fmt"
	"slices"

	"iolab/bench"
)

// errNoDisk is jobDisks's error for a target with no disk under it (a
// file on tmpfs).
var errNoDisk = errors.New("no disk")

// jobDisks are the disks whose scheduler governs j's files, for a plan
// that switches them.
func jobDisks(rn *bench.Runner, plan *Plan, j *bench.Job) ([]string, error) {
	var disks []string
	for _, path := range j.FilePaths() {
		t, err := rn.Sys.ResolveTarget(path)
		if err != nil {
			return nil, fmt.Errorf("job %s: %w", j.Name, err)
		}
		d, err := rn.Sys.SchedulerDisk(t, plan.AllowDiskScheduler)
		if err != nil {
			if t.Disk == "" && !t.IsBlock {
				err = errors.Join(err, errNoDisk)
			}
			return nil, fmt.Errorf("job %s: %w", j.Name, err)
		}
		if !slices.Contains(disks, d) {
			disks = append(disks, d)
		}
	}
	return disks, nil
}

// ioSchedulerDisks are the disks whose scheduler a job's ioscheduler
// switches. The runner switches them as each group starts and back as it
// ends; the plan holds them like a scheduler sweep's disks, so their
// scheduler is recorded before the run and put back at the next start if
// iolab dies in between. A file target's disk takes --allow-disk-scheduler,
// as for the sweep; one disk cannot be both swept and set by ioscheduler.
func ioSchedulerDisks(rn *bench.Runner, plan *Plan, swept []string) ([]string, error) {
	var disks []string
	for _, g := range plan.Base.Groups {
		for _, j := range g.Jobs {
			if j.IOScheduler == "" || j.Diskless() {
				continue
			}
			ds, err := jobDisks(rn, plan, &j)
			if err != nil {
				if j.IOScheduler == "none" && errors.Is(err, errNoDisk) {
					continue // no disk, no scheduler: none is what it has
				}
				return nil, fmt.Errorf("ioscheduler=%s: %w", j.IOScheduler, err)
			}
			for _, d := range ds {
				if slices.Contains(swept, d) {
					return nil, fmt.Errorf("job %s: ioscheduler=%s on %s, whose scheduler the plan sweeps: drop one of them", j.Name, j.IOScheduler, d)
				}
				if _, _, err := rn.Sys.Schedulers(d); err != nil && j.IOScheduler == "none" {
					continue
				}
				if !slices.Contains(disks, d) {
					disks = append(disks, d)
				}
			}
		}
	}
	return disks, nil
}
