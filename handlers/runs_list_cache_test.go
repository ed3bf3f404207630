package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"iolab/db"
)

// listPaths are runs list answers, each cached on its own.
var listPaths = []string{"/", "/runs", "/runs?status=done", "/runs?label=keep", "/api/runs", "/api/runs?limit=1", "/api/runs?status=running"}

// listedRuns reads GET /api/runs as the API answers it.
func listedRuns(t *testing.T, a answer) []db.ListedRun {
	t.Helper()
	var got runsAnswer
	if err := json.Unmarshal(a.body, &got); err != nil {
		t.Fatalf("/api/runs: %v: %s", err, a.body)
	}
	return got.Runs
}

// The runs list is served from the cache while the store is unchanged,
// and every change to it — a new run, a status, a tag, a run deleted or
// pruned, by this server's store or by another connection to its file
// (another iolab) — is in the very next answer, with another ETag.
func TestRunsListCacheFollowsTheStore(t *testing.T) {
	ctx := context.Background()
	ls := startLive(t, Config{})
	tmpl := seedFullRun(t, ls.store, "list-template", 0)
	// Another process's store on the same file: its commits are not
	// this server's connections'.
	other, err := db.Open(ctx, ls.store.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	create := func(store *db.Store, name, status string) int64 {
		t.Helper()
		id, err := store.CreateRun(ctx, &db.Run{Name: name, Status: status, Plan: tmpl.Plan, Host: tmpl.Host})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	mine := create(ls.store, "mine-running", db.StatusRunning)
	var theirs int64
	cachedAll := func() map[string]answer {
		t.Helper()
		got := map[string]answer{}
		for _, p := range listPaths {
			built := fetch(t, ls.url+p)
			before := ls.srv.cache.builds.Load()
			again := fetch(t, ls.url+p, "Accept-Encoding", "gzip")
			if built.status != http.StatusOK || again.status != http.StatusOK || built.header.Get("ETag") == "" {
				t.Fatalf("%s: %d then %d, ETag %q", p, built.status, again.status, built.header.Get("ETag"))
			}
			if n := ls.srv.cache.builds.Load() - before; n != 0 || !bytes.Equal(again.body, built.body) {
				t.Errorf("%s: the unchanged store's answer built again (%d builds) or another (equal: %t)", p, n, bytes.Equal(again.body, built.body))
			}
			got[p] = built
		}
		return got
	}
	before := cachedAll()
	changes := []struct {
		name string
		do   func()
		// check is what the list must show after the change.
		check func(api []db.ListedRun, html string) bool
	}{
		{"a run created here", func() { create(ls.store, "mine-new", db.StatusQueued) }, func(api []db.ListedRun, html string) bool {
			return api[0].Name == "mine-new" && strings.Contains(html, "mine-new")
		}},
		{"a run created by another process", func() { theirs = create(other, "theirs-new", db.StatusRunning) }, func(api []db.ListedRun, html string) bool {
			return api[0].Name == "theirs-new" && strings.Contains(html, "theirs-new")
		}},
		{"a status changed here", func() {
			if err := ls.store.SetRunStatus(ctx, mine, db.StatusDone, ""); err != nil {
				t.Fatal(err)
			}
		}, func(api []db.ListedRun, html string) bool {
			i := slices.IndexFunc(api, func(r db.ListedRun) bool { return r.ID == mine })
			return i >= 0 && api[i].Status == db.StatusDone
		}},
		{"a status changed by another process", func() {
			if err := other.SetRunStatus(ctx, theirs, db.StatusFailed, "gone"); err != nil {
				t.Fatal(err)
			}
		}, func(api []db.ListedRun, html string) bool {
			return api[0].ID == theirs && api[0].Status == db.StatusFailed
		}},
		{"a tag set here", func() {
			if _, err := ls.store.SetTags(ctx, mine, []string{"keep"}); err != nil {
				t.Fatal(err)
			}
		}, func(api []db.ListedRun, html string) bool {
			i := slices.IndexFunc(api, func(r db.ListedRun) bool { return r.ID == mine })
			return i >= 0 && slices.Equal(api[i].Tags, []string{"keep"}) && strings.Contains(html, `href="/runs?label=keep">keep<`)
		}},
		{"a tag set by another process", func() {
			if _, err := other.SetTags(ctx, theirs, []string{"theirs-tag"}); err != nil {
				t.Fatal(err)
			}
		}, func(api []db.ListedRun, html string) bool {
			return slices.Equal(api[0].Tags, []string{"theirs-tag"}) && strings.Contains(html, "theirs-tag")
		}},
		{"a run deleted by another process", func() {
			if err := other.DeleteRun(ctx, theirs); err != nil {
				t.Fatal(err)
			}
		}, func(api []db.ListedRun, html string) bool {
			return !slices.ContainsFunc(api, func(r db.ListedRun) bool { return r.ID == theirs }) && !strings.Contains(html, "theirs-new")
		}},
		{"runs pruned here", func() {
			plan, err := ls.store.PlanPrune(ctx, db.PruneRule{Tag: "keep"})
			if err != nil || len(plan.Delete) != 1 {
				t.Fatalf("prune plan: %+v, %v", plan, err)
			}
			if _, err := ls.store.Prune(ctx, plan, nil); err != nil {
				t.Fatal(err)
			}
		}, func(api []db.ListedRun, html string) bool {
			return !slices.ContainsFunc(api, func(r db.ListedRun) bool { return r.ID == mine }) && !strings.Contains(html, "mine-running")
		}},
	}
	for _, c := range changes {
		c.do()
		after := cachedAll()
		if !c.check(listedRuns(t, after["/api/runs"]), string(after["/runs"].body)) {
			t.Errorf("%s: the list does not show it:\n%s", c.name, after["/api/runs"].body)
		}
		for _, p := range listPaths {
			old, now := before[p].header.Get("ETag"), after[p].header.Get("ETag")
			if old == now {
				t.Errorf("%s: %s kept its ETag %s", c.name, p, now)
			}
			if got := fetch(t, ls.url+p, "If-None-Match", old); got.status != http.StatusOK {
				t.Errorf("%s: %s with the old ETag: %d, want 200", c.name, p, got.status)
			}
			if got := fetch(t, ls.url+p, "If-None-Match", now); got.status != http.StatusNotModified || len(got.body) != 0 {
				t.Errorf("%s: %s with its ETag: %d with %d bytes, want 304", c.name, p, got.status, len(got.body))
			}
		}
		before = after
	}
	// A bad filter is an error, never kept or tagged.
	for range 2 {
		if got := fetch(t, ls.url+"/runs?since=yesterday"); got.status != http.StatusBadRequest || got.header.Get("ETag") != "" {
			t.Errorf("a bad filter: %d, ETag %q: want 400 without one", got.status, got.header.Get("ETag"))
		}
	}
}

// A logged-in client and a logged-out one each get their own list: the
// layout says which they are.
func TestRunsListCacheByLogin(t *testing.T) {
	const token = "list-cache-token-0123456789"
	ls := startLive(t, Config{Token: token})
	seedFullRun(t, ls.store, "listed", 0)
	session := login(t, ls, token)
	cookie := sessionCookie + "=" + session
	for _, p := range []string{"/", "/runs", "/runs?status=done"} {
		in := fetch(t, ls.url+p, "Cookie", cookie)
		out := fetch(t, ls.url+p)
		inAgain := fetch(t, ls.url+p, "Cookie", cookie, "Accept-Encoding", "gzip")
		outAgain := fetch(t, ls.url+p, "Accept-Encoding", "gzip")
		for _, c := range []struct {
			name      string
			a         answer
			has, hasn string
		}{
			{"logged in", in, "Log out", "Log in"}, {"logged in, cached", inAgain, "Log out", "Log in"},
			{"logged out", out, "Log in", "Log out"}, {"logged out, cached", outAgain, "Log in", "Log out"},
		} {
			body := string(c.a.body)
			if c.a.status != http.StatusOK || !strings.Contains(body, c.has) || strings.Contains(body, c.hasn) || !strings.Contains(body, "listed") {
				t.Errorf("%s %s: %d, %q %t, %q %t", p, c.name, c.a.status, c.has, strings.Contains(body, c.has), c.hasn, strings.Contains(body, c.hasn))
			}
		}
		if in.header.Get("ETag") == out.header.Get("ETag") {
			t.Errorf("%s: one ETag for the logged-in and logged-out answers", p)
		}
		if got := fetch(t, ls.url+p, "If-None-Match", in.header.Get("ETag")); got.status != http.StatusOK || !strings.Contains(string(got.body), "Log in") {
			t.Errorf("%s: logged out with the logged-in ETag: %d, want 200 with the logged-out page", p, got.status)
		}
	}
}
