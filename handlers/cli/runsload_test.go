package cli

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"iolab/db"
)

// The runs list at lab scale (BENCHMARKS.md, "The runs list at 30,000
// runs"; issue 28):
//
//	go test -run TestRunsListUnderLoad -runsload -count=1 -v .
//
// It stores -runsload.runs runs (seedRunsList: one long run stored as a
// run is, the others its copies in one transaction, each with its own
// host, kernel, target, engines, schedulers, tags, status, source, name
// and time, and 16 steps), starts `iolab serve` on them as a child
// process, and sends each page -runsload.clients clients at once for
// -runsload.time, as TestDashboardUnderLoad does: the runs list's first
// page, filtered pages, a page deep in the list, and /api/runs pages of
// 100 runs. It fails when a page misses p99 < 100 ms or 200 req/s.
//
// With -runsload.write 1s a writer changes the store every second while
// the pages are loaded, as agents' heartbeats do (an agent host's last
// seen time, through a store of its own on the file: another process's
// commit moves the list's version as the dashboard's own do). The list's
// answers are cached per store version, so each change has every page
// built again; the figures are then reported, not held to the targets.
var (
	runsBench     = newLoadBench("runsload", "TestRunsListUnderLoad", "runs list load benchmark", "the store", 10*time.Second)
	runsLoadRuns  = flag.Int("runsload.runs", 30000, "runs in the store")
	runsLoadWrite = flag.Duration("runsload.write", 0, "change the store this often while the pages are loaded (0: never)")
)

// The copies' hosts, kernels, devices, engines, schedulers and tags: a
// lab of fifty hosts over a year.
var (
	listHosts   = 50
	listKernels = []string{"6.1.119", "6.6.63", "6.11.10", "6.12.9-lab", "6.13.0-rc3"}
	listDevices = []string{"/dev/nvme0n1", "/dev/nvme1n1", "/dev/sdb", "/dev/vdb"}
	listEngines = [][]string{{"io_uring"}, {"libaio", "io_uring"}, {"psync"}, {"io_uring", "io_uring+sqpoll", "io_uring+hipri"}, {"libaio"}}
	listScheds  = [][]string{{"none"}, {"none", "mq-deadline", "kyber", "bfq"}, {"mq-deadline"}, {"bfq"}}
	listNames   = []string{"nightly randread qd sweep", "nightly randwrite", "engines × iodepth", "scheduler fairness", "weekly precondition", "mixed 70/30"}
)

// seedRunsList stores n runs in the store at path, in one transaction of
// SQL copies of a 50-step run the store saved itself (its plan, host and
// targets); their steps are copies of its first 16 steps' rows without
// their config and results (the list reads runs rows and counts steps).
func seedRunsList(t testing.TB, path string, n int) {
	t.Helper()
	ctx := context.Background()
	store, err := db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := seedLoadRun(t, store, 50)
	store.Close()
	conn, err := sql.Open("sqlite", path+"?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	columns := func(table string, skip ...string) []string {
		rows, err := conn.QueryContext(ctx, "SELECT name FROM pragma_table_info(?)", table)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var cols []string
		for rows.Next() {
			var c string
			rows.Scan(&c)
			if !slices.Contains(skip, c) {
				cols = append(cols, c)
			}
		}
		return cols
	}
	set := []string{"name", "status", "source", "created_at", "started_at", "finished_at", "hostname", "kernel", "target",
		"engines", "schedulers", "tags", "uid"}
	runCols := columns("runs", append([]string{"id", "version"}, set...)...)
	stepCols := columns("steps", "id", "run_id", "stamp")
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	insRun, err := tx.PrepareContext(ctx, `INSERT INTO runs (id, `+strings.Join(set, ", ")+", "+strings.Join(runCols, ", ")+`)
		SELECT (SELECT last + 1 FROM run_ids), `+strings.TrimSuffix(strings.Repeat("?, ", len(set)), ", ")+", "+strings.Join(runCols, ", ")+
		` FROM runs WHERE id = ?`)
	if err != nil {
		t.Fatal(err)
	}
	// The steps' rows without their config and result (kilobytes each,
	// which the list never reads): a copy is its steps' count.
	small := map[string]string{"config": "'{}'", "has_result": "0", "result_host": "NULL", "result_groups": "NULL"}
	var stepVals []string
	for _, c := range stepCols {
		stepVals = append(stepVals, cmp.Or(small[c], c))
	}
	insSteps, err := tx.PrepareContext(ctx, `INSERT INTO steps (run_id, `+strings.Join(stepCols, ", ")+`)
		SELECT ?, `+strings.Join(stepVals, ", ")+` FROM steps WHERE run_id = ? AND seq < 16`)
	if err != nil {
		t.Fatal(err)
	}
	list := func(l []string) string { b, _ := json.Marshal(l); return string(b) }
	year := 365 * 24 * time.Hour
	start := time.Now().Add(-year)
	statuses := []string{db.StatusDone, db.StatusDone, db.StatusDone, db.StatusDone, db.StatusDone, db.StatusDone, db.StatusFailed, db.StatusPartial, db.StatusDone, db.StatusCancelled}
	sources := []string{db.SourceLocal, db.SourceAgent, db.SourceLocal, db.SourceAgent, db.SourceLocal, db.SourceAgent, db.SourceFio, db.SourceImport, db.SourceLocal, db.SourcePush}
	for i := range n - 1 {
		created := start.Add(year / time.Duration(n) * time.Duration(i)).UnixNano() // i × year overflows
		host := i % listHosts
		var tags []string
		if i%3 == 0 {
			tags = append(tags, "nightly")
		}
		if i%7 == 0 {
			tags = append(tags, "weekly")
		}
		if i%1000 == 0 {
			tags = append(tags, fmt.Sprintf("release-%d", i/1000))
		}
		res, err := insRun.ExecContext(ctx, fmt.Sprintf("%s #%d", listNames[(i/7)%len(listNames)], i), statuses[i%len(statuses)],
			sources[(i/3)%len(sources)], created, created, created+int64(20*time.Minute), fmt.Sprintf("lab%02d", host),
			listKernels[(i/500+host)%len(listKernels)], listDevices[(i/11)%len(listDevices)], list(listEngines[(i/13)%len(listEngines)]),
			list(listScheds[(i/17)%len(listScheds)]), list(tags), fmt.Sprintf("%032x", i+1), tmpl.ID)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := res.LastInsertId()
		if _, err := insSteps.ExecContext(ctx, id, tmpl.ID); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
}

// runsListTargets are the pages under load; deep is a cursor half way
// down the list, by date.
func runsListTargets(deep string) []loadTarget {
	const rate, p99 = 200, 100 * time.Millisecond
	return []loadTarget{
		{"runs list, first page", "/", rate, p99, false},
		{"runs list, a host's nightly runs", "/runs?host=lab07&label=nightly", rate, p99, false},
		{"runs list, an engine's", "/runs?engine=libaio", rate, p99, false},
		{"runs list, by host", "/runs?sort=host", rate, p99, false},
		{"runs list, a name's part", "/runs?name=fairness", rate, p99, false},
		{"runs list, half way down", "/runs?after=" + deep, rate, p99, false},
		{"api, first 100", "/api/runs?limit=100", rate, p99, false},
		{"api, 100 of an engine's done runs", "/api/runs?limit=100&engine=io_uring&status=done", rate, p99, false},
		{"api, 100 half way down", "/api/runs?limit=100&after=" + deep, rate, p99, false},
	}
}

// TestRunsListUnderLoad is the benchmark: see the flags above.
func TestRunsListUnderLoad(t *testing.T) {
	runsBench.skip(t)
	dbPath := runsBench.dbPath(t)
	if _, err := os.Stat(dbPath); err != nil {
		t0 := time.Now()
		seedRunsList(t, dbPath, *runsLoadRuns)
		fi, _ := os.Stat(dbPath)
		t.Logf("stored %d runs in %v: %.1f MB", *runsLoadRuns, time.Since(t0).Round(time.Millisecond), float64(fi.Size())/1e6)
	}
	ls := startLoadServer(t, dbPath)
	base := ls.url
	rss := watchRSS(ls.cmd.Process.Pid)
	hc := loadClient(*runsBench.clients)
	// The cursor half way down: the list's pages walked by next.
	deep := ""
	for path, seen := "/api/runs?limit=100", 0; seen < *runsLoadRuns/2; seen += 100 {
		var a struct {
			Next  string
			Total int
		}
		resp, err := hc.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&a)
		resp.Body.Close()
		if err != nil || a.Next == "" || a.Total != *runsLoadRuns {
			t.Fatalf("%s: next %q, total %d (%v)", path, a.Next, a.Total, err)
		}
		path = a.Next
		deep = path[strings.Index(path, "after=")+len("after="):]
	}
	targets := runsListTargets(deep)
	results := runsBench.first(t, hc, base, targets)
	if *runsLoadWrite > 0 {
		writes := heartbeats(t, dbPath, *runsLoadWrite)
		defer func() { t.Logf("the store changed %d times under load", writes()) }()
	}
	runsBench.load(hc, base, targets, results, rss)
	peak, hwm := rss.done()
	table := loadTable(results, 16, *runsBench.clients, *runsBench.time, peak, hwm)
	runs := fmt.Sprintf("%d runs of 16 steps", *runsLoadRuns)
	if *runsLoadWrite > 0 {
		runs += fmt.Sprintf(", the store changed every %v", *runsLoadWrite)
	}
	table = strings.Replace(table, "16-step run", runs, 1)
	// A store changing under the load: reported, not held to the targets.
	runsBench.report(t, table, results, *runsLoadWrite == 0)
}

// heartbeats records an agent host seen every interval in the store at
// path, through a store of its own, until the test ends; writes says how
// many it recorded.
func heartbeats(t testing.TB, path string, interval time.Duration) (writes func() int64) {
	t.Helper()
	ctx := context.Background()
	store, err := db.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	id, err := store.AddHost(ctx, &db.Host{Kind: db.HostAgent, Name: fmt.Sprintf("heartbeat-%d", time.Now().UnixNano())})
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-tick.C:
				if err := store.HostSeen(ctx, id, now, "", nil); err != nil {
					t.Error(err)
					return
				}
				n.Add(1)
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		<-done
		store.DeleteHost(ctx, id)
		store.Close()
	})
	return n.Load
}

// TestRunsListLoadSmoke is the benchmark made small, for the suite: 300
// runs seeded as the benchmark seeds them, each page it loads a 200 with
// what it must hold.
func TestRunsListLoadSmoke(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "runs.db")
	seedRunsList(t, dbPath, 300)
	store, err := db.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	page, err := store.RunPage(context.Background(), db.RunQuery{RunFilter: db.RunFilter{Hostname: "lab07", Tag: "nightly"}})
	if err != nil {
		t.Fatal(err)
	}
	// Of 299 copies and the template, lab07's are every 50th from the
	// 7th, nightly every 3rd: 57, 207.
	if page.Total != 2 || len(page.Runs) != 2 || page.Runs[0].Steps != 16 || !slices.Contains(page.Runs[0].Tags, "nightly") {
		t.Fatalf("lab07's nightly runs: %d, %+v", page.Total, page.Runs)
	}
	all, err := store.RunPage(context.Background(), db.RunQuery{RunFilter: db.RunFilter{Limit: 100}})
	if err != nil || all.Total != 300 || all.Next == "" {
		t.Fatalf("all: %d, next %q, %v", all.Total, all.Next, err)
	}
	ls := startLoadServer(t, dbPath)
	hc := loadClient(4)
	for _, tg := range runsListTargets(all.Next) {
		res := loadEndpoint(hc, ls.url, tg, 4, 300*time.Millisecond)
		if res.ok == 0 || res.errors > 0 || len(res.statuses) > 0 {
			t.Errorf("%s: %d ok, %d errors, %v", tg.path, res.ok, res.errors, res.statuses)
		}
	}
}
