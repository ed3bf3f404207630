package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
	"iolab/db"
)

// shownErrors are the errors a form page shows: beside a field (by the
// field's name) and, under "", above the form.
func shownErrors(t *testing.T, page string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`(?s)<p class="field-error" data-field="([^"]*)">(.*?)</p>`).FindAllStringSubmatch(page, -1) {
		out[m[1]] = html.UnescapeString(m[2])
	}
	if m := regexp.MustCompile(`(?s)<p class="error" id="form-error">(.*?)</p>`).FindStringSubmatch(page); m != nil {
		out[""] = html.UnescapeString(m[1])
	}
	return out
}

// noInsideWords fails on what a form's message must never say: the
// command line's flags (the form has controls of its own) and a job name
// the user never gave (iolab calls a form's one job "job"; an older check
// ran a job called "check").
func noInsideWords(t *testing.T, errs map[string]string) {
	t.Helper()
	for field, msg := range errs {
		for _, bad := range []string{"--", `job "job"`, "job job", `job "check"`, "job check"} {
			if strings.Contains(msg, bad) {
				t.Errorf("the error at %q says %q: %s", field, bad, msg)
			}
		}
	}
}

// caseForm is the new-run form with one sweep written in it as the CLI's
// --sweep takes it: in the axis's own field when the form has one, else
// a line of "other options". It names the field the sweep's errors
// belong beside.
func caseForm(in, target string) (url.Values, string) {
	form := url.Values{"target": {target}, "size": {"1m"}, "rw": {"randread"}, "bs": {"4k"}, "runtime": {"1"},
		"repeat": {"1"}, "ioengine": {"io_uring"}}
	axis, list, ok := strings.Cut(in, "=")
	if ok && slices.ContainsFunc(formAxes(), func(a sweep.AxisSpec) bool { return string(a.Name) == axis }) {
		form.Set(axis, list)
		return form, axis
	}
	form.Set("sweeps", in)
	return form, "sweeps"
}

// TestFormTakesTheCLIsSweeps submits every sweep of the CLI's parser
// table (sweeptest.ParseCases) through the new-run form: what --sweep
// takes starts a run whose plan sweeps the same values, what it refuses
// is refused beside its field, in the same words less the flag.
func TestFormTakesTheCLIsSweeps(t *testing.T) {
	ts := newTestServer(t, Config{})
	for i, tc := range sweeptest.ParseCases() {
		t.Run(tc.In, func(t *testing.T) {
			// A file that does not exist yet: the check against the
			// target waits for the run, which the test cancels.
			form, field := caseForm(tc.In, fmt.Sprintf("case%d.dat", i))
			rec := ts.do(t, http.MethodPost, "/runs", form.Encode())
			if tc.Err != "" {
				if rec.Code != http.StatusBadRequest {
					t.Fatalf("%d, want 400: the form took what --sweep refuses", rec.Code)
				}
				errs := shownErrors(t, rec.Body.String())
				if !strings.Contains(errs[field], tc.Err) {
					t.Errorf("beside %s: %q, want it to say %q (all: %q)", field, errs[field], tc.Err, errs)
				}
				if len(errs) != 1 {
					t.Errorf("errors %q, want the one beside %s", errs, field)
				}
				noInsideWords(t, errs)
				return
			}
			if rec.Code != http.StatusSeeOther {
				t.Fatalf("%d, want 303: %q", rec.Code, shownErrors(t, rec.Body.String()))
			}
			loc := rec.Header().Get("Location")
			id, err := strconv.ParseInt(strings.TrimPrefix(loc, "/runs/"), 10, 64)
			if err != nil {
				t.Fatalf("redirected to %s", loc)
			}
			ts.do(t, http.MethodPost, loc+"/cancel", "")
			run, err := ts.store.GetRun(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(run.Plan.Sweeps, func(sw sweep.Sweep) bool { return sw.Axis == tc.Axis })
			if i < 0 {
				t.Fatalf("the plan sweeps %+v, not %s", run.Plan.Sweeps, tc.Axis)
			}
			if got := run.Plan.Sweeps[i].Values; !slices.Equal(got, tc.Values) {
				t.Errorf("%s = %q, want %q", tc.Axis, got, tc.Values)
			}
			waitDone(t, ts.store, id)
		})
	}
}

// waitDone waits for a run to end, however it ends.
func waitDone(t *testing.T, store *db.Store, id int64) {
	t.Helper()
	for range 1000 {
		r, err := store.GetRun(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != db.StatusQueued && r.Status != db.StatusRunning {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("run %d does not end", id)
}

// checkboxLabel is the text of the label of the form's checkbox called
// name, as the page shows it.
func checkboxLabel(t *testing.T, page, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<label class="check"><input type="checkbox" name="` + name + `"[^>]*>(.*?)</label>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the form has no %s checkbox", name)
	}
	return strings.TrimSpace(html.UnescapeString(m[1]))
}

// A refused submit says each error beside the field that can fix it, in
// the form's words: steps the target cannot run beside the checkbox that
// leaves them out, naming it by its label (not --skip-impossible); a
// scheduler the target's disk cannot switch beside the schedulers field;
// never a job name the user did not give, nor a flag of the CLI.
func TestFormErrorsBesideTheirFields(t *testing.T) {
	ts := newTestServer(t, Config{})
	target := filepath.Join(ts.dataDir, "there.dat")
	if err := os.WriteFile(target, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	page := ts.do(t, http.MethodGet, "/runs/new", "").Body.String()
	label := checkboxLabel(t, page, "skip_impossible")
	discard := checkboxLabel(t, page, "discard")
	base := url.Values{"target": {"there.dat"}, "rw": {"randread"}, "bs": {"4k"}, "runtime": {"1"}, "repeat": {"1"}}
	for _, tc := range []struct {
		name   string
		fields url.Values
		field  string   // where the error shows
		says   []string // parts of it
	}{
		// psync at iodepth 4 measures iodepth 1: a step the check refuses.
		{"a step that cannot run", url.Values{"ioengine": {"psync"}, "iodepth": {"1,4"}}, "plan",
			[]string{"iodepth=4", "psync", `tick "` + label[:strings.Index(label, " (")] + `"`}},
		// A file cannot be discarded: said by the checkbox's label, not
		// --discard.
		{"a discard the target cannot do", url.Values{"ioengine": {"io_uring"}, "iodepth": {"1"}, "discard": {"on"}}, "plan",
			[]string{`"` + discard + `": `, `untick "` + discard + `"`}},
		// A file's disk is everyone's: the dashboard switches the
		// scheduler of a block device of its own only.
		{"a scheduler the file's disk cannot switch", url.Values{"ioengine": {"io_uring"}, "iodepth": {"1"}, "scheduler": {"none,mq-deadline"}}, "scheduler",
			[]string{"there.dat"}},
		// The same with a job file: the scheduler is the form's, not the
		// job file's.
		{"a scheduler swept over a job file", url.Values{"jobfile": {"[j]\nfilename=" + target + "\nrw=randread\nruntime=1\n"}, "scheduler": {"none,mq-deadline"}}, "scheduler",
			[]string{"there.dat"}},
		// Blank fields a job needs, with no runtime: no job "check", no
		// time_based (the form sets it with a runtime only).
		{"no runtime", url.Values{"ioengine": {"io_uring"}, "iodepth": {"1,x"}, "runtime": {""}}, "iodepth",
			[]string{`"x"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			form := url.Values{}
			for k, v := range base {
				form[k] = v
			}
			for k, v := range tc.fields {
				form[k] = v
			}
			rec := ts.do(t, http.MethodPost, "/runs", form.Encode())
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("%d, want 400", rec.Code)
			}
			body := rec.Body.String()
			errs := shownErrors(t, body)
			msg, ok := errs[tc.field]
			if !ok || len(errs) != 1 {
				t.Fatalf("errors %q, want one, beside %s", errs, tc.field)
			}
			for _, want := range tc.says {
				if !strings.Contains(msg, want) {
					t.Errorf("%q does not say %q", msg, want)
				}
			}
			if strings.Contains(msg, "time_based") || strings.Contains(msg, "check") {
				t.Errorf("%q is about a check of the form's own making", msg)
			}
			noInsideWords(t, errs)
			// Beside its field: after the field's input, before the next
			// input.
			at := strings.Index(body, `data-field="`+tc.field+`"`)
			input := map[string]string{"plan": "skip_impossible"}[tc.field]
			if input == "" {
				input = tc.field
			}
			in := strings.Index(body, `name="`+input+`"`)
			next := strings.Index(body[in+1:], "<input")
			if in < 0 || at < in || (next >= 0 && at > in+1+next) {
				t.Errorf("the error of %s is not beside its control", tc.field)
			}
		})
	}
}

// A mistyped axis is told the nearest one, by the form (its other
// options), the API and the command line alike.
func TestSweepDidYouMeanWeb(t *testing.T) {
	ts := newTestServer(t, Config{})
	form, _ := caseForm("iodeph=1,4", "x.dat")
	errs := shownErrors(t, ts.do(t, http.MethodPost, "/runs", form.Encode()).Body.String())
	if want := `"iodeph" is not an axis (did you mean "iodepth"?)`; !strings.Contains(errs["sweeps"], want) {
		t.Errorf("form: %q, want %s beside other options", errs, want)
	}
	rec := ts.do(t, http.MethodPost, "/api/runs", `{"options": {"filename": "x.dat", "size": "1m"}, "sweep": {"numjob": [1, 2]}}`)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `did you mean \"numjobs\"?`) || !strings.Contains(rec.Body.String(), `"field":"sweep.numjob"`) {
		t.Errorf("API: %d %s", rec.Code, rec.Body)
	}
}

// TestAPITakesTheCLIsSweeps sends the same table through POST /api/runs,
// a value per string as the API takes them: what --sweep takes starts a
// run sweeping the same values; what it refuses is a 400 on the sweep's
// field, in the same words.
func TestAPITakesTheCLIsSweeps(t *testing.T) {
	ts := newTestServer(t, Config{})
	for i, tc := range sweeptest.ParseCases() {
		axis, list, ok := strings.Cut(tc.In, "=")
		if !ok {
			continue // an AXIS=… the API's object has no way to write
		}
		t.Run(tc.In, func(t *testing.T) {
			values, err := json.Marshal(map[string][]string{axis: sweep.SplitValues(list)})
			if err != nil {
				t.Fatal(err)
			}
			body := fmt.Sprintf(`{"options": {"filename": "api%d.dat", "size": "1m", "rw": "randread", "ioengine": "io_uring", "runtime": "1", "time_based": 1}, "sweep": %s}`, i, values)
			rec := ts.do(t, http.MethodPost, "/api/runs", body)
			if tc.Err != "" {
				var got struct{ Error, Field string }
				if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusBadRequest {
					t.Fatalf("%d %s, want 400", rec.Code, rec.Body)
				}
				if !strings.Contains(got.Error, tc.Err) || !strings.HasPrefix(got.Field, "sweep") {
					t.Errorf("%q on %q, want %q on the sweep", got.Error, got.Field, tc.Err)
				}
				return
			}
			if rec.Code != http.StatusCreated {
				t.Fatalf("%d %s, want 201", rec.Code, rec.Body)
			}
			loc := rec.Header().Get("Location")
			id, err := strconv.ParseInt(strings.TrimPrefix(loc, "/runs/"), 10, 64)
			if err != nil {
				t.Fatalf("Location %s", loc)
			}
			ts.do(t, http.MethodPost, "/api/runs/"+strconv.FormatInt(id, 10)+"/cancel", "")
			run, err := ts.store.GetRun(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(run.Plan.Sweeps, func(sw sweep.Sweep) bool { return sw.Axis == tc.Axis })
			if i < 0 || !slices.Equal(run.Plan.Sweeps[i].Values, tc.Values) {
				t.Errorf("the plan sweeps %+v, want %s %q", run.Plan.Sweeps, tc.Axis, tc.Values)
			}
			waitDone(t, ts.store, id)
		})
	}
}
