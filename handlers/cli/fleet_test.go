package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"iolab/bench/fioserver"
	"iolab/bench/fioserver/fleettest"
	"iolab/bench/sweep"
	"iolab/db"
	"iolab/handlers"
	"iolab/handlers/agent"
)

// fleetDash is a dashboard for fleet tests: the real handlers over a
// fresh store, served on 127.0.0.1 (for the test and the browser) and on
// the gateway of each namespace host whose agent connects to it.
type fleetDash struct {
	t     *testing.T
	hs    *http.Server
	local string // http://127.0.0.1:PORT
	store *db.Store
	ns    map[string]*fleettest.Host // the namespace hosts, by name
}

// newHost makes a namespace host the dashboard's test knows by name.
func (d *fleetDash) newHost(name string) *fleettest.Host {
	d.t.Helper()
	h := fleettest.NewHost(d.t, name)
	d.ns[name] = h
	return h
}

// nsHost is the namespace host called name.
func (d *fleetDash) nsHost(name string) *fleettest.Host {
	d.t.Helper()
	h, ok := d.ns[name]
	if !ok {
		d.t.Fatalf("no namespace host %s", name)
	}
	return h
}

func newFleetDash(t *testing.T, timing agent.Timing) *fleetDash {
	t.Helper()
	return newFleetDashAllow(t, timing, fleettest.Range.String())
}

// newFleetDashAllow is a fleet dashboard whose fio servers may have the
// addresses of allow (--fio-allow; "": none).
func newFleetDashAllow(t *testing.T, timing agent.Timing, allow string) *fleetDash {
	t.Helper()
	store, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "dash.db"))
	if err != nil {
		t.Fatal(err)
	}
	fioAllow, err := fioserver.ParseAllowList(allow)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := handlers.New(handlers.Config{Store: store, ProgressEvery: 100 * time.Millisecond, DataDir: t.TempDir(),
		Fleet: handlers.FleetConfig{FioAllow: fioAllow, Agents: timing}})
	if err != nil {
		t.Fatal(err)
	}
	d := &fleetDash{t: t, hs: srv.HTTPServer(), store: store, ns: map[string]*fleettest.Host{}}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		d.hs.Shutdown(ctx)
		srv.Shutdown(ctx)
		store.Close()
	})
	d.local = d.listen(netip.MustParseAddr("127.0.0.1"))
	return d
}

// listen serves the dashboard on addr too and returns its URL there.
func (d *fleetDash) listen(addr netip.Addr) string {
	d.t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(addr.String(), "0"))
	if err != nil {
		d.t.Fatal(err)
	}
	go d.hs.Serve(ln)
	return "http://" + ln.Addr().String()
}

// call sends a JSON request to the dashboard and decodes its answer into
// out; it returns the status and, for an error, its message.
func (d *fleetDash) call(method, path string, body, out any) (int, string) {
	d.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, d.local+path, rd)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		var eb struct {
			Error string `json:"error"`
		}
		json.Unmarshal(b, &eb)
		return resp.StatusCode, eb.Error
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			d.t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
	return resp.StatusCode, ""
}

// addAgent issues an agent's token.
func (d *fleetDash) addAgent(name string) (int64, string) {
	d.t.Helper()
	return addAgentHost(d.t, d.call, name)
}

// addFio adds a fio server host whose jobs may use targets.
func (d *fleetDash) addFio(name string, addr netip.Addr, targets ...string) {
	d.t.Helper()
	if code, msg := d.call("POST", "/api/hosts", map[string]any{"kind": db.HostFio, "name": name, "address": addr.String(), "devices": targets}, nil); code != http.StatusCreated {
		d.t.Fatalf("add fio server %s: %d %s", name, code, msg)
	}
}

// agentHost is a namespace host running `iolab agent`.
type agentHost struct{ nsAgent }

// newAgentHost makes a namespace host, gives it a token and starts its
// agent with its data directory inside the host and its store beside;
// extra are more agent flags.
func (d *fleetDash) newAgentHost(name string, extra ...string) *agentHost {
	d.t.Helper()
	h := newAgentNS(d.t, name)
	d.ns[name] = h
	a := &agentHost{nsAgent{host: h, dashboard: d.listen(h.Gateway), db: filepath.Join(d.t.TempDir(), "agent.db"), extra: extra}}
	a.id, a.token = d.addAgent(name)
	a.start(d)
	return a
}

// start starts (or starts again) the host's agent and waits until it has
// said hello.
func (a *agentHost) start(d *fleetDash) {
	d.t.Helper()
	since := time.Now()
	a.launch(d.t)
	waitHellos(d.t, d.call, since, 15*time.Second, &a.nsAgent)
}

// groupAnswer is POST /api/runs's answer for a group.
type groupAnswer struct {
	Group string
	URL   string
	Runs  []struct {
		ID   int64
		Host string
	}
}

// waitEnded waits until run id has ended on the dashboard.
func (d *fleetDash) waitEnded(id int64, within time.Duration) *db.Run {
	d.t.Helper()
	deadline := time.Now().Add(within)
	for {
		r, err := d.store.GetRun(context.Background(), id)
		if err != nil {
			d.t.Fatal(err)
		}
		if r.Status != db.StatusQueued && r.Status != db.StatusRunning {
			return r
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("run %d still %s after %v", id, r.Status, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stepsOnce checks that run id's stored steps are 0…n-1, each once, and
// returns how many are done.
func (d *fleetDash) stepsOnce(id int64) (steps []sweep.StepResult, done int) {
	d.t.Helper()
	steps, err := d.store.Steps(context.Background(), id)
	if err != nil {
		d.t.Fatal(err)
	}
	for i, s := range steps {
		if s.Step.Seq != i {
			d.t.Fatalf("run %d: stored step %d has seq %d", id, i, s.Step.Seq)
		}
		if s.Status == sweep.StepDone {
			done++
		}
	}
	return steps, done
}

// fleetPlan is a plan on a file each host has its own of.
func fleetPlan(name string, hosts []string, sweeps map[string][]string, runtime string) map[string]any {
	return map[string]any{
		"name": name,
		"options": map[string]any{"filename": fleettest.DataDir + "/f", "size": "4m", "rw": "randread", "bs": "4k",
			"ioengine": "libaio", "direct": 1, "runtime": runtime, "time_based": 1},
		"sweep": sweeps, "hosts": hosts,
	}
}

// TestAgentRevokedIsRefused: `iolab agent` with a revoked token stops at
// once with the dashboard's reason, and exits 1.
func TestAgentRevokedIsRefused(t *testing.T) {
	d := newFleetDash(t, agent.Timing{})
	id, token := d.addAgent("agent-r")
	if code, msg := d.call("POST", fmt.Sprintf("/api/hosts/%d/revoke", id), nil, nil); code != 200 {
		t.Fatalf("revoke: %d %s", code, msg)
	}
	var out, errOut bytes.Buffer
	err := run([]string{"agent", "--dashboard", d.local, "--token", token, "--db", filepath.Join(t.TempDir(), "a.db")}, &out, &errOut)
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "401") || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("exit %d: %v", exitCode(err), err)
	}
	if err := run([]string{"agent", "--dashboard", d.local, "--token", "iolab_9_beef", "--db", filepath.Join(t.TempDir(), "b.db")}, &out, &errOut); err == nil ||
		!strings.Contains(err.Error(), "unknown agent token") {
		t.Fatalf("unknown token: %v", err)
	}
}

// createGroup starts body as a group and returns its runs.
func (d *fleetDash) createGroup(body map[string]any) groupAnswer {
	d.t.Helper()
	var g groupAnswer
	if code, msg := d.call("POST", "/api/runs", body, &g); code != http.StatusCreated {
		d.t.Fatalf("launch: %d %s", code, msg)
	}
	return g
}

// waitDone waits until run id has at least n steps stored done, and
// returns how many.
func (d *fleetDash) waitDone(id int64, n int, within time.Duration) int {
	d.t.Helper()
	deadline := time.Now().Add(within)
	for {
		got, err := d.store.StoredSteps(context.Background(), id)
		if err != nil {
			d.t.Fatal(err)
		}
		done := 0
		for _, s := range got {
			if s == sweep.StepDone {
				done++
			}
		}
		if done >= n {
			return done
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("run %d: %d steps done after %v, want %d", id, done, within, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestAgentKilledMidStep kills an agent with SIGKILL in the middle of a
// step of a scheduler sweep on a loop device, and starts it again: the
// scheduler is put back at its start, the run is interrupted (not
// resumed: a step cut short and a device left in another state would mix
// into the repeats), and every step that had finished is on the
// dashboard exactly once — those the agent had not yet uploaded too.
func TestAgentKilledMidStep(t *testing.T) {
	needRoot(t)
	fleettest.NeedNamespaces(t)
	dev := testLoop(t, 64<<20)
	original, other := otherScheduler(t, dev)
	d := newFleetDash(t, agent.Timing{Poll: 2 * time.Second})
	a := d.newAgentHost("agent-k", "--allow-target", dev)
	body := map[string]any{"name": "kill", "hosts": []string{"agent-k"},
		"options": map[string]any{"filename": dev, "rw": "randread", "bs": "4k", "ioengine": "libaio", "direct": 1, "runtime": "400ms", "time_based": 1},
		"sweep":   map[string]any{"scheduler": []string{other}, "iodepth": []string{"1", "2", "4", "8", "16", "32", "64", "128"}}}
	g := d.createGroup(body)
	id := g.Runs[0].ID
	d.waitDone(id, 2, 20*time.Second)
	time.Sleep(150 * time.Millisecond) // into the next step
	if got := activeScheduler(t, dev); got != other {
		t.Fatalf("scheduler %s during the run, want %s", got, other)
	}
	if err := syscallKill(a.proc.Pid()); err != nil {
		t.Fatal(err)
	}
	a.proc.Stop()
	if got := activeScheduler(t, dev); got != other {
		t.Fatalf("scheduler %s right after the kill: who put it back?", got)
	}
	if r, _ := d.store.GetRun(context.Background(), id); r.Status != db.StatusRunning {
		t.Fatalf("run %s before the agent is back (its lease is 30 s)", r.Status)
	}
	a.start(d)
	if got := activeScheduler(t, dev); got != original {
		t.Fatalf("scheduler %s after the agent's restart, want %s back", got, original)
	}
	r := d.waitEnded(id, 15*time.Second)
	if r.Status != db.StatusInterrupted || !strings.Contains(r.Error, "stopped while it ran it") || strings.Contains(r.Error, "iolab stopped") {
		t.Fatalf("run %s %q, want interrupted by the restart", r.Status, r.Error)
	}
	steps, done := d.stepsOnce(id)
	if done < 2 || done != len(steps) {
		t.Fatalf("%d steps stored, %d done", len(steps), done)
	}
	// The agent's own copy has the same finished steps.
	a.proc.Stop()
	local := openTestStore(t, a.db)
	lid, err := local.RunByUID(context.Background(), r.UID)
	if err != nil {
		t.Fatal(err)
	}
	lsteps, err := local.Steps(context.Background(), lid)
	if err != nil {
		t.Fatal(err)
	}
	if len(lsteps) != done {
		t.Fatalf("the agent kept %d steps, the dashboard %d", len(lsteps), done)
	}
	t.Logf("killed after %d finished steps", done)
}

// TestAgentLinkCut cuts the network between an agent and the dashboard
// for 4 s mid-run: the run goes on at the agent, the steps that ended
// during the cut reach the dashboard when the link is back, none lost or
// doubled, and the run is done (its 30 s lease outlasts the cut).
func TestAgentLinkCut(t *testing.T) {
	fleettest.NeedNamespaces(t)
	d := newFleetDash(t, agent.Timing{Poll: 2 * time.Second})
	a := d.newAgentHost("agent-c")
	g := d.createGroup(fleetPlan("cut", []string{"agent-c"}, map[string][]string{"iodepth": {"1", "2", "4", "8", "16", "32", "64", "128"}}, "1s"))
	id := g.Runs[0].ID
	d.waitDone(id, 1, 15*time.Second)
	if err := a.host.SetLink(false); err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	before, _ := d.store.StoredSteps(context.Background(), id)
	time.Sleep(4 * time.Second) // steps of 1 s end meanwhile
	during, _ := d.store.StoredSteps(context.Background(), id)
	r, _ := d.store.GetRun(context.Background(), id)
	if err := a.host.SetLink(true); err != nil {
		t.Fatal(err)
	}
	if len(during) != len(before) || r.Status != db.StatusRunning {
		t.Fatalf("during the cut: %d steps stored (%d before), run %s", len(during), len(before), r.Status)
	}
	r = d.waitEnded(id, 40*time.Second)
	steps, done := d.stepsOnce(id)
	if r.Status != db.StatusDone || len(steps) != 8 || done != 8 {
		t.Fatalf("run %s %q: %d steps, %d done", r.Status, r.Error, len(steps), done)
	}
	t.Logf("cut after %d steps; all 8 stored %v after the link came back", len(before), time.Since(cut)-4*time.Second)
}

func syscallKill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// TestAgentsSerial: two agents sharing one loop device run a serial
// group, started with iolab run --on --serial, one after the other: the
// second host's run is queued until the first's has ended, and the two
// never run at once.
func TestAgentsSerial(t *testing.T) {
	needRoot(t)
	fleettest.NeedNamespaces(t)
	dev := testLoop(t, 32<<20)
	d := newFleetDash(t, agent.Timing{Poll: 2 * time.Second})
	d.newAgentHost("agent-s1", "--allow-target", dev)
	d.newAgentHost("agent-s2", "--allow-target", dev)
	var out, errOut bytes.Buffer
	if err := run([]string{"run", "--on", "agent-s1,agent-s2", "--serial", "--dashboard", d.local, "--name=serial", "--filename=" + dev,
		"--rw=randread", "--bs=4k", "--ioengine=libaio", "--direct=1", "--runtime=500ms", "--time_based", "--sweep", "iodepth=1,8"}, &out, &errOut); err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	line, _, _ := strings.Cut(out.String(), "\n")
	uid, ok := strings.CutPrefix(line, "group "+d.local+"/groups/")
	if !ok {
		t.Fatalf("iolab run --on printed %q", out.String())
	}
	grp, err := d.store.GetFleetRun(context.Background(), uid)
	if err != nil || !grp.Serial || len(grp.Members) != 2 || grp.Members[0].HostName != "agent-s1" {
		t.Fatalf("group %+v (%v)", grp, err)
	}
	if lines := strings.Split(strings.TrimSpace(out.String()), "\n"); len(lines) != 3 ||
		strings.Join(strings.Fields(lines[2]), " ") != fmt.Sprintf("agent-s2 run %d %s/runs/%d", grp.Members[1].RunID, d.local, grp.Members[1].RunID) {
		t.Errorf("iolab run --on printed %q", out.String())
	}
	first, second := grp.Members[0].RunID, grp.Members[1].RunID
	sawFirstRun := false
	deadline := time.Now().Add(60 * time.Second)
	for {
		r1, err := d.store.GetRun(context.Background(), first)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := d.store.GetRun(context.Background(), second)
		if err != nil {
			t.Fatal(err)
		}
		sawFirstRun = sawFirstRun || r1.Status == db.StatusRunning
		if r2.Status != db.StatusQueued && (r1.Status == db.StatusQueued || r1.Status == db.StatusRunning) {
			t.Fatalf("agent-s2's run is %s while agent-s1's is %s", r2.Status, r1.Status)
		}
		if r2.Status != db.StatusQueued && r2.Status != db.StatusRunning {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("runs %s and %s after a minute", r1.Status, r2.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
	r1, r2 := d.waitEnded(first, time.Second), d.waitEnded(second, time.Second)
	for _, r := range []*db.Run{r1, r2} {
		if _, done := d.stepsOnce(r.ID); r.Status != db.StatusDone || done != 2 {
			t.Fatalf("run %d %s %q: %d steps done", r.ID, r.Status, r.Error, done)
		}
	}
	if !sawFirstRun || r2.Started.Before(r1.Finished) {
		t.Fatalf("first ran %v–%v, second started %v (saw the first running: %v)", r1.Started, r1.Finished, r2.Started, sawFirstRun)
	}
	t.Logf("first %v–%v, second %v–%v", r1.Started.Format("15:04:05.000"), r1.Finished.Format("15:04:05.000"), r2.Started.Format("15:04:05.000"), r2.Finished.Format("15:04:05.000"))
}

// TestFioServerDownRefused: a group naming a fio server that does not
// answer is refused before any run is stored, naming the host and why.
func TestFioServerDownRefused(t *testing.T) {
	fleettest.NeedNamespaces(t)
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("fio not installed")
	}
	d := newFleetDash(t, agent.Timing{})
	h := fleettest.NewHost(t, "fio-down")
	d.addFio("fio-down", h.Addr, fleettest.DataDir+"/f") // no fio --server there
	code, msg := d.call("POST", "/api/runs", fleetPlan("down", []string{"fio-down"}, nil, "1"), nil)
	if code != http.StatusBadRequest || !strings.Contains(msg, "host fio-down") || !strings.Contains(msg, "start fio --server there") {
		t.Fatalf("%d %q", code, msg)
	}
	if runs, err := d.store.ListRuns(context.Background(), db.RunFilter{}); err != nil || len(runs) != 0 {
		t.Fatalf("%d runs stored (%v)", len(runs), err)
	}
}

// TestRunOnRefused: iolab run --on says the dashboard's reason and exits
// 2 when the plan cannot start there, and 2 for a flag without the
// others it needs.
func TestRunOnRefused(t *testing.T) {
	d := newFleetDash(t, agent.Timing{})
	var out, errOut bytes.Buffer
	job := []string{"--name=x", "--filename=/x", "--rw=read", "--size=1m"}
	err := run(append([]string{"run", "--on", "nope", "--dashboard", d.local}, job...), &out, &errOut)
	if exitCode(err) != 2 || !strings.Contains(err.Error(), `no host is called "nope"`) {
		t.Fatalf("exit %d: %v", exitCode(err), err)
	}
	for _, args := range [][]string{{"--on", "a"}, {"--serial"}, {"--on", "a", "--dashboard", d.local, "--push", d.local}} {
		if err := run(append(append([]string{"run"}, args...), job...), &out, &errOut); exitCode(err) != 2 {
			t.Errorf("%q: exit %d: %v", args, exitCode(err), err)
		}
	}
	// The hosts would run it and print nothing: refused before the
	// dashboard is asked.
	err = run(append([]string{"run", "--on", "agent-1", "--dashboard", d.local, "--status-interval=1"}, job...), &out, &errOut)
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "--status-interval prints reports here") {
		t.Errorf("--on with --status-interval: exit %d: %v", exitCode(err), err)
	}
	if runs, _ := d.store.ListRuns(context.Background(), db.RunFilter{}); len(runs) != 0 {
		t.Fatalf("%d runs stored", len(runs))
	}
}
