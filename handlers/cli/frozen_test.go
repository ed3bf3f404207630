package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"iolab/bench/sweep"
	"iolab/db"
)

// TestStoppedStepIsFailed stops a child iolab with SIGSTOP for 3 s in the
// middle of the second of three 1 s steps, then lets it go on: that step
// is stored failed, saying the process was stopped for about 3 s and
// keeping no figures; the steps around it are done.
func TestStoppedStepIsFailed(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "iolab.db")
	cmd := exec.Command(os.Args[0], "run", "--db", dbPath, "--name=frozen", "--sweep=bs=4k,8k,16k",
		"--filename="+filepath.Join(dir, "target"), "--size=4m", "--rw=read", "--ioengine=psync",
		"--runtime=1s", "--time_based")
	cmd.Env = append(os.Environ(), "IOLAB_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGCONT)
		cmd.Process.Kill()
	}()
	deadline := time.Now().Add(30 * time.Second)
	for storedSteps(t, dbPath) < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("no step stored in 30 s\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Inside the second step's 1 s window.
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if exitCode(err) != 1 {
		t.Fatalf("exit %v, want 1 (a failed step)\n%s", err, stderr.String())
	}

	store, err := db.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	runs, err := store.ListRuns(context.Background(), db.RunFilter{})
	if err != nil || len(runs) != 1 || runs[0].Status != db.StatusPartial {
		t.Fatalf("runs %+v %v, want one partial run", runs, err)
	}
	steps, err := store.Steps(context.Background(), runs[0].ID)
	if err != nil || len(steps) != 3 {
		t.Fatalf("%d steps, %v", len(steps), err)
	}
	for i, st := range steps {
		if i == 1 {
			if st.Status != sweep.StepFailed || !strings.Contains(st.Error, "stopped or starved for") || st.Result != nil {
				t.Fatalf("the stopped step: %s %q, result %v", st.Status, st.Error, st.Result != nil)
			}
			var secs float64
			if _, err := fmt.Sscanf(st.Error[strings.Index(st.Error, "starved for ")+len("starved for "):], "%f s", &secs); err != nil || secs < 2.5 || secs > 6 {
				t.Fatalf("the stopped step says %q: want the 3 s stop (%v)", st.Error, err)
			}
			continue
		}
		if st.Status != sweep.StepDone {
			t.Fatalf("step %d: %s %q", i+1, st.Status, st.Error)
		}
	}
}
