package handlers

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"iolab/bench/sweep"
	"iolab/db"
	"iolab/handlers/chart"
)

// answer is one GET's outcome.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// fetch GETs url with the headers given as name, value pairs; a gzipped
// body is read unzipped.
func fetch(t *testing.T, url string, headers ...string) answer {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	// A transport of its own: Go's would ask for gzip and unzip it.
	resp, err := (&http.Transport{DisableCompression: true}).RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	body, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, body}
}

// cachedPaths are the cached routes of runs a and b.
func cachedPaths(a, b int64) []string {
	paths := []string{fmt.Sprintf("/runs/%d", a), fmt.Sprintf("/runs/%d?job=writer", a), fmt.Sprintf("/runs/%d/steps.csv", a),
		fmt.Sprintf("/api/runs/%d", a), fmt.Sprintf("/compare?run=%d&run=%d", a, b), fmt.Sprintf("/compare/export.csv?run=%d&run=%d&kind=iops", a, b)}
	for _, k := range notPTS(chart.On(chart.RunPage)) {
		q := chart.Query{Kind: k.Name, Runs: []int64{a}}.Values().Encode()
		paths = append(paths, "/charts?"+q, "/api/charts?"+q, "/charts/export.csv?"+q)
	}
	return paths
}

// A cached answer is the handler's, byte for byte, whether it is built
// or served from the cache, gzipped or not; a client holding it gets 304.
func TestCachedAnswersAreTheHandlers(t *testing.T) {
	ls := startLive(t, Config{})
	a := seedFullRun(t, ls.store, "cached-a", 3)
	b := seedFullRun(t, ls.store, "cached-b", 0)
	for _, p := range cachedPaths(a.ID, b.ID) {
		built := fetch(t, ls.url+p)
		if built.status != http.StatusOK {
			t.Fatalf("%s: %d %s", p, built.status, built.body)
		}
		etag := built.header.Get("ETag")
		if etag == "" || built.header.Get("Content-Encoding") != "" {
			t.Fatalf("%s: built: ETag %q, Content-Encoding %q", p, etag, built.header.Get("Content-Encoding"))
		}
		plain := fetch(t, ls.url+p)
		zipped := fetch(t, ls.url+p, "Accept-Encoding", "gzip, deflate")
		for name, got := range map[string]answer{"plain": plain, "gzipped": zipped} {
			if got.status != http.StatusOK || !bytes.Equal(got.body, built.body) || got.header.Get("ETag") == "" {
				t.Errorf("%s: %s from the cache: %d, ETag %q, body equal: %t", p, name, got.status, got.header.Get("ETag"), bytes.Equal(got.body, built.body))
			}
			if !slices.Contains(got.header.Values("Vary"), "Accept-Encoding") {
				t.Errorf("%s: %s: Vary %q, want Accept-Encoding", p, name, got.header.Values("Vary"))
			}
			if got.header.Get("Content-Type") != built.header.Get("Content-Type") || got.header.Get("Content-Disposition") != built.header.Get("Content-Disposition") {
				t.Errorf("%s: %s from the cache: headers %v, built %v", p, name, got.header, built.header)
			}
		}
		if zipped.header.Get("Content-Encoding") != "gzip" || plain.header.Get("Content-Encoding") != "" {
			t.Errorf("%s: Content-Encoding %q for gzip, %q without", p, zipped.header.Get("Content-Encoding"), plain.header.Get("Content-Encoding"))
		}
		// The gzipped answer is another representation: another ETag,
		// and each ETag revalidates its own only.
		gzTag := zipped.header.Get("ETag")
		if plain.header.Get("ETag") != etag || gzTag == etag {
			t.Errorf("%s: ETags %q built, %q plain, %q gzipped: want the plain ones equal, the gzipped one other", p, etag, plain.header.Get("ETag"), gzTag)
		}
		if got := fetch(t, ls.url+p, "Accept-Encoding", "gzip", "If-None-Match", gzTag); got.status != http.StatusNotModified || got.header.Get("ETag") != gzTag {
			t.Errorf("%s: gzip, If-None-Match its ETag: %d, ETag %q, want 304 with it", p, got.status, got.header.Get("ETag"))
		}
		if got := fetch(t, ls.url+p, "Accept-Encoding", "gzip", "If-None-Match", etag); got.status != http.StatusOK || got.header.Get("Content-Encoding") != "gzip" {
			t.Errorf("%s: gzip, If-None-Match the plain ETag: %d, Content-Encoding %q, want 200 gzipped", p, got.status, got.header.Get("Content-Encoding"))
		}
		if got := fetch(t, ls.url+p, "If-None-Match", gzTag); got.status != http.StatusOK || got.header.Get("Content-Encoding") != "" {
			t.Errorf("%s: no gzip, If-None-Match the gzipped ETag: %d, Content-Encoding %q, want 200 plain", p, got.status, got.header.Get("Content-Encoding"))
		}
		if got := fetch(t, ls.url+p, "If-None-Match", etag); got.status != http.StatusNotModified || len(got.body) != 0 {
			t.Errorf("%s: If-None-Match its ETag: %d with %d bytes, want 304", p, got.status, len(got.body))
		}
		if got := fetch(t, ls.url+p, "If-None-Match", `"other", `+etag); got.status != http.StatusNotModified {
			t.Errorf("%s: If-None-Match a list with its ETag: %d, want 304", p, got.status)
		}
		if got := fetch(t, ls.url+p, "If-None-Match", `"other"`); got.status != http.StatusOK {
			t.Errorf("%s: If-None-Match another ETag: %d, want 200", p, got.status)
		}
	}
	// Errors are nobody's answer: no ETag, never kept.
	for _, p := range []string{"/runs/999", fmt.Sprintf("/charts?kind=bogus&run=%d", a.ID), fmt.Sprintf("/runs/%d?job=nobody", a.ID), "/api/runs/999"} {
		for range 2 {
			got := fetch(t, ls.url+p)
			if got.status < 400 || got.header.Get("ETag") != "" {
				t.Errorf("%s: %d, ETag %q: want an error without one", p, got.status, got.header.Get("ETag"))
			}
		}
	}
}

// A running run's answers follow its steps: each stored step, the end of
// the run and a rename make a new answer, and the old ETag no longer
// gets 304.
func TestCachedAnswersFollowTheRun(t *testing.T) {
	ctx := context.Background()
	ls := startLive(t, Config{})
	run := seedFullRun(t, ls.store, "growing", 0)
	// Back to running, and its steps after the fourth gone: the next
	// ones are stored while it is cached.
	steps, err := ls.store.Steps(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	fresh := &db.Run{Name: "growing", Status: db.StatusRunning, Plan: run.Plan, Host: run.Host}
	if _, err := ls.store.CreateRun(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	save := func(st *sweep.StepResult) {
		t.Helper()
		if err := ls.store.SaveStep(ctx, fresh.ID, st); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 4 {
		save(&steps[i])
	}
	page := fmt.Sprintf("%s/runs/%d", ls.url, fresh.ID)
	csv := fmt.Sprintf("%s/runs/%d/steps.csv", ls.url, fresh.ID)
	rows := func(a answer) int { return strings.Count(string(a.body), "\n") }
	before, beforeCSV := fetch(t, page), fetch(t, csv)
	if again := fetch(t, page); again.header.Get("ETag") != before.header.Get("ETag") {
		t.Fatal("the same run, another ETag")
	}
	changes := []struct {
		name  string
		do    func()
		shows string
	}{
		{"a step stored", func() { save(&steps[4]) }, ""},
		{"the run's end", func() {
			if err := ls.store.SetRunStatus(ctx, fresh.ID, db.StatusDone, ""); err != nil {
				t.Fatal(err)
			}
		}, `id="run-status">done<`},
		{"a rename", func() {
			if err := ls.store.RenameRun(ctx, fresh.ID, "renamed-run"); err != nil {
				t.Fatal(err)
			}
		}, "renamed-run"},
	}
	for _, c := range changes {
		c.do()
		after := fetch(t, page)
		if after.status != http.StatusOK || after.header.Get("ETag") == before.header.Get("ETag") || bytes.Equal(after.body, before.body) {
			t.Errorf("%s: the page kept its answer (ETag %q)", c.name, after.header.Get("ETag"))
		}
		if c.shows != "" && !strings.Contains(string(after.body), c.shows) {
			t.Errorf("%s: the page does not show %q", c.name, c.shows)
		}
		if got := fetch(t, page, "If-None-Match", before.header.Get("ETag")); got.status != http.StatusOK {
			t.Errorf("%s: the old ETag got %d, want 200", c.name, got.status)
		}
		before = after
	}
	if afterCSV := fetch(t, csv); rows(afterCSV) <= rows(beforeCSV) {
		t.Errorf("the steps CSV has %d lines after a step was stored, %d before", rows(afterCSV), rows(beforeCSV))
	}
	// A deleted run's answers are gone with it, cached or not, and its
	// id is not taken again by the next run.
	paths := cachedPaths(fresh.ID, run.ID)
	for _, p := range paths {
		if got := fetch(t, ls.url+p, "Accept-Encoding", "gzip"); got.status != http.StatusOK {
			t.Fatalf("%s: %d", p, got.status)
		}
	}
	if err := ls.store.DeleteRun(ctx, fresh.ID); err != nil {
		t.Fatal(err)
	}
	next := &db.Run{Name: "after", Status: db.StatusRunning, Plan: run.Plan, Host: run.Host}
	if _, err := ls.store.CreateRun(ctx, next); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		for _, enc := range []string{"gzip", ""} {
			if got := fetch(t, ls.url+p, "Accept-Encoding", enc, "If-None-Match", before.header.Get("ETag")); got.status != http.StatusNotFound || got.header.Get("ETag") != "" {
				t.Errorf("%s after the run was deleted (Accept-Encoding %q): %d, ETag %q, want 404 without one", p, enc, got.status, got.header.Get("ETag"))
			}
		}
	}
}

// Clients asking at once for an answer not yet built wait for one build;
// a cache too small for an answer serves it uncached, and stays within
// its budget.
func TestCachedAnswersBuiltOnceAndBounded(t *testing.T) {
	ls := startLive(t, Config{})
	run := seedFullRun(t, ls.store, "once", 0)
	page := fmt.Sprintf("%s/runs/%d?p=50&p=99", ls.url, run.ID)
	builds := ls.srv.cache.builds.Load()
	var wg sync.WaitGroup
	got := make([]answer, 16)
	for i := range got {
		wg.Go(func() { got[i] = fetch(t, page) })
	}
	wg.Wait()
	want := fetch(t, page)
	for i, a := range got {
		if a.status != http.StatusOK || !bytes.Equal(a.body, want.body) {
			t.Fatalf("client %d: %d, %d bytes (want %d)", i, a.status, len(a.body), len(want.body))
		}
	}
	if n := ls.srv.cache.builds.Load() - builds; n != 1 {
		t.Errorf("16 clients at once: %d builds, want 1", n)
	}

	small := startLive(t, Config{HTTP: HTTPLimits{CacheBytes: 16 << 10}})
	r := seedFullRun(t, small.store, "small", 0)
	for _, p := range cachedPaths(r.ID, r.ID) {
		first := fetch(t, small.url+p)
		second := fetch(t, small.url+p, "Accept-Encoding", "gzip")
		if first.status != http.StatusOK || second.status != http.StatusOK || !bytes.Equal(first.body, second.body) {
			t.Errorf("%s with a small cache: %d then %d, equal %t", p, first.status, second.status, bytes.Equal(first.body, second.body))
		}
		if size, budget := small.srv.cache.held(); size > budget {
			t.Fatalf("%s: the cache holds %d bytes, over its %d", p, size, budget)
		}
	}
}
