package db

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func TestOwnerAliveOnFixtures(t *testing.T) {
	const proc = "testdata/proc"
	const boot = "6f1c2e1a-1111-4222-8333-944455556666"
	if got, want := processOwner(proc, 42), (owner{Boot: boot, PID: 42, Start: 987654}); got != want {
		t.Fatalf("processOwner = %+v, want %+v", got, want)
	}
	tests := []struct {
		name  string
		o     owner
		alive bool
	}{
		{"same process", owner{Boot: boot, PID: 42, Start: 987654}, true},
		{"pid reused", owner{Boot: boot, PID: 42, Start: 1111}, false},
		{"other boot", owner{Boot: "0000", PID: 42, Start: 987654}, false},
		{"no such pid", owner{Boot: boot, PID: 43, Start: 987654}, false},
		{"unknown (no /proc where it was recorded)", owner{PID: 42}, false},
		{"none (imported run)", owner{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.o.alive(proc); got != tt.alive {
				t.Errorf("alive = %v, want %v", got, tt.alive)
			}
		})
	}
}

func TestOwnerAliveLive(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	self := processOwner("/proc", os.Getpid())
	if self.Boot == "" || self.Start == 0 {
		t.Fatalf("own owner %+v is incomplete", self)
	}
	if !self.alive("/proc") {
		t.Error("this process is not alive")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child := processOwner("/proc", cmd.Process.Pid)
	cmd.Wait() // reaped: its pid is gone
	if child.Boot == "" {
		t.Fatalf("child owner %+v is incomplete", child)
	}
	if child.alive("/proc") {
		t.Error("an exited child is alive")
	}
}

// TestOwnerZombieIsDead: a child killed but not yet reaped keeps its /proc
// entry and start time; it must not count as a live owner.
func TestOwnerZombieIsDead(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	child := processOwner("/proc", cmd.Process.Pid)
	if !child.alive("/proc") {
		t.Fatal("a running child is not alive")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	defer cmd.Wait()
	// At once, before it is even a zombie: SIGKILL pending, or exiting.
	if child.alive("/proc") {
		t.Error("a process just sent SIGKILL counts as a live owner")
	}
	deadline := time.Now().Add(5 * time.Second)
	for processState("/proc", cmd.Process.Pid) != 'Z' {
		if time.Now().After(deadline) {
			t.Fatal("the killed child never became a zombie")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if processOwner("/proc", cmd.Process.Pid) != child {
		t.Fatal("the zombie's owner changed: the test no longer shows what it should")
	}
	if child.alive("/proc") {
		t.Error("a zombie counts as a live owner")
	}
}

// TestThreadsDeadWaitsForEveryThread: a leader turned zombie while another
// thread is still in the kernel (state D, finishing a scheduler write) is
// not settled; once every thread is a zombie it is.
func TestThreadsDeadWaitsForEveryThread(t *testing.T) {
	proc := t.TempDir()
	stat := func(tid int, state string) {
		dir := filepath.Join(proc, "500", "task", strconv.Itoa(tid))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		line := fmt.Sprintf("%d (iolab) %s 1 500 500 0 -1 4194560 0 0\n", tid, state)
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stat(500, "Z")
	stat(501, "D")
	if threadsDead(proc, 500) {
		t.Fatal("a thread in D counts as dead because the leader is a zombie")
	}
	stat(501, "Z")
	if !threadsDead(proc, 500) {
		t.Fatal("all threads zombies, yet not dead")
	}
	if !threadsDead(proc, 999) {
		t.Fatal("a process with no /proc entry is not dead")
	}
}
