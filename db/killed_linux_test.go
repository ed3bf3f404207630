package db

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestMain runs the helper of TestKilledRun when the test binary is started
// as one, with IOLAB_DB_KILLED set to a database path.
func TestMain(m *testing.M) {
	if path := os.Getenv("IOLAB_DB_KILLED"); path != "" {
		saveAndDie(path)
	}
	if path := os.Getenv("IOLAB_DB_PRUNE_KILLED"); path != "" {
		pruneAndDie(path)
	}
	os.Exit(m.Run())
}

// saveAndDie saves a run with two finished steps and a switched scheduler,
// then kills its own process.
func saveAndDie(path string) {
	ctx := context.Background()
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	s, err := Open(ctx, path)
	if err != nil {
		fail(err)
	}
	id, err := s.CreateRun(ctx, testRun())
	if err != nil {
		fail(err)
	}
	if _, err := s.AddSchedulerRestore(ctx, id, "loop7", "mq-deadline"); err != nil {
		fail(err)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	for seq := range 2 {
		st := testStep(rng, seq, 1000, 10, false)
		if err := s.SaveStep(ctx, id, &st); err != nil {
			fail(err)
		}
	}
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {}
}

func TestKilledRun(t *testing.T) {
	ctx := context.Background()
	path := t.TempDir() + "/iolab.db"
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "IOLAB_DB_KILLED="+path)
	out, err := cmd.CombinedOutput()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("helper was not killed: %v\n%s", err, out)
	}

	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ids := s.Interrupted()
	if len(ids) != 1 {
		t.Fatalf("Interrupted() = %v, want the helper's run", ids)
	}
	if again, err := s.MarkInterrupted(ctx); err != nil || len(again) != 0 {
		t.Errorf("MarkInterrupted after Open: %v, %v; want nothing more", again, err)
	}
	r, err := s.GetRun(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != StatusInterrupted || r.Steps != 2 {
		t.Errorf("run: status %s with %d steps, want interrupted with 2", r.Status, r.Steps)
	}
	steps, err := s.Steps(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range steps {
		if st.Status != "done" || st.Result == nil || st.Result.Groups[0].Jobs[0].Dirs[1].Clat.Hist.N() != 1000 {
			t.Errorf("step %d: %s, results lost", st.Step.Seq, st.Status)
		}
	}
	restores, err := s.SchedulerRestores(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(restores) != 1 || restores[0].Disk != "loop7" || restores[0].Original != "mq-deadline" || restores[0].RunID != r.ID {
		t.Errorf("restores %+v, want loop7 back to mq-deadline", restores)
	}
}

// A long-lived process (the dashboard) notices a run whose process died
// after it opened the store.
func TestMarkInterruptedWhileOpen(t *testing.T) {
	ctx := context.Background()
	s, path := openTest(t)
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "IOLAB_DB_KILLED="+path)
	out, err := cmd.CombinedOutput()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("helper was not killed: %v\n%s", err, out)
	}
	runs, err := s.ListRuns(ctx, RunFilter{Status: StatusRunning})
	if err != nil || len(runs) != 1 {
		t.Fatalf("%d running runs, %v; want the helper's", len(runs), err)
	}
	ids, err := s.MarkInterrupted(ctx)
	if err != nil || !slices.Equal(ids, []int64{runs[0].ID}) {
		t.Fatalf("MarkInterrupted = %v, %v; want [%d]", ids, err, runs[0].ID)
	}
	if r, err := s.GetRun(ctx, runs[0].ID); err != nil || r.Status != StatusInterrupted {
		t.Errorf("run after MarkInterrupted: %v, %v", r, err)
	}
}

// The dashboard calls MarkInterrupted every 2 s: with many runs of live
// processes open (fifty agents' runs, the dashboard their owner) it
// writes nothing and takes no write lock, so it never keeps the store's
// writers waiting — here it answers while another connection holds the
// write lock.
func TestMarkInterruptedLiveRunsTakeNoWriteLock(t *testing.T) {
	ctx := context.Background()
	s, path := openTest(t)
	for range 50 {
		if _, err := s.CreateRun(ctx, testRun()); err != nil {
			t.Fatal(err)
		}
	}
	other, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, "ROLLBACK")
	// Less than the store's busy_timeout: waiting for the lock fails.
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	ids, err := s.MarkInterrupted(short)
	if err != nil || len(ids) != 0 {
		t.Fatalf("MarkInterrupted = %v, %v; want nothing, without waiting for the write lock", ids, err)
	}
	runs, err := s.ListRuns(ctx, RunFilter{Status: StatusRunning})
	if err != nil || len(runs) != 50 {
		t.Fatalf("%d running runs, %v; want all 50", len(runs), err)
	}
}
