package handlers

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"iolab/db"
)

// TestLoginNextHostile: after a correct login the browser goes to next
// only when it is a path on this server; every other next (issue 23, item
// 9: "/%09/evil.example" went to another site) goes to "/".
func TestLoginNextHostile(t *testing.T) {
	const token = "next-test-token"
	ls := startLive(t, Config{Token: token})
	for _, tc := range []struct{ next, want string }{
		{"/%09/evil.example", "/"},
		{"/\t/evil.example", "/"},
		{"/\n/evil.example", "/"},
		{"/\r/evil.example", "/"},
		{"/%0a/evil.example", "/"},
		{"/%0d/evil.example", "/"},
		{"/%00/evil.example", "/"},
		{"//evil.example", "/"},
		{"///evil.example", "/"},
		{"/\\evil.example", "/"},
		{"/%5Cevil.example", "/"},
		{"/%5cevil.example", "/"},
		{"\\\\evil.example", "/"},
		{"/%2F/evil.example", "/"},
		{"/%2f%2fevil.example", "/"},
		{"/%252F/evil.example", "/"},
		{"/%25252F/evil.example", "/"},
		{"https://evil.example/", "/"},
		{"http:/evil.example", "/"},
		{"javascript:alert(1)", "/"},
		{"data:text/html,<script>alert(1)</script>", "/"},
		{"evil.example", "/"},
		{"", "/"},
		{" /runs", "/"},
		{"/\x7f/evil.example", "/"},
		{"/\u2028/evil.example", "/"},
		{"/\u0085/evil.example", "/"},
		{"/%E2%80%A8/evil.example", "/"},
		{"/%ff", "/"},
		// Local paths stay.
		{"/", "/"},
		{"/runs/3", "/runs/3"},
		{"/charts?kind=iops&run=3&run=5", "/charts?kind=iops&run=3&run=5"},
		{"/runs?name=a%20b", "/runs?name=a%20b"},
	} {
		t.Run(tc.next, func(t *testing.T) {
			form := url.Values{"token": {token}, "next": {tc.next}}.Encode()
			status, h, body := ls.send(t, "POST", "/login", strings.NewReader(form), "Content-Type", "application/x-www-form-urlencoded")
			if status != http.StatusSeeOther || h.Get("Location") != tc.want {
				t.Fatalf("login with next=%q: %d to %q; want 303 to %q\n%.300s", tc.next, status, h.Get("Location"), tc.want, body)
			}
			// The login form carries it the same way.
			status, _, body = ls.send(t, "GET", "/login?next="+url.QueryEscape(tc.next), nil)
			if status != http.StatusOK || !strings.Contains(body, `name="next" value="`+attrEscape(tc.want)+`"`) {
				t.Fatalf("login page with next=%q: %d; want its form to go to %q\n%.2000s", tc.next, status, tc.want, body)
			}
		})
	}
}

// attrEscape is what html/template writes of s in an attribute.
func attrEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

// TestSecurityHeaders: every answer — page, API, static file, error,
// refusal — forbids framing and loading from elsewhere (issue 23, item
// 17).
func TestSecurityHeaders(t *testing.T) {
	ls := startLive(t, Config{Token: "hdr-token"})
	for _, tc := range []struct {
		method, path string
		status       int
		header       []string
	}{
		{"GET", "/", 200, nil},
		{"GET", "/runs/new", 200, nil},
		{"GET", "/login", 200, nil},
		{"GET", "/api/runs", 200, nil},
		{"GET", "/static/app.js", 200, nil},
		{"GET", "/runs/999", 404, nil},
		{"GET", "/api/runs/999", 404, nil},
		{"GET", "/no/such/page", 404, nil},
		{"POST", "/api/runs", 401, nil},
		{"GET", "/", 421, []string{"Host", "evil.example"}},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			status, h, body := ls.send(t, tc.method, tc.path, nil, tc.header...)
			if status != tc.status {
				t.Fatalf("%d, want %d: %.300s", status, tc.status, body)
			}
			if got := h.Get("X-Frame-Options"); got != "DENY" {
				t.Errorf("X-Frame-Options %q, want DENY", got)
			}
			csp := h.Get("Content-Security-Policy")
			for _, want := range []string{"default-src 'self'", "script-src 'self';", "frame-ancestors 'none'", "object-src 'none'", "form-action 'self'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
				}
			}
			if strings.Contains(csp, "unsafe-eval") || strings.Contains(strings.Split(csp, "script-src")[1], "unsafe-inline;") {
				t.Errorf("Content-Security-Policy %q lets scripts in unchecked", csp)
			}
			if h.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("X-Content-Type-Options %q", h.Get("X-Content-Type-Options"))
			}
		})
	}
}

// TestRunsListHostile: the runs list's parameters from a hostile client
// (issue 28) — SQL in every text filter, LIKE's wildcards, forged and
// oversized cursors, limits past the page's bound, times out of range,
// thousands of parameters — are each a 400 naming the parameter or a
// page of exactly the runs that match; none changes the store or costs
// the server more than a page.
func TestRunsListHostile(t *testing.T) {
	ls := startLive(t, Config{})
	ids := seedListRuns(t, ls.store, 7)
	forged := func(key string) string {
		return "1.1." + base64.RawURLEncoding.EncodeToString([]byte(key))
	}
	many := strings.Repeat("host=a&", 5000)
	for _, tc := range []struct {
		name, query string
		status      int
		field       string // the 400's parameter
		runs        int    // a 200's total
	}{
		{"sql in name", "name=" + url.QueryEscape("' OR 1=1 --"), 200, "", 0},
		{"sql in host", "host=" + url.QueryEscape("h0' OR '1'='1"), 200, "", 0},
		{"sql in tag", "tag=" + url.QueryEscape("nightly') OR 1=1 --"), 200, "", 0},
		{"sql in engine", "engine=" + url.QueryEscape(`x" OR 1=1; DROP TABLE runs; --`), 200, "", 0},
		{"like wildcard is text", "name=%25", 200, "", 0},
		{"like underscore is text", "name=_", 200, "", 0},
		{"like escape is text", "name=" + url.QueryEscape(`\`), 200, "", 0},
		{"sql in sort", "sort=" + url.QueryEscape("date; DROP TABLE runs"), 400, "sort", 0},
		{"sort by a column", "sort=id", 400, "sort", 0},
		{"sql in a forged cursor", "sort=name&after=" + forged("' OR 1=1 --"), 200, "", 7},
		{"cursor past every id", "after=9223372036854775807.9223372036854775807", 200, "", 7},
		{"cursor overflowing", "after=99999999999999999999.1", 400, "after", 0},
		{"cursor of four parts", "after=1.2.3.4", 400, "after", 0},
		{"cursor not base64", "sort=host&after=1.2.%25%25", 400, "after", 0},
		{"cursor too long", "before=" + strings.Repeat("9", 2000), 400, "before", 0},
		{"limit huge", "limit=1000000", 400, "limit", 0},
		{"limit negative", "limit=-1", 400, "limit", 0},
		{"limit overflowing", "limit=99999999999999999999999", 400, "limit", 0},
		{"limit hex", "limit=0x10", 400, "limit", 0},
		{"status sql", "status=" + url.QueryEscape("done' OR 1=1"), 400, "status", 0},
		{"source unknown", "source=../../etc", 400, "source", 0},
		{"year 9999", "since=9999-01-01", 400, "since", 0},
		{"year 1", "until=0001-01-01", 400, "until", 0},
		{"time with a zone far off", "since=" + url.QueryEscape("2026-01-01T00:00:00+23:59"), 200, "", 7},
		{"host megabyte", "host=" + strings.Repeat("a", 1<<20), 400, "host", 0},
		{"nul in target", "target=%2Fdev%2Fvdb%00", 400, "target", 0},
		{"line break in kernel", "kernel=6.12%0d%0aX-Injected:%201", 400, "kernel", 0},
		{"invalid utf-8", "workload=%c3%28", 400, "workload", 0},
		{"5000 parameters", many, 200, "", 0},
		{"html in name", "name=" + url.QueryEscape(`<script>alert(1)</script>`), 200, "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/api/runs?", "/runs?"} {
				status, h, body := ls.send(t, "GET", path+tc.query, nil)
				if status != tc.status && !(status == 431 || status == 414) {
					t.Fatalf("%s: %d, want %d\n%.400s", path, status, tc.status, body)
				}
				if h.Get("X-Injected") != "" || strings.Contains(body, "<script>alert") {
					t.Fatalf("%s: the parameter came back unescaped", path)
				}
				if path != "/api/runs?" || status != tc.status {
					continue
				}
				var a struct {
					Field string
					Total int
					Runs  []db.Run
				}
				if err := json.Unmarshal([]byte(body), &a); err != nil {
					t.Fatal(err)
				}
				if tc.status == 400 && a.Field != tc.field {
					t.Errorf("400 on field %q, want %q: %s", a.Field, tc.field, body)
				}
				if tc.status == 200 && (a.Total != tc.runs || len(a.Runs) > db.DefaultRunPage) {
					t.Errorf("%d runs of %d, want %d: %.300s", len(a.Runs), a.Total, tc.runs, body)
				}
			}
		})
	}
	runs, err := ls.store.ListRuns(context.Background(), db.RunFilter{})
	if err != nil || len(runs) != len(ids) {
		t.Fatalf("after the attacks: %d runs (%v), want %d", len(runs), err, len(ids))
	}
	stillServes(t, ls)
}
