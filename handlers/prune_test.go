package handlers

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"iolab/db"
	"iolab/db/dbtest"
)

// waitPrune waits for the dashboard's prune to end and returns it.
func waitPrune(t *testing.T, ts *testServer) *pruneJob {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if j := ts.srv.prune.snapshot(); j != nil && !j.Running {
			return j
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the prune did not end within 30 s")
	return nil
}

// TestPrunePage: the admin's dry run lists what would go and what stays
// with why, deleting nothing; the confirm deletes the runs it names that
// the rule still selects, never a running one, and the page and the API
// say what it did.
func TestPrunePage(t *testing.T) {
	const token = "prune-token"
	ts := newTestServer(t, Config{Token: token})
	bearer := []string{"Authorization", "Bearer " + token}
	ids := dbtest.Store(t, ts.store, dbtest.Run{Name: "prune-a", Steps: 1}, dbtest.Run{Name: "prune-b", Steps: 1},
		dbtest.Run{Name: "prune-c", Steps: 1}, dbtest.Run{Name: "prune-d", Steps: 1}, dbtest.Run{Name: "still going", Status: db.StatusRunning})
	seeded, running := ids[:4], ids[4]

	rec := ts.do(t, "GET", "/api/prune?keep=1&status=done,running", "", bearer...)
	if rec.Code != http.StatusOK {
		t.Fatalf("dry run: %d %s", rec.Code, rec.Body)
	}
	var plan prunePlanBody
	if err := json.Unmarshal(rec.Body.Bytes(), &plan); err != nil {
		t.Fatal(err)
	}
	// keep 1 counts finished runs: d is the newest of them; the running
	// run stays as it is running.
	var del, kept []int64
	for _, r := range plan.Delete {
		del = append(del, r.ID)
	}
	for _, r := range plan.Kept {
		kept = append(kept, r.ID)
	}
	slices.Sort(del)
	if !slices.Equal(del, seeded[:3]) || !slices.Equal(kept, []int64{running, seeded[3]}) || plan.Kept[0].Kept != "it is running" ||
		!strings.HasPrefix(plan.Kept[1].Kept, "kept by keep 1: number 1") {
		t.Fatalf("dry run: delete %v, kept %+v; want %v, and the running run and d", del, plan.Kept, seeded[:3])
	}
	if plan.Bytes <= 0 || plan.Space.FileBytes <= 0 || plan.Space.AutoVacuum != "incremental" {
		t.Errorf("dry run: %d bytes, space %+v", plan.Bytes, plan.Space)
	}

	rec = ts.do(t, "GET", "/prune?keep=1&status=done,running", "", bearer...)
	page := rec.Body.String()
	for _, want := range []string{"Dry run: 3 runs would go", `name="ids" value="`, "it is running", "Delete these 3 runs",
		fmt.Sprintf(`<tr data-run="%d">`, seeded[2])} {
		if rec.Code != http.StatusOK || !strings.Contains(page, want) {
			t.Errorf("the page: %d, no %q", rec.Code, want)
		}
	}
	if got := dbtest.IDs(t, ts.store); len(got) != 5 {
		t.Fatalf("the dry runs deleted runs: %v left", got)
	}

	// The confirm names a and b only: c and d stay, as does the running run.
	form := url.Values{"keep": {"1"}, "status": {"done,running"}, "ids": {fmt.Sprintf("%d,%d,%d", seeded[0], seeded[1], running)}}
	rec = ts.do(t, "POST", "/prune", form.Encode(), bearer...)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/prune" {
		t.Fatalf("confirm: %d %s", rec.Code, rec.Body)
	}
	j := waitPrune(t, ts)
	if j.Error != "" || j.Planned != 2 || len(j.Result.Deleted) != 2 || j.After == nil {
		t.Fatalf("the prune: %+v", j)
	}
	if got, want := dbtest.IDs(t, ts.store), []int64{seeded[2], seeded[3], running}; !slices.Equal(got, want) {
		t.Errorf("after the prune: %v, want %v", got, want)
	}
	rec = ts.do(t, "GET", "/prune", "", bearer...)
	if !strings.Contains(rec.Body.String(), "Deleted 2 runs") || !strings.Contains(rec.Body.String(), "Store on disk (file and write-ahead log): ") {
		t.Errorf("the page after: %s", rec.Body)
	}
	rec = ts.do(t, "GET", "/api/prune/last", "", bearer...)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"deleted":[`) {
		t.Errorf("last prune: %d %s", rec.Code, rec.Body)
	}
	for _, bad := range []struct{ body, want string }{
		{url.Values{"keep": {"1"}}.Encode(), "confirm the runs the dry run listed"},
		{url.Values{"keep": {"1"}, "ids": {"1,x"}}.Encode(), "is not a run id"},
		{url.Values{"ids": {"1"}}.Encode(), "say what to prune"},
	} {
		if rec := ts.do(t, "POST", "/prune", bad.body, bearer...); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), bad.want) {
			t.Errorf("POST /prune %s: %d %.300s", bad.body, rec.Code, rec.Body)
		}
	}
}

func mustGetRun(t *testing.T, store *db.Store, id int64) *db.Run {
	t.Helper()
	r, err := store.GetRun(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPruneWhileRunsArrive: runs stored while a prune deletes (as agents'
// and imports' land) are all kept whole; the prune deletes exactly what
// it planned, and the store checks clean after.
func TestPruneWhileRunsArrive(t *testing.T) {
	const token = "prune-token"
	ts := newTestServer(t, Config{Token: token})
	bearer := []string{"Authorization", "Bearer " + token, "Content-Type", "application/json"}
	var runs []dbtest.Run
	for i := range 120 {
		runs = append(runs, dbtest.Run{Name: fmt.Sprint("old-", i), Steps: 2})
	}
	old := dbtest.Store(t, ts.store, runs...)
	rec := ts.do(t, "GET", "/api/prune?keep=1", "", bearer...)
	var plan prunePlanBody
	if err := json.Unmarshal(rec.Body.Bytes(), &plan); err != nil || len(plan.Delete) != 119 {
		t.Fatalf("dry run: %d %v, %d runs", rec.Code, err, len(plan.Delete))
	}
	body, _ := json.Marshal(PruneRequest{Keep: 1, IDs: old})
	var (
		wg    sync.WaitGroup
		added []int64
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 40 {
			added = append(added, dbtest.Store(t, ts.store, dbtest.Run{Name: fmt.Sprint("new-", i), Steps: 1})...)
		}
	}()
	rec = ts.do(t, "POST", "/api/prune", string(body), bearer...)
	if rec.Code != http.StatusAccepted {
		t.Fatalf("prune: %d %s", rec.Code, rec.Body)
	}
	wg.Wait()
	j := waitPrune(t, ts)
	if j.Error != "" {
		t.Fatal(j.Error)
	}
	// The runs stored meanwhile are newer, so the newest of old may go
	// too; every old run but it was planned from the start.
	if n := len(j.Result.Deleted); n < 119 || n > 120 {
		t.Errorf("deleted %d runs, want 119 or 120 of the old", n)
	}
	left := dbtest.IDs(t, ts.store)
	for _, id := range added {
		if !slices.Contains(left, id) {
			t.Errorf("run %d stored during the prune is gone", id)
		}
		if r := mustGetRun(t, ts.store, id); r.Steps != 1 {
			t.Errorf("run %d stored during the prune has %d steps", id, r.Steps)
		}
	}
	for _, id := range j.Result.Deleted {
		if slices.Contains(left, id) || !slices.Contains(old, id) {
			t.Errorf("run %d: deleted %v, still there %v", id, slices.Contains(old, id), slices.Contains(left, id))
		}
	}
	raw, err := sql.Open("sqlite", "file:"+ts.store.Path()+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var check string
	if err := raw.QueryRow("PRAGMA integrity_check").Scan(&check); err != nil || check != "ok" {
		t.Errorf("integrity check: %q %v", check, err)
	}
	var orphans int
	if err := raw.QueryRow(`SELECT (SELECT count(*) FROM steps WHERE run_id NOT IN (SELECT id FROM runs))
		+ (SELECT count(*) FROM step_results WHERE step_id NOT IN (SELECT id FROM steps))
		+ (SELECT count(*) FROM samples WHERE result_id NOT IN (SELECT id FROM step_results))`).Scan(&orphans); err != nil || orphans != 0 {
		t.Errorf("%d rows of deleted runs left (%v)", orphans, err)
	}
}

// TestPruneNeedsAnAdmin: an open dashboard (no token) refuses the prune
// page and API with 403 and why; one with a token asks for it.
func TestPruneNeedsAnAdmin(t *testing.T) {
	open := newTestServer(t, Config{})
	kept := dbtest.Store(t, open.store, dbtest.Run{Name: "kept", Steps: 1})[0]
	for _, req := range []struct{ method, target, body string }{
		{"GET", "/prune?keep=1", ""}, {"POST", "/prune", "keep=1&ids=1"},
		{"GET", "/api/prune?keep=1", ""}, {"POST", "/api/prune", `{"keep":1,"ids":[1]}`}, {"GET", "/api/prune/last", ""},
	} {
		rec := open.do(t, req.method, req.target, req.body)
		if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "no token") {
			t.Errorf("%s %s without a token: %d %.300s", req.method, req.target, rec.Code, rec.Body)
		}
	}
	guarded := newTestServer(t, Config{Token: "t0k"})
	if rec := guarded.do(t, "GET", "/prune?keep=1", ""); rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/login?next=") {
		t.Errorf("the page without the token: %d %v", rec.Code, rec.Header())
	}
	if rec := guarded.do(t, "GET", "/api/prune?keep=1", ""); rec.Code != http.StatusUnauthorized {
		t.Errorf("the API without the token: %d", rec.Code)
	}
	if _, err := open.store.GetRun(context.Background(), kept); err != nil {
		t.Errorf("the run after the refusals: %v", err)
	}
}
