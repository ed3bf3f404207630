package handlers

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"iolab/bench/testdev"
	"iolab/db"
)

// TestQueuedTargetSwappedForDevice: a queued run's file under the data
// directory is swapped for a symlink to a block device that is not on the
// allow-list while the run waits; when it starts, its step refuses the
// target and the device is never written.
func TestQueuedTargetSwappedForDevice(t *testing.T) {
	dev := testdev.Loop(t, 16<<20)
	ts := newTestServer(t, Config{})
	// The first run holds the data directory's disk; the second waits.
	first := launchRun(t, ts, `{"name":"hold","options":{"filename":"hold.dat","size":"4m","rw":"randread",
		"ioengine":"libaio","runtime":"1s","time_based":1}}`)
	victim := filepath.Join(ts.dataDir, "victim.dat")
	if err := os.WriteFile(victim, make([]byte, 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	second := launchRun(t, ts, `{"name":"swap","options":{"filename":"victim.dat","size":"4m","rw":"write","bs":"64k",
		"ioengine":"psync","runtime":"300ms","time_based":1}}`)
	if r, err := ts.store.GetRun(context.Background(), second); err != nil || r.Status != db.StatusQueued {
		t.Fatalf("second run: %+v %v; want it queued behind the first", r, err)
	}
	if err := os.Remove(victim); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dev, victim); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, ts.store, first, db.StatusDone)
	run := waitStatus(t, ts.store, second, db.StatusFailed)
	if !strings.Contains(run.Error, "allow-list") {
		t.Errorf("the swapped run failed with %q; want the allow-list refusal", run.Error)
	}
	data, err := os.ReadFile(dev)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, make([]byte, len(data))) {
		t.Fatal("the device behind the swapped symlink was written")
	}
}
