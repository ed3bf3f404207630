package agent_test

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"iolab/db"
	"iolab/handlers/agent"
)

// TestDashboardStartsAgain: a dashboard that starts again on the store of
// one whose agents were running a group holds each run for its agent:
// running, "agent unreachable" until the agent's next word, after which
// it is reachable and its end is stored; the run of an agent whose token
// was revoked meanwhile is interrupted at the start (it will not be back).
func TestDashboardStartsAgain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dash.db")
	timing := agent.Timing{Lease: 500 * time.Millisecond, Lost: time.Minute, Poll: time.Second}
	d1 := newDashboardOn(t, path, timing)
	tokens := map[string]string{}
	ids := map[string]int64{}
	for _, name := range []string{"agent-h", "agent-g"} {
		ids[name], tokens[name] = d1.addAgent(t, name)
		if code := d1.call(t, "POST", agent.PathHello, tokens[name], &agent.Hello{DataDir: "/data"}, nil); code != 200 {
			t.Fatalf("hello %s: %d", name, code)
		}
	}
	var c created
	if code := d1.call(t, "POST", "/api/runs", "", plan("/data/f", "agent-h", "agent-g"), &c); code != http.StatusCreated {
		t.Fatalf("launch: %d", code)
	}
	runs := map[string]int64{}
	for _, name := range []string{"agent-h", "agent-g"} {
		var w agent.Work
		if code := d1.call(t, "GET", agent.PathWork+"?wait=1", tokens[name], nil, &w); code != 200 {
			t.Fatalf("work %s: %d", name, code)
		}
		runs[name] = w.RunID
	}
	// Revoked while the dashboard is away (not through it, which would
	// end the run at once).
	if err := d1.store.RevokeAgentToken(context.Background(), ids["agent-g"]); err != nil {
		t.Fatal(err)
	}

	d2 := newDashboardOn(t, path, timing)
	type doc struct {
		Run   db.Run       `json:"run"`
		Agent *agent.Reach `json:"agent"`
	}
	get := func(id int64) doc {
		t.Helper()
		var got doc
		if code := d2.call(t, "GET", fmt.Sprintf("/api/runs/%d", id), "", nil, &got); code != 200 {
			t.Fatalf("run %d: %d", id, code)
		}
		return got
	}
	if got := get(runs["agent-g"]); got.Run.Status != db.StatusInterrupted || !strings.Contains(got.Run.Error, "while agent agent-g ran this run, and the agent is gone") || got.Agent != nil {
		t.Fatalf("the revoked agent's run: %s %q %+v", got.Run.Status, got.Run.Error, got.Agent)
	}
	held := get(runs["agent-h"])
	if held.Run.Status != db.StatusRunning || held.Agent == nil || !held.Agent.Unreachable || held.Agent.Agent != "agent-h" ||
		held.Agent.LastHeard.IsZero() || time.Until(held.Agent.LostAt) < 50*time.Second {
		t.Fatalf("the held run after the start: %s %+v", held.Run.Status, held.Agent)
	}
	var ack agent.Ack
	path2 := fmt.Sprintf("%s%d", agent.PathRuns, runs["agent-h"])
	if code := d2.call(t, "POST", path2+"/events", tokens["agent-h"], &agent.Events{}, &ack); code != 200 || ack.Status != db.StatusRunning || ack.Cancel {
		t.Fatalf("the agent's heartbeat to the dashboard started again: %d %+v", code, ack)
	}
	if got := get(runs["agent-h"]); got.Agent == nil || got.Agent.Unreachable || got.Run.Status != db.StatusRunning {
		t.Fatalf("after the agent's word: %s %+v", got.Run.Status, got.Agent)
	}
	if code := d2.call(t, "POST", path2+"/end", tokens["agent-h"], &agent.End{Status: db.StatusDone}, &ack); code != 200 || ack.Status != db.StatusDone {
		t.Fatalf("the agent's end: %d %+v", code, ack)
	}
	if got := get(runs["agent-h"]); got.Run.Status != db.StatusDone || got.Agent != nil {
		t.Fatalf("after its end: %s %+v", got.Run.Status, got.Agent)
	}
}
