package fio

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFioRunForKillsItsSessions: a run killed for hanging takes with it
// the processes it forked into sessions of their own, as fio's job
// processes are (setsid). The stand-in for fio is this test binary:
// started with IOLAB_RUNFOR_HELPER=parent, it starts itself again, same
// command line, in a new session, and both sleep.
func TestFioRunForKillsItsSessions(t *testing.T) {
	switch os.Getenv("IOLAB_RUNFOR_HELPER") {
	case "parent":
		cmd := exec.Command(os.Args[0], os.Args[1:]...)
		cmd.Env = append(os.Environ(), "IOLAB_RUNFOR_HELPER=child")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			os.Exit(3)
		}
		os.WriteFile(os.Getenv("IOLAB_RUNFOR_PIDFILE"), []byte(strconv.Itoa(cmd.Process.Pid)), 0o644)
		time.Sleep(time.Minute)
		os.Exit(0)
	case "child":
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	pidFile := filepath.Join(t.TempDir(), "child")
	t.Setenv("IOLAB_RUNFOR_HELPER", "parent")
	t.Setenv("IOLAB_RUNFOR_PIDFILE", pidFile)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	_, _, hung := fioRunFor(t, 2*time.Second, self, "-test.run=^TestFioRunForKillsItsSessions$")
	if !hung {
		t.Fatal("the stand-in ended by itself: it should have been killed as hung")
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the stand-in did not start its child: %v", err)
	}
	child := "/proc/" + string(b)
	if st, err := os.ReadFile(child + "/stat"); err == nil && !strings.Contains(string(st), ") Z ") {
		t.Errorf("the child in its own session (pid %s) still runs after the run was killed", b)
	}
}
