package bench

import (
	"time"

	"iolab/bench/system"
)

// phaseDisks names the whole disks under a phase's targets, each once, in
// the order the jobs name their targets (groups in order, jobs in order).
// That is fio's order: diskutil.c's disk_util_add appends each disk to
// disk_list as the jobs' files are set up, and show_disk_util prints that
// list as it stands. A map's order would change from run to run, and with
// it the order of the disk stats and of their iostat columns.
func phaseDisks(targets [][]system.Target) []string {
	var disks []string
	seen := map[string]bool{}
	for _, group := range targets {
		for _, t := range group {
			if t.Disk != "" && !seen[t.Disk] {
				seen[t.Disk] = true
				disks = append(disks, t.Disk)
			}
		}
	}
	return disks
}

// diskUtilization is what each of disks did between two snapshots of
// /proc/diskstats taken elapsed apart, in the order of disks; a disk
// missing from either snapshot is left out.
func diskUtilization(disks []string, before, after map[string]system.DiskStat, elapsed time.Duration) []system.DiskUtilization {
	var out []system.DiskUtilization
	for _, name := range disks {
		a, okA := before[name]
		b, okB := after[name]
		if okA && okB {
			u := system.DiskDelta(a, b, elapsed)
			u.Name = name
			out = append(out, u)
		}
	}
	return out
}

// countJobBytes sets each disk's JobBytes: the bytes the phase's jobs moved
// on it, ramp and drain included, so that what the disk did beyond them —
// another process's I/O — shows. A disk with a job that does not use
// O_DIRECT is left unset: the page cache moves bytes on its own schedule
// (writeback of earlier writes, readahead), and the two cannot be
// compared; nor is a disk whose filesystem a job makes sync (its journal).
func countJobBytes(util []system.DiskUtilization, groups []Group, targets [][][]system.Target, results [][]JobResult) {
	for k := range util {
		u := &util[k]
		var moved uint64
		checked := true
		for g := range groups {
			for i := range groups[g].Jobs {
				on, elsewhere := false, false
				for _, t := range targets[g][i] {
					if t.Disk == u.Name {
						on = true
					} else {
						elsewhere = true
					}
				}
				if !on {
					continue
				}
				if !groups[g].Jobs[i].Direct || elsewhere || groups[g].Jobs[i].syncsFile(targets[g][i]) {
					// Buffered I/O, files on several disks, or syncs that
					// make a filesystem write its journal: what the job
					// moved says nothing certain about this disk.
					checked = false
				}
				moved += results[g][i].Moved[Read] + results[g][i].Moved[Write]
			}
		}
		if checked {
			u.JobBytes = moved
		}
	}
}
