package cli

import (
	"bufio"
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
)

// The load benchmarks' harness (TestDashboardUnderLoad,
// TestRunsListUnderLoad): a child `iolab serve` on a store, its pages
// loaded one after the other by clients at once, each client sending its
// next request when its last is answered, the server's RSS sampled, and
// a Markdown table of what each page sustained, as BENCHMARKS.md shows it.

// loadBench is a load benchmark's flags: -NAME runs it, -NAME.clients,
// -NAME.time, -NAME.out and -NAME.db say how.
type loadBench struct {
	name    string
	test    string // the test the flag runs
	on      *bool
	clients *int
	time    *time.Duration
	out     *string
	db      *string
}

// newLoadBench defines the flags of benchmark name, run by test, which
// loads each page for d by default; what says what it is (in -NAME's
// help), store what its store holds (in -NAME.db's).
func newLoadBench(name, test, what, store string, d time.Duration) *loadBench {
	return &loadBench{
		name:    name,
		test:    test,
		on:      flag.Bool(name, false, "run the "+what+" ("+test+")"),
		clients: flag.Int(name+".clients", 32, "clients at once"),
		time:    flag.Duration(name+".time", d, "how long each endpoint is loaded"),
		out:     flag.String(name+".out", "", "also write the table to this file"),
		db:      flag.String(name+".db", "", "keep "+store+" in this file, and use it again when it is there"),
	}
}

// skip skips the test unless -NAME asks for the benchmark.
func (b *loadBench) skip(t *testing.T) {
	t.Helper()
	if !*b.on {
		t.Skipf("%s runs with -%s (see BENCHMARKS.md)", b.test, b.name)
	}
}

// dbPath is -NAME.db, or a file in the test's temporary directory.
func (b *loadBench) dbPath(t *testing.T) string {
	if *b.db != "" {
		return *b.db
	}
	return filepath.Join(t.TempDir(), b.name+".db")
}

// first sends each target's first request, one at a time, on a fresh
// server: the results hold its time and size.
func (b *loadBench) first(t *testing.T, hc *http.Client, base string, targets []loadTarget) []loadResult {
	t.Helper()
	results := make([]loadResult, len(targets))
	for i, tg := range targets {
		t0 := time.Now()
		status, n, err := get(hc, base, tg.path, tg.plain)
		results[i].first = time.Since(t0)
		if err != nil || status != http.StatusOK {
			t.Fatalf("%s: %d %v", tg.path, status, err)
		}
		results[i].bytes = n
	}
	return results
}

// load loads each target in turn with -NAME.clients clients for
// -NAME.time, keeping in results what first measured; rss says the
// server's peak over each.
func (b *loadBench) load(hc *http.Client, base string, targets []loadTarget, results []loadResult, rss *serverRSS) {
	for i, tg := range targets {
		first, bytes := results[i].first, results[i].bytes
		rss.phase()
		results[i] = loadEndpoint(hc, base, tg, *b.clients, *b.time)
		results[i].rss = rss.phase()
		results[i].first = first
		if results[i].bytes == 0 {
			results[i].bytes = bytes
		}
	}
}

// report logs the table and writes it to -NAME.out; held, it fails the
// test for each result that missed its target.
func (b *loadBench) report(t *testing.T, table string, results []loadResult, held bool) {
	t.Helper()
	t.Log("\n" + table)
	if *b.out != "" {
		if err := os.WriteFile(*b.out, []byte(table), 0o644); err != nil {
			t.Error(err)
		}
	}
	for _, r := range results {
		if !held || r.pass() {
			continue
		}
		p99 := fmt.Sprint(r.p99)
		if r.target.maxP99 > 0 {
			p99 += fmt.Sprintf(" (want < %v)", r.target.maxP99)
		}
		t.Errorf("%s: %.0f req/s (want ≥ %.0f), p99 %s, %d errors, other statuses %v", r.target.name, r.rate,
			r.target.minRate, p99, r.errors, r.statuses)
	}
}

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
