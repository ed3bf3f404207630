package system

import "golang.org/x/sys/unix"

// IsBlockDevice reports whether path (after symlinks) is a block device.
func IsBlockDevice(path string) bool {
	var st unix.Stat_t
	return unix.Stat(path, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFBLK
}
