package system

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ResolveTarget follows path's symlinks and describes the block device it
// names, or for a regular file the disk holding it. A file that does not
// exist yet (the job will lay it out) is described from its directory.
func (s FS) ResolveTarget(path string) (Target, error) {
	t := Target{Path: path, NUMANode: -1}
	var st unix.Stat_t
	exists := true
	resolved, err := filepath.EvalSymlinks(path)
	if errors.Is(err, os.ErrNotExist) {
		exists = false
		var dir string
		if dir, err = filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
			resolved = filepath.Join(dir, filepath.Base(path))
			err = unix.Stat(dir, &st)
		}
	} else if err == nil {
		err = unix.Stat(resolved, &st)
	}
	if err != nil {
		return Target{}, fmt.Errorf("target %s: %w", path, err)
	}
	if t.Resolved, err = filepath.Abs(resolved); err != nil {
		return Target{}, fmt.Errorf("target %s: %w", path, err)
	}

	switch mode := st.Mode & unix.S_IFMT; {
	case exists && mode == unix.S_IFBLK:
		t.IsBlock = true
		t.Dev = devNumString(st.Rdev)
		node, err := s.blockNode(t.Dev)
		if err != nil {
			return Target{}, fmt.Errorf("target %s: no sysfs node for block device %s: %w", path, t.Dev, err)
		}
		t.Disk, t.Partition = node.disk, node.part
		sectors, err := readSysInt(filepath.Join(node.dir, "size"))
		if err != nil {
			return Target{}, fmt.Errorf("target %s: %w", path, err)
		}
		t.Size = sectors * 512 // always 512-byte units (include/linux/blk_types.h SECTOR_SHIFT)
	case !exists || mode == unix.S_IFREG:
		if exists {
			t.Size = st.Size
			t.Inode = st.Ino
		}
		t.Dev = devNumString(st.Dev)
		if err := s.fileDisk(&t); err != nil {
			return Target{}, fmt.Errorf("target %s: %w", path, err)
		}
		if !exists && t.Filesystem == "devtmpfs" {
			// A mistyped /dev/disk/by-id name is not a file to lay out.
			return Target{}, fmt.Errorf("target %s: no such device: %w", path, os.ErrNotExist)
		}
	default:
		return Target{}, fmt.Errorf("target %s: %s is neither a block device nor a regular file", path, t.Resolved)
	}

	if t.Disk != "" {
		s.diskAttrs(&t)
	}
	if exists {
		var stx unix.Statx_t
		if unix.Statx(unix.AT_FDCWD, t.Resolved, 0, unix.STATX_DIOALIGN, &stx) == nil &&
			stx.Mask&unix.STATX_DIOALIGN != 0 {
			t.DIOMemAlign, t.DIOOffsetAlign = stx.Dio_mem_align, stx.Dio_offset_align
		}
	}
	return t, nil
}

// fileDisk finds the disk under the filesystem holding a regular file. Most
// filesystems' st_dev is their block device; btrfs (and others with
// anonymous device numbers) report 0:N, and then mountinfo's source names
// the device. tmpfs and overlay have none: Disk stays "".
func (s FS) fileDisk(t *Target) error {
	mounts, err := s.mounts()
	if err != nil {
		return err
	}
	var source string
	for _, m := range mounts {
		if m.dev == t.Dev {
			t.Filesystem, source = m.fstype, m.source
			break
		}
	}
	node, err := s.blockNode(t.Dev)
	if errors.Is(err, os.ErrNotExist) && strings.HasPrefix(source, "/dev/") {
		if dev, derr := s.devNumOfPath(source); derr == nil {
			node, err = s.blockNode(dev)
		}
	}
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	t.Disk, t.Partition = node.disk, node.part
	return nil
}

type blockNode struct {
	dir  string // the device's directory in sysfs
	disk string
	part string // "" for a whole disk
}

// blockNode finds a device's sysfs directory through /sys/dev/block/MAJ:MIN
// (Documentation/ABI/testing/sysfs-dev). A partition's directory sits inside
// its disk's and holds a "partition" file.
func (s FS) blockNode(dev string) (blockNode, error) {
	dir, err := filepath.EvalSymlinks(s.sysPath("dev", "block", dev))
	if err != nil {
		return blockNode{}, err
	}
	if _, err := os.Stat(filepath.Join(dir, "partition")); err == nil {
		return blockNode{dir: dir, disk: filepath.Base(filepath.Dir(dir)), part: filepath.Base(dir)}, nil
	}
	return blockNode{dir: dir, disk: filepath.Base(dir)}, nil
}

// diskAttrs fills in what sysfs says about t.Disk; attributes a device lacks
// (a model for virtio, a scheduler for bio-based zram) stay empty.
func (s FS) diskAttrs(t *Target) {
	base := s.sysPath("block", t.Disk)
	q := func(name string) string {
		v, _ := readTrimmed(filepath.Join(base, "queue", name))
		return v
	}
	t.LogicalBlockSize, _ = strconv.Atoi(q("logical_block_size"))
	t.PhysicalBlockSize, _ = strconv.Atoi(q("physical_block_size"))
	t.Rotational = q("rotational") == "1"
	t.Scheduler, t.Schedulers = parseScheduler(q("scheduler"))
	t.NrRequests, _ = strconv.Atoi(q("nr_requests"))
	t.IOPoll = q("io_poll") == "1"
	t.Model, _ = readTrimmed(filepath.Join(base, "device", "model"))
	for _, f := range []string{"firmware_rev", "rev"} {
		if v, err := readTrimmed(filepath.Join(base, "device", f)); err == nil && v != "" {
			t.Firmware = v
			break
		}
	}
	t.Serial, _ = readTrimmed(filepath.Join(base, "device", "serial"))
	for _, f := range []string{"wwid", "device/wwid"} {
		if v, err := readTrimmed(filepath.Join(base, f)); err == nil && v != "" {
			t.WWID = strings.Join(strings.Fields(v), " ")
			break
		}
	}
	t.Driver = s.driver(t.Disk)
	// NVMe namespaces' device is the controller, whose device is the PCI
	// function that carries numa_node.
	for _, p := range []string{"device/numa_node", "device/device/numa_node"} {
		if v, err := readTrimmed(filepath.Join(base, p)); err == nil {
			if n, err := strconv.Atoi(v); err == nil {
				t.NUMANode = n
				break
			}
		}
	}
}

// driver names the driver behind a disk: the device's driver link (sd,
// virtio_blk), one level up for NVMe namespaces (nvme); virtual devices have
// none and are named by their kind.
func (s FS) driver(disk string) string {
	base := s.sysPath("block", disk)
	for _, p := range []string{"device/driver", "device/device/driver"} {
		if l, err := os.Readlink(filepath.Join(base, p)); err == nil {
			return filepath.Base(l)
		}
	}
	for _, k := range []struct{ dir, name string }{{"loop", "loop"}, {"dm", "device-mapper"}, {"md", "md"}} {
		if fi, err := os.Stat(filepath.Join(base, k.dir)); err == nil && fi.IsDir() {
			return k.name
		}
	}
	return strings.TrimRight(disk, "0123456789") // zram0 → zram, nbd3 → nbd
}

// parseScheduler reads queue/scheduler: "none [mq-deadline] kyber bfq".
func parseScheduler(v string) (active string, all []string) {
	for _, f := range strings.Fields(v) {
		if name, ok := strings.CutPrefix(f, "["); ok {
			name = strings.TrimSuffix(name, "]")
			active = name
			f = name
		}
		all = append(all, f)
	}
	if active == "" && len(all) == 1 {
		active = all[0]
	}
	return active, all
}

// CheckWritable is the safety rule for write jobs, stricter than fio's exact
// name match against /etc/mtab: a block device is refused when it or one of
// its partitions is mounted (matched by major:minor, so by-id, mapper and
// other symlinked names are caught), is held by another device (LVM, md,
// dm-crypt…), is active swap, or carries a filesystem, partition table, RAID
// or volume signature. Regular files are fine, as in fio.
//
// Mounts are those of this process's mount namespace: a filesystem mounted
// only in another namespace (a container's) is still caught by its signature.
func (s FS) CheckWritable(t Target) error {
	if !t.IsBlock {
		return nil
	}
	refuse := func(format string, a ...any) error {
		return &UnsafeTargetError{Path: t.Path, Resolved: t.Resolved, Reason: fmt.Sprintf(format, a...)}
	}
	self := blockDev{name: t.Disk, dev: t.Dev}
	var parts []blockDev
	if t.Partition != "" {
		self.name = t.Partition
	} else if t.Disk != "" {
		var err error
		if parts, err = s.partitions(t.Disk); err != nil {
			return fmt.Errorf("check %s: %w", t.Path, err)
		}
	}

	mounts, err := s.mounts()
	if err != nil {
		return fmt.Errorf("check %s: %w", t.Path, err)
	}
	if mp, ok := s.mountedOn(mounts, self.dev); ok {
		return refuse("is mounted on %s", mp)
	}
	for _, p := range parts {
		if mp, ok := s.mountedOn(mounts, p.dev); ok {
			return refuse("has partition %s mounted on %s", p.name, mp)
		}
	}

	if t.Disk != "" {
		h, err := s.holders(t.Disk, t.Partition)
		if err != nil {
			return fmt.Errorf("check %s: %w", t.Path, err)
		}
		if len(h) > 0 {
			return refuse("is held by %s", h)
		}
		for _, p := range parts {
			h, err := s.holders(t.Disk, p.name)
			if err != nil {
				return fmt.Errorf("check %s: %w", t.Path, err)
			}
			if len(h) > 0 {
				return refuse("has partition %s held by %s", p.name, h)
			}
		}
	}

	swaps, err := s.swaps()
	if err != nil {
		return fmt.Errorf("check %s: %w", t.Path, err)
	}
	for _, sw := range swaps {
		if sw.is(self) {
			return refuse("is active swap")
		}
		for _, p := range parts {
			if sw.is(p) {
				return refuse("has partition %s in use as swap", p.name)
			}
		}
	}

	sig, found, err := readSignature(t.Resolved, t.Dev, t.Size)
	if err != nil {
		return fmt.Errorf("check %s: %w", t.Path, err)
	}
	if found {
		return refuse("carries %s", sig.desc)
	}
	return nil
}

// CheckPoll explains up front what hipri would otherwise show as every I/O
// failing with EOPNOTSUPP: IOPOLL needs O_DIRECT on a block device (or a
// filesystem on one) whose driver has poll queues, which
// /sys/block/<disk>/queue/io_poll reports (block/blk-sysfs.c; writing it is
// ignored).
func (s FS) CheckPoll(t Target) error {
	if t.Disk == "" {
		on := "a filesystem"
		if t.Filesystem != "" {
			on = t.Filesystem
		}
		return fmt.Errorf("hipri (IOPOLL) needs a block device or a block-backed filesystem with O_DIRECT, but %s is on %s, which has no block device; put the file on a disk's filesystem or drop hipri", t.Path, on)
	}
	p := s.sysPath("block", t.Disk, "queue", "io_poll")
	v, err := readTrimmed(p)
	if err != nil {
		return fmt.Errorf("hipri (IOPOLL): cannot tell whether %s has poll queues: %w", t.Disk, err)
	}
	if v == "1" {
		return nil
	}
	driver := t.Driver
	if driver == "" {
		driver = s.driver(t.Disk)
	}
	return fmt.Errorf("hipri (IOPOLL) needs poll queues, but %s is %s: %s (driver %s) has none; "+
		"for NVMe load the driver with nvme.poll_queues=N (e.g. modprobe nvme poll_queues=4, or nvme.poll_queues=4 on the kernel command line), "+
		"for virtio-blk virtio_blk.poll_queues=N; or drop hipri", p, v, t.Disk, driver)
}

type blockDev struct {
	name string // kernel name: sda1, loop0
	dev  string // "major:minor"
}

// partitions lists a disk's partitions: the subdirectories of
// /sys/block/<disk> that hold a "partition" file.
func (s FS) partitions(disk string) ([]blockDev, error) {
	base := s.sysPath("block", disk)
	names, err := readDirNames(base)
	if err != nil {
		return nil, err
	}
	var parts []blockDev
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(base, n, "partition")); err != nil {
			continue
		}
		dev, err := readTrimmed(filepath.Join(base, n, "dev"))
		if err != nil {
			return nil, err
		}
		parts = append(parts, blockDev{name: n, dev: dev})
	}
	return parts, nil
}

// holders describes the devices built on a disk or partition, from
// /sys/block/<disk>[/<part>]/holders: "dm-0 (LVM vg0-data)", "md127 (md RAID)".
func (s FS) holders(disk, part string) (string, error) {
	dir := s.sysPath("block", disk, part, "holders")
	names, err := readDirNames(dir)
	if err != nil || len(names) == 0 {
		return "", err
	}
	desc := make([]string, len(names))
	for i, h := range names {
		desc[i] = h
		base := s.sysPath("class", "block", h)
		if dmName, err := readTrimmed(filepath.Join(base, "dm", "name")); err == nil {
			// dm's uuid prefix tells who made the mapping (lvm2, cryptsetup, multipath).
			uuid, _ := readTrimmed(filepath.Join(base, "dm", "uuid"))
			kind := "device-mapper"
			for _, k := range []struct{ prefix, kind string }{{"LVM-", "LVM"}, {"CRYPT-", "dm-crypt"}, {"mpath-", "multipath"}} {
				if strings.HasPrefix(uuid, k.prefix) {
					kind = k.kind
				}
			}
			desc[i] = fmt.Sprintf("%s (%s %s)", h, kind, dmName)
		} else if strings.HasPrefix(h, "md") {
			desc[i] = h + " (md RAID)"
		} else if strings.HasPrefix(h, "bcache") {
			desc[i] = h + " (bcache)"
		}
	}
	return strings.Join(desc, ", "), nil
}

type mountEntry struct {
	dev        string // "major:minor" as st_dev of files on it
	mountPoint string
	fstype     string
	source     string
}

// mounts parses /proc/self/mountinfo (Documentation/filesystems/proc.rst
// 3.5): "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw".
func (s FS) mounts() ([]mountEntry, error) {
	f, err := os.Open(s.procPath("self", "mountinfo"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ms, err := parseMountInfo(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return ms, nil
}

func parseMountInfo(r io.Reader) ([]mountEntry, error) {
	var ms []mountEntry
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		sep := -1
		for i := 6; i < len(f); i++ { // optional fields end at "-"
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+2 >= len(f) {
			return nil, fmt.Errorf("line %d: malformed", n)
		}
		ms = append(ms, mountEntry{
			dev:        f[2],
			mountPoint: unescapeOctal(f[4]),
			fstype:     f[sep+1],
			source:     unescapeOctal(f[sep+2]),
		})
	}
	return ms, sc.Err()
}

// mountedOn reports where a device is mounted. Filesystems with anonymous
// device numbers (btrfs: 0:N) are matched through their source device.
func (s FS) mountedOn(mounts []mountEntry, dev string) (string, bool) {
	for _, m := range mounts {
		if m.dev == dev {
			return m.mountPoint, true
		}
	}
	for _, m := range mounts {
		if !strings.HasPrefix(m.dev, "0:") || !strings.HasPrefix(m.source, "/dev/") {
			continue
		}
		if d, err := s.devNumOfPath(m.source); err == nil && d == dev {
			return m.mountPoint, true
		}
	}
	return "", false
}

type swapEntry struct {
	path string
	dev  string // "" when it could not be resolved
}

func (e swapEntry) is(b blockDev) bool {
	if e.dev != "" {
		return e.dev == b.dev
	}
	return filepath.Base(e.path) == b.name
}

// swaps lists active swap partitions from /proc/swaps (mm/swapfile.c
// swap_show); swap files live on a filesystem and need no check here.
func (s FS) swaps() ([]swapEntry, error) {
	f, err := os.Open(s.procPath("swaps"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // kernel built without swap
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []swapEntry
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		if len(fl) < 2 || fl[1] != "partition" {
			continue
		}
		e := swapEntry{path: unescapeOctal(fl[0])}
		e.dev, _ = s.devNumOfPath(e.path)
		out = append(out, e)
	}
	return out, sc.Err()
}

// devNumOfPath gives the "major:minor" of a device path as the kernel prints
// it (/dev/sdb1, /dev/mapper/vg-lv): from the node itself, or when the path
// is not a device node under s.Dev (a fixture), from
// /sys/class/block/<name>/dev.
func (s FS) devNumOfPath(p string) (string, error) {
	r, err := filepath.EvalSymlinks(s.devPath(p))
	if err != nil {
		return "", err
	}
	var st unix.Stat_t
	if err := unix.Stat(r, &st); err == nil && st.Mode&unix.S_IFMT == unix.S_IFBLK {
		return devNumString(st.Rdev), nil
	}
	return readTrimmed(s.sysPath("class", "block", filepath.Base(r), "dev"))
}

// unescapeOctal undoes the kernel's \ooo escaping of spaces, tabs, newlines
// and backslashes in mountinfo and /proc/swaps paths.
func unescapeOctal(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+4 <= len(v) {
			if n, err := strconv.ParseUint(v[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

func devNumString(dev uint64) string {
	return fmt.Sprintf("%d:%d", unix.Major(dev), unix.Minor(dev))
}

func readSysInt(path string) (int64, error) {
	v, err := readTrimmed(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}

// openChecked opens path for reading if it is the block device dev (any
// with dev "") or a regular file: never anything whose open could do
// something (a character device).
func openChecked(path, dev string) (*os.File, error) {
	pfd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(pfd)
	check := func(fd int) error {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return &os.PathError{Op: "stat", Path: path, Err: err}
		}
		mode := st.Mode & unix.S_IFMT
		switch {
		case mode == unix.S_IFREG: // an image (fixtures); opening it does nothing
		case mode == unix.S_IFBLK && (dev == "" || devNumString(st.Rdev) == dev):
		default:
			return fmt.Errorf("%s is no longer block device %s; not reading it", path, dev)
		}
		return nil
	}
	if err := check(pfd); err != nil {
		return nil, err
	}
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(pfd), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if err := check(fd); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// Where signatures are looked for: the head covers every magic in the table
// below (btrfs's at 64 KiB + 64 is the farthest); md 0.90 and 1.0 keep their
// superblock near the end.
const (
	sigHeadSize = 68 << 10
	sigTailSize = 128 << 10
)

type diskSignature struct {
	name string // blkid's TYPE
	desc string // for the refusal: "an ext4 filesystem signature"
}

// readSignature looks for on-disk formats at the start and end of a
// device: the one numbered dev ("" for any block device or regular file).
// It is looked up with O_PATH and opened for reading only once it is
// known to be that, so that a name swapped meanwhile for a character
// device (a watchdog) is never opened for real.
func readSignature(path, dev string, size int64) (diskSignature, bool, error) {
	f, err := openChecked(path, dev)
	if err != nil {
		return diskSignature{}, false, err
	}
	defer f.Close()
	head := make([]byte, sigHeadSize)
	n, err := f.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return diskSignature{}, false, fmt.Errorf("read %s: %w", path, err)
	}
	if sig, ok := detectSignature(head[:n]); ok {
		return sig, true, nil
	}
	if size <= 0 {
		return diskSignature{}, false, nil
	}
	off := max(size-sigTailSize, 0)
	tail := make([]byte, size-off)
	n, err = f.ReadAt(tail, off)
	if err != nil && err != io.EOF {
		return diskSignature{}, false, fmt.Errorf("read %s: %w", path, err)
	}
	sig, ok := detectTailSignature(tail[:n], off, size)
	return sig, ok, nil
}

// diskMagic is one entry of the signature table: bytes at an offset, plus an
// optional check of the rest of the head for short, collision-prone magics.
// Offsets and strings follow util-linux libblkid (src/superblocks/*.c,
// src/partitions/*.c).
type diskMagic struct {
	name, desc string
	off        int
	bytes      string
	check      func(head []byte, off int) bool
}

const mdSuperMagic = 0xa92b4efc // MD_SB_MAGIC, linux_raid.c

var diskMagics = []diskMagic{
	{"crypto_LUKS", "a LUKS encryption header", 0, "LUKS\xba\xbe", nil},
	{"xfs", "an xfs filesystem signature", 0, "XFSB", nil},
	{"btrfs", "a btrfs filesystem signature", 0x10040, "_BHRfS_M", nil},
	{"f2fs", "an f2fs filesystem signature", 0x400, "\x10\x20\xf5\xf2", nil},
	{"erofs", "an erofs filesystem signature", 0x400, "\xe2\xe1\xf5\xe0", nil},
	{"squashfs", "a squashfs filesystem signature", 0, "hsqs", nil},
	{"bluestore", "a Ceph BlueStore signature", 0, "bluestore block device", nil},
	{"vdo", "a VDO volume signature", 0, "dmvdo001", nil},
	{"bcache", "a bcache superblock", 0x1018, "\xc6\x85\x73\xf6\x4e\x1a\x45\xca\x82\x65\xf5\x7f\x48\xba\x6d\x81", nil},
	{"linux_raid_member", "a Linux md RAID superblock (version 1.1)", 0, "\xfc\x4e\x2b\xa9", mdV1},
	{"linux_raid_member", "a Linux md RAID superblock (version 1.2)", 0x1000, "\xfc\x4e\x2b\xa9", mdV1},
	{"LVM2_member", "an LVM2 physical volume label", 0, "LABELONE", lvm2},
	{"LVM2_member", "an LVM2 physical volume label", 0x200, "LABELONE", lvm2},
	{"LVM2_member", "an LVM2 physical volume label", 0x400, "LABELONE", lvm2},
	{"LVM2_member", "an LVM2 physical volume label", 0x600, "LABELONE", lvm2},
	{"ntfs", "an NTFS filesystem signature", 3, "NTFS    ", nil},
	{"exfat", "an exFAT filesystem signature", 3, "EXFAT   ", nil},
	{"BitLocker", "a BitLocker volume signature", 3, "-FVE-FS-", nil},
	{"vfat", "a FAT filesystem signature", 0x36, "FAT12   ", bootSector},
	{"vfat", "a FAT filesystem signature", 0x36, "FAT16   ", bootSector},
	{"vfat", "a FAT filesystem signature", 0x36, "FAT     ", bootSector},
	{"vfat", "a FAT filesystem signature", 0x36, "MSDOS", bootSector},
	{"vfat", "a FAT filesystem signature", 0x52, "FAT32   ", bootSector},
	{"vfat", "a FAT filesystem signature", 0x52, "MSWIN", bootSector},
	{"iso9660", "an ISO 9660 filesystem signature", 0x8001, "CD001", nil},
	{"udf", "a UDF filesystem signature", 0x8001, "BEA01", nil},
	{"jfs", "a JFS filesystem signature", 0x8000, "JFS1", nil},
	{"reiserfs", "a reiserfs filesystem signature", 0x2034, "ReIsErFs", nil},
	{"reiserfs", "a reiserfs filesystem signature", 0x10034, "ReIsErFs", nil},
	{"reiserfs", "a reiserfs filesystem signature", 0x10034, "ReIsEr2Fs", nil},
	{"reiserfs", "a reiserfs filesystem signature", 0x10034, "ReIsEr3Fs", nil},
	{"reiser4", "a reiser4 filesystem signature", 0x10000, "ReIsEr4", nil},
	// swap.c: the signature ends the first page, whatever the page size.
	{"swap", "a swap signature", 0xff6, "SWAPSPACE2", nil},
	{"swap", "a swap signature", 0xff6, "SWAP-SPACE", nil},
	{"swap", "a swap signature", 0x1ff6, "SWAPSPACE2", nil},
	{"swap", "a swap signature", 0x3ff6, "SWAPSPACE2", nil},
	{"swap", "a swap signature", 0x7ff6, "SWAPSPACE2", nil},
	{"swap", "a swap signature", 0xfff6, "SWAPSPACE2", nil},
	{"swsuspend", "a hibernation image", 0xff6, "S1SUSPEND", nil},
	{"swsuspend", "a hibernation image", 0xff6, "S2SUSPEND", nil},
	{"swsuspend", "a hibernation image", 0xff6, "ULSUSPEND", nil},
	{"swsuspend", "a hibernation image", 0xff6, "LINHIB0001", nil},
	// Partition tables last: FAT and NTFS boot sectors and GPT's protective
	// MBR also end in 0x55AA.
	{"gpt", "a GPT partition table", 0x200, "EFI PART", nil},
	{"gpt", "a GPT partition table", 0x1000, "EFI PART", nil}, // 4096-byte logical blocks
	{"dos", "a DOS/MBR partition table", 0x1fe, "\x55\xaa", dosTable},
}

// detectSignature reports the first known format in a device's first bytes.
func detectSignature(head []byte) (diskSignature, bool) {
	if name, ok := extName(head); ok {
		return diskSignature{name, "an " + name + " filesystem signature"}, true
	}
	for _, m := range diskMagics {
		end := m.off + len(m.bytes)
		if end > len(head) || string(head[m.off:end]) != m.bytes {
			continue
		}
		if m.check != nil && !m.check(head, m.off) {
			continue
		}
		return diskSignature{m.name, m.desc}, true
	}
	return diskSignature{}, false
}

// extName recognizes ext2/3/4 as libblkid's ext.c does: the superblock at
// 1024 with magic 0xEF53 at +0x38; ext4 when it uses features ext3 lacks,
// ext3 when it has a journal. Revision and block size are checked too, so a
// stray 0xEF53 in benchmark data is not taken for a filesystem.
func extName(b []byte) (string, bool) {
	const sb = 1024
	if len(b) < sb+0x68 || b[sb+0x38] != 0x53 || b[sb+0x39] != 0xef {
		return "", false
	}
	le := binary.LittleEndian
	logBlock := le.Uint32(b[sb+0x18:])
	rev := le.Uint32(b[sb+0x4c:])
	if logBlock > 6 || rev > 1 { // blocks of 1 KiB << 0..6; revisions 0 and 1
		return "", false
	}
	compat := le.Uint32(b[sb+0x5c:])
	incompat := le.Uint32(b[sb+0x60:])
	roCompat := le.Uint32(b[sb+0x64:])
	const (
		hasJournal   = 0x4
		journalDev   = 0x8
		ext3Incompat = 0x2 | 0x4 | 0x10 // filetype, recover, meta_bg
		ext3ROCompat = 0x1 | 0x2 | 0x4  // sparse_super, large_file, btree_dir
	)
	switch {
	case incompat&journalDev != 0:
		return "jbd", true
	case incompat&^ext3Incompat != 0 || roCompat&^ext3ROCompat != 0:
		return "ext4", true
	case compat&hasJournal != 0:
		return "ext3", true
	}
	return "ext2", true
}

// mdV1 checks an md version-1 superblock's major_version (linux_raid.c).
func mdV1(b []byte, off int) bool {
	return len(b) >= off+8 && binary.LittleEndian.Uint32(b[off+4:]) == 1
}

// lvm2 checks the label's type after "LABELONE" (lvm.c: "LVM2 001" at +24).
func lvm2(b []byte, off int) bool {
	return len(b) >= off+32 && string(b[off+24:off+32]) == "LVM2 001"
}

// bootSector requires the boot signature a FAT boot sector ends with.
func bootSector(b []byte, _ int) bool {
	return len(b) >= 512 && b[510] == 0x55 && b[511] == 0xaa
}

// dosTable checks that the four MBR entries (at 446, 16 bytes each) look like
// a partition table: boot flags 0 or 0x80 and at least one used entry
// (libblkid partitions/dos.c).
func dosTable(b []byte, _ int) bool {
	used := false
	for i := range 4 {
		e := b[446+16*i : 446+16*(i+1)]
		if e[0] != 0 && e[0] != 0x80 {
			return false
		}
		if e[4] != 0 && binary.LittleEndian.Uint32(e[12:]) != 0 {
			used = true
		}
	}
	return used
}

// detectTailSignature looks for md RAID 0.90 and 1.0 superblocks, which sit
// near the end of the device (linux_raid.c probe_raid). tail holds the
// device's bytes from tailOff to size.
func detectTailSignature(tail []byte, tailOff, size int64) (diskSignature, bool) {
	at := func(off int64, n int) []byte {
		i := off - tailOff
		if off < 0 || i < 0 || i+int64(n) > int64(len(tail)) {
			return nil
		}
		return tail[i : i+int64(n)]
	}
	if size <= 0x10000 {
		return diskSignature{}, false
	}
	if b := at((size&^0xffff)-0x10000, 4); b != nil &&
		(binary.LittleEndian.Uint32(b) == mdSuperMagic || binary.BigEndian.Uint32(b) == mdSuperMagic) {
		return diskSignature{"linux_raid_member", "a Linux md RAID superblock (version 0.90)"}, true
	}
	if b := at((size&^0xfff)-0x2000, 8); b != nil &&
		binary.LittleEndian.Uint32(b) == mdSuperMagic && binary.LittleEndian.Uint32(b[4:]) == 1 {
		return diskSignature{"linux_raid_member", "a Linux md RAID superblock (version 1.0)"}, true
	}
	return diskSignature{}, false
}
