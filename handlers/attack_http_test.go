package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
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
