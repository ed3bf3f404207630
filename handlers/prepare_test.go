package handlers

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"iolab/bench/launch"
	"iolab/db"
)

// TestLaunchPreparesOnce: a run launched from the dashboard — the API,
// the new-run form — expands its plan's steps
// and resolves its targets once (launch.Prepare): the handler does not
// check the plan apart, nor do the launcher and the run again.
func TestLaunchPreparesOnce(t *testing.T) {
	ts := newTestServer(t, Config{})
	plan := `"options":{"filename":"once.dat","size":"1m","rw":"randread","ioengine":"psync","runtime":"50ms","time_based":1},"sweep":{"bs":["4k","8k"]}`
	for _, tc := range []struct {
		name   string
		launch func(t *testing.T) int64
	}{
		{"api", func(t *testing.T) int64 { return launchRun(t, ts, `{"name":"api",`+plan+`}`) }},
		{"form", func(t *testing.T) int64 {
			rec := ts.do(t, "POST", "/runs", url.Values{"name": {"form"}, "target": {"once.dat"}, "size": {"1m"}, "rw": {"randread"},
				"iodepth": {"1,2"}, "ioengine": {"io_uring"}, "runtime": {"1"}, "repeat": {"1"}}.Encode())
			loc := rec.Header().Get("Location")
			id, err := strconv.ParseInt(strings.TrimPrefix(loc, "/runs/"), 10, 64)
			if rec.Code != http.StatusSeeOther || err != nil {
				t.Fatalf("form: %d to %q: %.2000s", rec.Code, loc, rec.Body)
			}
			return id
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e0, r0 := launch.Counts()
			id := tc.launch(t)
			run := waitStatus(t, ts.store, id, db.StatusDone)
			if err := ts.srv.launcher.Wait(context.Background(), id); err != nil {
				t.Fatal(err)
			}
			if run.Steps != 2 {
				t.Errorf("run %d stored %d steps, want 2", id, run.Steps)
			}
			if e, r := launch.Counts(); e-e0 != 1 || r-r0 != 1 {
				t.Errorf("%d expansions and %d resolutions of the plan; want 1 each", e-e0, r-r0)
			}
		})
	}
}
