package db

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"reflect"
	"testing"

	"iolab/bench/sweep"
)

// TestEachStep: walking a run's steps a batch at a time gives exactly what
// reading them all at once gives, for every load, across batch borders and
// with gaps in seq; an error from the callback stops the walk.
func TestEachStep(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	rng := rand.New(rand.NewPCG(5, 6))
	id, err := s.CreateRun(ctx, testRun())
	if err != nil {
		t.Fatal(err)
	}
	// 2.5 batches, seq 0, 2, 4, …: the windows go by seq, not by count.
	n := eachStepBatch*2 + eachStepBatch/2
	for i := range n {
		st := testStep(rng, 2*i, 50, 3, i%3 != 0)
		if err := s.SaveStep(ctx, id, &st); err != nil {
			t.Fatal(err)
		}
	}
	for name, load := range map[string]StepLoad{
		"all":           LoadAll(),
		"page":          {Hists: ClatHist, Samples: func(st *sweep.StepResult) bool { return st.Step.Seq == 6 }},
		"nothing extra": {},
	} {
		t.Run(name, func(t *testing.T) {
			want, err := s.StepsFor(ctx, id, load)
			if err != nil {
				t.Fatal(err)
			}
			var got []sweep.StepResult
			if err := s.EachStep(ctx, id, load, func(st *sweep.StepResult) error {
				got = append(got, *st)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if len(got) != n || !reflect.DeepEqual(got, want) {
				t.Fatalf("EachStep gave %d steps, StepsFor %d, or they differ", len(got), len(want))
			}
		})
	}
	stop := errors.New("enough")
	calls := 0
	if err := s.EachStep(ctx, id, StepLoad{}, func(*sweep.StepResult) error { calls++; return stop }); err != stop || calls != 1 {
		t.Errorf("EachStep with a failing callback: %v after %d calls", err, calls)
	}
	if err := s.EachStep(ctx, id+1, StepLoad{}, func(*sweep.StepResult) error { return nil }); !errors.Is(err, ErrNotFound) {
		t.Errorf("EachStep of a missing run: %v", err)
	}
}

// TestRunOwnedElsewhere: a run another live process runs is owned
// elsewhere, with its pid; one of this process, one that ended and one
// whose process is gone are not.
func TestRunOwnedElsewhere(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	ctx := context.Background()
	s, _ := openTest(t)
	mine, err := s.CreateRun(ctx, testRun())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	self := s.self
	s.self = processOwner("/proc", cmd.Process.Pid) // the child records the run
	theirs, err := s.CreateRun(ctx, testRun())
	s.self = self
	if err != nil {
		t.Fatal(err)
	}
	done := testRun()
	done.Status = StatusDone
	ended, err := s.CreateRun(ctx, done)
	if err != nil {
		t.Fatal(err)
	}
	check := func(id int64, wantPID int, wantAlive bool) {
		t.Helper()
		pid, alive, err := s.RunOwnedElsewhere(ctx, id)
		if err != nil || alive != wantAlive || (wantPID != 0 && pid != wantPID) {
			t.Errorf("run %d: pid %d alive %v (%v), want pid %d alive %v", id, pid, alive, err, wantPID, wantAlive)
		}
	}
	check(mine, os.Getpid(), false)
	check(theirs, cmd.Process.Pid, true)
	check(ended, 0, false)
	cmd.Process.Kill()
	cmd.Wait()
	check(theirs, cmd.Process.Pid, false)
	if _, _, err := s.RunOwnedElsewhere(ctx, 999); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing run: %v", err)
	}
}
