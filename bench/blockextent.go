package bench

import (
	"fmt"
	"slices"

	"iolab/bench/system"
)

// A traced file's I/O reaches its filesystem's device at the places its
// extents say (FIEMAP, taken as a phase starts): an I/O at offset off of
// an extent is at extent.Physical + (off - extent.Logical) on the device.
// An I/O the map cannot place one-to-one is counted without a join
// (joinIO.miss): one that runs past its extent into the next is a split;
// one in a hole, or in an extent whose bytes are not at its address
// (delalloc, inline, encoded, not aligned: no bio of its own reaches that
// place), is unmatched. An unwritten extent is at its address: a write
// there is joined with its bio; a read has none, and the join finds it
// unmatched.

// fileExtent is a run of a file's bytes on its device.
type fileExtent struct {
	logical, physical, length uint64
	onDevice                  bool // its bytes are at physical, one for one
}

// What the map says of an I/O it cannot place (joinIO.miss).
const (
	missNone uint8 = iota
	missUnmatched
	missSplit
)

// fileExtents makes a file's map from FIEMAP's extents: sorted by offset,
// and extents that follow each other on the device as in the file
// (ext4's are at most 128 MiB long) made one, since the block layer sees
// one run of sectors.
func fileExtents(es []system.Extent) []fileExtent {
	out := make([]fileExtent, 0, len(es))
	for _, e := range es {
		on := e.Flags&system.ExtentsNotOnDevice == 0 && e.Physical%512 == 0 && e.Logical%512 == 0
		if n := len(out); n > 0 {
			p := &out[n-1]
			if p.onDevice && on && p.logical+p.length == e.Logical && p.physical+p.length == e.Physical {
				p.length += e.Length
				continue
			}
		}
		out = append(out, fileExtent{logical: e.Logical, physical: e.Physical, length: e.Length, onDevice: on})
	}
	slices.SortFunc(out, func(a, b fileExtent) int {
		switch {
		case a.logical < b.logical:
			return -1
		case a.logical > b.logical:
			return 1
		}
		return 0
	})
	return out
}

// placeInExtents is the disk's sector of an I/O of n bytes at off in the file
// (start: the filesystem's device's first sector on its disk), or why it
// has none.
func placeInExtents(ext []fileExtent, start uint64, off int64, n uint32) (uint64, uint8) {
	if off < 0 {
		return 0, missUnmatched
	}
	o := uint64(off)
	// The last extent starting at or before o.
	i, found := slices.BinarySearchFunc(ext, o, func(e fileExtent, o uint64) int {
		switch {
		case e.logical < o:
			return -1
		case e.logical > o:
			return 1
		}
		return 0
	})
	if !found {
		i--
	}
	if i < 0 || o >= ext[i].logical+ext[i].length || !ext[i].onDevice {
		return 0, missUnmatched
	}
	e := &ext[i]
	if o+uint64(n) > e.logical+e.length {
		return 0, missSplit
	}
	return start + (e.physical+o-e.logical)/512, missNone
}

// CheckTraceFile refuses a file target whose I/O the trace cannot place
// on a device: one on a filesystem with no block device under it (tmpfs,
// overlay, nfs, fuse: st_dev's major is 0), or on btrfs, whose extents
// are at its own addresses over one or several devices. A file not there
// yet is described by its directory's filesystem, where it will be laid
// out.
func CheckTraceFile(t system.Target) error {
	if t.IsBlock {
		return nil
	}
	fs := t.Filesystem
	if fs == "" {
		fs = "its filesystem"
	}
	switch {
	case t.Dev == "":
		return fmt.Errorf("--trace-block: %s is made only as its job opens it (create_on_open), so where it lies on the disk is not known when the trace starts; lay it out beforehand (create_on_open=0) to trace it", t.Path)
	case t.Disk == "":
		return fmt.Errorf("--trace-block needs a block device under its targets; %s is a file on %s, which has no block device (its device is %s)", t.Path, fs, t.Dev)
	case t.Filesystem == "btrfs":
		return fmt.Errorf("--trace-block cannot place %s's I/O on a device: it is a file on btrfs, whose extents are at btrfs's own addresses over its devices, not a device's", t.Path)
	}
	return nil
}
