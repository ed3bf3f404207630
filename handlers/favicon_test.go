package handlers

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// Every page names its icon, the icon is served, and /favicon.ico, which
// browsers ask for by themselves, answers with it too, even on a
// dashboard whose pages need the token: no page leaves a 404 behind.
func TestFavicon(t *testing.T) {
	ts := newTestServer(t, Config{Token: "secret", ReadNeedsToken: true})
	get := func(path string, token bool) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if token {
			req.Header.Set("Authorization", "Bearer secret")
		}
		rec := httptest.NewRecorder()
		ts.e.ServeHTTP(rec, req)
		return rec
	}
	icon := regexp.MustCompile(`<link rel="icon" href="([^"]+)" type="image/svg\+xml">`)
	for _, page := range []string{"/runs", "/runs/new", "/hosts", "/import", "/login", "/nope"} {
		rec := get(page, page != "/login")
		m := icon.FindStringSubmatch(rec.Body.String())
		if m == nil {
			t.Errorf("%s (%d): no icon link", page, rec.Code)
			continue
		}
		if got := get(m[1], false); got.Code != http.StatusOK || !strings.Contains(got.Body.String(), "<svg") {
			t.Errorf("%s names %s: %d %.80q", page, m[1], got.Code, got.Body.String())
		}
	}
	rec := get("/favicon.ico", false)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "image/svg+xml" || !strings.Contains(rec.Body.String(), "<svg") {
		t.Errorf("/favicon.ico: %d %q %.80q", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
}
