package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/launch"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"
	"iolab/handlers"
	"iolab/handlers/agent"

	"github.com/labstack/echo/v4"
)

// dashboard is a real dashboard over a fresh store, on an httptest
// server, with the agents' clock t.
type dashboard struct {
	url   string
	store *db.Store
}

func newDashboard(t *testing.T, timing agent.Timing) *dashboard {
	t.Helper()
	return newDashboardOn(t, filepath.Join(t.TempDir(), "dash.db"), timing)
}

// newDashboardOn is a dashboard over the store at path: a second one on
// the same path is that dashboard started again.
func newDashboardOn(t *testing.T, path string, timing agent.Timing) *dashboard {
	t.Helper()
	store, err := db.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := handlers.Config{Store: store, ProgressEvery: 100 * time.Millisecond, Fleet: handlers.FleetConfig{Agents: timing}}
	if testing.Verbose() {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	srv, err := handlers.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	srv.Register(e)
	hs := httptest.NewServer(e)
	t.Cleanup(func() {
		hs.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		store.Close()
	})
	return &dashboard{url: hs.URL, store: store}
}

// call sends a JSON request to the dashboard and decodes its answer.
func (d *dashboard) call(t *testing.T, method, path, token string, body any, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, d.url+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if out != nil && resp.StatusCode < 300 && len(b) > 0 {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
	if resp.StatusCode >= 300 {
		if e, ok := out.(*errBody); ok {
			json.Unmarshal(b, e)
		}
	}
	return resp.StatusCode
}

type errBody struct {
	Error string `json:"error"`
}

// addAgent issues an agent's token on the dashboard.
func (d *dashboard) addAgent(t *testing.T, name string) (int64, string) {
	t.Helper()
	var added struct {
		Host  db.Host `json:"host"`
		Token string  `json:"token"`
	}
	if code := d.call(t, "POST", "/api/hosts", "", map[string]string{"kind": db.HostAgent, "name": name}, &added); code != http.StatusCreated {
		t.Fatalf("add agent: %d", code)
	}
	return added.Host.ID, added.Token
}

// startAgent runs an agent with its own store and data directory until
// the test ends.
func startAgent(t *testing.T, d *dashboard, token, name string) (dataDir string, store *db.Store, stop func()) {
	t.Helper()
	dir := t.TempDir()
	dataDir = filepath.Join(dir, "data")
	os.Mkdir(dataDir, 0o755)
	dataDir, _ = filepath.EvalSymlinks(dataDir)
	store, err := db.Open(context.Background(), filepath.Join(dir, "agent.db"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Dashboard: d.url, Token: token, Name: name, Allow: launch.AllowList{DataDir: dataDir},
		Store: store, Sys: system.FS{}, ProgressEvery: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	stopped := false
	stop = func() {
		if !stopped {
			stopped = true
			cancel()
			<-done
		}
	}
	t.Cleanup(func() { stop(); store.Close() })
	return dataDir, store, stop
}

// waitHost waits until the dashboard has heard from the agent.
func waitHost(t *testing.T, d *dashboard, id int64) *db.Host {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		h, err := d.store.GetHost(context.Background(), id)
		if err == nil && !h.LastSeen.IsZero() && h.Details.Env != nil {
			return h
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent never said hello: %+v %v", h, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitRun waits until run id has ended and returns it.
func waitRun(t *testing.T, store *db.Store, id int64, within time.Duration) *db.Run {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		r, err := store.GetRun(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != db.StatusQueued && r.Status != db.StatusRunning {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d still %s after %v", id, r.Status, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type created struct {
	ID    int64  `json:"id"`
	Group string `json:"group"`
	URL   string `json:"url"`
	Runs  []struct {
		ID   int64  `json:"id"`
		Host string `json:"host"`
	} `json:"runs"`
}

// plan is a small sweep on a file of the agent's data directory.
func plan(file string, hosts ...string) map[string]any {
	return map[string]any{
		"name":    "fleet",
		"options": map[string]any{"filename": file, "size": "4m", "rw": "randread", "bs": "4k", "ioengine": "psync", "runtime": "300ms", "time_based": 1},
		"sweep":   map[string]any{"bs": []string{"4k", "8k"}},
		"repeat":  2,
		"hosts":   hosts,
	}
}

// TestAgentRunsAGroup: an agent takes a run of a group, runs it on a file
// of its data directory, and every step reaches the dashboard once, with
// the agent's environment; its own store keeps the same run.
func TestAgentRunsAGroup(t *testing.T) {
	d := newDashboard(t, agent.Timing{Poll: 2 * time.Second})
	id, token := d.addAgent(t, "agent-a")
	// Without a name of its own the agent keeps the one its token was
	// issued for (not its hostname).
	data, astore, _ := startAgent(t, d, token, "")
	if h := waitHost(t, d, id); h.Name != "agent-a" {
		t.Fatalf("the agent renamed itself %q", h.Name)
	}

	var c created
	var eb errBody
	// A target the agent does not allow is refused before anything runs.
	if code := d.call(t, "POST", "/api/runs", "", plan("/etc/passwd", "agent-a"), &eb); code != http.StatusBadRequest ||
		!strings.Contains(eb.Error, "not on the agent's allow-list") {
		t.Fatalf("a target off the allow-list: %d %q", code, eb.Error)
	}
	if code := d.call(t, "POST", "/api/runs", "", plan(filepath.Join(data, "f"), "agent-a"), &c); code != http.StatusCreated {
		t.Fatalf("launch: %d", code)
	}
	if c.Group == "" || len(c.Runs) != 1 || c.Runs[0].Host != "agent-a" || !strings.HasPrefix(c.URL, "/groups/") {
		t.Fatalf("answer %+v", c)
	}
	r := waitRun(t, d.store, c.Runs[0].ID, 30*time.Second)
	if r.Status != db.StatusDone || r.Steps != 4 || r.Source != db.SourceAgent {
		t.Fatalf("run %s, %d steps, source %s: %s", r.Status, r.Steps, r.Source, r.Error)
	}
	host, _ := os.Hostname()
	if r.Host.Hostname != host || r.Host.KernelRelease == "" || len(r.Targets) != 1 || r.Targets[0].Path != filepath.Join(data, "f") {
		t.Fatalf("the run's environment is not the agent's: %+v %+v", r.Host, r.Targets)
	}
	steps, err := d.store.Steps(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range steps {
		if st.Step.Seq != i || st.Status != sweep.StepDone || st.Result == nil || st.Result.Groups[0].Jobs[0].Dirs[0].IOs == 0 {
			t.Fatalf("step %d: seq %d %s", i, st.Step.Seq, st.Status)
		}
	}
	// The agent's own copy: the same run, by uid, and told synced.
	deadline := time.Now().Add(5 * time.Second)
	for {
		local, err := astore.RunByUID(context.Background(), r.UID)
		if err == nil {
			lr, _ := astore.GetRun(context.Background(), local)
			un, _ := astore.UnsyncedAgentRuns(context.Background(), strings.TrimRight(d.url, "/"))
			if lr.Status == db.StatusDone && lr.Steps == 4 && len(un) == 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent's copy of run %s: %v", r.UID, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var g struct {
		Active  bool `json:"active"`
		Members []struct {
			Status string `json:"status"`
			Steps  int    `json:"steps"`
		} `json:"members"`
	}
	if code := d.call(t, "GET", "/api/groups/"+c.Group, "", nil, &g); code != 200 || g.Active || len(g.Members) != 1 || g.Members[0].Steps != 4 {
		t.Fatalf("group: %d %+v", code, g)
	}
}

// TestStepUploadIdempotent: the same step sent twice is stored once; a
// step that is not the plan's is refused; other hosts' runs are not the
// agent's business.
func TestStepUploadIdempotent(t *testing.T) {
	d := newDashboard(t, agent.Timing{Poll: time.Second})
	id, token := d.addAgent(t, "agent-u")
	hello := agent.Hello{Name: "agent-u", DataDir: "/data", Host: system.HostInfo{Hostname: "u", KernelRelease: "6.1"}}
	if code := d.call(t, "POST", agent.PathHello, token, &hello, nil); code != 200 {
		t.Fatalf("hello: %d", code)
	}
	var c created
	if code := d.call(t, "POST", "/api/runs", "", plan("/data/f", "agent-u"), &c); code != http.StatusCreated {
		t.Fatalf("launch: %d", code)
	}
	var w agent.Work
	if code := d.call(t, "GET", agent.PathWork+"?wait=1", token, nil, &w); code != 200 || w.RunID != c.Runs[0].ID {
		t.Fatalf("work: %d %+v", code, w)
	}
	run, _ := d.store.GetRun(context.Background(), w.RunID)
	steps, _ := run.Plan.Steps()
	res := sweep.StepResult{Step: steps[1], Status: sweep.StepFailed, Error: "boom", Start: time.Now(), End: time.Now()}
	path := fmt.Sprintf("%s%d/steps/1", agent.PathRuns, w.RunID)
	var a agent.StepAck
	for i, want := range []bool{true, false} {
		if code := d.call(t, "PUT", path, token, &res, &a); code != 200 || a.Stored != want || a.UID != run.UID+"/1" {
			t.Fatalf("upload %d: %d %+v", i, code, a)
		}
	}
	if got, _ := d.store.StoredSteps(context.Background(), w.RunID); len(got) != 1 || got[1] != sweep.StepFailed {
		t.Fatalf("stored %v", got)
	}
	var eb errBody
	wrong := res
	wrong.Step = steps[2]
	if code := d.call(t, "PUT", path, token, &wrong, &eb); code != http.StatusBadRequest || !strings.Contains(eb.Error, "is step 2") {
		t.Fatalf("a step under another's number: %d %q", code, eb.Error)
	}
	wrong.Step.Seq = 1
	if code := d.call(t, "PUT", path, token, &wrong, &eb); code != http.StatusBadRequest || !strings.Contains(eb.Error, "not the plan's step 1") {
		t.Fatalf("a step the plan does not have: %d %q", code, eb.Error)
	}
	// Text beyond its bounds: a result's job of a 100 KiB name.
	long := res
	long.Step.Seq = 1
	long.Result = &bench.Result{Groups: []bench.GroupResult{{Jobs: []bench.JobResult{{Name: strings.Repeat("n", 100<<10)}}}}}
	if code := d.call(t, "PUT", path, token, &long, &eb); code != http.StatusBadRequest || !strings.Contains(eb.Error, "longer than 200") {
		t.Fatalf("a job name of 100 KiB: %d %q", code, eb.Error)
	}
	// Another agent may not touch this one's run.
	_, other := d.addAgent(t, "agent-v")
	if code := d.call(t, "PUT", path, other, &res, &eb); code != http.StatusNotFound {
		t.Fatalf("another agent's upload: %d %q", code, eb.Error)
	}
	_ = id
}

// TestAgentUnreachableThenLost: an agent that takes a run and goes
// silent has it shown "agent unreachable" (still running) once a lease
// has passed, reachable again at its next word, and lost — interrupted —
// after Timing.Lost without one; the agent's late word is then refused
// with what became of the run (its late steps still count).
func TestAgentUnreachableThenLost(t *testing.T) {
	d := newDashboard(t, agent.Timing{Lease: 500 * time.Millisecond, Lost: 2 * time.Second, Poll: time.Second})
	_, token := d.addAgent(t, "agent-l")
	if code := d.call(t, "POST", agent.PathHello, token, &agent.Hello{DataDir: "/data"}, nil); code != 200 {
		t.Fatalf("hello: %d", code)
	}
	var c created
	if code := d.call(t, "POST", "/api/runs", "", plan("/data/f", "agent-l"), &c); code != http.StatusCreated {
		t.Fatalf("launch: %d", code)
	}
	var w agent.Work
	if code := d.call(t, "GET", agent.PathWork+"?wait=1", token, nil, &w); code != 200 {
		t.Fatalf("work: %d", code)
	}
	var ack agent.Ack
	heartbeat := func() {
		t.Helper()
		if code := d.call(t, "POST", fmt.Sprintf("%s%d/events", agent.PathRuns, w.RunID), token, &agent.Events{}, &ack); code != 200 || ack.Status != db.StatusRunning {
			t.Fatalf("heartbeat: %d %+v", code, ack)
		}
	}
	reach := func() (*agent.Reach, string) {
		t.Helper()
		var doc struct {
			Run   db.Run       `json:"run"`
			Agent *agent.Reach `json:"agent"`
		}
		if code := d.call(t, "GET", fmt.Sprintf("/api/runs/%d", w.RunID), "", nil, &doc); code != 200 {
			t.Fatalf("run: %d", code)
		}
		return doc.Agent, doc.Run.Status
	}
	heartbeat()
	heard := time.Now()
	if r, st := reach(); r == nil || r.Unreachable || st != db.StatusRunning {
		t.Fatalf("right after a heartbeat: %s %+v", st, r)
	}
	// Silent for more than a lease: unreachable, still running.
	deadline := time.Now().Add(3 * time.Second)
	for {
		r, st := reach()
		if st != db.StatusRunning {
			t.Fatalf("run %s before it was shown unreachable", st)
		}
		if r != nil && r.Unreachable {
			if r.Agent != "agent-l" || r.LastHeard.Before(heard.Add(-time.Second)) || r.LastHeard.After(heard) ||
				!strings.Contains(r.Text, "agent unreachable") || r.LostAt.Before(r.LastHeard.Add(time.Second)) {
				t.Fatalf("unreachable: %+v", r)
			}
			if time.Since(heard) < 500*time.Millisecond {
				t.Fatalf("unreachable %v after a heartbeat, with a lease of 500ms", time.Since(heard))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still reachable %v after its last word", time.Since(heard))
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Its next word makes it reachable again, and restarts the clock.
	heartbeat()
	if r, st := reach(); r == nil || r.Unreachable || st != db.StatusRunning {
		t.Fatalf("after the agent's word again: %s %+v", st, r)
	}
	start := time.Now()
	r := waitRun(t, d.store, w.RunID, 5*time.Second)
	if r.Status != db.StatusInterrupted || !strings.Contains(r.Error, "agent agent-l lost") || time.Since(start) < 1500*time.Millisecond {
		t.Fatalf("after %v: %s %q", time.Since(start), r.Status, r.Error)
	}
	var eb errBody
	if code := d.call(t, "POST", fmt.Sprintf("%s%d/events", agent.PathRuns, w.RunID), token, &agent.Events{}, &eb); code != http.StatusConflict ||
		!strings.Contains(eb.Error, "interrupted") {
		t.Fatalf("late heartbeat: %d %q", code, eb.Error)
	}
	run, _ := d.store.GetRun(context.Background(), w.RunID)
	steps, _ := run.Plan.Steps()
	res := sweep.StepResult{Step: steps[0], Status: sweep.StepFailed, Error: "late", Start: time.Now(), End: time.Now()}
	if code := d.call(t, "PUT", fmt.Sprintf("%s%d/steps/0", agent.PathRuns, w.RunID), token, &res, nil); code != 200 {
		t.Fatalf("late step: %d", code)
	}
	var end agent.Ack
	if code := d.call(t, "POST", fmt.Sprintf("%s%d/end", agent.PathRuns, w.RunID), token, &agent.End{Status: db.StatusDone}, &end); code != 200 || end.Status != db.StatusInterrupted {
		t.Fatalf("late end: %d %+v", code, end)
	}
}

// TestRevokedToken: a revoked token, or one no agent has, is refused with
// 401 and a message that says which.
func TestRevokedToken(t *testing.T) {
	d := newDashboard(t, agent.Timing{})
	id, token := d.addAgent(t, "agent-r")
	var eb errBody
	if code := d.call(t, "POST", agent.PathHello, token, &agent.Hello{}, nil); code != 200 {
		t.Fatalf("hello: %d", code)
	}
	var h db.Host
	if code := d.call(t, "POST", fmt.Sprintf("/api/hosts/%d/revoke", id), "", nil, &h); code != 200 || h.HasToken {
		t.Fatalf("revoke: %d %+v", code, h)
	}
	if code := d.call(t, "POST", agent.PathHello, token, &agent.Hello{}, &eb); code != http.StatusUnauthorized || !strings.Contains(eb.Error, "revoked") {
		t.Fatalf("revoked: %d %q", code, eb.Error)
	}
	if code := d.call(t, "GET", agent.PathWork, "iolab_1_00", nil, &eb); code != http.StatusUnauthorized || !strings.Contains(eb.Error, "unknown agent token") {
		t.Fatalf("unknown: %d %q", code, eb.Error)
	}
	// A revoked token still trying is no guess: it never locks out its
	// address, where another agent goes on working.
	_, other := d.addAgent(t, "agent-s")
	for i := range 30 {
		if code := d.call(t, "POST", agent.PathHello, token, &agent.Hello{}, &eb); code != http.StatusUnauthorized || !strings.Contains(eb.Error, "revoked") {
			t.Fatalf("revoked, try %d: %d %q", i, code, eb.Error)
		}
	}
	if code := d.call(t, "POST", agent.PathHello, other, &agent.Hello{}, nil); code != 200 {
		t.Fatalf("another agent after the revoked one's tries: %d", code)
	}
	// The agent itself stops with the dashboard's words.
	a, err := agent.New(agent.Config{Dashboard: d.url, Token: token, Store: d.store, Sys: system.FS{}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := a.Run(ctx); err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("the agent: %v", err)
	}
	// Guessed tokens do lock it out.
	locked := false
	for range 30 {
		if d.call(t, "GET", agent.PathWork, "iolab_1_00", nil, &eb) == http.StatusTooManyRequests {
			locked = true
			break
		}
	}
	if !locked {
		t.Error("30 unknown tokens from one address never locked it out")
	}
}

// TestLeaseHeldWhileLayingOut: an agent holds its lease from the moment
// it takes a run, not from the run's start: the preflight lays out the
// job's missing file, and a file that takes longer to lay out than a
// lease (here 256 MiB against half a second) must not have the dashboard
// interrupt the run before it began.
func TestLeaseHeldWhileLayingOut(t *testing.T) {
	d := newDashboard(t, agent.Timing{Lease: 500 * time.Millisecond, Heartbeat: 50 * time.Millisecond, Poll: time.Second})
	id, token := d.addAgent(t, "agent-big")
	data, _, _ := startAgent(t, d, token, "")
	waitHost(t, d, id)
	body := map[string]any{"name": "big", "hosts": []string{"agent-big"},
		"options": map[string]any{"filename": filepath.Join(data, "big"), "size": "256m", "rw": "read", "bs": "1m", "ioengine": "psync", "runtime": "200ms", "time_based": 1}}
	var c created
	if code := d.call(t, "POST", "/api/runs", "", body, &c); code != http.StatusCreated {
		t.Fatalf("launch: %d", code)
	}
	start := time.Now()
	r := waitRun(t, d.store, c.Runs[0].ID, 60*time.Second)
	if r.Status != db.StatusDone || r.Steps != 1 {
		t.Fatalf("run %s after %v: %q", r.Status, time.Since(start).Round(time.Millisecond), r.Error)
	}
	t.Logf("laid out and ran in %v with a lease of 500ms", time.Since(start).Round(time.Millisecond))
}
