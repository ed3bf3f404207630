package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// defaultLoopDir is where the loop target's backing file goes unless
// --dir says: /dev/shm when it is a tmpfs with room for it, so that the
// loop device's reads are the loop driver's and its worker's work, not a
// disk's that other tenants of the host share (their noise swamped the
// engines' differences); else the temporary directory.
func defaultLoopDir() string {
	const shm = "/dev/shm"
	var st unix.Statfs_t
	if onTmpfs(shm) && unix.Statfs(shm, &st) == nil && int64(st.Bavail)*st.Bsize >= 2<<30 {
		return shm
	}
	return os.TempDir()
}

// onTmpfs says whether dir is on a tmpfs.
func onTmpfs(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == unix.TMPFS_MAGIC
}
