package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"iolab/bench/fioserver/fleettest"
	"iolab/bench/system"
	"iolab/db"
	"iolab/handlers/agent"
)

// startLocalAgent runs `iolab agent` (this test binary as iolab) on this
// machine, without a namespace, with its own store and data directory
// and the flags extra; it returns the process, its output and the data
// directory.
func (d *fleetDash) startLocalAgent(token string, extra ...string) (*exec.Cmd, *syncBuf, string) {
	d.t.Helper()
	dir := d.t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		d.t.Fatal(err)
	}
	data, _ = filepath.EvalSymlinks(data)
	cmd := exec.Command(os.Args[0], append([]string{"agent", "--dashboard", d.local, "--token", token, "--data-dir", data, "--db", filepath.Join(dir, "agent.db")}, extra...)...)
	cmd.Env = append(os.Environ(), "IOLAB_TEST_MAIN=1")
	out := &syncBuf{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if d.t.Failed() {
			d.t.Logf("the agent printed:\n%s", out.String())
		}
	})
	return cmd, out, data
}

// waitHello waits until agent id has said hello since since.
func (d *fleetDash) waitHello(id int64, since time.Time) *db.Host {
	d.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		h, err := d.store.GetHost(context.Background(), id)
		if err == nil && h.LastSeen.After(since) && h.Details.Env != nil {
			return h
		}
		if time.Now().After(deadline) {
			d.t.Fatalf("agent %d did not say hello: %+v %v", id, h, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// hostsRow is the Hosts page's row of host name.
func (d *fleetDash) hostsRow(name string) string {
	d.t.Helper()
	_, row, ok := strings.Cut(d.get("/hosts"), `<tr data-host="`+name+`">`)
	if !ok {
		d.t.Fatalf("the Hosts page has no row of %s", name)
	}
	row, _, _ = strings.Cut(row, "</tr>")
	return row
}

// TestAgentRevokedFromHostsPage: the Hosts page's "Revoke token" of an
// agent that is running a run: the agent is refused at its next request,
// stops the run and exits 1 naming the revocation; the dashboard
// interrupts the run at the revoke; the page shows the agent
// revoked and offline, offering a new token, which lets it in again.
func TestAgentRevokedFromHostsPage(t *testing.T) {
	d := newFleetDash(t, agent.Timing{Lease: 3 * time.Second, Heartbeat: 300 * time.Millisecond, Poll: time.Second})
	id, token := d.addAgent("agent-p")
	since := time.Now()
	cmd, out, data := d.startLocalAgent(token)
	d.waitHello(id, since)
	g := d.createGroup(map[string]any{"name": "long", "hosts": []string{"agent-p"},
		"options": map[string]any{"filename": data + "/f", "size": "4m", "rw": "randread", "bs": "4k", "ioengine": "psync", "runtime": "60", "time_based": 1}})
	runID := g.Runs[0].ID
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(out.String(), "run leased") {
		if time.Now().After(deadline) {
			t.Fatalf("the agent never took run %d", runID)
		}
		time.Sleep(20 * time.Millisecond)
	}

	// The page's own form: its action, posted as the browser posts it.
	action := fmt.Sprintf(`action="/hosts/%d/revoke"`, id)
	if row := d.hostsRow("agent-p"); !strings.Contains(row, action) || !strings.Contains(row, "Revoke token") {
		t.Fatalf("the Hosts page offers no revoke of agent-p:\n%s", row)
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.PostForm(fmt.Sprintf("%s/hosts/%d/revoke", d.local, id), url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/hosts" {
		t.Fatalf("revoke form: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	revoked := time.Now()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(out.String(), "revoked") {
			t.Fatalf("the agent ended with %v:\n%s", err, out.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the agent still runs 20 s after its token was revoked:\n%s", out.String())
	}
	t.Logf("the agent exited %v after the revoke", time.Since(revoked).Round(time.Millisecond))
	r := d.waitEnded(runID, 15*time.Second)
	if r.Status != db.StatusInterrupted || !strings.Contains(r.Error, "token was revoked") {
		t.Fatalf("run %s %q, want interrupted by the revoke", r.Status, r.Error)
	}
	row := d.hostsRow("agent-p")
	for _, want := range []string{"token revoked", `<span class="status s-offline">offline</span>`, "issue a token"} {
		if !strings.Contains(row, want) {
			t.Errorf("the Hosts page's row of the revoked agent lacks %q:\n%s", want, row)
		}
	}
	if strings.Contains(row, "Revoke token") {
		t.Errorf("the Hosts page offers to revoke a revoked token")
	}

	// A new token from the page lets the agent in again.
	resp, err = http.PostForm(fmt.Sprintf("%s/hosts/%d/token", d.local, id), url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	_, fresh, _ := strings.Cut(string(page), "--token ")
	fresh, _, _ = strings.Cut(fresh, " ")
	if !strings.HasPrefix(fresh, "iolab_") || fresh == token {
		t.Fatalf("the new token %q (old %q)", fresh, token)
	}
	since = time.Now()
	d.startLocalAgent(fresh)
	if h := d.waitHello(id, since); !h.HasToken || !h.Revoked.IsZero() {
		t.Fatalf("after a new token: %+v", h)
	}
}

// TestAgentOwnAllowList: an agent runs only what its own flags allow,
// whatever the dashboard believes. The dashboard last heard that agent-o
// allows files under one directory and takes a run there; the agent,
// started since with another data directory, refuses it: the run fails
// naming the agent's allow-list, nothing is written there, and the
// dashboard, told the agent's list at its hello, refuses the next such
// plan itself.
func TestAgentOwnAllowList(t *testing.T) {
	d := newFleetDash(t, agent.Timing{Poll: time.Second})
	id, token := d.addAgent("agent-o")
	elsewhere := t.TempDir()
	hello, _ := json.Marshal(agent.Hello{Name: "agent-o", DataDir: elsewhere, Host: system.HostInfo{Hostname: "agent-o", KernelRelease: "6.1"}})
	req, _ := http.NewRequest("POST", d.local+agent.PathHello, bytes.NewReader(hello))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("hello: %d", resp.StatusCode)
	}
	plan := map[string]any{"name": "off", "hosts": []string{"agent-o"},
		"options": map[string]any{"filename": elsewhere + "/f", "size": "1m", "rw": "write", "bs": "4k", "ioengine": "psync"}}
	g := d.createGroup(plan)

	since := time.Now()
	d.startLocalAgent(token)
	d.waitHello(id, since)
	r := d.waitEnded(g.Runs[0].ID, 20*time.Second)
	if r.Status != db.StatusFailed || !strings.Contains(r.Error, "agent agent-o refused the plan") || !strings.Contains(r.Error, "allow-list") {
		t.Fatalf("run %s %q, want refused by the agent's allow-list", r.Status, r.Error)
	}
	if steps, _ := d.store.StoredSteps(context.Background(), r.ID); len(steps) != 0 {
		t.Errorf("%d steps stored of a refused run", len(steps))
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "f")); !os.IsNotExist(err) {
		t.Errorf("the agent wrote outside its allow-list: %v", err)
	}
	if code, msg := d.call("POST", "/api/runs", plan, nil); code != http.StatusBadRequest || !strings.Contains(msg, "not on the agent's allow-list") {
		t.Errorf("after the agent's hello: %d %q", code, msg)
	}
}

// TestFioServerAllowList: a fio server is added only on an address of
// --fio-allow (a name is checked as what it resolves to), through the
// API and the Hosts page's form alike, and not at all on a dashboard
// without --fio-allow; one on the list that does not answer is kept,
// offline, with why.
func TestFioServerAllowList(t *testing.T) {
	d := newFleetDash(t, agent.Timing{})
	for _, addr := range []string{"192.0.2.9", "localhost", "127.0.0.1"} {
		code, msg := d.call("POST", "/api/hosts", map[string]any{"kind": db.HostFio, "name": "fio-x", "address": addr}, nil)
		if code != http.StatusBadRequest || !strings.Contains(msg, "is not on the allow-list ("+fleettest.Range.String()+")") {
			t.Errorf("%s: %d %q", addr, code, msg)
		}
	}
	resp, err := http.PostForm(d.local+"/hosts", url.Values{"kind": {db.HostFio}, "name": {"fio-x"}, "address": {"192.0.2.9"}})
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(page), "192.0.2.9 is not on the allow-list") {
		t.Errorf("the Hosts page's form: %d", resp.StatusCode)
	}
	if hs, _ := d.store.ListHosts(context.Background()); len(hs) != 0 {
		t.Fatalf("%d hosts stored", len(hs))
	}

	none := newFleetDashAllow(t, agent.Timing{}, "")
	if code, msg := none.call("POST", "/api/hosts", map[string]any{"kind": db.HostFio, "name": "fio-x", "address": "10.213.1.2"}, nil); code != http.StatusBadRequest ||
		!strings.Contains(msg, "--fio-allow") {
		t.Errorf("without --fio-allow: %d %q", code, msg)
	}

	fleettest.NeedNamespaces(t)
	h := d.newHost("fio-gone") // no fio --server there
	var added struct{ Host db.Host }
	if code, msg := d.call("POST", "/api/hosts", map[string]any{"kind": db.HostFio, "name": "fio-gone", "address": h.Addr.String()}, &added); code != http.StatusCreated {
		t.Fatalf("a fio server on the list: %d %q", code, msg)
	}
	if a := added.Host; a.State != "" && a.State != db.HostOffline || a.Details.LastError == "" || !a.LastSeen.IsZero() {
		t.Errorf("a fio server that does not answer: %+v", a)
	}
	if row := d.hostsRow("fio-gone"); !strings.Contains(row, `<span class="status s-offline">offline</span>`) || !strings.Contains(row, "unreachable") {
		t.Errorf("the Hosts page's row of fio-gone:\n%s", row)
	}
}

// syncBuf is a process's output, written by its two pipes and read by
// the test.
type syncBuf struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
