package system

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestDeviceLockExcludes(t *testing.T) {
	dir := t.TempDir()
	a, err := TryLockDevice(dir, "loop7", "pid 1 run 1")
	if err != nil {
		t.Fatal(err)
	}
	// flock locks belong to open file descriptions: a second open in this
	// process is refused just as another process would be.
	_, err = TryLockDevice(dir, "loop7", "pid 2 run 2")
	if !errors.Is(err, ErrDeviceBusy) || !strings.Contains(err.Error(), "pid 1 run 1") {
		t.Fatalf("second lock: %v; want busy, naming the holder", err)
	}
	if _, err := TryLockDevice(dir, "loop8", "x"); err != nil {
		t.Errorf("another device: %v", err)
	}
	if err := a.Unlock(); err != nil {
		t.Fatal(err)
	}
	b, err := TryLockDevice(dir, "loop7", "pid 2 run 2")
	if err != nil {
		t.Fatalf("after unlock: %v", err)
	}
	b.Unlock()
}

// TestDeviceLockDiesWithHolder: a process that dies holding a lock does not
// keep it, even before its parent reaps it.
func TestDeviceLockDiesWithHolder(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("flock(1) not installed")
	}
	dir := t.TempDir()
	path := dir + "/" + lockName("loop9")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("flock", "-o", path, "sleep", "5") // -o: sleep does not inherit the lock
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until flock(1) holds it (a lock taken here is given back at once).
	held := false
	for range 200 {
		l, err := TryLockDevice(dir, "loop9", "probe")
		if errors.Is(err, ErrDeviceBusy) {
			held = true
			break
		}
		if err == nil {
			l.Unlock()
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !held {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("flock(1) never took the lock")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Not reaped yet: the child is a zombie, and its descriptors are gone.
	var l *DeviceLock
	var err error
	for range 100 {
		if l, err = TryLockDevice(dir, "loop9", "me"); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err != nil {
		cmd.Wait()
		t.Fatalf("lock still held after its holder was killed: %v", err)
	}
	if p, perr := os.ReadFile("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/stat"); perr == nil && !strings.Contains(string(p), ") Z ") {
		t.Logf("holder not a zombie yet: %s", p)
	}
	cmd.Wait()
	l.Unlock()
}
