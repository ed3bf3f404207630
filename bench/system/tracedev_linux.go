package system

import (
	"fmt"
	"strconv"
	"strings"
)

// TraceDevice is how the block layer's tracepoints name a block device
// target: a bio carries the block device it was submitted to (the
// partition's, for a partition) with its sector already made the disk's
// (blk_partition_remap), and a request carries the whole disk. Devices are
// (major, minor) pairs.
type TraceDevice struct {
	Dev   [2]uint32 // the target's own: a partition's, or the disk's
	Disk  [2]uint32 // the whole disk's
	Start uint64    // the partition's first sector on the disk; 0 for a disk
}

// TraceDevice reads t's devices from sysfs (/sys/class/block/NAME/dev and
// start, block/stat.c's and partitions/core.c's attributes). t must be a
// block device, or a regular file on a filesystem with one under it (the
// filesystem's device: its extents' addresses are that device's).
func (s FS) TraceDevice(t Target) (TraceDevice, error) {
	var td TraceDevice
	if t.Disk == "" {
		return td, fmt.Errorf("trace device: %s has no block device under it", t.Path)
	}
	var err error
	if td.Disk, err = s.classDev(t.Disk); err != nil {
		return td, err
	}
	td.Dev = td.Disk
	if t.Partition == "" {
		return td, nil
	}
	if td.Dev, err = s.classDev(t.Partition); err != nil {
		return td, err
	}
	v, err := readTrimmed(s.sysPath("class", "block", t.Partition, "start"))
	if err != nil {
		return td, fmt.Errorf("trace device: %w", err)
	}
	if td.Start, err = strconv.ParseUint(v, 10, 64); err != nil {
		return td, fmt.Errorf("trace device: %s's start %q: %w", t.Partition, v, err)
	}
	return td, nil
}

// classDev is the (major, minor) of /sys/class/block/name/dev.
func (s FS) classDev(name string) ([2]uint32, error) {
	v, err := readTrimmed(s.sysPath("class", "block", name, "dev"))
	if err != nil {
		return [2]uint32{}, fmt.Errorf("trace device: %w", err)
	}
	maj, min, ok := strings.Cut(v, ":")
	a, err1 := strconv.ParseUint(maj, 10, 32)
	b, err2 := strconv.ParseUint(min, 10, 32)
	if !ok || err1 != nil || err2 != nil {
		return [2]uint32{}, fmt.Errorf("trace device: %s's dev %q is not major:minor", name, v)
	}
	return [2]uint32{uint32(a), uint32(b)}, nil
}
