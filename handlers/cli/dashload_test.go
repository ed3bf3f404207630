package cli

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	dashLoad        = flag.Bool("dashload", false, "run the dashboard load benchmark (TestDashboardUnderLoad)")
	dashLoadSteps   = flag.Int("dashload.steps", 500, "steps of the load run (a multiple of 50)")
	dashLoadClients = flag.Int("dashload.clients", 32, "clients at once")
	dashLoadTime    = flag.Duration("dashload.time", 4*time.Second, "how long each endpoint is loaded")
	dashLoadOut     = flag.String("dashload.out", "", "also write the table to this file")
	dashLoadDB      = flag.String("dashload.db", "", "keep the load run's store in this file, and use it again when it is there")
	dashLoadPprof   = flag.String("dashload.cpuprofile", "", "write the server's CPU profile over the whole load to this file")
)

// loadTarget is one endpoint under load, with what it must sustain.
type loadTarget struct {
	name    string // as the table shows it
	path    string
	minRate float64 // requests a second the issue asks for; 0: none
	maxP99  time.Duration
	// plain clients do not take gzip; the others ask for it, as browsers
	// do, and read the gzipped answer as it comes.
	plain bool
}

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

// loadResult is one endpoint's measurement.
type loadResult struct {
	target     loadTarget
	first      time.Duration // the first request on a fresh server
	bytes      int64         // one answer's size
	ok, errors int64
	statuses   map[int]int64 // other than 200
	rate       float64       // answered 200 a second
	p50, p99   time.Duration
	rss        int64 // the server's peak RSS while this endpoint was loaded
}

func (r *loadResult) pass() bool {
	return r.errors == 0 && len(r.statuses) == 0 && r.rate >= r.target.minRate &&
		(r.target.maxP99 == 0 || r.p99 < r.target.maxP99)
}

// serverRSS samples a process's VmRSS every few milliseconds; peak is
// the largest seen, hwm the kernel's own high-water mark (VmHWM).
type serverRSS struct {
	pid  int
	peak atomic.Int64
	// since is the peak since the last call of phase.
	since atomic.Int64
	stop  chan struct{}
	wg    sync.WaitGroup
}

func watchRSS(pid int) *serverRSS {
	w := &serverRSS{pid: pid, stop: make(chan struct{})}
	w.wg.Go(func() {
		for {
			v := procStatus(pid, "VmRSS")
			if v > w.peak.Load() {
				w.peak.Store(v)
			}
			if v > w.since.Load() {
				w.since.Store(v)
			}
			select {
			case <-w.stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	})
	return w
}

// phase returns the peak sampled since its last call (or the start),
// and starts another.
func (w *serverRSS) phase() int64 {
	v := procStatus(w.pid, "VmRSS")
	return max(w.since.Swap(v), v)
}

// done stops sampling and returns the peak sampled and the high-water mark.
func (w *serverRSS) done() (peak, hwm int64) {
	hwm = procStatus(w.pid, "VmHWM")
	close(w.stop)
	w.wg.Wait()
	return w.peak.Load(), hwm
}

// procStatus is a field of /proc/PID/status in bytes; 0 when unreadable.
func procStatus(pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// loadServer is a child `iolab serve`: its process, base URL and, with
// --pprof, its profiler's.
type loadServer struct {
	cmd        *exec.Cmd
	url, pprof string
}

// startLoadServer starts `iolab serve` on the store at dbPath, on a free
// loopback port; extra are more flags.
func startLoadServer(t testing.TB, dbPath string, extra ...string) *loadServer {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--listen", "127.0.0.1:0", "--db", dbPath}, extra...)...)
	cmd.Env = append(os.Environ(), "IOLAB_TEST_MAIN=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard // the request log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	ls := &loadServer{cmd: cmd}
	up := make(chan struct{})
	go func() {
		dash := regexp.MustCompile(`dashboard on (http://[^/ ]+)/`)
		prof := regexp.MustCompile(`profiler on (http://[^/ ]+)/`)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := prof.FindStringSubmatch(sc.Text()); m != nil {
				ls.pprof = m[1]
			}
			if m := dash.FindStringSubmatch(sc.Text()); m != nil {
				ls.url = m[1]
				close(up)
			}
		}
		io.Copy(io.Discard, out)
	}()
	select {
	case <-up:
		return ls
	case <-time.After(20 * time.Second):
		t.Fatal("iolab serve did not start listening")
	}
	return nil
}

// loadClient keeps a connection per client.
func loadClient(clients int) *http.Client {
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConns: clients, MaxIdleConnsPerHost: clients,
		DisableCompression: true}}
}

// get fetches base+path and reads the answer whole, gzipped unless plain.
func get(hc *http.Client, base, path string, plain bool) (status int, n int64, err error) {
	req, err := http.NewRequest("GET", base+path, nil)
	if err != nil {
		return 0, 0, err
	}
	if !plain {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	n, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, n, err
}

// loadEndpoint sends clients clients at base+tg.path for d (and at most
// 100,000 requests in all), each sending its next request when its last
// is answered.
func loadEndpoint(hc *http.Client, base string, tg loadTarget, clients int, d time.Duration) loadResult {
	res := loadResult{target: tg, statuses: map[int]int64{}}
	var mu sync.Mutex
	var lats []time.Duration
	var sent atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for range clients {
		wg.Go(func() {
			var mine []time.Duration
			for time.Now().Before(deadline) && sent.Add(1) <= 100_000 {
				t0 := time.Now()
				status, n, err := get(hc, base, tg.path, tg.plain)
				lat := time.Since(t0)
				mu.Lock()
				switch {
				case err != nil:
					res.errors++
				case status == http.StatusOK:
					res.ok++
					res.bytes = n
					mine = append(mine, lat)
				default:
					res.statuses[status]++
				}
				mu.Unlock()
			}
			mu.Lock()
			lats = append(lats, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	res.rate = float64(res.ok) / elapsed.Seconds()
	slices.Sort(lats)
	if len(lats) > 0 {
		res.p50 = lats[len(lats)/2]
		res.p99 = lats[min(len(lats)-1, len(lats)*99/100)]
	}
	return res
}

// TestDashboardUnderLoad is the load benchmark: see the flags above. It
// fails when an endpoint misses what the issue asks of it.
func TestDashboardUnderLoad(t *testing.T) {
	if !*dashLoad {
		t.Skip("the load benchmark runs with -dashload (see BENCHMARKS.md)")
	}
	dbPath := *dashLoadDB
	if dbPath == "" {
		dbPath = filepath.Join(t.TempDir(), "load.db")
	}
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
	hc := loadClient(*dashLoadClients)
	results := make([]loadResult, len(targets))
	// Each endpoint's first request, one at a time, on a fresh server.
	for i, tg := range targets {
		t0 := time.Now()
		status, n, err := get(hc, base, tg.path, tg.plain)
		results[i].first = time.Since(t0)
		if err != nil || status != http.StatusOK {
			t.Fatalf("%s: %d %v", tg.path, status, err)
		}
		results[i].bytes = n
	}
	firstRSS := rss.phase()
	stopProfile := startServerProfile(t, ls, time.Duration(len(targets))*(*dashLoadTime))
	for i, tg := range targets {
		first, bytes := results[i].first, results[i].bytes
		rss.phase()
		results[i] = loadEndpoint(hc, base, tg, *dashLoadClients, *dashLoadTime)
		results[i].rss = rss.phase()
		results[i].first = first
		if results[i].bytes == 0 {
			results[i].bytes = bytes
		}
	}
	stopProfile()
	var live []liveResult
	if *dashLoadLive > 0 {
		live = loadLive(t, hc, base, dbPath, run, liveTargets(targets), *dashLoadClients, rss)
	}
	peak, hwm := rss.done()
	table := loadTable(results, *dashLoadSteps, *dashLoadClients, *dashLoadTime, peak, hwm)
	table = strings.Replace(table, "\n", fmt.Sprintf("; %d MiB over the first requests, one at a time\n", firstRSS>>20), 1)
	if live != nil {
		table += "\n" + liveTable(live, *dashLoadClients)
		for _, r := range live {
			results = append(results, r.loadResult)
		}
	}
	t.Log("\n" + table)
	if *dashLoadOut != "" {
		if err := os.WriteFile(*dashLoadOut, []byte(table), 0o644); err != nil {
			t.Error(err)
		}
	}
	for _, r := range results {
		if !r.pass() {
			t.Errorf("%s: %.0f req/s (want ≥ %.0f), p99 %v, %d errors, other statuses %v", r.target.name, r.rate, r.target.minRate, r.p99, r.errors, r.statuses)
		}
	}
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

// loadTable writes the results as BENCHMARKS.md shows them.
func loadTable(results []loadResult, steps, clients int, d time.Duration, peak, hwm int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d-step run, %d clients, %v per endpoint; server peak RSS %d MiB sampled, VmHWM %d MiB\n\n",
		steps, clients, d, peak>>20, hwm>>20)
	b.WriteString("| endpoint | size | first request | req/s | p50 | p99 | peak RSS | target | |\n|---|--:|--:|--:|--:|--:|--:|---|---|\n")
	for _, r := range results {
		want := ""
		if r.target.minRate > 0 {
			want = fmt.Sprintf("≥ %.0f/s", r.target.minRate)
			if r.target.maxP99 > 0 {
				want += fmt.Sprintf(", p99 < %v", r.target.maxP99)
			}
		}
		mark := "ok"
		if !r.pass() {
			mark = "**missed**"
		}
		if want == "" {
			mark = ""
		}
		other := ""
		for st, n := range r.statuses {
			other += fmt.Sprintf(" (%d × %d)", n, st)
		}
		if r.errors > 0 {
			other += fmt.Sprintf(" (%d errors)", r.errors)
		}
		name := "`" + shortPath(r.target.path) + "`"
		if r.target.plain {
			name += ", without gzip"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %.0f%s | %s | %s | %d MiB | %s | %s |\n", name, sizeText(r.bytes),
			durText(r.first), r.rate, other, durText(r.p50), durText(r.p99), r.rss>>20, want, mark)
	}
	return b.String()
}

// shortPath leaves the run id out of a chart's query, for the table.
func shortPath(p string) string {
	if u, err := url.Parse(p); err == nil && u.RawQuery != "" {
		q := u.Query()
		q.Del("run")
		return u.Path + "?" + q.Encode()
	}
	return p
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	case n >= 1<<10:
		return fmt.Sprintf("%.0f kB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}

func durText(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d)/1e6)
	}
	return fmt.Sprintf("%.0f µs", float64(d)/1e3)
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
