package db

import (
	"context"
	"errors"
	"testing"

	"iolab/bench/sweep"
)

// A run's version moves with every change a page could show: a step
// stored or replaced, the run's status, name and labels; another run's
// changes leave it alone.
func TestRunVersions(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	a, err := s.CreateRun(ctx, testRun())
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.CreateRun(ctx, testRun())
	if err != nil {
		t.Fatal(err)
	}
	version := func() (int64, int64) {
		t.Helper()
		v, err := s.RunVersions(ctx, []int64{a, b})
		if err != nil {
			t.Fatal(err)
		}
		return v[0], v[1]
	}
	va, vb := version()
	changes := []struct {
		name string
		do   func() error
	}{
		{"a step stored", func() error {
			return s.SaveStep(ctx, a, &sweep.StepResult{Step: sweep.Step{Seq: 0}, Status: sweep.StepFailed, Error: "first"})
		}},
		{"the step replaced", func() error {
			return s.SaveStep(ctx, a, &sweep.StepResult{Step: sweep.Step{Seq: 0}, Status: sweep.StepDone})
		}},
		{"the status", func() error { return s.SetRunStatus(ctx, a, StatusDone, "") }},
		{"the name", func() error { return s.RenameRun(ctx, a, "renamed") }},
		{"the labels", func() error { _, err := s.SetTags(ctx, a, []string{"x"}); return err }},
		{"joining a group", func() error {
			g := &FleetRun{Name: "g"}
			if err := s.CreateFleetRun(ctx, g); err != nil {
				return err
			}
			return s.AddFleetRunMember(ctx, g.UID, FleetRunMember{RunID: a, HostKind: "local", HostName: "here"})
		}},
		{"its group gone", func() error {
			_, err := s.write.ExecContext(ctx, "DELETE FROM group_runs WHERE run_id = ?", a)
			return err
		}},
	}
	for _, c := range changes {
		if err := c.do(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		na, nb := version()
		if na == va {
			t.Errorf("%s: run a's version stayed %d", c.name, va)
		}
		if nb != vb {
			t.Errorf("%s: run b's version moved from %d to %d", c.name, vb, nb)
		}
		va = na
	}
	if _, err := s.RunVersions(ctx, []int64{a, 999}); !errors.Is(err, ErrNotFound) {
		t.Errorf("a missing run: %v, want ErrNotFound", err)
	}
}
