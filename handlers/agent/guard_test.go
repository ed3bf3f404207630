package agent_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/launch"
	"iolab/bench/system"
	"iolab/bench/testdev"
	"iolab/db"
	"iolab/handlers/agent"
)

// startAgentAllowing runs an agent with allow as its allow-list until the
// test ends.
func startAgentAllowing(t *testing.T, d *dashboard, token string, allow launch.AllowList) {
	t.Helper()
	store, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "agent.db"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Dashboard: d.url, Token: token, Allow: allow, Store: store, Sys: system.FS{},
		ProgressEvery: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; store.Close() })
}

// hostilePlan is a short write run of a hostile case for host.
func hostilePlan(e testdev.HostileEnv, tc testdev.HostileTarget, host string) map[string]any {
	opts := map[string]any{"filename": tc.Filename(e), "size": "1m", "rw": "write", "bs": "64k",
		"ioengine": "psync", "runtime": "300ms", "time_based": 1}
	if tc.Directory != nil {
		opts["directory"] = tc.Directory(e)
	}
	return map[string]any{"name": "hostile", "options": opts, "hosts": []string{host}}
}

// hostileNames are the names a refusal of tc may name: its members as
// written, behind its directory, and under the data directory.
func hostileNames(e testdev.HostileEnv, tc testdev.HostileTarget) []string {
	var out []string
	for _, n := range bench.SplitFileList(tc.Filename(e)) {
		out = append(out, n, filepath.Join(e.DataDir, n))
		if tc.Directory != nil {
			out = append(out, filepath.Join(tc.Directory(e), n))
		}
	}
	return out
}

func namesAny(msg string, names []string) bool {
	for _, n := range names {
		if strings.Contains(msg, n) {
			return true
		}
	}
	return false
}

// TestAgentHostileTargets replays testdev.HostileTargets through an
// agent allowed a device, a file, a symlink and a device node, and a data
// directory: each run is refused by the dashboard (400) or fails on the
// agent, naming the path; the swap cases are accepted, wait behind a run
// that holds the agent, are swapped, and are refused by the agent's
// guard. No victim byte changes.
func TestAgentHostileTargets(t *testing.T) {
	d := newDashboard(t, agent.Timing{Poll: 200 * time.Millisecond})
	id, token := d.addAgent(t, "agent-g")
	dataDir, _ := filepath.EvalSymlinks(t.TempDir())
	e := testdev.NewHostileEnv(t, dataDir, 4<<20)
	startAgentAllowing(t, d, token, launch.AllowList{Targets: e.Targets(), DataDir: dataDir})
	waitHost(t, d, id)
	before := e.Victims(t)
	var swaps []testdev.HostileTarget
	for _, tc := range testdev.HostileTargets {
		if tc.Swap != nil {
			swaps = append(swaps, tc)
			continue
		}
		t.Run(tc.Name, func(t *testing.T) {
			names := hostileNames(e, tc)
			var c created
			var eb errBody
			switch code := d.call(t, "POST", "/api/runs", "", hostilePlan(e, tc, "agent-g"), &c); code {
			case http.StatusBadRequest:
				d.call(t, "POST", "/api/runs", "", hostilePlan(e, tc, "agent-g"), &eb)
				if !namesAny(eb.Error, names) {
					t.Errorf("refused with %q; want the path named (%q)", eb.Error, names)
				}
			case http.StatusCreated:
				r := waitRun(t, d.store, c.Runs[0].ID, 30*time.Second)
				if r.Status != db.StatusFailed || !namesAny(r.Error, names) {
					t.Errorf("run ended %s (%q); want it failed naming the path (%q)", r.Status, r.Error, names)
				}
			default:
				t.Errorf("launch: %d", code)
			}
		})
	}
	var hold created
	holdPlan := map[string]any{"name": "hold", "hosts": []string{"agent-g"}, "options": map[string]any{
		"filename": filepath.Join(dataDir, "hold.dat"), "size": "2m", "rw": "randread", "ioengine": "psync", "runtime": "1s", "time_based": 1}}
	if code := d.call(t, "POST", "/api/runs", "", holdPlan, &hold); code != http.StatusCreated {
		t.Fatalf("holder: %d", code)
	}
	var ids []int64
	var names [][]string // taken before the swaps: Filename makes files
	for _, tc := range swaps {
		var c created
		names = append(names, hostileNames(e, tc))
		p := hostilePlan(e, tc, "agent-g")
		opts := p["options"].(map[string]any)
		if name := opts["filename"].(string); !filepath.IsAbs(name) {
			// The dashboard takes only absolute names for an agent: the
			// data file as its user names it.
			opts["filename"] = filepath.Join(dataDir, name)
		}
		if code := d.call(t, "POST", "/api/runs", "", p, &c); code != http.StatusCreated {
			t.Fatalf("%s: launch %d; want it accepted before the swap", tc.Name, code)
		}
		ids = append(ids, c.Runs[0].ID)
	}
	for _, tc := range swaps {
		if err := tc.Swap(e); err != nil {
			t.Fatal(err)
		}
	}
	if r := waitRun(t, d.store, hold.Runs[0].ID, 30*time.Second); r.Status != db.StatusDone {
		t.Errorf("holder: %s %s", r.Status, r.Error)
	}
	for i, tc := range swaps {
		r := waitRun(t, d.store, ids[i], 30*time.Second)
		t.Logf("%s: %s: %s", tc.Name, r.Status, r.Error)
		if r.Status != db.StatusFailed || !namesAny(r.Error, names[i]) {
			t.Errorf("%s: run ended %s (%q); want it failed naming the path (%q)", tc.Name, r.Status, r.Error, names[i])
		}
	}
	e.CheckVictims(t, before)
}

// TestAgentMissingAllowedDevice: an agent allowed a device that does not
// exist does not start, and says so; nothing appears in /dev.
func TestAgentMissingAllowedDevice(t *testing.T) {
	gone := "/dev/iolab-gone-agent"
	store, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "agent.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	_, err = agent.New(agent.Config{Dashboard: "http://127.0.0.1:1", Token: "x", Store: store, Sys: system.FS{},
		Allow: launch.AllowList{Targets: []string{gone}}})
	if err == nil || !strings.Contains(err.Error(), "allowed device "+gone+" does not exist") {
		t.Errorf("agent.New: %v; want it refused for the missing device", err)
	}
	if _, err := os.Lstat(gone); err == nil {
		t.Errorf("%s appeared", gone)
	}
}
