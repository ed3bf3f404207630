package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"iolab/bench/testdev"
	"iolab/db"
	"iolab/db/agent"
	"iolab/db/fleet/fleettest"
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
