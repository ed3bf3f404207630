package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"iolab/bench/launch"
	"iolab/db"
)

// TestLaunchQuota: a web run that would lay out more than the data
// directory's quota allows is refused at launch with 400, naming the
// option, the quota and the flag to raise it, before anything is
// written or stored; a small run still runs.
func TestLaunchQuota(t *testing.T) {
	ts := newTestServer(t, Config{})
	for _, tc := range []struct {
		name, body, field string
		want              []string
	}{
		{"size=1t", `{"name":"big","options":{"filename":"big.dat","size":"1t","rw":"write","ioengine":"psync"}}`,
			"options.size", []string{"size=1t", "lay out 1.00TiB in the data directory " + ts.dataDir, "at most 16g", "--run-max-size"}},
		{"nrfiles=100000", `{"name":"many","options":{"nrfiles":"100000","size":"100m","rw":"randread","ioengine":"psync"}}`,
			"options.nrfiles", []string{"nrfiles=100000 makes 100000 files in the data directory " + ts.dataDir, "at most 1000", "--run-max-files"}},
		{"numjobs × nrfiles in a job file", `{"jobfile":"[many]\ndirectory=` + ts.dataDir + `\nnrfiles=600\nnumjobs=2\nsize=10m\n"}`,
			"jobfile", []string{"more than 1000 files", "--run-max-files"}},
		{"a group with this machine", `{"name":"grp","hosts":["local"],"options":{"filename":"` + ts.dataDir + `/grp.dat","size":"1t","rw":"write","ioengine":"psync"}}`,
			"options.size", []string{"size=1t", "--run-max-size"}},
		{"a sweep of size", `{"name":"grow","options":{"filename":"g.dat","size":"1m","rw":"write","ioengine":"psync"},"sweep":{"size":["1m","20g"]}}`,
			"options.size", []string{"20.0GiB", "--run-max-size"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			rec := ts.do(t, "POST", "/api/runs", tc.body)
			took := time.Since(start)
			var got errorBody
			json.Unmarshal(rec.Body.Bytes(), &got)
			if rec.Code != http.StatusBadRequest || got.Field != tc.field {
				t.Fatalf("%d %s; want 400 on %s", rec.Code, rec.Body, tc.field)
			}
			for _, w := range tc.want {
				if !strings.Contains(got.Error, w) {
					t.Errorf("the refusal %q does not say %q", got.Error, w)
				}
			}
			t.Logf("refused in %v", took)
		})
	}
	if entries, _ := os.ReadDir(ts.dataDir); len(entries) != 0 {
		t.Errorf("refused runs left %d files in the data directory", len(entries))
	}
	if runs, err := ts.store.ListRuns(context.Background(), db.RunFilter{}); err != nil || len(runs) != 0 {
		t.Errorf("refused runs were stored: %d, %v", len(runs), err)
	}
	id := launchRun(t, ts, `{"name":"small","options":{"filename":"small.dat","size":"1m","rw":"randwrite","ioengine":"psync","runtime":"100ms","time_based":1}}`)
	waitStatus(t, ts.store, id, db.StatusDone)
	if fi, err := os.Stat(filepath.Join(ts.dataDir, "small.dat")); err != nil || fi.Size() != 1<<20 {
		t.Errorf("the small run's file: %v, %v", fi, err)
	}
}

// TestQueuedRunQuota: a run that passed the quota at launch but waited
// in the queue while the data directory filled is refused when it
// starts, before it lays anything out.
func TestQueuedRunQuota(t *testing.T) {
	ts := newTestServer(t, Config{Quota: launch.Quota{Bytes: 24 << 20}})
	first := launchRun(t, ts, `{"name":"first","options":{"filename":"a.dat","size":"1m","rw":"randread","ioengine":"psync","runtime":"2s","time_based":1}}`)
	waitStatus(t, ts.store, first, db.StatusRunning)
	second := launchRun(t, ts, `{"name":"second","options":{"filename":"b.dat","size":"16m","rw":"randwrite","ioengine":"psync","runtime":"100ms","time_based":1}}`)
	if r, _ := ts.store.GetRun(context.Background(), second); r.Status != db.StatusQueued {
		t.Fatalf("the second run is %s, want it queued behind the first (same device)", r.Status)
	}
	// Meanwhile the directory fills.
	fill := filepath.Join(ts.dataDir, "other.dat")
	os.WriteFile(fill, nil, 0o600)
	os.Truncate(fill, 12<<20)
	r := waitStatus(t, ts.store, second, db.StatusFailed)
	if !strings.Contains(r.Error, "not started") || !strings.Contains(r.Error, "--data-max-size") {
		t.Errorf("the queued run failed with %q; want it not started, on the quota", r.Error)
	}
	if _, err := os.Stat(filepath.Join(ts.dataDir, "b.dat")); err == nil {
		t.Error("the refused run laid out its file")
	}
}
