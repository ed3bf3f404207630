package agent_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"
	"iolab/handlers/agent"
)

// TestFinishedRunImmutable: once an agent has ended its run, re-sending a
// step with another status, or a step the run lacks, is refused (409)
// with why, and the stored steps stay as they were; a retry of what is
// stored changes nothing and is answered as before. An interrupted run
// takes the steps it lacks, never a new version of one it has.
func TestFinishedRunImmutable(t *testing.T) {
	d := newDashboard(t, agent.Timing{Poll: time.Second})
	_, token := d.addAgent(t, "agent-f")
	hello := agent.Hello{Name: "agent-f", DataDir: "/data", Host: system.HostInfo{Hostname: "f", KernelRelease: "6.1"}}
	if code := d.call(t, "POST", agent.PathHello, token, &hello, nil); code != 200 {
		t.Fatalf("hello: %d", code)
	}
	var c created
	if code := d.call(t, "POST", "/api/runs", "", plan("/data/f", "agent-f"), &c); code != http.StatusCreated {
		t.Fatalf("launch: %d", code)
	}
	var w agent.Work
	if code := d.call(t, "GET", agent.PathWork+"?wait=1", token, nil, &w); code != 200 || w.RunID != c.Runs[0].ID {
		t.Fatalf("work: %d %+v", code, w)
	}
	ctx := context.Background()
	run, _ := d.store.GetRun(ctx, w.RunID)
	steps, _ := run.Plan.Steps()
	step := func(seq int, status string) *sweep.StepResult {
		return &sweep.StepResult{Step: steps[seq], Status: status, Error: map[bool]string{true: "boom"}[status == sweep.StepFailed],
			Start: time.Now(), End: time.Now()}
	}
	put := func(seq int, res *sweep.StepResult) (int, string) {
		var eb errBody
		code := d.call(t, "PUT", fmt.Sprintf("%s%d/steps/%d", agent.PathRuns, w.RunID, seq), token, res, &eb)
		return code, eb.Error
	}
	hostile := step(0, sweep.StepDone)
	hostile.Result = &bench.Result{Groups: []bench.GroupResult{{Jobs: []bench.JobResult{{Name: "r", Runtime: time.Second, GroupID: 1 << 40}}}}}
	if code, msg := put(0, hostile); code != http.StatusBadRequest || !strings.Contains(msg, "group_id 1099511627776") {
		t.Fatalf("a step with group id 2^40: %d %q", code, msg)
	}
	if code, msg := put(0, step(0, sweep.StepFailed)); code != 200 {
		t.Fatalf("step 0 while running: %d %q", code, msg)
	}
	var end agent.Ack
	if code := d.call(t, "POST", fmt.Sprintf("%s%d/end", agent.PathRuns, w.RunID), token, &agent.End{Status: db.StatusPartial}, &end); code != 200 || end.Status != db.StatusPartial {
		t.Fatalf("end: %d %+v", code, end)
	}
	if code, msg := put(0, step(0, sweep.StepDone)); code != http.StatusConflict || !strings.Contains(msg, "has ended (partial)") || !strings.Contains(msg, "do not change") {
		t.Errorf("step 0 re-sent as done after the end: %d %q", code, msg)
	}
	if code, msg := put(1, step(1, sweep.StepDone)); code != http.StatusConflict || !strings.Contains(msg, "step 1 is refused") {
		t.Errorf("a new step after the end: %d %q", code, msg)
	}
	if code, msg := put(0, step(0, sweep.StepFailed)); code != 200 {
		t.Errorf("a retry of the stored step: %d %q", code, msg)
	}
	if got, _ := d.store.StoredSteps(ctx, w.RunID); len(got) != 1 || got[0] != sweep.StepFailed {
		t.Fatalf("stored after the refusals: %v", got)
	}
	if r, _ := d.store.GetRun(ctx, w.RunID); r.Status != db.StatusPartial {
		t.Fatalf("the run is %s", r.Status)
	}

	// Interrupted: the lease ran out.
	if err := d.store.SetRunStatus(ctx, w.RunID, db.StatusInterrupted, "lease ran out"); err != nil {
		t.Fatal(err)
	}
	if code, msg := put(1, step(1, sweep.StepDone)); code != 200 {
		t.Errorf("a step an interrupted run lacks: %d %q", code, msg)
	}
	if code, msg := put(1, step(1, sweep.StepFailed)); code != http.StatusConflict || !strings.Contains(msg, "stored as done") {
		t.Errorf("a new version of a step an interrupted run has: %d %q", code, msg)
	}
}
