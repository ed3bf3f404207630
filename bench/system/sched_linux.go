package system

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The per-step knobs of a plan: the I/O scheduler of the target's disk,
// BLKDISCARD and drop_caches.

// ErrNoScheduler is matched (errors.Is) by the error of a device that has no
// I/O scheduler at all: bio-based devices (dm, md, zram, brd) and blk-mq
// drivers that opt out (BLK_MQ_F_NO_SCHED). It is not an error to list such
// a device's environment, only to try to switch it.
var ErrNoScheduler = errors.New("the device has no I/O scheduler")

type noSchedulerError struct{ msg string }

func (e *noSchedulerError) Error() string        { return e.msg }
func (e *noSchedulerError) Is(target error) bool { return target == ErrNoScheduler }

// SchedulerSwitch records a disk whose scheduler a run changed and the one
// it had before, so the store can put it back at the next start when the
// process died before its own restore ran.
type SchedulerSwitch struct {
	Disk     string `json:"disk"`
	Original string `json:"original"`
}

func (s FS) schedulerPath(disk string) string {
	return s.sysPath("block", disk, "queue", "scheduler")
}

// checkDiskName keeps a name from the command line or a form from walking
// out of /sys/block.
func checkDiskName(disk string) error {
	if disk == "" || disk == "." || disk == ".." || strings.ContainsRune(disk, '/') {
		return fmt.Errorf("%q is not a disk name (want one as /sys/block lists it: sda, nvme0n1, loop0)", disk)
	}
	return nil
}

// Schedulers reads /sys/block/<disk>/queue/scheduler: every elevator the
// kernel has registered, the active one in brackets ("none [mq-deadline]
// kyber bfq"), per block/elevator.c elv_iosched_show. A device that cannot
// have one — bio-based, or a blk-mq driver with BLK_MQ_F_NO_SCHED — shows a
// bare "none" without brackets, or since Linux 6.x has no scheduler file at
// all; for those the error matches ErrNoScheduler.
func (s FS) Schedulers(disk string) (active string, available []string, err error) {
	if err := checkDiskName(disk); err != nil {
		return "", nil, err
	}
	path := s.schedulerPath(disk)
	v, err := readTrimmed(path)
	if errors.Is(err, os.ErrNotExist) {
		if _, serr := os.Stat(s.sysPath("block", disk)); serr != nil {
			return "", nil, fmt.Errorf("no block device %s (no %s): %w", disk, s.sysPath("block", disk), os.ErrNotExist)
		}
		return "", nil, &noSchedulerError{fmt.Sprintf("%s has no I/O scheduler: it is a bio-based device (there is no %s)%s",
			disk, path, s.scheduledBelow(disk))}
	}
	if err != nil {
		return "", nil, fmt.Errorf("schedulers of %s: %w", disk, err)
	}
	if v == "none" {
		return "", nil, &noSchedulerError{fmt.Sprintf("%s has no I/O scheduler: %s shows a bare \"none\" "+
			"(a bio-based device such as dm, md or zram, or a driver that opts out of scheduling)%s",
			disk, path, s.scheduledBelow(disk))}
	}
	active, available = parseScheduler(v)
	if active == "" || len(available) == 0 {
		return "", nil, fmt.Errorf("schedulers of %s: %s: no active scheduler in %q", disk, path, v)
	}
	return active, available, nil
}

// scheduledBelow names, for a stacked device (dm, md), the disks under it:
// their schedulers are the ones its I/O goes through.
func (s FS) scheduledBelow(disk string) string {
	slaves, err := readDirNames(s.sysPath("block", disk, "slaves"))
	if err != nil || len(slaves) == 0 {
		return ""
	}
	var disks []string
	for _, sl := range slaves {
		name := sl
		if dev, err := readTrimmed(s.sysPath("class", "block", sl, "dev")); err == nil {
			if n, err := s.blockNode(dev); err == nil {
				name = n.disk
			}
		}
		if !slices.Contains(disks, name) {
			disks = append(disks, name)
		}
	}
	return fmt.Sprintf("; its I/O is scheduled by the disks under it (%s)", strings.Join(disks, ", "))
}

// ErrSchedulerNotOffered is CheckScheduler's error for a scheduler the
// device does not list: only the steps that ask for it are impossible.
var ErrSchedulerNotOffered = errors.New("scheduler not offered")

type notOfferedError struct{ msg string }

func (e *notOfferedError) Error() string        { return e.msg }
func (e *notOfferedError) Is(target error) bool { return target == ErrSchedulerNotOffered }

// CheckScheduler tells whether SetScheduler(disk, name) can work, without
// switching anything: the device has schedulers, offers name, and this
// process may write its scheduler file. Plans check every step's scheduler
// with it before the first step runs.
func (s FS) CheckScheduler(disk, name string) error {
	_, err := s.checkScheduler(disk, name)
	return err
}

func (s FS) checkScheduler(disk, name string) (active string, err error) {
	active, available, err := s.Schedulers(disk)
	if err != nil {
		return "", err
	}
	if !slices.Contains(available, name) {
		return "", &notOfferedError{fmt.Sprintf("%s offers %s; %q is not one of them%s",
			disk, strings.Join(available, ", "), name, schedulerHint(name))}
	}
	path := s.schedulerPath(disk)
	if err := unix.Access(path, unix.W_OK); err != nil {
		if denied := deniedError("switching the I/O scheduler of "+disk, path, err); denied != nil {
			return "", denied
		}
		return "", fmt.Errorf("switch the I/O scheduler of %s: %w", disk, err)
	}
	return active, nil
}

// schedulerHint explains the usual reasons a well-known name is missing:
// its module is not loaded (the list shows registered elevators only), or it
// is one of the legacy single-queue schedulers removed in Linux 5.0.
func schedulerHint(name string) string {
	switch name {
	case "bfq":
		return " (bfq is not loaded: modprobe bfq, if this kernel has it as a module)"
	case "kyber":
		return " (kyber is not loaded: modprobe kyber-iosched, if this kernel has it as a module)"
	case "mq-deadline":
		return " (mq-deadline is not loaded: modprobe mq-deadline, if this kernel has it as a module)"
	case "cfq":
		return " (cfq went with the legacy block layer in Linux 5.0; bfq is its blk-mq successor)"
	case "deadline":
		return " (deadline went with the legacy block layer in Linux 5.0; mq-deadline is its blk-mq successor)"
	case "noop":
		return " (noop went with the legacy block layer in Linux 5.0; none is its blk-mq successor)"
	}
	return ""
}

// deniedError explains a refused write: what needs root, or that the tree
// is mounted read-only. It is nil for any other error.
func deniedError(what, path string, err error) error {
	switch {
	case errors.Is(err, unix.EROFS):
		return &permissionError{fmt.Sprintf("%s needs root and a writable %s, which is on a read-only mount here (a container?)",
			what, path), err}
	case errors.Is(err, os.ErrPermission): // EACCES, EPERM
		return &permissionError{fmt.Sprintf("%s needs root (write to %s)", what, path), err}
	}
	return nil
}

// permissionError keeps the errno for errors.Is(err, os.ErrPermission) and
// unix.EROFS while its message says what to do.
type permissionError struct {
	msg string
	err error
}

func (e *permissionError) Error() string { return e.msg }
func (e *permissionError) Unwrap() error { return e.err }

// SetScheduler switches disk to the named scheduler and reads the file back
// to confirm it took. Everything CheckScheduler checks is checked first, so
// a bad name or missing permission changes nothing. Switching to the active
// scheduler writes nothing.
func (s FS) SetScheduler(disk, name string) error {
	_, err := s.setScheduler(disk, name)
	return err
}

// setScheduler reports whether it wrote, so a failed switch knows to undo.
func (s FS) setScheduler(disk, name string) (wrote bool, err error) {
	active, err := s.checkScheduler(disk, name)
	if err != nil {
		return false, err
	}
	if active == name {
		return false, nil
	}
	path := s.schedulerPath(disk)
	// The kernel loads the elevator, freezes the queue and swaps it within
	// this write (elv_iosched_store), so the read-back below sees the result.
	if err := writeSysfs(path, name); err != nil {
		if denied := deniedError("switching the I/O scheduler of "+disk, path, err); denied != nil {
			return false, denied
		}
		return true, fmt.Errorf("switch the I/O scheduler of %s to %s: %w", disk, name, err)
	}
	got, _, err := s.Schedulers(disk)
	if err != nil {
		return true, fmt.Errorf("switch the I/O scheduler of %s to %s: read back: %w", disk, name, err)
	}
	if got != name {
		return true, fmt.Errorf("switch the I/O scheduler of %s to %s: %s still shows %s active", disk, name, path, got)
	}
	return true, nil
}

// writeSysfs writes v in one write(2), as a sysfs store expects.
func writeSysfs(path, v string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, werr := f.WriteString(v)
	cerr := f.Close()
	if werr != nil {
		return werr
	}
	return cerr
}

// SwitchScheduler switches disk to name and returns a restore function that
// puts back the scheduler it had before (original), whatever was switched in
// between: a plan calls it once per disk, then SetScheduler per step, and
// defers restore. restore can be called any number of times; each call sets
// the original again, which writes nothing when it is already active.
//
// When the switch fails after writing, SwitchScheduler puts the original back
// itself before returning the error; restore is nil whenever err is not.
func (s FS) SwitchScheduler(disk, name string) (restore func() error, original string, err error) {
	original, _, err = s.Schedulers(disk)
	if err != nil {
		return nil, "", err
	}
	wrote, err := s.setScheduler(disk, name)
	if err != nil {
		if wrote {
			if rerr := s.SetScheduler(disk, original); rerr != nil {
				err = errors.Join(err, fmt.Errorf("restore %s on %s: %w", original, disk, rerr))
			}
		}
		return nil, original, err
	}
	return func() error { return s.RestoreScheduler(SchedulerSwitch{Disk: disk, Original: original}) }, original, nil
}

// RestoreScheduler puts a recorded switch back: at the end of a run, or at
// the next start for a run that was killed mid-sweep.
func (s FS) RestoreScheduler(sw SchedulerSwitch) error {
	if err := s.SetScheduler(sw.Disk, sw.Original); err != nil {
		return fmt.Errorf("restore the I/O scheduler of %s to %s: %w", sw.Disk, sw.Original, err)
	}
	return nil
}

// SchedulerDisk names the disk whose I/O scheduler governs t: for a block
// device its whole disk (a partition has no scheduler of its own, so
// switching it switches the disk and every partition on it); for a regular
// file the disk under its filesystem, but only when allowDisk says the user
// accepts that the switch affects everything on that disk.
func (s FS) SchedulerDisk(t Target, allowDisk bool) (string, error) {
	switch {
	case t.IsBlock && t.Disk == "":
		return "", fmt.Errorf("%s: no disk found for block device %s", t.Path, t.Dev)
	case t.IsBlock:
		return t.Disk, nil
	case t.Disk == "":
		fs := t.Filesystem
		if fs == "" {
			fs = "its"
		}
		return "", fmt.Errorf("%s is a file on a %s filesystem, which has no disk under it: there is no I/O scheduler to switch", t.Path, fs)
	case !allowDisk:
		on := t.Disk
		if t.Partition != "" {
			on = fmt.Sprintf("%s (partition %s)", t.Disk, t.Partition)
		}
		return "", fmt.Errorf("%s is a file on %s: switching its I/O scheduler switches it for everything on %s, not only this file; "+
			"pass --allow-disk-scheduler to do it anyway, or use a block device of its own (a spare disk, a loop device) as the target",
			t.Path, on, t.Disk)
	}
	return t.Disk, nil
}

// Discard issues BLKDISCARD over the whole of the block device at path, as
// blkdiscard(8) does: on an SSD it returns the blocks to the free pool so
// every step starts from the same state; on a loop device the file under it
// gets holes punched and reads back zeros.
//
// The device is opened O_EXCL, so one that is mounted or held by dm/md is
// refused with EBUSY; beyond that Discard checks nothing: the runner calls it
// only for targets that passed CheckWritable.
func Discard(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("discard: %w", err)
	}
	if fi.Mode()&os.ModeDevice == 0 || fi.Mode()&os.ModeCharDevice != 0 {
		return fmt.Errorf("discard %s: not a block device (BLKDISCARD only applies to block devices)", path)
	}
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_EXCL|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.EBUSY):
		return fmt.Errorf("discard %s: the device is in use (mounted, or held by another device): %w", path, err)
	case errors.Is(err, unix.EROFS):
		return fmt.Errorf("discard %s: the device is read-only: %w", path, err)
	case errors.Is(err, os.ErrPermission):
		return &permissionError{fmt.Sprintf("discarding %s needs root (write access to the device)", path), err}
	case err != nil:
		return fmt.Errorf("discard %s: %w", path, err)
	}
	defer unix.Close(fd)
	size, err := unix.IoctlGetUint64(fd, unix.BLKGETSIZE64)
	if err != nil {
		return fmt.Errorf("discard %s: BLKGETSIZE64: %w", path, err)
	}
	// struct { __u64 start, len; } (block/ioctl.c blk_ioctl_discard); both
	// must be multiples of the logical block size, which a whole device is.
	rng := [2]uint64{0, size}
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.BLKDISCARD, uintptr(unsafe.Pointer(&rng))); e != 0 {
		switch e {
		case unix.EOPNOTSUPP:
			return fmt.Errorf("discard %s: %s does not support discard (%s is 0)", path, path, discardMaxPath(fd))
		case unix.EPERM: // bdev_read_only
			return fmt.Errorf("discard %s: the device is read-only: %w", path, e)
		}
		return fmt.Errorf("discard %s: BLKDISCARD: %w", path, e)
	}
	return nil
}

// discardMaxPath names the sysfs file that says a device cannot discard.
func discardMaxPath(fd int) string {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil {
		if n, err := (FS{}).blockNode(devNumString(st.Rdev)); err == nil {
			return "/sys/block/" + n.disk + "/queue/discard_max_bytes"
		}
	}
	return "its queue/discard_max_bytes"
}

// CheckDiscard tells whether Discard(t.Path) can work before anything
// runs: t must be a block device whose disk takes discards
// (/sys/block/<disk>/queue/discard_max_bytes above 0).
func (s FS) CheckDiscard(t Target) error {
	if !t.IsBlock {
		return fmt.Errorf("%s is a file: BLKDISCARD applies to block devices (drop --discard, or point the job at a device)", t.Path)
	}
	p := s.sysPath("block", t.Disk, "queue", "discard_max_bytes")
	v, err := readTrimmed(p)
	if err != nil {
		return fmt.Errorf("discard: cannot tell whether %s takes discards: %w", t.Disk, err)
	}
	if v == "0" {
		return fmt.Errorf("%s does not support discard (%s is 0): drop --discard", t.Path, p)
	}
	return nil
}

// DropCaches writes back dirty pages and drops the page cache, dentries and
// inodes (sync; echo 3 > /proc/sys/vm/drop_caches — Documentation/admin-guide/
// sysctl/vm.rst), so buffered reads of one step do not hit what the previous
// one cached. drop_caches drops only clean pages, hence the sync first.
func (s FS) DropCaches() error {
	unix.Sync()
	path := s.procPath("sys", "vm", "drop_caches")
	if err := writeSysfs(path, "3"); err != nil {
		if denied := deniedError("dropping the page cache", path, err); denied != nil {
			return denied
		}
		return fmt.Errorf("drop caches: %w", err)
	}
	return nil
}
