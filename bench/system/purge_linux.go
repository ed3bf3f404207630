package system

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The block layer's ways of emptying a range of a device (linux/fs.h).
const (
	blkSecDiscard = 0x127d // _IO(0x12, 125)
	blkZeroOut    = 0x127f // _IO(0x12, 127)
)

// Purge empties the first size bytes of the block device open for
// writing on fd (size 0: the whole device), trying each way in turn
// until one works: PurgeSecure (BLKSECDISCARD, where the device offers
// secure erase), PurgeDiscard (BLKDISCARD), PurgeZero (BLKZEROOUT: the
// range written with zeroes, by the device's write-zeroes command where
// it has one). It returns the way used and, when earlier ways were
// refused, why each was. The caller opens fd through the guard; Purge
// checks only that it is a block device.
func Purge(fd int, path string, ways []string, size uint64) (used string, skipped []string, err error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", nil, fmt.Errorf("purge %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return "", nil, fmt.Errorf("purge %s: not a block device (a purge empties a device)", path)
	}
	devSize, err := unix.IoctlGetUint64(fd, unix.BLKGETSIZE64)
	if err != nil {
		return "", nil, fmt.Errorf("purge %s: BLKGETSIZE64: %w", path, err)
	}
	if size == 0 || size > devSize {
		size = devSize
	}
	lbs, err := unix.IoctlGetInt(fd, unix.BLKSSZGET)
	if err != nil || lbs <= 0 {
		lbs = 512
	}
	size -= size % uint64(lbs)
	for _, way := range ways {
		var req uintptr
		switch way {
		case PurgeSecure:
			req = blkSecDiscard
		case PurgeDiscard:
			req = unix.BLKDISCARD
		case PurgeZero:
			req = blkZeroOut
		default:
			return "", skipped, fmt.Errorf("purge %s: no way %q (secure, discard or zero)", path, way)
		}
		rng := [2]uint64{0, size}
		_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), req, uintptr(unsafe.Pointer(&rng)))
		if e == 0 {
			return way, skipped, nil
		}
		switch {
		case e == unix.EOPNOTSUPP || e == unix.ENOTTY || e == unix.EINVAL:
			skipped = append(skipped, fmt.Sprintf("%s: the device does not offer it (%v)", PurgeIoctl(way), e))
		case e == unix.EPERM || errors.Is(e, unix.EROFS):
			return "", skipped, fmt.Errorf("purge %s: %s: the device is read-only: %w", path, PurgeIoctl(way), e)
		default:
			return "", skipped, fmt.Errorf("purge %s: %s: %w", path, PurgeIoctl(way), e)
		}
	}
	return "", skipped, fmt.Errorf("purge %s: no way worked (%s)", path, strings.Join(skipped, "; "))
}
