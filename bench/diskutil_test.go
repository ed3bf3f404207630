package bench

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"iolab/bench/system"
)

// TestPhaseDisksInJobOrder: the disks come out in the order the jobs name
// them, not in name order, each once; a file on no disk adds none. With
// forty disks, a map's order would all but never match.
func TestPhaseDisksInJobOrder(t *testing.T) {
	var names []string
	for i := range 40 {
		names = append(names, fmt.Sprintf("disk%02d", i*17%40)) // disk00, disk17, disk34, disk11, …
	}
	// Two groups of jobs; after each new disk, a job on a disk named
	// before and one on a file on no disk (tmpfs).
	targets := make([][]system.Target, 2)
	for i, d := range names {
		g := i / 20
		targets[g] = append(targets[g], system.Target{Disk: d}, system.Target{Disk: names[i/2]}, system.Target{Path: "/tmp/f"})
	}
	for run := range 5 {
		if got := phaseDisks(targets); !slices.Equal(got, names) {
			t.Fatalf("run %d: phaseDisks =\n%v\nwant\n%v", run, got, names)
		}
	}
	if got := phaseDisks([][]system.Target{{{Path: "/tmp/f"}}, nil}); got != nil {
		t.Errorf("phaseDisks of a file on no disk = %v, want none", got)
	}
}

func TestDiskUtilizationOrder(t *testing.T) {
	disks := []string{"zram0", "sdb", "nvme0n1", "gone", "loop3"}
	before := map[string]system.DiskStat{}
	after := map[string]system.DiskStat{}
	for i, d := range disks {
		if d == "gone" {
			before[d] = system.DiskStat{} // detached during the run
			continue
		}
		before[d] = system.DiskStat{ReadIOs: 100}
		after[d] = system.DiskStat{ReadIOs: 100 + uint64(i+1)*1000, IOTicks: 500}
	}
	got := diskUtilization(disks, before, after, time.Second)
	var names []string
	for _, u := range got {
		names = append(names, u.Name)
	}
	if want := []string{"zram0", "sdb", "nvme0n1", "loop3"}; !slices.Equal(names, want) {
		t.Fatalf("disks %v, want %v", names, want)
	}
	if got[2].ReadIOs != 3000 || got[2].ReadsPerSec != 3000 || got[2].Util != 50 {
		t.Errorf("nvme0n1: %d reads, %v r/s, util %v; want 3000, 3000, 50", got[2].ReadIOs, got[2].ReadsPerSec, got[2].Util)
	}
}
