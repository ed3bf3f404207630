package cli

import (
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/db"
	"iolab/handlers/agent"
)

// TestGroupCancel: the group page's Cancel ends every run of a serial
// group still queued or running: the first host's run, told at its
// agent's next request, and the second's before its turn, which its
// agent never takes; the group's page then offers no cancel.
func TestGroupCancel(t *testing.T) {
	d := newFleetDash(t, agent.Timing{Heartbeat: 200 * time.Millisecond, Poll: time.Second})
	shared := filepath.Join(t.TempDir(), "shared.img") // both agents allow it; made by the first run
	var outs []*syncBuf
	for _, name := range []string{"agent-c1", "agent-c2"} {
		id, token := d.addAgent(name)
		since := time.Now()
		_, out, _ := d.startLocalAgent(token, "--allow-target", shared)
		d.waitHello(id, since)
		outs = append(outs, out)
	}
	g := d.createGroup(map[string]any{"name": "stop", "hosts": []string{"agent-c1", "agent-c2"}, "serial": true,
		"options": map[string]any{"filename": shared, "size": "4m", "rw": "randread", "bs": "4k", "ioengine": "psync", "runtime": "60", "time_based": 1}})
	first, second := g.Runs[0].ID, g.Runs[1].ID
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(outs[0].String(), "run leased") {
		if time.Now().After(deadline) {
			t.Fatalf("agent-c1 never took run %d", first)
		}
		time.Sleep(20 * time.Millisecond)
	}
	page := d.get("/groups/" + g.Group)
	if !strings.Contains(page, `action="/groups/`+g.Group+`/cancel"`) {
		t.Fatalf("the group's page offers no cancel while its runs are active")
	}
	var answer struct {
		URL       string  `json:"url"`
		Cancelled []int64 `json:"cancelled"`
	}
	if code, msg := d.call("POST", "/api/groups/"+g.Group+"/cancel", nil, &answer); code != http.StatusAccepted || !slices.Equal(answer.Cancelled, []int64{first, second}) {
		t.Fatalf("cancel: %d %q %+v", code, msg, answer)
	}
	r1, r2 := d.waitEnded(first, 15*time.Second), d.waitEnded(second, 5*time.Second)
	if r1.Status != db.StatusCancelled || r2.Status != db.StatusCancelled || !strings.Contains(r2.Error, "before its turn") {
		t.Fatalf("runs %s %q and %s %q, want both cancelled", r1.Status, r1.Error, r2.Status, r2.Error)
	}
	time.Sleep(1500 * time.Millisecond) // a poll of agent-c2's
	if strings.Contains(outs[1].String(), "run leased") {
		t.Errorf("agent-c2 took the cancelled run:\n%s", outs[1].String())
	}
	if page := d.get("/groups/" + g.Group); strings.Contains(page, `id="cancel-group"`) {
		t.Errorf("the ended group's page still offers a cancel")
	}
	if code, _ := d.call("POST", "/api/groups/"+g.Group+"/cancel", nil, &answer); code != http.StatusAccepted || len(answer.Cancelled) != 0 {
		t.Errorf("cancelling an ended group: %d %+v", code, answer)
	}
	if code, _ := d.call("POST", "/api/groups/nope/cancel", nil, nil); code != http.StatusNotFound {
		t.Errorf("cancelling no group: %d", code)
	}
	t.Logf("run %d: %s; run %d: %s", first, r1.Error, second, r2.Error)
}

// get reads one of the dashboard's pages.
func (d *fleetDash) get(path string) string {
	d.t.Helper()
	resp, err := http.Get(d.local + path)
	if err != nil {
		d.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		d.t.Fatal(err)
	}
	return string(b)
}
