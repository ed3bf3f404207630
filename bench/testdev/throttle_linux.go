package testdev

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// LoopInMemory attaches a blank file of size bytes in /dev/shm to a free
// loop device, detached and removed when the test ends: a device whose
// latency is the kernel's and the CPU's, not a disk's under other tests.
func LoopInMemory(t testing.TB, size int64) string {
	t.Helper()
	NeedLoopTools(t)
	f, err := os.CreateTemp("/dev/shm", "iolab-test-")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	t.Cleanup(func() { os.Remove(f.Name()) })
	if err := os.Truncate(f.Name(), size); err != nil {
		t.Fatal(err)
	}
	return attach(t, f.Name())
}

// ThrottleReads caps the reads this process makes on block device dev at
// iops per second, through a cgroup of its own (v1 blkio or v2 io), until
// the test ends: a device with a known capacity. It reports false, doing
// nothing, when neither controller can be used here.
func ThrottleReads(t testing.TB, dev string, iops int) bool {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(dev, &st); err != nil {
		t.Fatal(err)
	}
	mm := fmt.Sprintf("%d:%d", unix.Major(st.Rdev), unix.Minor(st.Rdev))
	name := fmt.Sprintf("iolab-test-%d", os.Getpid())
	type ctl struct{ root, file, line string }
	for _, c := range []ctl{
		{"/sys/fs/cgroup/blkio", "blkio.throttle.read_iops_device", mm + " " + strconv.Itoa(iops)},
		{"/sys/fs/cgroup", "io.max", mm + " riops=" + strconv.Itoa(iops)},
	} {
		if _, err := os.Stat(filepath.Join(c.root, "cgroup.procs")); err != nil {
			continue
		}
		if c.file == "io.max" {
			b, err := os.ReadFile(filepath.Join(c.root, "cgroup.subtree_control"))
			if err != nil || !strings.Contains(string(b), "io") {
				continue
			}
		}
		dir := filepath.Join(c.root, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			continue
		}
		back := func() {
			os.WriteFile(filepath.Join(c.root, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0o644)
			os.Remove(dir)
		}
		if os.WriteFile(filepath.Join(dir, c.file), []byte(c.line), 0o644) != nil ||
			os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0o644) != nil {
			back()
			continue
		}
		t.Cleanup(back)
		return true
	}
	return false
}

// Renice sets every thread of this process (and so those it starts) to
// nice until the test ends, then back to what each had: on a machine
// shared with other tests, a timing test's job thread then waits less
// for a CPU. Needs root for a negative nice.
func Renice(t testing.TB, nice int) {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range tasks {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		was, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
		if err != nil {
			continue
		}
		if err := unix.Setpriority(unix.PRIO_PROCESS, tid, nice); err != nil {
			t.Logf("renice thread %d: %v", tid, err)
			continue
		}
		// getpriority's raw call returns 20 - nice.
		t.Cleanup(func() { unix.Setpriority(unix.PRIO_PROCESS, tid, 20-was) })
	}
}
