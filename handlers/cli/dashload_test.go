package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/db"
	"iolab/handlers/chart"
)

// The dashboard load benchmark (BENCHMARKS.md, "Dashboard under load"):
//
//	go test -run TestDashboardUnderLoad -dashload -count=1 -v .
//
// It stores a long run (seedLoadRun), starts `iolab serve` on it as a child
// process on 127.0.0.1, and sends each endpoint -dashload.clients clients
// at once for -dashload.time, then writes a Markdown table: requests a
// second, p50 and p99 latency per endpoint, the first (cold) request's
// time, and the server's peak RSS (its VmHWM and VmRSS sampled from
// /proc/PID/status). Without -dashload the test runs
// TestDashboardLoadSmoke's small version only.
var (
	dashBench     = newLoadBench("dashload", "TestDashboardUnderLoad", "dashboard load benchmark", "the load run's store", 4*time.Second)
	dashLoadSteps = flag.Int("dashload.steps", 500, "steps of the load run (a multiple of 50)")
	dashLoadPprof = flag.String("dashload.cpuprofile", "", "write the server's CPU profile over the whole load to this file")
)

// loadTargets are the endpoints the issue names for run id: the run page,
// each chart kind's (those of kinds, the run page's) page, JSON and CSV, the steps CSV and the run
// document, and the runs list beside them.
func loadTargets(id int64, kinds []chart.KindSpec) []loadTarget {
	runPath := fmt.Sprintf("/runs/%d", id)
	out := []loadTarget{
		{"run page", runPath, 200, 250 * time.Millisecond, false},
		{"steps CSV", runPath + "/steps.csv", 100, 0, false},
	}
	for _, k := range kinds {
		q := chart.Query{Kind: k.Name, Runs: []int64{id}}.Values().Encode()
		out = append(out,
			loadTarget{"chart page " + string(k.Name), "/charts?" + q, 100, 0, false},
			loadTarget{"chart JSON " + string(k.Name), "/api/charts?" + q, 100, 0, false},
			loadTarget{"chart CSV " + string(k.Name), "/charts/export.csv?" + q, 100, 0, false})
	}
	return append(out,
		loadTarget{"run document", "/api/runs/" + strconv.FormatInt(id, 10), 50, 0, false},
		loadTarget{"run page, without gzip", runPath, 0, 0, true},
		loadTarget{"run document, without gzip", "/api/runs/" + strconv.FormatInt(id, 10), 0, 0, true},
		loadTarget{"runs list", "/", 0, 0, false})
}

// TestDashboardUnderLoad is the load benchmark: see the flags above. It
// fails when an endpoint misses what the issue asks of it.
func TestDashboardUnderLoad(t *testing.T) {
	dashBench.skip(t)
	dbPath := dashBench.dbPath(t)
	_, statErr := os.Stat(dbPath)
	store, err := db.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	var run *db.Run
	if statErr == nil {
		runs, err := store.ListRuns(context.Background(), db.RunFilter{})
		if err != nil || len(runs) != 1 {
			t.Fatalf("%s: %d runs (%v), want the load run alone", dbPath, len(runs), err)
		}
		run = &runs[0]
	} else {
		t0 := time.Now()
		run = seedLoadRun(t, store, *dashLoadSteps)
		fi, _ := os.Stat(dbPath)
		t.Logf("stored a %d-step run in %v: %.1f MB", *dashLoadSteps, time.Since(t0).Round(time.Millisecond), float64(fi.Size())/1e6)
	}
	kinds := runPageKinds(t, store, run)
	store.Close()

	var extra []string
	if *dashLoadPprof != "" {
		extra = append(extra, "--pprof", "127.0.0.1:0")
	}
	ls := startLoadServer(t, dbPath, extra...)
	base := ls.url
	rss := watchRSS(ls.cmd.Process.Pid)
	targets := loadTargets(run.ID, kinds)
	hc := loadClient(*dashBench.clients)
	results := dashBench.first(t, hc, base, targets)
	firstRSS := rss.phase()
	stopProfile := startServerProfile(t, ls, time.Duration(len(targets))*(*dashBench.time))
	dashBench.load(hc, base, targets, results, rss)
	stopProfile()
	var live []liveResult
	if *dashLoadLive > 0 {
		live = loadLive(t, hc, base, dbPath, run, liveTargets(targets), *dashBench.clients, rss)
	}
	peak, hwm := rss.done()
	table := loadTable(results, *dashLoadSteps, *dashBench.clients, *dashBench.time, peak, hwm)
	table = strings.Replace(table, "\n", fmt.Sprintf("; %d MiB over the first requests, one at a time\n", firstRSS>>20), 1)
	if live != nil {
		table += "\n" + liveTable(live, *dashBench.clients)
		for _, r := range live {
			results = append(results, r.loadResult)
		}
	}
	dashBench.report(t, table, results, true)
	if max(peak, hwm) >= 300<<20 {
		t.Errorf("the server's RSS reached %d MiB, want < 300 MiB", max(peak, hwm)>>20)
	}
}

// runPageKinds are the chart kinds run's page draws.
func runPageKinds(t testing.TB, store *db.Store, run *db.Run) []chart.KindSpec {
	steps, err := store.StepsFor(context.Background(), run.ID, db.StepLoad{})
	if err != nil {
		t.Fatal(err)
	}
	return chart.Available([]chart.LoadedRun{{Run: *run, Steps: steps}}, chart.RunPage)
}

// startServerProfile starts the server's CPU profile (its --pprof
// listener) when -dashload.cpuprofile asks for one; the returned func
// waits for it and writes it.
func startServerProfile(t testing.TB, ls *loadServer, d time.Duration) func() {
	if *dashLoadPprof == "" {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		resp, err := http.Get(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", ls.pprof, int(d.Seconds()+0.5)))
		if err != nil {
			t.Error(err)
			return
		}
		defer resp.Body.Close()
		f, err := os.Create(*dashLoadPprof)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		if _, err := io.Copy(f, resp.Body); err != nil {
			t.Error(err)
		}
	}()
	return func() { <-done }
}

// TestDashboardLoadSmoke is the load benchmark made small, for the test
// suite: a 50-step run, a few clients for a moment on each endpoint. It
// checks what the benchmark measures is right — every answer a whole
// 200, the gzipped one the plain one zipped — not how fast it comes.
func TestDashboardLoadSmoke(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "smoke.db")
	store, err := db.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	run := seedLoadRun(t, store, 50)
	kinds := runPageKinds(t, store, run)
	store.Close()
	if len(kinds) < 4 {
		t.Fatalf("the load run's page draws %d kinds of chart, want iops, latency, distribution, timeline and more", len(kinds))
	}
	ls := startLoadServer(t, dbPath)
	hc := loadClient(4)
	for _, tg := range loadTargets(run.ID, kinds) {
		plain := fetchBody(t, hc, ls.url+tg.path, false)
		zipped := fetchBody(t, hc, ls.url+tg.path, true)
		if !bytes.Equal(plain, zipped) || len(plain) == 0 {
			t.Errorf("%s: %d bytes plain, %d gzipped and unzipped: want the same", tg.path, len(plain), len(zipped))
		}
		r := loadEndpoint(hc, ls.url, tg, 4, 100*time.Millisecond)
		if r.ok == 0 || r.errors > 0 || len(r.statuses) > 0 {
			t.Errorf("%s under load: %d ok, %d errors, other statuses %v", tg.path, r.ok, r.errors, r.statuses)
		}
	}
}

// fetchBody GETs url and returns its body, asking for gzip and unzipping
// it when zipped.
func fetchBody(t *testing.T, hc *http.Client, url string, zipped bool) []byte {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if zipped {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d", url, resp.StatusCode)
	}
	var r io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		if r, err = gzip.NewReader(resp.Body); err != nil {
			t.Fatal(err)
		}
	} else if zipped && resp.ContentLength > 1<<10 {
		t.Errorf("%s: asked for gzip, got %d bytes plain", url, resp.ContentLength)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
