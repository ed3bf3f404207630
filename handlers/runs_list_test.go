package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/db"
)

// base is when seedListRuns's first run was created.
func base() time.Time { return time.Date(2026, 11, 1, 12, 0, 0, 0, time.Local) }

// seedListRuns stores n short runs on hosts h0…h2, tagged nightly every
// other one, one a second from a fixed time, and returns their ids in
// store order.
func seedListRuns(t testing.TB, store *db.Store, n int) []int64 {
	t.Helper()
	var ids []int64
	for i := range n {
		r := &db.Run{Name: fmt.Sprintf("list-%03d", i), Status: db.StatusDone, Created: base().Add(time.Duration(i) * time.Second),
			Hostname: fmt.Sprintf("h%d", i%3), Kernel: "6.12", Target: "/dev/vdb",
			Plan: sweep.Plan{Base: bench.Config{Jobs: []bench.Job{{Name: "j", RW: "randread", BS: 4096}}}}}
		if i%2 == 0 {
			r.Tags = []string{"nightly"}
		}
		id, err := store.CreateRun(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// The API's pages of a filter, walked by next and back by prev, give each
// of its runs once, newest first, with the counts.
func TestAPIRunsPages(t *testing.T) {
	ts := newTestServer(t, Config{})
	ids := seedListRuns(t, ts.store, 25)
	var want []int64
	for i, id := range slices.Backward(ids) {
		if i%3 == 1 && i%2 == 0 { // host h1, nightly
			want = append(want, id)
		}
	}
	var got []int64
	path := "/api/runs?host=h1&tag=nightly&limit=2"
	var last runsAnswer
	for path != "" {
		rec := ts.do(t, "GET", path, "")
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", path, rec.Code, rec.Body)
		}
		var a runsAnswer
		if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
			t.Fatal(err)
		}
		if a.Total != len(want) || a.First != len(got)+1 || len(a.Runs) > 2 {
			t.Fatalf("%s: total %d first %d (%d runs), want %d and %d", path, a.Total, a.First, len(a.Runs), len(want), len(got)+1)
		}
		for _, r := range a.Runs {
			got = append(got, r.ID)
		}
		if a.Next != "" && !strings.Contains(a.Next, "host=h1") {
			t.Fatalf("next %q forgets the filter", a.Next)
		}
		path, last = a.Next, a
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	back := []int64{}
	for _, r := range last.Runs {
		back = append(back, r.ID)
	}
	for path = last.Prev; path != ""; {
		var a runsAnswer
		rec := ts.do(t, "GET", path, "")
		if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil || rec.Code != 200 {
			t.Fatalf("%s: %d %v", path, rec.Code, err)
		}
		var page []int64
		for _, r := range a.Runs {
			page = append(page, r.ID)
		}
		back = append(page, back...)
		path = a.Prev
	}
	if !slices.Equal(back, want) {
		t.Fatalf("back: got %v, want %v", back, want)
	}
}

// The page shows its place ("1–10 of 25"), links to the pages around it
// keeping the filter, and sort links on the headers.
func TestRunsPagePaging(t *testing.T) {
	ts := newTestServer(t, Config{})
	seedListRuns(t, ts.store, 25)
	href := regexp.MustCompile(`<a href="([^"]+)" rel="next">`)
	rec := ts.do(t, "GET", "/runs?limit=10&kernel=6.12", "")
	body := rec.Body.String()
	if rec.Code != 200 || !strings.Contains(body, "1–10 of 25 matching runs") || !strings.Contains(body, "list-024") || strings.Contains(body, "list-014") {
		t.Fatalf("first page: %d\n%.3000s", rec.Code, body)
	}
	m := href.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no next link:\n%.3000s", body)
	}
	next := html.UnescapeString(m[1])
	if u, _ := url.Parse(next); u.Query().Get("kernel") != "6.12" || u.Query().Get("limit") != "10" || u.Query().Get("after") == "" {
		t.Fatalf("next %q", next)
	}
	rec = ts.do(t, "GET", next, "")
	body = rec.Body.String()
	if !strings.Contains(body, "11–20 of 25") || !strings.Contains(body, "list-014") || strings.Contains(body, "list-015") ||
		!strings.Contains(body, `rel="prev"`) || !strings.Contains(body, `rel="first"`) {
		t.Fatalf("second page:\n%.3000s", body)
	}
	// Sorted by name A to Z, the header offers Z to A.
	rec = ts.do(t, "GET", "/runs?sort=name&limit=5", "")
	body = rec.Body.String()
	if !strings.Contains(body, "1–5 of 25 runs") || !strings.Contains(body, "list-000") || strings.Contains(body, "list-024") ||
		!strings.Contains(body, `href="/runs?limit=5&amp;sort=-name" class="sort">name</a> <span class="sorted">▲</span>`) {
		t.Fatalf("by name:\n%.4000s", body)
	}
	// A time with a zone and a fraction of a second goes on to the next
	// page as the same instant.
	since := base().Add(3*time.Second + 500*time.Millisecond).UTC().Format(time.RFC3339Nano)
	rec = ts.do(t, "GET", "/api/runs?limit=2&since="+url.QueryEscape(since), "")
	var a runsAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil || a.Total != 21 || a.Next == "" {
		t.Fatalf("since %s: %d runs, next %q (%v)", since, a.Total, a.Next, err)
	}
	if rec = ts.do(t, "GET", a.Next, ""); !strings.Contains(rec.Body.String(), `"total":21,"first":3`) {
		t.Fatalf("the next page of since %s: %.300s", since, rec.Body)
	}
	// A filter that keeps nothing says so.
	if rec = ts.do(t, "GET", "/runs?host=nope", ""); !strings.Contains(rec.Body.String(), "No runs match these filters") {
		t.Fatalf("no match:\n%.3000s", rec.Body)
	}
}

// Parameters the list cannot take are a 400 that names the parameter and
// says what to give.
func TestRunsListBadParams(t *testing.T) {
	ts := newTestServer(t, Config{})
	seedListRuns(t, ts.store, 2)
	for _, tt := range []struct{ query, want string }{
		{"limit=101", "limit: \"101\": want a whole number from 1 to 100"},
		{"limit=0", "limit: \"0\": want a whole number from 1 to 100"},
		{"limit=ten", "limit: \"ten\""},
		{"sort=size", "sort: \"size\": use one of date, name, host, status"},
		{"status=bogus", "status: \"bogus\" is not a status"},
		{"source=mars", "source: \"mars\" is not a source: use one of local, push, import, fio, agent"},
		{"since=yesterday", "since: \"yesterday\" is not a time"},
		{"since=2026-12-02&until=2026-12-01", "until: not after since"},
		{"after=xyz", "after: cursor \"xyz\" is not one of the date order's: use a link's after= or before= as the page gave it"},
		{"sort=name&after=1.2", "after: cursor \"1.2\" is not one of the name order's"},
		{"after=1.2&before=1.2", "before: given with after"},
		{"host=" + strings.Repeat("a", db.MaxParamLen+1), "host: 1025 bytes: at most 1024"},
		{"name=%00", "name: not text"},
		{"name=%ff", "name: not text"},
	} {
		t.Run(tt.query, func(t *testing.T) {
			for _, path := range []string{"/api/runs?", "/runs?"} {
				rec := ts.do(t, "GET", path+tt.query, "")
				body := rec.Body.String()
				if path == "/runs?" {
					body = html.UnescapeString(body)
				} else {
					var e struct{ Error, Field string }
					if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || !strings.HasPrefix(tt.want, e.Field+":") {
						t.Errorf("%s%s: field %q (%v)", path, tt.query, e.Field, err)
					}
					body = e.Error
				}
				if rec.Code != 400 || !strings.Contains(body, tt.want) {
					t.Errorf("%s%s: %d, want 400 with %q\n%s", path, tt.query, rec.Code, tt.want, body[max(0, strings.Index(body, "<main")):])
				}
			}
		})
	}
}
