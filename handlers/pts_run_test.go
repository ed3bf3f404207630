package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench/launch"
	"iolab/bench/testdev"
	"iolab/db"

	"github.com/chromedp/chromedp"
)

// ptsPlan is a POST /api/runs body of a small PTS iops test on dev (one
// element, 5 rounds of 200 ms, no preconditioning), edited by extra
// fields (",\"field\":…") and yes_destroy.
func ptsPlan(dev, destroy, extra string) string {
	b, _ := json.Marshal(dev)
	d, _ := json.Marshal(destroy)
	return `{"pts":{"test":"iops","max_rounds":5,"round_time":200000000,"size":8388608,"wipc_loops":-1,"purge":"discard",` +
		`"axes":[{"option":"bs","values":["4k"]},{"option":"rwmixread","values":["0"]}]},` +
		`"options":{"filename":` + string(b) + `},"yes_destroy":` + string(d) + extra + `}`
}

// TestPTSLaunch: a PTS test launched by the API and by the form runs
// through the launcher like any other run (prepared once), tagged pts,
// its rounds stored until the specification's rule stops it.
func TestPTSLaunch(t *testing.T) {
	dev := testdev.Loop(t, 16<<20)
	ts := newTestServer(t, Config{AllowTargets: []string{dev}})
	for _, tc := range []struct {
		name, test string
		launch     func(t *testing.T) int64
	}{
		{"api", "iops", func(t *testing.T) int64 { return launchRun(t, ts, ptsPlan(dev, dev, "")) }},
		{"form", "throughput", func(t *testing.T) int64 {
			rec := ts.do(t, "POST", "/runs/pts", url.Values{"pts_test": {"throughput"}, "pts_device": {dev}, "pts_round_time": {"200ms"},
				"pts_rounds": {"5"}, "pts_size": {"8m"}, "pts_wipc": {"0"}, "pts_purge": {"discard"}, "pts_numjobs": {"1"}, "pts_iodepth": {"4"},
				"pts_yes_destroy": {dev}}.Encode())
			loc := rec.Header().Get("Location")
			id, err := strconv.ParseInt(strings.TrimPrefix(loc, "/runs/"), 10, 64)
			if rec.Code != http.StatusSeeOther || err != nil {
				t.Fatalf("form: %d to %q: %.3000s", rec.Code, loc, rec.Body)
			}
			return id
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e0, r0 := launch.Counts()
			id := tc.launch(t)
			run := waitStatus(t, ts.store, id, db.StatusDone)
			if err := ts.srv.launcher.Wait(context.Background(), id); err != nil {
				t.Fatal(err)
			}
			if e, r := launch.Counts(); e-e0 != 1 || r-r0 != 1 {
				t.Errorf("%d expansions and %d resolutions of the plan; want 1 each", e-e0, r-r0)
			}
			if run.Plan.PTS == nil || run.Plan.PTS.Test != tc.test || !slices.Contains(run.Tags, "pts") {
				t.Fatalf("run %d: plan's pts %+v, tags %q; want the %s test, tagged pts", id, run.Plan.PTS, run.Tags, tc.test)
			}
			if run.Target != dev {
				t.Errorf("run %d ran on %s, not %s", id, run.Target, dev)
			}
			// Whole rounds: the API's one element, the form's throughput
			// test's four.
			steps, err := ts.store.StepsFor(context.Background(), id, db.StepLoad{})
			if err != nil {
				t.Fatal(err)
			}
			rounds := 0
			for _, st := range steps {
				rounds = max(rounds, st.Step.Repeat+1)
			}
			if rounds < 5 || len(steps)%rounds != 0 || steps[0].Prep == nil {
				t.Errorf("run %d: %d steps in %d rounds, prep %+v; want whole rounds, at least 5 (the window), the purge recorded with the first", id, len(steps), rounds, steps[0].Prep)
			}
			// Its page leads with the specification's part: the header,
			// the steady-state table, the tracking variable per round.
			page := ts.do(t, "GET", fmt.Sprintf("/runs/%d", id), "").Body.String()
			for _, want := range []string{`<section class="pts" id="pts">`, "<th>purge</th><td>discard", `data-table="pts-steady"`,
				`data-table="pts-rounds"`, `id="pts-rounds-note"`} {
				if !strings.Contains(page, want) {
					t.Errorf("run %d's page has no %q", id, want)
				}
			}
		})
	}
}

// TestPTSLaunchRefused: what the API and the form refuse of a PTS test,
// each with a 400 naming its field and the problem, nothing stored and
// no device touched: no or a wrong yes_destroy, a device off the
// allow-list, a file, a mounted device, an unknown test, bounds out of
// range, fields a PTS test does not take, and the hostile values the
// attack suite sends runs (line breaks, 100 KiB values, a foreign
// Origin on a guarded dashboard).
func TestPTSLaunchRefused(t *testing.T) {
	head := []byte("iolab: not to be purged")
	dev := testdev.AttachLoop(t, 16<<20, head, false)
	other := testdev.AttachLoop(t, 16<<20, head, false) // not allowed
	mounted := testdev.Loop(t, 32<<20)
	testdev.Run(t, "mkfs.ext4", "-q", mounted)
	testdev.MountTemp(t, mounted)
	file := testdev.TempFile(t, 8<<20) // allowed, but a file
	const token = "pts-test-token"
	open := startLive(t, Config{AllowTargets: []string{dev, mounted, file}})
	guarded := startLive(t, Config{AllowTargets: []string{dev}, Token: token, RequireToken: true})
	inData := filepath.Join(open.dataDir, "t.dat")
	if err := os.WriteFile(inData, head, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(open.dataDir, "dev-link")
	if err := os.Symlink(dev, link); err != nil {
		t.Fatal(err)
	}
	victims := map[string]string{}
	for _, p := range []string{dev, other, file, inData} {
		victims[p] = testdev.Fingerprint(t, p)
	}
	big := strings.Repeat("d", 100<<10)
	form := func(edit func(url.Values)) string {
		v := url.Values{"pts_test": {"throughput"}, "pts_device": {dev}, "pts_round_time": {"200ms"}, "pts_rounds": {"5"},
			"pts_yes_destroy": {dev}}
		edit(v)
		return v.Encode()
	}
	tests := []struct {
		name     string
		srv      *liveServer
		path     string // /api/runs, or /runs/pts for the form
		body     string
		header   []string
		status   int
		field    string // the JSON answer's field, or the form's data-field
		contains string
	}{
		{"no yes_destroy", open, "/api/runs", ptsPlan(dev, "", ""), nil, 400, "yes_destroy", "give yes_destroy " + dev},
		{"yes_destroy of another device", open, "/api/runs", ptsPlan(dev, other, ""), nil, 400, "yes_destroy", "does not name the device"},
		{"yes_destroy a prefix of the device", open, "/api/runs", ptsPlan(dev, dev[:len(dev)-1], ""), nil, 400, "yes_destroy", "does not name the device"},
		{"yes_destroy without pts", open, "/api/runs", `{"options":{"filename":"x.dat","size":"1m","rw":"randread","runtime":"1s"},"yes_destroy":"x.dat"}`, nil, 400, "yes_destroy", "give it with pts"},
		{"a device off the allow-list", open, "/api/runs", ptsPlan(other, other, ""), nil, 400, "options.filename", "not on the dashboard's allow-list"},
		{"a file on the allow-list", open, "/api/runs", ptsPlan(file, file, ""), nil, 400, "options.filename", "not a block device"},
		{"a file under the data directory", open, "/api/runs", ptsPlan(inData, inData, ""), nil, 400, "options.filename", "a file under the data directory"},
		{"a link to the device under the data directory", open, "/api/runs", ptsPlan(link, dev, ""), nil, 400, "options.filename", "under the data directory"},
		{"a relative name", open, "/api/runs", ptsPlan("t.dat", "t.dat", ""), nil, 400, "options.filename", "absolute path"},
		{"two devices", open, "/api/runs", ptsPlan(dev+":"+other, dev, ""), nil, 400, "options.filename", "one device"},
		{"no device", open, "/api/runs", `{"pts":{"test":"iops"},"yes_destroy":"` + dev + `"}`, nil, 400, "options.filename", "needs its device"},
		{"a mounted device", open, "/api/runs", ptsPlan(mounted, mounted, ""), nil, 400, "options.filename", "is mounted on"},
		{"allow_mounted_write", open, "/api/runs", strings.Replace(ptsPlan(mounted, mounted, ""), `"options":{`, `"options":{"allow_mounted_write":"1",`, 1), nil, 400, "options.allow_mounted_write", "never a mounted one"},
		{"an unknown test", open, "/api/runs", strings.Replace(ptsPlan(dev, dev, ""), `"iops"`, `"iopz"`, 1), nil, 400, "pts.test", `unknown PTS test \"iopz\"`},
		{"4 rounds, under the window", open, "/api/runs", strings.Replace(ptsPlan(dev, dev, ""), `"max_rounds":5`, `"max_rounds":4`, 1), nil, 400, "pts.max_rounds", "at least 5"},
		{"10^15 rounds", open, "/api/runs", strings.Replace(ptsPlan(dev, dev, ""), `"max_rounds":5`, `"max_rounds":1000000000000000`, 1), nil, 400, "pts.max_rounds", "rounds 1000000000000000"},
		{"rounds of 1 ms", open, "/api/runs", strings.Replace(ptsPlan(dev, dev, ""), `"round_time":200000000`, `"round_time":1000000`, 1), nil, 400, "pts.round_time", "100ms to 24h"},
		{"a negative active range", open, "/api/runs", strings.Replace(ptsPlan(dev, dev, ""), `"size":8388608`, `"size":-1`, 1), nil, 400, "pts.size", "active range"},
		{"an unknown purge", open, "/api/runs", strings.Replace(ptsPlan(dev, dev, ""), `"discard"`, `"shred"`, 1), nil, 400, "pts.purge", `purge \"shred\": one of`},
		{"wipc 17", open, "/api/runs", strings.Replace(ptsPlan(dev, dev, ""), `"wipc_loops":-1`, `"wipc_loops":17`, 1), nil, 400, "pts.wipc_loops", "0 to 16"},
		{"iodepth 5000", open, "/api/runs", strings.Replace(ptsPlan(dev, dev, ""), `"wipc_loops":-1`, `"wipc_loops":-1,"iodepth":5000`, 1), nil, 400, "pts.iodepth", "1 to 4096"},
		{"an axis the test has not", open, "/api/runs", strings.Replace(ptsPlan(dev, dev, ""), `"option":"bs"`, `"option":"filename"`, 1), nil, 400, "pts", "no filename axis"},
		{"a matrix without the tracking element", open, "/api/runs", strings.Replace(ptsPlan(dev, dev, ""), `["4k"]`, `["8k"]`, 1), nil, 400, "pts", "must include 4k"},
		{"an unknown field in pts", open, "/api/runs", strings.Replace(ptsPlan(dev, dev, ""), `"test":"iops"`, `"test":"iops","force":true`, 1), nil, 400, "", "unknown field"},
		{"with a preset", open, "/api/runs", ptsPlan(dev, dev, `,"preset":"qos-curve"`), nil, 400, "preset", "its own plan"},
		{"with a job file", open, "/api/runs", ptsPlan(dev, dev, `,"jobfile":"[j]\nfilename=/etc/passwd\n"`), nil, 400, "jobfile", "its own plan"},
		{"with a sweep", open, "/api/runs", ptsPlan(dev, dev, `,"sweep":{"iodepth":[1,4]}`), nil, 400, "sweep", "its own plan"},
		{"with repeats", open, "/api/runs", ptsPlan(dev, dev, `,"repeat":3`), nil, 400, "repeat", "its own plan"},
		{"with discard", open, "/api/runs", ptsPlan(dev, dev, `,"discard":true`), nil, 400, "discard", "its own plan"},
		{"on hosts", open, "/api/runs", ptsPlan(dev, dev, `,"hosts":["local","rack-a"]`), nil, 400, "hosts", "this machine's device alone"},
		// The attack suite's for runs, on the new fields.
		{"a line break in yes_destroy", open, "/api/runs", ptsPlan(dev, dev+"\n"+dev, ""), nil, 400, "yes_destroy", "a device's path"},
		{"NUL in yes_destroy", open, "/api/runs", ptsPlan(dev, dev+"\x00", ""), nil, 400, "yes_destroy", "a device's path"},
		{"a 100 KiB yes_destroy", open, "/api/runs", ptsPlan(dev, big, ""), nil, 400, "yes_destroy", "a device's path"},
		{"a line break in the device", open, "/api/runs", ptsPlan(dev+"\n--filename=/etc/passwd", dev, ""), nil, 400, "options.filename", "line break"},
		{"a line break in an axis value", open, "/api/runs", strings.Replace(ptsPlan(dev, dev, ""), `["0"]`, `["0","100\nfilename=/etc/passwd"]`, 1), nil, 400, "pts.axes", "not one value"},
		{"a 100 KiB axis value", open, "/api/runs", strings.Replace(ptsPlan(dev, dev, ""), `["0"]`, `["0","`+big+`"]`, 1), nil, 400, "pts.axes", "not one value"},
		{"a line break in an option", open, "/api/runs", strings.Replace(ptsPlan(dev, dev, ""), `"options":{`, `"options":{"description":"x\nfilename=/etc/passwd",`, 1), nil, 400, "options.description", "line break"},
		{"a 100 KiB description", open, "/api/runs", strings.Replace(ptsPlan(dev, dev, ""), `"options":{`, `"options":{"description":"`+big+`",`, 1), nil, 400, "options.description", "at most 1024"},
		{"a 100 KiB test name", open, "/api/runs", strings.Replace(ptsPlan(dev, dev, ""), `"iops"`, `"`+big+`"`, 1), nil, 400, "pts.test", "unknown PTS test: the tests are"},
		{"unauthenticated", guarded, "/api/runs", ptsPlan(dev, dev, ""), nil, 401, "", "token"},
		{"a foreign Host", open, "/api/runs", ptsPlan(dev, dev, ""), []string{"Host", "evil.example"}, 421, "", "DNS rebinding"},
		// The form.
		{"form: no device named again", open, "/runs/pts", form(func(v url.Values) { v.Del("pts_yes_destroy") }), nil, 400, "pts_yes_destroy", "give yes_destroy"},
		{"form: another device named", open, "/runs/pts", form(func(v url.Values) { v.Set("pts_yes_destroy", other) }), nil, 400, "pts_yes_destroy", "does not name the device"},
		{"form: a mounted device", open, "/runs/pts", form(func(v url.Values) { v.Set("pts_device", mounted); v.Set("pts_yes_destroy", mounted) }), nil, 400, "pts_device", "is mounted on"},
		{"form: off the allow-list", open, "/runs/pts", form(func(v url.Values) { v.Set("pts_device", other); v.Set("pts_yes_destroy", other) }), nil, 400, "pts_device", "allow-list"},
		{"form: rounds not a number", open, "/runs/pts", form(func(v url.Values) { v.Set("pts_rounds", "many") }), nil, 400, "pts_rounds", "not a whole number"},
		{"form: a round time that is not one", open, "/runs/pts", form(func(v url.Values) { v.Set("pts_round_time", "soon") }), nil, 400, "pts_round_time", ""},
		{"form: an unknown test", open, "/runs/pts", form(func(v url.Values) { v.Set("pts_test", "<script>") }), nil, 400, "pts_test", "unknown PTS test"},
		{"form from another site", guarded, "/runs/pts", form(func(url.Values) {}), []string{"Sec-Fetch-Site", "cross-site", "Cookie", "session"}, 403, "", "cross-origin"},
	}
	ctx := context.Background()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before, err := tc.srv.store.ListRuns(ctx, db.RunFilter{})
			if err != nil {
				t.Fatal(err)
			}
			ctype := "application/json"
			if tc.path == "/runs/pts" {
				ctype = "application/x-www-form-urlencoded"
			}
			header := append([]string{"Content-Type", ctype}, tc.header...)
			if i := slices.Index(header, "session"); i > 0 && header[i-1] == "Cookie" {
				header[i] = sessionCookie + "=" + login(t, tc.srv, token) // logged in at the guarded server
			}
			status, _, body := tc.srv.send(t, "POST", tc.path, strings.NewReader(tc.body), header...)
			if status != tc.status {
				t.Fatalf("%d, want %d: %.600s", status, tc.status, body)
			}
			if !strings.Contains(body, tc.contains) {
				t.Errorf("the answer does not say %q: %.600s", tc.contains, body)
			}
			if tc.field != "" {
				if tc.path == "/runs/pts" {
					if !strings.Contains(body, `data-field="`+tc.field+`"`) {
						t.Errorf("the form shows no error beside %s: %.3000s", tc.field, body)
					}
				} else {
					var answer struct{ Field string }
					if err := json.Unmarshal([]byte(body), &answer); err != nil || answer.Field != tc.field {
						t.Errorf("the answer's field %q (%v), want %q: %.600s", answer.Field, err, tc.field, body)
					}
				}
			}
			if strings.Contains(body, `"<script>"`) {
				t.Errorf("the answer echoes markup unescaped: %.600s", body)
			}
			after, err := tc.srv.store.ListRuns(ctx, db.RunFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(after) != len(before) {
				t.Errorf("%d runs stored before, %d after", len(before), len(after))
			}
			stillServes(t, tc.srv)
		})
	}
	for p, want := range victims {
		if got := testdev.Fingerprint(t, p); got != want {
			t.Errorf("%s changed", p)
		}
	}
}

// TestBrowserPTSForm fills the new-run page's PTS form in headless
// chromium as a user would: the device named again wrongly shows the
// error beside that field, and nothing starts; named rightly, the test
// starts and its run page shows.
func TestBrowserPTSForm(t *testing.T) {
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed; .ci/test installs it")
	}
	dev := testdev.Loop(t, 16<<20)
	ts := newTestServer(t, Config{AllowTargets: []string{dev}})
	hs := httptest.NewServer(ts.e)
	defer hs.Close()
	ctx, cancel := browser(t, path)
	defer cancel()
	fill := func(destroy string) {
		t.Helper()
		fields := map[string]string{"pts_device": dev, "pts_round_time": "200ms", "pts_rounds": "5", "pts_size": "8m",
			"pts_wipc": "0", "pts_yes_destroy": destroy}
		acts := []chromedp.Action[chromedp.Void]{chromedp.Navigate(hs.URL + "/runs/new"), chromedp.WaitVisible(`form#new-pts`),
			chromedp.SetValue(`select[name=pts_test]`, "throughput"), chromedp.SetValue(`select[name=pts_purge]`, "discard")}
		for _, k := range slices.Sorted(maps.Keys(fields)) {
			acts = append(acts, chromedp.SetValue(`form#new-pts [name=`+k+`]`, fields[k]))
		}
		acts = append(acts, chromedp.Click(`form#new-pts button[type=submit]`))
		if err := chromedp.Do(ctx, acts...); err != nil {
			t.Fatal(err)
		}
	}
	fill(dev + "x")
	if err := chromedp.Do(ctx, chromedp.WaitVisible(`p.field-error[data-field=pts_yes_destroy]`)); err != nil {
		t.Fatal(err)
	}
	// The retyped path is asked again, in focus (the page scrolls to it).
	beside, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(() => {
  const e = document.querySelector("p.field-error[data-field=pts_yes_destroy]");
  return e.previousElementSibling.querySelector("input").name + " " + (document.activeElement.name || "nothing") + " in focus: " + e.textContent;
})()`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(beside, "pts_yes_destroy pts_yes_destroy in focus: ") || !strings.Contains(beside, "does not name the device") {
		t.Errorf("the error beside the retyped path: %q", beside)
	}
	screenshot(t, ctx, artifactsDir(t), "new-pts-refused.jpg", 90)
	if runs, err := ts.store.ListRuns(context.Background(), db.RunFilter{}); err != nil || len(runs) != 0 {
		t.Fatalf("%d runs stored after the refusal (%v)", len(runs), err)
	}

	fill(dev)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(`#run-status`)); err != nil {
		t.Fatal(err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	id, err := strconv.ParseInt(loc[strings.LastIndex(loc, "/")+1:], 10, 64)
	if err != nil {
		t.Fatalf("landed on %s, not a run page", loc)
	}
	run := waitStatus(t, ts.store, id, db.StatusDone)
	if run.Plan.PTS == nil || run.Plan.PTS.Test != "throughput" || run.Plan.PTS.RoundTime != 200*time.Millisecond {
		t.Errorf("the run's PTS spec %+v; want the throughput test in rounds of 200ms", run.Plan.PTS)
	}
}
