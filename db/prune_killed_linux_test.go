package db

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// pruneAndDie prunes all but the newest run of each host and workload
// of the store at path, and kills its own process a moment after the
// first batch is committed: in the second batch's transaction, or
// between two.
func pruneAndDie(path string) {
	ctx := context.Background()
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	s, err := Open(ctx, path)
	if err != nil {
		fail(err)
	}
	plan, err := s.PlanPrune(ctx, PruneRule{Keep: 1})
	if err != nil {
		fail(err)
	}
	_, err = s.Prune(ctx, plan, func(done int) {
		if done == pruneBatch {
			go func() {
				time.Sleep(3 * time.Millisecond)
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}()
		}
	})
	if err != nil {
		fail(err)
	}
	// Done before the kill: the parent sees a prune that ended.
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

// TestPruneKilled: a prune killed halfway has deleted whole runs (with
// every row of theirs) and left the others whole; pruning again deletes
// the rest.
func TestPruneKilled(t *testing.T) {
	ctx := context.Background()
	s, path := openTest(t)
	ids := pruneLab(t, s, 160)
	s.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "IOLAB_DB_PRUNE_KILLED="+path)
	out, err := cmd.CombinedOutput()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the pruning helper was not killed: %v\n%s", err, out)
	}
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	left, err := s.ListRuns(ctx, RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	gone := len(ids) - len(left)
	t.Logf("the kill left %d of %d runs", len(left), len(ids))
	if gone < pruneBatch || gone%pruneBatch != 0 && gone != len(ids)-4 {
		t.Errorf("%d runs gone: want whole batches of %d", gone, pruneBatch)
	}
	for _, r := range left {
		if r.Steps != 2 {
			t.Errorf("run %d left with %d steps, want both", r.ID, r.Steps)
		}
	}
	var check string
	if err := s.read.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity check: %q %v", check, err)
	}
	var orphans int
	if err := s.read.QueryRow(`SELECT (SELECT count(*) FROM steps WHERE run_id NOT IN (SELECT id FROM runs))
		+ (SELECT count(*) FROM step_results WHERE step_id NOT IN (SELECT id FROM steps))
		+ (SELECT count(*) FROM samples WHERE result_id NOT IN (SELECT id FROM step_results))`).Scan(&orphans); err != nil || orphans != 0 {
		t.Errorf("%d rows of deleted runs left (%v)", orphans, err)
	}
	plan, err := s.PlanPrune(ctx, PruneRule{Keep: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prune(ctx, plan, nil); err != nil {
		t.Fatal(err)
	}
	if left, _ := s.ListRuns(ctx, RunFilter{}); len(left) != 4 {
		t.Errorf("after pruning again: %d runs, want the newest of each of the 4 host × workload", len(left))
	}
}
