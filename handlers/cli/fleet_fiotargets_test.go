package cli

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"iolab/bench/fioserver/fleettest"
	"iolab/bench/testdev"
	"iolab/db"
	"iolab/handlers/agent"
)

// TestFioServerTargets: issue 23's item 1 through the dashboard. A fio
// server host (a real `fio --server` in a namespace, sharing this
// machine's devices and files) allows one loop device; POST /api/runs
// with the host and a filename that leads elsewhere — the victim device
// through /proc/self/root, after another file in fio's ':' list, a file
// outside /dev — or an option that writes elsewhere on the host is
// refused with 400 before anything reaches the server, naming the host,
// the value and what the host allows; no byte of the victims changes.
// The allowed device still runs.
func TestFioServerTargets(t *testing.T) {
	fleettest.NeedNamespaces(t)
	testdev.NeedLoopTools(t)
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("fio not installed")
	}
	d := newFleetDash(t, agent.Timing{})
	h := d.newHost("fioh")
	h.FioServer(t, fleettest.DefaultFioPort)
	allowed, victim := testdev.Loop(t, 8<<20), testdev.Loop(t, 8<<20)
	dir := t.TempDir()
	victimFile := filepath.Join(dir, "victim")
	if err := os.WriteFile(victimFile, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	// An entry that is not written as jobs must name it is refused.
	for _, bad := range []string{"/proc/self/root" + allowed, "/" + allowed, allowed + ":" + victim, "dev/x"} {
		code, msg := d.call("POST", "/api/hosts", map[string]any{"kind": db.HostFio, "name": "fio-bad", "address": h.Addr.String(), "devices": []string{bad}}, nil)
		if code != http.StatusBadRequest || !strings.Contains(msg, "allowed target") {
			t.Errorf("a fio host allowing %s: %d %q", bad, code, msg)
		}
	}
	// An allowed device that the host does not have: fio would make it a
	// file in /dev (the namespace host shares this machine's /dev).
	gone := fmt.Sprintf("/dev/iolab-gone-%d", time.Now().UnixNano())
	t.Cleanup(func() {
		if st, err := os.Lstat(gone); err == nil && st.Mode().IsRegular() {
			os.Remove(gone) // what a failing run made, not a device node
		}
	})
	d.addFio("fioh", h.Addr, allowed, gone)
	before := map[string]string{victim: testdev.Fingerprint(t, victim), victimFile: testdev.Fingerprint(t, victimFile)}

	plan := func(name string, opts map[string]any) map[string]any {
		o := map[string]any{"filename": allowed, "rw": "write", "bs": "64k", "size": "1m", "ioengine": "psync", "direct": 1}
		for k, v := range opts {
			o[k] = v
		}
		return map[string]any{"name": name, "options": o, "hosts": []string{"fioh"}}
	}
	for _, tt := range []struct {
		name string
		opts map[string]any
		want string // in the answer's error, with the host's name and allowed device
	}{
		{"through /proc/self/root", map[string]any{"filename": "/proc/self/root" + victim}, "filename=/proc/self/root" + victim + ": under /proc or /sys"},
		{"in a : list", map[string]any{"filename": filepath.Join(dir, "x") + ":" + victim}, "filename=" + filepath.Join(dir, "x") + ":" + victim + ": a ':' list of files"},
		{"a file outside /dev", map[string]any{"filename": victimFile}, "filename=" + victimFile + ": not one of the host's allowed targets"},
		{"a log", map[string]any{"write_bw_log": filepath.Join(dir, "bw")}, "write_bw_log=" + filepath.Join(dir, "bw") + ": opens another file on the host"},
		{"a scheduler", map[string]any{"ioscheduler": "none"}, "ioscheduler=none: writes kernel settings on the host"},
		{"a verify state file", map[string]any{"verify": "crc32c"}, "verify_state_save=1: fio's default with verify"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, msg := d.call("POST", "/api/runs", plan("hostile", tt.opts), nil)
			if code != http.StatusBadRequest || !strings.Contains(msg, "fio host fioh") || !strings.Contains(msg, tt.want) ||
				!strings.Contains(msg, "the host allows "+allowed+", "+gone) {
				t.Fatalf("%d %q; want 400 naming fioh, %q and the host's %s", code, msg, tt.want, allowed)
			}
		})
	}
	runs, err := d.store.ListRuns(t.Context(), db.RunFilter{})
	if err != nil || len(runs) != 0 {
		t.Errorf("%d runs stored after the refusals (%v)", len(runs), err)
	}

	var ans groupAnswer
	if code, msg := d.call("POST", "/api/runs", plan("allowed", nil), &ans); code != http.StatusCreated || len(ans.Runs) != 1 {
		t.Fatalf("the allowed device: %d %q %+v", code, msg, ans)
	}
	if r := d.waitEnded(ans.Runs[0].ID, 30*time.Second); r.Status != db.StatusDone {
		t.Fatalf("the allowed device's run: %s %q", r.Status, r.Error)
	}
	if testdev.Fingerprint(t, allowed) == testdev.Fingerprint(t, victim) {
		t.Error("the allowed device's run wrote nothing on it")
	}
	if code, msg := d.call("POST", "/api/runs", plan("gone", map[string]any{"filename": gone}), &ans); code != http.StatusCreated || len(ans.Runs) != 1 {
		t.Fatalf("the missing allowed device: %d %q %+v", code, msg, ans)
	}
	if r := d.waitEnded(ans.Runs[0].ID, 30*time.Second); r.Status != db.StatusFailed || !strings.Contains(r.Error, "file creation disallowed") {
		t.Errorf("the missing allowed device's run: %s %q; want failed, fio refusing to create it", r.Status, r.Error)
	}
	if _, err := os.Lstat(gone); err == nil {
		t.Errorf("%s was made on the host", gone)
	}
	for p, sum := range before {
		if got := testdev.Fingerprint(t, p); got != sum {
			t.Errorf("%s changed", p)
		}
	}
}

// TestFioServerRemovedWhileQueued: a fio host's run waiting in a serial
// group is checked against the host as stored when its step starts: the
// host removed meanwhile (to be added again with other targets, say), the
// run ends failed, naming why, and runs nothing.
func TestFioServerRemovedWhileQueued(t *testing.T) {
	fleettest.NeedNamespaces(t)
	testdev.NeedLoopTools(t)
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("fio not installed")
	}
	d := newFleetDash(t, agent.Timing{})
	allowed := testdev.Loop(t, 8<<20)
	for _, name := range []string{"fio-first", "fio-second"} {
		h := d.newHost(name)
		h.FioServer(t, fleettest.DefaultFioPort)
		d.addFio(name, h.Addr, allowed)
	}
	var ans groupAnswer
	body := map[string]any{"name": "serial", "serial": true, "hosts": []string{"fio-first", "fio-second"},
		"options": map[string]any{"filename": allowed, "rw": "randread", "bs": "4k", "ioengine": "psync", "runtime": "2", "time_based": 1}}
	if code, msg := d.call("POST", "/api/runs", body, &ans); code != http.StatusCreated || len(ans.Runs) != 2 {
		t.Fatalf("%d %q %+v", code, msg, ans)
	}
	first, second := ans.Runs[0].ID, ans.Runs[1].ID
	deadline := time.Now().Add(20 * time.Second)
	for {
		r, err := d.store.GetRun(t.Context(), first)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status == db.StatusRunning {
			break
		}
		if r.Status != db.StatusQueued || time.Now().After(deadline) {
			t.Fatalf("the first run is %s (%q), not running", r.Status, r.Error)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var hosts []db.Host
	if code, msg := d.call("GET", "/api/hosts", nil, &hosts); code != http.StatusOK {
		t.Fatalf("GET /api/hosts: %d %s", code, msg)
	}
	for _, h := range hosts {
		if h.Name == "fio-second" {
			if code, msg := d.call("DELETE", fmt.Sprintf("/api/hosts/%d", h.ID), nil, nil); code != http.StatusNoContent {
				t.Fatalf("DELETE fio-second: %d %q", code, msg)
			}
		}
	}
	if r := d.waitEnded(first, 30*time.Second); r.Status != db.StatusDone {
		t.Errorf("the first run: %s %q", r.Status, r.Error)
	}
	r := d.waitEnded(second, 30*time.Second)
	if r.Status != db.StatusFailed || !strings.Contains(r.Error, "fio host fio-second was removed from the Hosts page") {
		t.Errorf("the second run: %s %q; want failed, its host removed", r.Status, r.Error)
	}
	if steps, _ := d.stepsOnce(second); len(steps) != 0 {
		t.Errorf("the second run stored %d steps", len(steps))
	}
}
