package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/fioserver/fleettest"
	"iolab/bench/sweep"
	"iolab/db"
	"iolab/handlers/agent"
)

// childDash is a dashboard as a real `iolab serve` process (this test
// binary) on a file store, listening on every address of this machine
// at one port, so that it can be killed and started again on the same
// store and address while the agents in their namespaces run on.
type childDash struct {
	t      *testing.T
	db     string
	port   int
	token  string
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has ended
	out    *syncBuf      // its stdout and stderr, every start's
	local  string        // http://127.0.0.1:PORT
}

func newChildDash(t *testing.T) *childDash {
	t.Helper()
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	d := &childDash{t: t, db: filepath.Join(t.TempDir(), "dash.db"), port: port, token: "restart-test-token", out: &syncBuf{},
		local: "http://127.0.0.1:" + strconv.Itoa(port)}
	t.Cleanup(func() {
		if d.cmd != nil {
			d.cmd.Process.Signal(os.Interrupt)
			select {
			case <-d.exited:
			case <-time.After(10 * time.Second):
				d.cmd.Process.Kill()
				<-d.exited
			}
		}
		if t.Failed() {
			t.Logf("iolab serve printed:\n%s", d.out.String())
		}
	})
	d.start()
	return d
}

// start starts `iolab serve` and waits until it listens.
func (d *childDash) start() {
	d.t.Helper()
	cmd := exec.Command(os.Args[0], "serve", "--listen", "0.0.0.0:"+strconv.Itoa(d.port), "--db", d.db, "--token", d.token)
	cmd.Env = append(os.Environ(), "IOLAB_TEST_MAIN=1")
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		d.t.Fatal(err)
	}
	d.cmd, d.exited = cmd, make(chan struct{})
	up := make(chan struct{})
	go func() {
		listening := regexp.MustCompile(`dashboard on http://`)
		sc := bufio.NewScanner(pr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			d.out.Write(append(sc.Bytes(), '\n'))
			if listening.Match(sc.Bytes()) {
				close(up)
				break
			}
		}
		io.Copy(d.out, pr) // the rest, read to the end whatever it holds
	}()
	exited := d.exited
	go func() {
		cmd.Wait()
		pw.Close()
		close(exited)
	}()
	select {
	case <-up:
	case <-time.After(20 * time.Second):
		d.t.Fatalf("iolab serve did not start listening:\n%s", d.out.String())
	}
}

// kill kills the dashboard with SIGKILL: no shutdown of any kind.
func (d *childDash) kill() {
	d.t.Helper()
	if err := d.cmd.Process.Kill(); err != nil {
		d.t.Fatal(err)
	}
	<-d.exited
	d.cmd = nil
}

// call sends a JSON request with the token and decodes the answer into
// out; it returns the status and, for an error, the body.
func (d *childDash) call(method, path string, body, out any) (int, string) {
	d.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, d.local+path, rd)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return resp.StatusCode, string(b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			d.t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
	return resp.StatusCode, ""
}

// page is GET path's HTML.
func (d *childDash) page(path string) string {
	d.t.Helper()
	req, _ := http.NewRequest("GET", d.local+path, nil)
	req.Header.Set("Authorization", "Bearer "+d.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		d.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
	}
	return string(b)
}

// runDoc is GET /api/runs/ID as this test reads it.
type runDoc struct {
	Run   db.Run             `json:"run"`
	Agent *agent.Reach       `json:"agent"`
	Steps []sweep.StepResult `json:"steps"`
}

func (d *childDash) run(id int64) runDoc {
	d.t.Helper()
	var doc runDoc
	if code, msg := d.call("GET", fmt.Sprintf("/api/runs/%d", id), nil, &doc); code != http.StatusOK {
		d.t.Fatalf("run %d: %d %s", id, code, msg)
	}
	return doc
}

// startAgent makes namespace host name, gives it a token and starts its
// agent, pointed at the dashboard's port on the host's gateway, and
// waits for its hello.
func (d *childDash) startAgent(name string) (*fleettest.Host, *fleettest.Process) {
	d.t.Helper()
	h := newAgentNS(d.t, name)
	a := &nsAgent{host: h, dashboard: fmt.Sprintf("http://%s:%d", h.Gateway, d.port), db: filepath.Join(d.t.TempDir(), "agent.db")}
	a.id, a.token = addAgentHost(d.t, d.call, name)
	since := time.Now()
	a.launch(d.t)
	waitHellos(d.t, d.call, since, 15*time.Second, a)
	return h, a.proc
}

// TestDashboardRestartMidGroup: the dashboard (a real `iolab serve` on
// a file store) is killed with SIGKILL while three agents in network
// namespaces run a group, and started again on the same store and
// address while the agents are cut off: the run pages, the group's page
// and the API show each run "agent unreachable" with when it was last
// heard from (still running, not interrupted); once the agents reach it
// again every run ends done with every step's figures stored once.
func TestDashboardRestartMidGroup(t *testing.T) {
	fleettest.NeedNamespaces(t)
	d := newChildDash(t)
	names := []string{"agent-r1", "agent-r2", "agent-r3"}
	hosts := map[string]*fleettest.Host{}
	for _, n := range names {
		hosts[n], _ = d.startAgent(n)
	}
	depths := []string{"1", "2", "4", "8", "16", "32"}
	var g groupAnswer
	if code, msg := d.call("POST", "/api/runs", fleetPlan("restart", names, map[string][]string{"iodepth": depths}, "1s"), &g); code != http.StatusCreated {
		t.Fatalf("launch: %d %s", code, msg)
	}
	// A step done: the runs are under way. (The agents' files are on one
	// disk of this machine, whose device lock has them take turns: one
	// measures while the others wait for the device.)
	deadline := time.Now().Add(60 * time.Second)
	for started := false; !started; {
		running := 0
		for _, r := range g.Runs {
			doc := d.run(r.ID)
			// Queued until its agent leases it, then running.
			if doc.Run.Status != db.StatusRunning && doc.Run.Status != db.StatusQueued {
				t.Fatalf("run %d on %s %s before the kill", r.ID, r.Host, doc.Run.Status)
			}
			started = started || len(doc.Steps) > 0
			if doc.Run.Status == db.StatusRunning {
				running++
			}
		}
		// Every run leased by its agent, and one measured.
		started = started && running == len(g.Runs)
		if time.Now().After(deadline) {
			t.Fatalf("no step stored after 60 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	d.kill()
	killed := time.Now()
	for _, n := range names {
		if err := hosts[n].SetLink(false); err != nil {
			t.Fatal(err)
		}
	}
	d.start()
	t.Logf("the dashboard started again %v after the kill", time.Since(killed).Round(time.Millisecond))

	// While the agents cannot reach it: running, agent unreachable.
	group := d.page("/groups/" + g.Group)
	for _, r := range g.Runs {
		doc := d.run(r.ID)
		if doc.Run.Status != db.StatusRunning || doc.Agent == nil || !doc.Agent.Unreachable || doc.Agent.Agent != r.Host ||
			doc.Agent.LastHeard.IsZero() || doc.Agent.LastHeard.After(killed) || killed.Sub(doc.Agent.LastHeard) > 10*time.Second {
			t.Fatalf("run %d on %s after the restart: %s %+v", r.ID, r.Host, doc.Run.Status, doc.Agent)
		}
		page := d.page(fmt.Sprintf("/runs/%d", r.ID))
		if !strings.Contains(page, `<p class="unreachable" id="live-reach">agent unreachable: `+r.Host+` was last heard from at`) ||
			!strings.Contains(page, `<span class="status s-unreachable" id="run-reach">agent unreachable</span>`) {
			t.Fatalf("run %d's page does not say its agent is unreachable:\n%s", r.ID, page)
		}
		row := regexp.MustCompile(`(?s)<tr data-run="` + strconv.FormatInt(r.ID, 10) + `">.*?</tr>`).FindString(group)
		if !strings.Contains(row, `<span class="status s-running" data-col="status">running</span>`) ||
			!strings.Contains(row, `data-col="reach" title="agent unreachable: `) || !strings.Contains(row, ">agent unreachable, last heard ") {
			t.Fatalf("the group page's row of run %d does not say its agent is unreachable:\n%s", r.ID, row)
		}
	}
	for _, n := range names {
		if err := hosts[n].SetLink(true); err != nil {
			t.Fatal(err)
		}
	}
	mended := time.Now()

	for _, r := range g.Runs {
		var doc runDoc
		deadline := time.Now().Add(90 * time.Second)
		for {
			doc = d.run(r.ID)
			if doc.Run.Status != db.StatusRunning {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %d on %s still running 90 s after the links came back: %+v", r.ID, r.Host, doc.Agent)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if doc.Run.Status != db.StatusDone || doc.Run.Error != "" || len(doc.Steps) != len(depths) {
			t.Fatalf("run %d on %s: %s %q with %d steps, want done with %d", r.ID, r.Host, doc.Run.Status, doc.Run.Error, len(doc.Steps), len(depths))
		}
		for i, st := range doc.Steps {
			if st.Step.Seq != i || st.Status != sweep.StepDone || st.Result == nil || len(st.Result.Groups) == 0 ||
				len(st.Result.Groups[0].Jobs) == 0 || st.Result.Groups[0].Jobs[0].Dirs[bench.Read].IOs == 0 || st.Result.Groups[0].Jobs[0].Dirs[bench.Read].Clat.Stat.N == 0 {
				t.Fatalf("run %d on %s: step %d (seq %d) %s without its figures", r.ID, r.Host, i, st.Step.Seq, st.Status)
			}
		}
		if doc.Agent != nil {
			t.Errorf("run %d ended and still held for its agent: %+v", r.ID, doc.Agent)
		}
	}
	t.Logf("all three runs done %v after the links came back", time.Since(mended).Round(time.Millisecond))
	if page := d.page("/groups/" + g.Group); strings.Count(page, `<span class="status s-done" data-col="status">done</span>`) != 3 ||
		strings.Contains(page, `data-col="reach" title=`) {
		t.Fatalf("the group's page after the runs ended:\n%s", page)
	}
}

// TestAgentCancelWhileAway: a run cancelled while its agent cannot reach
// the dashboard stays running, "agent unreachable", with the cancel
// pending; the agent, which went on with the run meanwhile, hears the
// cancel at its first word once the link is back and stops the run at
// once (not at the end of its minute-long step): cancelled on the
// dashboard and in the agent's own store.
func TestAgentCancelWhileAway(t *testing.T) {
	fleettest.NeedNamespaces(t)
	d := newFleetDash(t, agent.Timing{Lease: time.Second, Heartbeat: 200 * time.Millisecond, Poll: time.Second})
	a := d.newAgentHost("agent-w")
	g := d.createGroup(fleetPlan("away", []string{"agent-w"}, nil, "60"))
	id := g.Runs[0].ID
	type doc struct {
		Run   db.Run       `json:"run"`
		Agent *agent.Reach `json:"agent"`
	}
	until := func(what string, ok func(doc) bool) doc {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			var got doc
			if code, msg := d.call("GET", fmt.Sprintf("/api/runs/%d", id), nil, &got); code != http.StatusOK {
				t.Fatalf("run %d: %d %s", id, code, msg)
			}
			if ok(got) {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %d: not %s after 20 s: %s %+v\n%s", id, what, got.Run.Status, got.Agent, a.proc.Output())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	until("measuring", func(r doc) bool {
		var gv struct {
			Members []struct {
				Progress string `json:"progress"`
			} `json:"members"`
		}
		d.call("GET", "/api/groups/"+g.Group, nil, &gv)
		return r.Agent != nil && !r.Agent.Unreachable && len(gv.Members) == 1 && strings.Contains(gv.Members[0].Progress, "measure")
	})
	if err := a.host.SetLink(false); err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	until("unreachable", func(r doc) bool { return r.Agent != nil && r.Agent.Unreachable })
	if code, msg := d.call("POST", fmt.Sprintf("/api/runs/%d/cancel", id), nil, nil); code != http.StatusAccepted {
		t.Fatalf("cancel: %d %s", code, msg)
	}
	r := until("cancel pending", func(r doc) bool { return r.Agent != nil && r.Agent.CancelPending })
	if r.Run.Status != db.StatusRunning || !r.Agent.Unreachable || !strings.Contains(r.Agent.Text, "the agent stops the run when it is back") {
		t.Fatalf("cancelled while away: %s %+v", r.Run.Status, r.Agent)
	}
	if page := d.get(fmt.Sprintf("/runs/%d", id)); !strings.Contains(page, "Cancelled: the agent stops the run when it is back.") {
		t.Fatalf("the run's page does not say the cancel waits for the agent:\n%s", page)
	}
	time.Sleep(time.Second) // the agent, cut off, runs on
	if err := a.host.SetLink(true); err != nil {
		t.Fatal(err)
	}
	mended := time.Now()
	ended := d.waitEnded(id, 20*time.Second)
	if ended.Status != db.StatusCancelled || !strings.Contains(ended.Error, "cancelled by the user") {
		t.Fatalf("run %s %q, want cancelled by the user", ended.Status, ended.Error)
	}
	if a.proc.Exited() {
		t.Fatalf("the agent exited:\n%s", a.proc.Output())
	}
	if !strings.Contains(a.proc.Output(), "no answer from the dashboard: the run goes on here") {
		t.Errorf("the agent never said it went on without the dashboard:\n%s", a.proc.Output())
	}
	local := openTestStore(t, a.db)
	lid, err := local.RunByUID(context.Background(), ended.UID)
	if err != nil {
		t.Fatal(err)
	}
	lr, err := local.GetRun(context.Background(), lid)
	if err != nil || lr.Status != db.StatusCancelled {
		t.Fatalf("the agent's own copy: %+v %v", lr, err)
	}
	t.Logf("cut %v, cancelled on the dashboard while away; the run ended %v after the link came back",
		mended.Sub(cut).Round(time.Millisecond), time.Since(mended).Round(time.Millisecond))
}
