package handlers

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/launch"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"
	"iolab/handlers/chart"

	"github.com/labstack/echo/v4"
)

// testServer is a Server on a real SQLite file in a temp dir, with a
// data directory for file targets.
type testServer struct {
	srv     *Server
	e       *echo.Echo
	store   *db.Store
	dataDir string
}

func newTestServer(t testing.TB, cfg Config) *testServer {
	t.Helper()
	dir := t.TempDir()
	store := cfg.Store // a store of the test's own (full, read-only), or a new one
	if store == nil {
		var err error
		if store, err = db.Open(context.Background(), filepath.Join(dir, "iolab.db")); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Close() })
	}
	dataDir := filepath.Join(dir, "data")
	if err := os.Mkdir(dataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg.Store = store
	if cfg.DataDir == "" {
		cfg.DataDir = dataDir
	}
	if cfg.ProgressEvery == 0 {
		cfg.ProgressEvery = 50 * time.Millisecond
	}
	if testing.Verbose() {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	e := echo.New()
	srv.Register(e)
	real, _ := filepath.EvalSymlinks(dataDir)
	return &testServer{srv: srv, e: e, store: store, dataDir: real}
}

func (ts *testServer) do(t testing.TB, method, target, body string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if body != "" {
		if strings.HasPrefix(body, "{") {
			req.Header.Set("Content-Type", "application/json")
		} else {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	ts.e.ServeHTTP(rec, req)
	return rec
}

// seedRun stores a finished run with one step per iodepth, with known
// numbers: step i did 1000·(i+1) reads in one second.
func seedRun(t testing.TB, store *db.Store, name string, iodepths []string, repeat int) (*db.Run, []sweep.StepResult) {
	t.Helper()
	ctx := context.Background()
	args := []string{"--name=" + name, "--ioengine=null", "--size=1m", "--rw=randread", "--bs=4k"}
	cfg, err := fio.ParseArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	plan := &sweep.Plan{Name: name, Args: args, Base: *cfg, Repeat: repeat,
		Sweeps: []sweep.Sweep{{Axis: sweep.AxisIODepth, Values: iodepths}}}
	steps, err := plan.Steps()
	if err != nil {
		t.Fatal(err)
	}
	run := &db.Run{Name: name, Status: db.StatusRunning, Plan: *plan,
		Host: system.HostInfo{Hostname: "testhost", KernelRelease: "6.1.0-test", CPUCount: 4, CPUModel: "Test CPU"}}
	if _, err := store.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	var results []sweep.StepResult
	start := time.Now().Add(-time.Hour)
	for i, st := range steps {
		job := bench.JobResult{Name: name, Job: st.Config.Jobs[0], Start: start, Runtime: time.Second, Jobs: 1, Interval: time.Second}
		ios := uint64(1000 * (i + 1))
		job.Dirs[bench.Read].IOs = ios
		job.Dirs[bench.Read].Bytes = ios * 4096
		for k := range ios {
			job.Dirs[bench.Read].Clat.Add(10000 + k*10)
		}
		job.Samples = []bench.Sample{{At: time.Second, IOs: bench.DirCounts{ios, 0}, Bytes: bench.DirCounts{ios * 4096, 0}}}
		res := sweep.StepResult{Step: st, Status: sweep.StepDone, Start: start, End: start.Add(time.Second),
			Result: &bench.Result{Start: start, Groups: []bench.GroupResult{{ID: 0, Jobs: []bench.JobResult{job},
				Disks: []system.DiskUtilization{{Name: "vda", ReadsPerSec: float64(ios), ReadAwait: 0.25, AvgQueueSize: 1.5, Util: 42}}}}},
			CPU:  system.CPUBreakdown{User: 10, System: 5, IRQ: 1, SoftIRQ: 2, IOWait: 3, Idle: 79},
			Proc: system.ProcCPU{User: 3 * time.Millisecond, System: 7 * time.Millisecond}}
		if err := store.SaveStep(ctx, run.ID, &res); err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	if err := store.SetRunStatus(ctx, run.ID, db.StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	return run, results
}

func TestRoutes(t *testing.T) {
	ts := newTestServer(t, Config{})
	r1, _ := seedRun(t, ts.store, "seed-one", []string{"1", "4", "16"}, 2)
	r2, _ := seedRun(t, ts.store, "seed-two", []string{"1", "4"}, 1)
	id1, id2 := strconv.FormatInt(r1.ID, 10), strconv.FormatInt(r2.ID, 10)
	tests := []struct {
		name, method, path string
		status             int
		contains           []string
		contentType        string
	}{
		{"home", "GET", "/", 200, []string{"seed-one", "seed-two", `name="run" value="` + id1 + `"`}, "text/html"},
		{"runs filtered", "GET", "/runs?host=testhost&status=done&engine=null", 200, []string{"seed-one"}, "text/html"},
		{"runs filter excludes", "GET", "/runs?kernel=nope", 200, []string{"No runs match"}, "text/html"},
		{"runs by workload", "GET", "/runs?workload=randread+4k", 200, []string{"seed-one", "<th>workload</th>", `<option selected>randread 4k</option>`}, "text/html"},
		{"runs by workload excludes", "GET", "/runs?workload=write+1m", 200, []string{"No runs match"}, "text/html"},
		{"runs by name", "GET", "/runs?name=ONE", 200, []string{"seed-one"}, "text/html"},
		{"runs by name excludes", "GET", "/runs?name=nope", 200, []string{"No runs match"}, "text/html"},
		{"runs bad status", "GET", "/runs?status=bogus", 400, []string{"status"}, "text/html"},
		{"new run form", "GET", "/runs/new", 200, []string{"sched-mixed", "sched-seqwrite", "sched-fairness", "engines-randwrite", "numjobs-scaling", "pts-precondition", `name="jobfile"`}, "text/html"},
		{"run page", "GET", "/runs/" + id1, 200, []string{"seed-one", "Environment", "Test CPU", "iolab run --sweep=iodepth=1,4,16 --repeat=2", "[seed-one]", `class="chart"`, "data-option=", "iodepth=16 #2"}, "text/html"},
		{"run missing", "GET", "/runs/999", 404, []string{"run 999 not found"}, "text/html"},
		{"run bad id", "GET", "/runs/abc", 404, nil, "text/html"},
		{"steps csv", "GET", "/runs/" + id1 + "/steps.csv", 200, []string{"IOPS", "clat p50 (µs)"}, "text/csv"},
		{"steps csv missing", "GET", "/runs/999/steps.csv", 404, nil, "application/json"},
		{"chart page", "GET", "/charts?kind=iops&run=" + id1, 200, []string{`data-kind="iops"`, "export.csv?"}, "text/html"},
		{"chart bad kind", "GET", "/charts?kind=bogus&run=" + id1, 400, []string{"kind"}, "text/html"},
		{"chart missing run", "GET", "/charts?kind=iops&run=999", 404, nil, "text/html"},
		{"chart csv", "GET", "/charts/export.csv?kind=iops&run=" + id1, 200, nil, "text/csv"},
		{"compare", "GET", "/compare?run=" + id1 + "&run=" + id2, 200, []string{"seed-one", "seed-two", `class="chart"`}, "text/html"},
		{"compare bad", "GET", "/compare?run=x", 400, nil, "text/html"},
		{"compare none", "GET", "/compare", 400, nil, "text/html"},
		{"login page", "GET", "/login", 200, []string{`name="token"`}, "text/html"},
		{"static js", "GET", "/static/app.js", 200, []string{"iolabCharts"}, ""},
		{"echarts", "GET", "/static/vendor/echarts.min.js", 200, nil, ""},
		{"api runs", "GET", "/api/runs", 200, []string{`"name":"seed-one"`, `"name":"seed-two"`}, "application/json"},
		{"api runs filtered", "GET", "/api/runs?kernel=nope", 200, []string{"[]"}, "application/json"},
		{"api run", "GET", "/api/runs/" + id1, 200, []string{`"format":"iolab-run"`, `"status":"done"`, `"steps":[`}, "application/json"},
		{"api run missing", "GET", "/api/runs/999", 404, []string{`"error":"run 999 not found"`}, "application/json"},
		{"api chart", "GET", "/api/charts?kind=iops&run=" + id1, 200, []string{`"option"`}, "application/json"},
		{"api chart bad", "GET", "/api/charts?kind=bogus&run=" + id1, 400, []string{`"field":"kind"`}, "application/json"},
		{"api presets", "GET", "/api/presets", 200, []string{"engines-randwrite", `"iodepth":"1,2,4,8,16,32,64,128,256"`}, "application/json"},
		{"api events of finished run", "GET", "/api/runs/" + id1 + "/events", 200, []string{"event: done", `"status":"done"`}, "text/event-stream"},
		{"api events missing", "GET", "/api/runs/999/events", 404, nil, "application/json"},
		{"api cancel finished", "POST", "/api/runs/" + id1 + "/cancel", 409, []string{"not queued or running"}, "application/json"},
		{"api cancel missing", "POST", "/api/runs/999/cancel", 404, nil, "application/json"},
		{"api delete missing", "DELETE", "/api/runs/999", 404, nil, "application/json"},
		{"api delete", "DELETE", "/api/runs/" + id2, 204, nil, ""},
		{"api deleted is gone", "GET", "/api/runs/" + id2, 404, nil, "application/json"},
		{"page delete", "POST", "/runs/" + id1 + "/delete", 303, nil, ""},
		{"no route", "GET", "/nope", 404, nil, "text/html"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := ts.do(t, tt.method, tt.path, "")
			if rec.Code != tt.status {
				t.Fatalf("%s %s: status %d, want %d; body:\n%.2000s", tt.method, tt.path, rec.Code, tt.status, rec.Body.String())
			}
			if tt.contentType != "" && !strings.HasPrefix(rec.Header().Get("Content-Type"), tt.contentType) {
				t.Errorf("Content-Type %q, want %s…", rec.Header().Get("Content-Type"), tt.contentType)
			}
			for _, s := range tt.contains {
				if !strings.Contains(rec.Body.String(), s) {
					t.Errorf("body lacks %q:\n%.3000s", s, rec.Body.String())
				}
			}
		})
	}
}

func TestAPIValidation(t *testing.T) {
	// An allowed target must exist when the server starts.
	allowed := filepath.Join(t.TempDir(), "allowed.img")
	if err := os.WriteFile(allowed, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, Config{AllowTargets: []string{allowed}})
	file := filepath.Join(ts.dataDir, "t.dat")
	tests := []struct {
		name, body, field, msg string
	}{
		{"not json", `{"name":`, "", "not a plan"},
		{"unknown field", `{"nme":"x"}`, "", "unknown field"},
		{"bad option name", `{"options":{"Bad Name":"1"}}`, "options.Bad Name", "not an option name"},
		{"unknown option", `{"options":{"filename":"` + file + `","size":"1m","iodeth":4}}`, "options.iodeth", `did you mean "iodepth"`},
		{"bad value", `{"options":{"filename":"` + file + `","size":"1m","iodepth":"lots"}}`, "options.iodepth", "iodepth"},
		{"job option", `{"options":{"filename":"` + file + `","size":"1m"},"jobs":[{"name":"a","options":{"bs":"huge"}}]}`, "jobs[0].options.bs", "bs"},
		{"bad sweep axis", `{"options":{"filename":"` + file + `","size":"1m"},"sweep":{"color":["red"]}}`, "sweep.color", "not an axis"},
		{"bad sweep value", `{"options":{"filename":"` + file + `","size":"1m"},"sweep":{"ioengine":["warp"]}}`, "sweep.ioengine", "not an engine"},
		{"target not allowed", `{"options":{"filename":"/dev/sda","rw":"randwrite"}}`, "options.filename", "allow-list"},
		{"target escapes data dir", `{"options":{"filename":"../../etc/passwd"}}`, "options.filename", "allow-list"},
		{"mounted write refused", `{"options":{"filename":"` + file + `","size":"1m","allow_mounted_write":1}}`, "options.filename", "allow_mounted_write"},
		{"jobfile env", `{"jobfile":"[a]\nfilename=${HOME}/x\n"}`, "jobfile", "${VAR}"},
		{"jobfile bad option", `{"jobfile":"[a]\nfilename=` + file + `\nbogus=1\n"}`, "jobfile", "bogus"},
		{"jobfile target", `{"jobfile":"[a]\nfilename=/etc/passwd\n"}`, "jobfile", "allow-list"},
		{"jobfile and options", `{"jobfile":"[a]\n","options":{"bs":"4k"}}`, "jobfile", "not both"},
		{"unknown preset", `{"preset":"sched-mixd","options":{"filename":"` + file + `"}}`, "preset", `did you mean "sched-mixed"`},
		{"preset without target", `{"preset":"sched-mixed"}`, "options.filename", "needs a target"},
		{"repeat", `{"repeat":1000,"options":{"filename":"` + file + `"}}`, "repeat", "repeat"},
		{"missing file without size", `{"options":{"filename":"` + file + `","rw":"read"}}`, "options.filename", "size="},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := ts.do(t, "POST", "/api/runs", tt.body)
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("status %d, want 400; body %s", rec.Code, rec.Body)
			}
			var got errorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			if got.Field != tt.field || !strings.Contains(got.Error, tt.msg) {
				t.Errorf("got field %q error %q; want field %q and %q", got.Field, got.Error, tt.field, tt.msg)
			}
		})
	}
	runs, err := ts.store.ListRuns(context.Background(), db.RunFilter{})
	if err != nil || len(runs) != 0 {
		t.Errorf("invalid plans stored runs: %v, %v", runs, err)
	}
	if _, err := os.Stat(file); err == nil {
		t.Errorf("an invalid plan created %s", file)
	}
}

func TestFormValidation(t *testing.T) {
	ts := newTestServer(t, Config{})
	tests := []struct {
		name  string
		form  url.Values
		field string
	}{
		{"bad iodepth", url.Values{"target": {"x.dat"}, "size": {"1m"}, "iodepth": {"1,lots"}, "ioengine": {"psync"}, "runtime": {"1"}}, "iodepth"},
		{"bad engine", url.Values{"target": {"x.dat"}, "size": {"1m"}, "ioengine": {"warp"}}, "ioengine"},
		{"bad bs", url.Values{"target": {"x.dat"}, "size": {"1m"}, "bs": {"huge"}}, "bs"},
		{"target not allowed", url.Values{"target": {"/dev/sda"}}, "target"},
		{"bad repeat", url.Values{"target": {"x.dat"}, "repeat": {"0"}}, "repeat"},
		{"bad runtime", url.Values{"target": {"x.dat"}, "size": {"1m"}, "runtime": {"soon"}}, "runtime"},
		{"bad jobfile", url.Values{"jobfile": {"[a]\nbogus=1\n"}}, "jobfile"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := ts.do(t, "POST", "/runs", tt.form.Encode())
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("status %d, want 400: %.2000s", rec.Code, rec.Body)
			}
			if !strings.Contains(rec.Body.String(), `class="field-error" data-field="`+tt.field+`"`) {
				t.Errorf("no error next to %s:\n%s", tt.field, rec.Body)
			}
		})
	}
	if runs, _ := ts.store.ListRuns(context.Background(), db.RunFilter{}); len(runs) != 0 {
		t.Errorf("invalid forms stored %d runs", len(runs))
	}
}

func TestToken(t *testing.T) {
	const token = "s3cret-token"
	ts := newTestServer(t, Config{Token: token, RequireToken: true})
	run, _ := seedRun(t, ts.store, "seed", []string{"1"}, 1)
	id := strconv.FormatInt(run.ID, 10)
	bearer := []string{"Authorization", "Bearer " + token}
	tests := []struct {
		name, method, path, body string
		header                   []string
		status                   int
	}{
		{"read open", "GET", "/api/runs", "", nil, 200},
		{"page open", "GET", "/runs/" + id, "", nil, 200},
		{"launch without token", "POST", "/api/runs", `{"options":{}}`, nil, 401},
		{"launch wrong token", "POST", "/api/runs", `{"options":{}}`, []string{"Authorization", "Bearer nope"}, 401},
		{"launch with token", "POST", "/api/runs", `{"options":{"filename":"/dev/sda"}}`, bearer, 400},
		{"cancel without token", "POST", "/api/runs/" + id + "/cancel", "", nil, 401},
		{"cancel with token", "POST", "/api/runs/" + id + "/cancel", "", bearer, 409},
		{"form without token", "POST", "/runs", "target=x", nil, 401},
		{"delete page without token", "POST", "/runs/" + id + "/delete", "", nil, 401},
		{"delete without token", "DELETE", "/api/runs/" + id, "", nil, 401},
		{"cross-site with token", "DELETE", "/api/runs/" + id, "", append([]string{"Sec-Fetch-Site", "cross-site"}, bearer...), 403},
		{"delete with token", "DELETE", "/api/runs/" + id, "", bearer, 204},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := ts.do(t, tt.method, tt.path, tt.body, tt.header...)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, rec.Body)
			}
		})
	}

	t.Run("login cookie", func(t *testing.T) {
		rec := ts.do(t, "POST", "/login", url.Values{"token": {"wrong"}}.Encode())
		if rec.Code != 401 {
			t.Fatalf("wrong token: status %d", rec.Code)
		}
		rec = ts.do(t, "POST", "/login", url.Values{"token": {token}, "next": {"/runs/new"}}.Encode())
		if rec.Code != 303 || rec.Header().Get("Location") != "/runs/new" {
			t.Fatalf("login: %d %s", rec.Code, rec.Header().Get("Location"))
		}
		cookie := rec.Result().Cookies()[0]
		if strings.Contains(cookie.Value, token) || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode {
			t.Errorf("cookie %+v", cookie)
		}
		rec = ts.do(t, "POST", "/runs", url.Values{"target": {"/dev/sda"}}.Encode(), "Cookie", cookie.Name+"="+cookie.Value)
		if rec.Code != 400 { // past the token check, refused by the allow-list
			t.Fatalf("form with the cookie: %d", rec.Code)
		}
		rec = ts.do(t, "POST", "/runs", url.Values{"target": {"/dev/sda"}}.Encode(), "Cookie", cookie.Name+"="+cookie.Value,
			"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site")
		if rec.Code != 403 {
			t.Fatalf("cross-site form with the cookie: %d", rec.Code)
		}
	})

	t.Run("read needs token", func(t *testing.T) {
		ts := newTestServer(t, Config{Token: token, RequireToken: true, ReadNeedsToken: true})
		if rec := ts.do(t, "GET", "/api/runs", ""); rec.Code != 401 {
			t.Errorf("api without token: %d", rec.Code)
		}
		if rec := ts.do(t, "GET", "/api/runs", "", bearer...); rec.Code != 200 {
			t.Errorf("api with token: %d", rec.Code)
		}
		if rec := ts.do(t, "GET", "/runs", ""); rec.Code != 303 || !strings.HasPrefix(rec.Header().Get("Location"), "/login") {
			t.Errorf("page without token: %d %s", rec.Code, rec.Header().Get("Location"))
		}
		if rec := ts.do(t, "GET", "/static/app.css", ""); rec.Code != 200 {
			t.Errorf("static without token: %d", rec.Code)
		}
	})
}

func readCSV(t *testing.T, body string) [][]string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatalf("%v in\n%s", err, body)
	}
	return rows
}

func TestCSVMatchesStore(t *testing.T) {
	ts := newTestServer(t, Config{})
	run, stored := seedRun(t, ts.store, "csv", []string{"1", "4", "16"}, 1)
	rec := ts.do(t, "GET", fmt.Sprintf("/runs/%d/steps.csv", run.ID), "")
	rows := readCSV(t, rec.Body.String())
	if len(rows) != len(stored)+1 {
		t.Fatalf("%d rows, want header + %d", len(rows), len(stored))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for i, st := range stored {
		row := rows[i+1]
		j := &st.Result.Groups[0].Jobs[0]
		p := j.Dirs[bench.Read].Clat.Hist.Percentiles([]float64{50, 99})
		want := map[string]float64{
			"IOPS":              float64(j.Dirs[bench.Read].IOs) / j.Runtime.Seconds(),
			"bandwidth (MiB/s)": float64(j.Dirs[bench.Read].Bytes) / j.Runtime.Seconds() / (1 << 20),
			"clat p50 (µs)":     float64(p[0]) / 1e3,
			"clat p99 (µs)":     float64(p[1]) / 1e3,
			"us+sy (%)":         15, "hi+si (%)": 3, "iowait (%)": 3,
			"CPU per I/O (µs)": float64(time.Duration(float64(10*time.Millisecond)/float64(j.Dirs[bench.Read].IOs))) / 1e3,
			"r/s":              float64(j.Dirs[bench.Read].IOs), "r_await (ms)": 0.25, "aqu-sz": 1.5, "%util": 42,
		}
		for name, w := range want {
			got, err := strconv.ParseFloat(row[col[name]], 64)
			if err != nil || !near(got, w) {
				t.Errorf("step %d %s = %q, want %g", i+1, name, row[col[name]], w)
			}
		}
		if row[col["axes"]] != st.Step.String() || row[col["status"]] != "done" {
			t.Errorf("step %d: %v", i+1, row)
		}
	}

	// The chart CSV is exactly the chart's table.
	q := chart.Query{Kind: chart.IOPS, Runs: []int64{run.ID}}.Values()
	pq, err := chart.ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := chart.Build(pq, []chart.LoadedRun{{Run: *run, Steps: stored}})
	if err != nil {
		t.Fatal(err)
	}
	rec = ts.do(t, "GET", "/charts/export.csv?"+q.Encode(), "")
	if rec.Code != 200 {
		t.Fatalf("chart csv: %d %s", rec.Code, rec.Body)
	}
	rows = readCSV(t, rec.Body.String())
	if len(rows) != len(ch.Rows)+1 || strings.Join(rows[0], ",") != strings.Join(ch.Columns, ",") {
		t.Fatalf("chart csv %v, chart %v %v", rows, ch.Columns, ch.Rows)
	}
	// Every stored step's IOPS is among the plotted numbers.
	for _, st := range stored {
		iops, _ := st.Result.Totals()
		found := false
		for _, r := range rows[1:] {
			for _, cell := range r {
				if v, err := strconv.ParseFloat(cell, 64); err == nil && near(v, iops) {
					found = true
				}
			}
		}
		if !found {
			t.Errorf("IOPS %g of step %s is not in the chart's CSV:\n%s", iops, &st.Step, rec.Body)
		}
	}
}

func near(a, b float64) bool {
	if a == b {
		return true
	}
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= 1e-6*max(1, b, -b)
}

// readEvents reads server-sent events until "done" or the stream ends.
func readEvents(t *testing.T, url string) []launch.Event {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	var out []launch.Event
	sc := bufio.NewScanner(resp.Body)
	var typ string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			typ = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			out = append(out, launch.Event{Type: typ, Data: json.RawMessage(strings.TrimPrefix(line, "data: "))})
			if typ == launch.EventDone {
				return out
			}
		}
	}
	return out
}

func waitStatus(t *testing.T, store *db.Store, id int64, want string) *db.Run {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r, err := store.GetRun(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status == want {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %d is %s (%s), want %s", id, r.Status, r.Error, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func launchRun(t *testing.T, ts *testServer, body string) int64 {
	t.Helper()
	rec := ts.do(t, "POST", "/api/runs", body)
	if rec.Code != http.StatusCreated {
		t.Fatalf("launch: %d %s", rec.Code, rec.Body)
	}
	var got createdRun
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.URL != fmt.Sprintf("/runs/%d", got.ID) {
		t.Errorf("url %q", got.URL)
	}
	return got.ID
}

func TestLaunchRealRun(t *testing.T) {
	ts := newTestServer(t, Config{})
	hs := httptest.NewServer(ts.e)
	defer hs.Close()
	// A relative target is a file under the data directory, created with size.
	id := launchRun(t, ts, `{"name":"real","options":{"filename":"real.dat","size":"1m","rw":"randread","bs":"4k",
		"ioengine":"libaio","runtime":"300ms","time_based":1},"sweep":{"iodepth":[1,2]}}`)
	events := readEvents(t, fmt.Sprintf("%s/api/runs/%d/events", hs.URL, id))
	var steps, progress int
	for _, ev := range events {
		switch ev.Type {
		case launch.EventStep:
			steps++
			// A finished step says its job's IOPS.
			var st launch.StepEvent
			if err := json.Unmarshal(ev.Data.(json.RawMessage), &st); err != nil {
				t.Errorf("step %s: %v", ev.Data, err)
			} else if st.Status == sweep.StepDone && (len(st.Jobs) != 1 || st.Jobs[0].Name != "real" || st.Jobs[0].IOPS <= 0) {
				t.Errorf("step %s: want the job real's IOPS", ev.Data)
			}
		case launch.EventProgress:
			progress++
			var p launch.ProgressEvent
			if err := json.Unmarshal(ev.Data.(json.RawMessage), &p); err != nil || p.Total != 2 || p.IOPS < 0 {
				t.Errorf("progress %s: %v", ev.Data, err)
			}
		}
	}
	if steps != 4 || progress == 0 || len(events) == 0 || events[len(events)-1].Type != launch.EventDone {
		t.Fatalf("events: %d step, %d progress: %v", steps, progress, events)
	}
	var done launch.DoneEvent
	json.Unmarshal(events[len(events)-1].Data.(json.RawMessage), &done)
	if done.Status != db.StatusDone {
		t.Fatalf("done: %+v", done)
	}
	run := waitStatus(t, ts.store, id, db.StatusDone)
	if run.Steps != 2 || run.Target != filepath.Join(ts.dataDir, "real.dat") {
		t.Errorf("run %+v", run)
	}
	rec := ts.do(t, "GET", fmt.Sprintf("/api/runs/%d", id), "")
	var doc db.Export
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Steps) != 2 || doc.Steps[1].Status != sweep.StepDone || doc.Steps[1].Result == nil || doc.Steps[1].Result.Groups[0].Jobs[0].Dirs[bench.Read].IOs == 0 {
		t.Fatalf("steps %+v", doc.Steps)
	}
	if rec := ts.do(t, "GET", fmt.Sprintf("/runs/%d", id), ""); rec.Code != 200 || !strings.Contains(rec.Body.String(), "iodepth=2 #1") {
		t.Errorf("run page: %d", rec.Code)
	}

	// The form launches too, and answers 303 to the run's page.
	form := url.Values{"name": {"from-form"}, "target": {"real.dat"}, "rw": {"read"}, "bs": {"4k"}, "iodepth": {"1"},
		"ioengine": {"psync"}, "numjobs": {"1"}, "runtime": {"100ms"}, "repeat": {"1"}}
	rec = ts.do(t, "POST", "/runs", form.Encode())
	if rec.Code != http.StatusSeeOther || !strings.HasPrefix(rec.Header().Get("Location"), "/runs/") {
		t.Fatalf("form: %d %s %.1000s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	formID, _ := strconv.ParseInt(strings.TrimPrefix(rec.Header().Get("Location"), "/runs/"), 10, 64)
	waitStatus(t, ts.store, formID, db.StatusDone)
}

func TestQueueCancelShutdown(t *testing.T) {
	ts := newTestServer(t, Config{})
	body := `{"options":{"filename":"q.dat","size":"1m","rw":"randread","ioengine":"psync","runtime":"20s","time_based":1}}`
	first := launchRun(t, ts, body)
	waitStatus(t, ts.store, first, db.StatusRunning)
	second := launchRun(t, ts, body)
	rec := ts.do(t, "GET", fmt.Sprintf("/api/runs/%d", second), "")
	var doc runDocument
	if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Run.Status != db.StatusQueued || !strings.Contains(doc.Waiting, fmt.Sprintf("run %d", first)) {
		t.Fatalf("second run: %s, waiting %q", doc.Run.Status, doc.Waiting)
	}
	if rec := ts.do(t, "GET", fmt.Sprintf("/runs/%d", second), ""); !strings.Contains(rec.Body.String(), "Queued: run") {
		t.Errorf("queued run's page does not say so")
	}
	if rec := ts.do(t, "DELETE", fmt.Sprintf("/api/runs/%d", second), ""); rec.Code != http.StatusConflict {
		t.Errorf("delete a queued run: %d", rec.Code)
	}
	// Cancel the queued one: it never starts.
	if rec := ts.do(t, "POST", fmt.Sprintf("/api/runs/%d/cancel", second), ""); rec.Code != http.StatusAccepted {
		t.Fatalf("cancel queued: %d %s", rec.Code, rec.Body)
	}
	waitStatus(t, ts.store, second, db.StatusCancelled)
	// Cancel the running one from the page once its step has started: the
	// step ends cancelled.
	waitEvent(t, ts.srv.launcher, first, launch.EventStep)
	if rec := ts.do(t, "POST", fmt.Sprintf("/runs/%d/cancel", first), ""); rec.Code != http.StatusSeeOther {
		t.Fatalf("cancel running: %d %s", rec.Code, rec.Body)
	}
	r := waitStatus(t, ts.store, first, db.StatusCancelled)
	if !strings.Contains(r.Error, "cancelled by the user") {
		t.Errorf("error %q", r.Error)
	}
	steps, err := ts.store.Steps(context.Background(), first)
	if err != nil || len(steps) != 1 || steps[0].Status != sweep.StepCancelled {
		t.Errorf("steps of the cancelled run: %+v %v", steps, err)
	}

	// Shutdown cancels the running run and the queued one.
	third := launchRun(t, ts, body)
	waitStatus(t, ts.store, third, db.StatusRunning)
	fourth := launchRun(t, ts, body)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	if err := ts.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("shutdown took %v", time.Since(start))
	}
	for _, id := range []int64{third, fourth} {
		r := waitStatus(t, ts.store, id, db.StatusCancelled)
		if !strings.Contains(r.Error, "shut down") {
			t.Errorf("run %d: error %q", id, r.Error)
		}
	}
	if rec := ts.do(t, "POST", "/api/runs", body); rec.Code == http.StatusCreated {
		t.Errorf("launch after shutdown: %d", rec.Code)
	}
}

// waitEvent waits until run id's live events include one of type typ.
func waitEvent(t *testing.T, l *launch.Launcher, id int64, typ string) {
	t.Helper()
	replay, ch, cancel, ok := l.Subscribe(id)
	if !ok {
		t.Fatalf("run %d has no live events", id)
	}
	defer cancel()
	for _, e := range replay {
		if e.Type == typ {
			return
		}
	}
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e, open := <-ch:
			if !open {
				t.Fatalf("run %d ended before a %s event", id, typ)
			}
			if e.Type == typ {
				return
			}
		case <-timeout:
			t.Fatalf("no %s event from run %d", typ, id)
		}
	}
}

func BenchmarkRunPage500Steps(b *testing.B) {
	ts := newTestServer(b, Config{})
	vals := make([]string, 100)
	for i := range vals {
		vals[i] = strconv.Itoa(i + 1)
	}
	run, _ := seedRun(b, ts.store, "big", vals, 5)
	path := fmt.Sprintf("/runs/%d", run.ID)
	if rec := ts.do(b, "GET", path, ""); rec.Code != 200 || strings.Count(rec.Body.String(), "<tr class=\"st-done\">") != 500 {
		b.Fatalf("run page: %d, %d rows", rec.Code, strings.Count(rec.Body.String(), "<tr class=\"st-done\">"))
	}
	b.ResetTimer()
	for b.Loop() {
		rec := ts.do(b, "GET", path, "")
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
		io.Discard.Write(rec.Body.Bytes())
	}
}

// TestLaunchRefusesImpossibleSteps: a psync iodepth sweep is refused with
// the reason, before anything is stored; with skip_impossible it runs the
// one step that means something and records the others.
func TestLaunchRefusesImpossibleSteps(t *testing.T) {
	ts := newTestServer(t, Config{})
	body := `{"name":"sync","options":{"filename":"sync.dat","size":"1m","rw":"randread","ioengine":"psync",
		"runtime":"100ms","time_based":1},"sweep":{"iodepth":[1,4,16]}%s}`
	rec := ts.do(t, "POST", "/api/runs", fmt.Sprintf(body, ""))
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "does one I/O at a time") ||
		!strings.Contains(rec.Body.String(), "iodepth=4") || !strings.Contains(rec.Body.String(), "iodepth=16") {
		t.Fatalf("psync iodepth sweep: %d %s", rec.Code, rec.Body)
	}
	if runs, _ := ts.store.ListRuns(context.Background(), db.RunFilter{}); len(runs) != 0 {
		t.Fatalf("a refused plan stored %d runs", len(runs))
	}
	id := launchRun(t, ts, fmt.Sprintf(body, `,"skip_impossible":true`))
	run := waitStatus(t, ts.store, id, db.StatusDone)
	if run.Steps != 1 || len(run.Plan.Skipped) != 2 {
		t.Fatalf("run: %d steps, skipped %+v", run.Steps, run.Plan.Skipped)
	}
}
