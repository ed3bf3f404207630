package agent_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"iolab/bench/launch"
	"iolab/bench/system"
	"iolab/db"
	"iolab/handlers/agent"
)

// TestAgentQuota: an agent refuses a run that would lay out more in its
// data directory than its quota allows, before anything is written, and
// the dashboard's run fails saying so and which flag raises it.
func TestAgentQuota(t *testing.T) {
	d := newDashboard(t, agent.Timing{Poll: time.Second})
	id, token := d.addAgent(t, "agent-q")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	os.Mkdir(data, 0o700)
	data, _ = filepath.EvalSymlinks(data)
	store, err := db.Open(context.Background(), filepath.Join(dir, "agent.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	a, err := agent.New(agent.Config{Dashboard: d.url, Token: token, Allow: launch.AllowList{DataDir: data},
		Quota: launch.Quota{RunBytes: 8 << 20}, Store: store, Sys: system.FS{}, ProgressEvery: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitHost(t, d, id)

	var c created
	if code := d.call(t, "POST", "/api/runs", "", plan(filepath.Join(data, "big"), "agent-q"), &c); code != http.StatusCreated {
		t.Fatalf("launch: %d", code)
	}
	// plan's size is 4m: within the quota. A bigger one is not.
	p := plan(filepath.Join(data, "bigger"), "agent-q")
	p["options"].(map[string]any)["size"] = "64m"
	var c2 created
	if code := d.call(t, "POST", "/api/runs", "", p, &c2); code != http.StatusCreated {
		t.Fatalf("launch: %d", code)
	}
	if r := waitRun(t, d.store, c.Runs[0].ID, 30*time.Second); r.Status != db.StatusDone {
		t.Fatalf("the run within the quota: %s %s", r.Status, r.Error)
	}
	r := waitRun(t, d.store, c2.Runs[0].ID, 30*time.Second)
	if r.Status != db.StatusFailed || !strings.Contains(r.Error, "refused the plan") || !strings.Contains(r.Error, "--run-max-size") {
		t.Fatalf("the run over the quota: %s %q; want failed, refused on --run-max-size", r.Status, r.Error)
	}
	if _, err := os.Stat(filepath.Join(data, "bigger")); err == nil {
		t.Error("the refused run laid out its file")
	}
}
