package cli

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"iolab/db"
	"iolab/handlers/agent"
)

// TestAgentNotLockedOutByBogusTokens: bogus agent tokens sent from a
// running agent's own address (issue 23, item 8: five of them locked the
// real agent out with 429, and its run ended "interrupted: lease ran
// out") are answered 429 after a few, while the real agent's heartbeats
// and steps still go through and its run ends done.
func TestAgentNotLockedOutByBogusTokens(t *testing.T) {
	d := newFleetDash(t, agent.Timing{Lease: 3 * time.Second, Heartbeat: 300 * time.Millisecond, Poll: time.Second})
	id, token := d.addAgent("agent-l")
	since := time.Now()
	_, out, data := d.startLocalAgent(token)
	d.waitHello(id, since)
	g := d.createGroup(map[string]any{"name": "locked", "hosts": []string{"agent-l"},
		"options": map[string]any{"filename": data + "/f", "size": "4m", "rw": "randread", "bs": "4k", "ioengine": "psync",
			"runtime": "4", "time_based": 1, "rate_iops": 200}})
	runID := g.Runs[0].ID
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(out.String(), "run leased") {
		if time.Now().After(deadline) {
			t.Fatalf("the agent never took run %d", runID)
		}
		time.Sleep(20 * time.Millisecond)
	}

	send := func(tok, method, path string) (int, string, string) {
		req, _ := http.NewRequest(method, d.local+path, strings.NewReader("{}"))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
	}
	state := fmt.Sprintf("%s%d", agent.PathRuns, runID)
	// The agent's address is 127.0.0.1, as is this test's.
	var last int
	for i := range 12 {
		bogus := fmt.Sprintf("iolab_%d_%032x", id, i)
		if i%2 == 1 {
			bogus = "not-a-token-" + fmt.Sprint(i)
		}
		status, retry, body := send(bogus, "POST", agent.PathHello)
		switch {
		case status == http.StatusTooManyRequests:
			if retry == "" || !strings.Contains(body, "too many unknown agent tokens") {
				t.Fatalf("bogus token %d: 429 with Retry-After %q: %s", i+1, retry, body)
			}
		case status != http.StatusUnauthorized:
			t.Fatalf("bogus token %d: %d %s", i+1, status, body)
		case i >= 5:
			t.Fatalf("bogus token %d: still 401, want 429 after 5", i+1)
		}
		last = status
		// The real token from the same address is served in between.
		if status, _, body := send(token, "GET", state); status != http.StatusOK {
			t.Fatalf("the real agent token after %d bogus ones: %d %s", i+1, status, body)
		}
	}
	if last != http.StatusTooManyRequests {
		t.Fatalf("12 bogus tokens and no 429")
	}
	r := d.waitEnded(runID, 30*time.Second)
	if r.Status != db.StatusDone {
		t.Fatalf("run %s %q; want done: bogus tokens from its agent's address must not cost it its lease\n%s", r.Status, r.Error, out.String())
	}
}
