package cli

import (
	"net/http"
	"os"
	"testing"
	"time"

	"iolab/bench/fioserver/fleettest"
	"iolab/db"
)

// The fleet tests' agents (fleetDash's, childDash's, fiftyFleet's): each
// one `iolab agent` (this test binary as iolab) in a namespace host of
// its own, given a token by the dashboard and started pointed at it.

// dashCall sends a JSON request to a dashboard and decodes its answer
// into out; it returns the status and, for an error, its message.
type dashCall func(method, path string, body, out any) (int, string)

// nsAgent is an agent in a namespace host, as the test starts it.
type nsAgent struct {
	host      *fleettest.Host
	id        int64 // its host's id on the dashboard
	token     string
	dashboard string   // the dashboard's URL, as the agent reaches it
	db        string   // its store, outside its data directory
	env       []string // more of its environment (NAME=value)
	extra     []string // more agent flags
	proc      *fleettest.Process
}

// newAgentNS makes namespace host name for an agent: its data directory
// is the agent's alone (iolab agent refuses one others may write).
func newAgentNS(t testing.TB, name string) *fleettest.Host {
	t.Helper()
	h := fleettest.NewHost(t, name)
	if err := os.Chmod(h.Data, 0o700); err != nil {
		t.Fatal(err)
	}
	return h
}

// addAgentHost adds agent host name to the dashboard call reaches and
// returns its id and token.
func addAgentHost(t testing.TB, call dashCall, name string) (int64, string) {
	t.Helper()
	var added struct {
		Host  db.Host
		Token string
	}
	if code, msg := call("POST", "/api/hosts", map[string]string{"kind": db.HostAgent, "name": name}, &added); code != http.StatusCreated {
		t.Fatalf("add agent %s: %d %s", name, code, msg)
	}
	return added.Host.ID, added.Token
}

// launch starts (or starts again) the agent in its host, with its data
// directory there (fleettest.DataDir).
func (a *nsAgent) launch(t testing.TB) {
	t.Helper()
	args := append(append([]string{"IOLAB_TEST_MAIN=1"}, a.env...), os.Args[0], "agent", "--dashboard", a.dashboard,
		"--token", a.token, "--name", a.host.Name, "--data-dir", fleettest.DataDir, "--db", a.db)
	a.proc = a.host.Start(t, "env", append(args, a.extra...)...)
}

// waitHellos waits until each agent has said hello since since: its host
// seen since then on the dashboard, with its environment and its
// namespace's hostname (UTS). It fails the test when an agent exits or
// within passes first.
func waitHellos(t testing.TB, call dashCall, since time.Time, within time.Duration, agents ...*nsAgent) {
	t.Helper()
	deadline := time.Now().Add(within)
	// Fifty agents' polls would load the dashboard: fewer, the more.
	poll := min(200*time.Millisecond, time.Duration(len(agents))*20*time.Millisecond)
	for {
		var hosts []db.Host
		call("GET", "/api/hosts", nil, &hosts)
		seen := map[int64]bool{}
		for _, h := range hosts {
			if h.LastSeen.After(since) && h.Details.Env != nil && h.Hostname == h.Name {
				seen[h.ID] = true
			}
		}
		var waiting []*nsAgent
		for _, a := range agents {
			if !seen[a.id] {
				waiting = append(waiting, a)
			}
		}
		if len(waiting) == 0 {
			return
		}
		for _, a := range waiting {
			if a.proc.Exited() {
				t.Fatalf("agent %s exited:\n%s", a.host.Name, a.proc.Output())
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d agents did not say hello within %v; %s's output:\n%s", len(waiting), len(agents), within,
				waiting[0].host.Name, waiting[0].proc.Output())
		}
		time.Sleep(poll)
	}
}
