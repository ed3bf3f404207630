package handlers

import (
	"fmt"
	"net/http"
	"testing"

	"iolab/db"
)

// benchGroup stores a group of eight hosts' runs (seedRun's: three
// iodepths, two repeats) and returns its uid.
func benchGroup(b testing.TB, ts *testServer) string {
	b.Helper()
	runs := map[string]*db.Run{}
	var hosts []string
	for i := range 8 {
		h := fmt.Sprintf("host-%d", i+1)
		runs[h], _ = seedRun(b, ts.store, "group-"+h, []string{"1", "4", "16"}, 2)
		hosts = append(hosts, h)
	}
	return seedGroup(b, ts.store, "eight", runs, hosts...)
}

// BenchmarkGroupAPI is GET /api/groups/UID of a group of eight runs, as
// its page polls it while the group runs.
func BenchmarkGroupAPI(b *testing.B) { benchGroupGet(b, "/api/groups/") }

// BenchmarkGroupPage is GET /groups/UID of a group of eight runs: the
// hosts' table, the fleet and the compare page of their runs.
func BenchmarkGroupPage(b *testing.B) { benchGroupGet(b, "/groups/") }

// benchGroupGet GETs prefix+UID of benchGroup's group.
func benchGroupGet(b *testing.B, prefix string) {
	ts := newTestServer(b, Config{})
	uid := benchGroup(b, ts)
	for b.Loop() {
		if rec := ts.do(b, "GET", prefix+uid, ""); rec.Code != http.StatusOK {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
}
