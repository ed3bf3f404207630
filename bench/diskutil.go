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
