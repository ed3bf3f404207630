package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/testdev"
	"iolab/db"
)

// hostileNames are the names a hostile case's error may name: its
// filename list's members as written, behind its directory, and as the
// dashboard takes them (a relative one under the data directory).
func hostileNames(e testdev.HostileEnv, tc testdev.HostileTarget) []string {
	prefix := ""
	if tc.Directory != nil {
		prefix = tc.Directory(e) + "/"
	}
	var out []string
	for _, n := range bench.SplitFileList(tc.Filename(e)) {
		if prefix != "" {
			out = append(out, n) // the dashboard takes it under the data directory first
		}
		n = prefix + n
		out = append(out, n)
		if !filepath.IsAbs(n) {
			out = append(out, filepath.Join(e.DataDir, n))
		}
	}
	return out
}

// hostileBody is a short write run on a hostile case's target.
func hostileBody(e testdev.HostileEnv, tc testdev.HostileTarget, filename string) string {
	return hostileBodyRW(e, tc, filename, "write")
}

// hostileBodyRW is hostileBody's run doing rw (write, or a trim).
func hostileBodyRW(e testdev.HostileEnv, tc testdev.HostileTarget, filename, rw string) string {
	opts := map[string]any{"filename": filename, "size": "1m", "rw": rw, "bs": "64k",
		"ioengine": "psync", "runtime": "300ms", "time_based": 1}
	if tc.Directory != nil {
		opts["directory"] = tc.Directory(e)
	}
	b, _ := json.Marshal(map[string]any{"name": "hostile", "options": opts})
	return string(b)
}

// waitEnded waits for run id to end, whatever its end.
func waitEnded(t *testing.T, store *db.Store, id int64) *db.Run {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := store.GetRun(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != db.StatusQueued && r.Status != db.StatusRunning {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d still %s", id, r.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// namesAny reports whether msg names one of names.
func namesAny(msg string, names []string) bool {
	for _, n := range names {
		if strings.Contains(msg, n) {
			return true
		}
	}
	return false
}

// TestHostileTargetsWebRuns replays testdev.HostileTargets through the
// dashboard's web runs, allowed a device, a file, a symlink and a device
// node: each is refused when it is launched (400) or fails when it runs,
// with an error naming the path; the swap cases are accepted, queued
// behind a run that holds their devices, swapped, and fail at their
// open. No victim byte changes.
func TestHostileTargetsWebRuns(t *testing.T) { hostileTargetsWebRuns(t, "write") }

// TestHostileTrimsWebRuns replays them with runs that trim: the write
// guard holds trims to its rules, and a discard would zero the victims'
// random bytes.
func TestHostileTrimsWebRuns(t *testing.T) { hostileTargetsWebRuns(t, "randtrim") }

func hostileTargetsWebRuns(t *testing.T, rw string) {
	dataDir, _ := filepath.EvalSymlinks(t.TempDir())
	e := testdev.NewHostileEnv(t, dataDir, 4<<20)
	ts := newTestServer(t, Config{AllowTargets: e.Targets(), DataDir: dataDir})
	before := e.Victims(t)
	var swaps []testdev.HostileTarget
	for _, tc := range testdev.HostileTargets {
		if tc.Swap != nil {
			swaps = append(swaps, tc)
			continue
		}
		t.Run(tc.Name, func(t *testing.T) {
			names := hostileNames(e, tc)
			rec := ts.do(t, "POST", "/api/runs", hostileBodyRW(e, tc, tc.Filename(e), rw))
			switch rec.Code {
			case http.StatusBadRequest:
				if !namesAny(rec.Body.String(), names) {
					t.Errorf("refused with %s; want the path named (%q)", rec.Body, names)
				}
			case http.StatusCreated:
				var got createdRun
				if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
					t.Fatal(err)
				}
				r := waitEnded(t, ts.store, got.ID)
				if r.Status != db.StatusFailed || !namesAny(r.Error, names) {
					t.Errorf("run ended %s (%q); want it failed naming the path (%q)", r.Status, r.Error, names)
				}
			default:
				t.Errorf("launch: %d %s", rec.Code, rec.Body)
			}
		})
	}
	// The swaps: a run holds the data directory's disk and the allowed
	// device while the hostile runs wait behind it.
	hold := launchRun(t, ts, `{"name":"hold","options":{"filename":"hold.dat:`+e.Allowed+`","size":"2m","rw":"randread",
		"ioengine":"psync","runtime":"1s","time_based":1}}`)
	ids := map[string]int64{}
	names := map[string][]string{} // taken before the swaps: Filename makes files
	for _, tc := range swaps {
		names[tc.Name] = hostileNames(e, tc)
		ids[tc.Name] = launchRun(t, ts, hostileBodyRW(e, tc, tc.Filename(e), rw))
		if r, err := ts.store.GetRun(context.Background(), ids[tc.Name]); err != nil || r.Status != db.StatusQueued {
			t.Fatalf("%s: %+v %v; want it queued behind the holder", tc.Name, r, err)
		}
	}
	for _, tc := range swaps {
		if err := tc.Swap(e); err != nil {
			t.Fatal(err)
		}
	}
	waitStatus(t, ts.store, hold, db.StatusDone)
	for _, tc := range swaps {
		r := waitEnded(t, ts.store, ids[tc.Name])
		t.Logf("%s: %s: %s", tc.Name, r.Status, r.Error)
		if r.Status != db.StatusFailed || !namesAny(r.Error, names[tc.Name]) {
			t.Errorf("%s: run ended %s (%q); want it failed naming the path (%q)", tc.Name, r.Status, r.Error, names[tc.Name])
		}
	}
	e.CheckVictims(t, before)
}

// TestMissingAllowedDevice: a dashboard allowed a device that does not
// exist does not start, and says so; no file appears in /dev.
func TestMissingAllowedDevice(t *testing.T) {
	gone := "/dev/iolab-gone-handlers"
	store, err := db.Open(context.Background(), filepath.Join(t.TempDir(), "iolab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	_, err = New(Config{Store: store, AllowTargets: []string{gone}})
	if err == nil || !strings.Contains(err.Error(), "allowed device "+gone+" does not exist") || strings.Contains(err.Error(), "size") {
		t.Errorf("New: %v; want it refused for the missing device", err)
	}
	if _, err := filepath.Glob(gone); err != nil {
		t.Fatal(err)
	}
	if m, _ := filepath.Glob(gone + "*"); len(m) > 0 {
		t.Errorf("%v appeared in /dev", m)
	}
}
