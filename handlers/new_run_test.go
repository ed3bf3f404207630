package handlers

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"iolab/bench/sweep"
	"iolab/db"
)

// The form's first view is a plan the check before a run takes: an
// io_uring iodepth sweep (psync would measure iodepth 1 three times), and
// no numjobs to sweep.
func TestDefaultFormIsValid(t *testing.T) {
	ts := newTestServer(t, Config{})
	f := defaultForm()
	f.Target, f.Size = "x.dat", "1m"
	req, err := f.request()
	if err != nil {
		t.Fatal(err)
	}
	plan, err := ts.srv.BuildPlan(req)
	if err != nil {
		t.Fatalf("BuildPlan of the default form: %v", err)
	}
	if err := sweep.CheckOffline(plan); err != nil {
		t.Errorf("the default form's plan is refused: %v", err)
	}
	var axes []sweep.Axis
	for _, s := range plan.Swept() {
		axes = append(axes, s.Axis)
	}
	if len(axes) != 1 || axes[0] != sweep.AxisIODepth {
		t.Errorf("the default form sweeps %q, want iodepth alone", axes)
	}
	body := ts.do(t, http.MethodGet, "/runs/new", "").Body.String()
	if !strings.Contains(body, `name="ioengine" value="io_uring"`) || !strings.Contains(body, `name="numjobs" value=""`) {
		t.Errorf("the form does not show io_uring and a blank numjobs")
	}
}

// With a job file, sweep fields still at the form's defaults are not
// applied; one the user sets is: a list sweeps, one value overrides every
// job without being an axis.
func TestFormJobFileSkipsDefaults(t *testing.T) {
	ts := newTestServer(t, Config{})
	jobFile := "[global]\nfilename=" + ts.dataDir + "/jf.dat\nsize=1m\nioengine=null\nruntime=100ms\ntime_based\n[reader]\nrw=randread\nbs=4k\n"
	for _, tc := range []struct {
		name   string
		fields map[string]string // sweep fields changed from the defaults
		sweeps map[sweep.Axis][]string
		axes   int // of them, swept over more than one value
	}{
		{"defaults", nil, map[sweep.Axis][]string{}, 0},
		{"numjobs set", map[string]string{"numjobs": "2"}, map[sweep.Axis][]string{sweep.AxisNumJobs: {"2"}}, 0},
		{"iodepth changed", map[string]string{"iodepth": "1,8"}, map[sweep.Axis][]string{sweep.AxisIODepth: {"1", "8"}}, 1},
		{"engine changed", map[string]string{"ioengine": "libaio"}, map[sweep.Axis][]string{sweep.AxisEngine: {"libaio"}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := defaultForm()
			f.JobFile = jobFile
			for k, v := range tc.fields {
				f.Sweeps[k] = v
			}
			req, err := f.request()
			if err != nil {
				t.Fatal(err)
			}
			plan, err := ts.srv.BuildPlan(req)
			if err != nil {
				t.Fatal(err)
			}
			got := map[sweep.Axis][]string{}
			for _, s := range plan.Sweeps {
				got[s.Axis] = s.Values
			}
			if len(got) != len(tc.sweeps) {
				t.Fatalf("sweeps = %v, want %v", got, tc.sweeps)
			}
			for a, v := range tc.sweeps {
				if strings.Join(got[a], ",") != strings.Join(v, ",") {
					t.Errorf("sweep %s = %q, want %q", a, got[a], v)
				}
			}
			if n := len(plan.Swept()); n != tc.axes {
				t.Errorf("%d axes, want %d", n, tc.axes)
			}
		})
	}

	// Through the form: the stored plan sweeps nothing.
	form := url.Values{"jobfile": {jobFile}, "iodepth": {"1,4,16"}, "ioengine": {"io_uring"}, "numjobs": {""},
		"rw": {"randread"}, "bs": {"4k"}, "runtime": {"10"}, "repeat": {"1"}, "direct": {"on"}}
	rec := ts.do(t, http.MethodPost, "/runs", form.Encode())
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("form: %d %.1000s", rec.Code, rec.Body)
	}
	id, _ := strconv.ParseInt(strings.TrimPrefix(rec.Header().Get("Location"), "/runs/"), 10, 64)
	waitStatus(t, ts.store, id, db.StatusDone)
	run, err := ts.store.GetRun(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Plan.Sweeps) != 0 {
		t.Errorf("a job file with the form's defaults sweeps %+v", run.Plan.Sweeps)
	}
}

// A request with several wrong fields is told every one at once: the
// form shows each beside its field, the API lists them in "errors" and
// keeps "error" and "field" for the first.
func TestEveryFieldError(t *testing.T) {
	ts := newTestServer(t, Config{})
	form := url.Values{"target": {"x.dat"}, "size": {"1m"}, "rw": {"randread"}, "bs": {"4q"}, "runtime": {"ten"},
		"iodepth": {"1,x"}, "ioengine": {"io_uring"}, "repeat": {"1"}, "direct": {"on"}}
	rec := ts.do(t, http.MethodPost, "/runs", form.Encode())
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("form: %d, want 400", rec.Code)
	}
	body := rec.Body.String()
	for _, field := range []string{"bs", "runtime", "iodepth"} {
		if !strings.Contains(body, `<p class="field-error" data-field="`+field+`">`) {
			t.Errorf("the form has no error beside %s", field)
		}
	}

	rec = ts.do(t, http.MethodPost, "/api/runs", `{"options": {"filename": "x.dat", "size": "1m", "bs": "4q", "runtime": "ten", "rw": "randread"},
		"sweep": {"iodepth": [1, "x"]}}`)
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("API: %d %s", rec.Code, rec.Body)
	}
	var got struct {
		Error, Field string
		Errors       []struct{ Field, Error string }
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	var fields []string
	for _, e := range got.Errors {
		fields = append(fields, e.Field)
		if e.Error == "" {
			t.Errorf("field %s has no message", e.Field)
		}
	}
	if !slices.Equal(fields, []string{"options.bs", "options.runtime", "sweep.iodepth"}) || got.Field != "options.bs" || got.Error != got.Errors[0].Error {
		t.Errorf("API errors %+v", got)
	}
}

// A pasted job file with an option fio takes and ignores (fio's own
// examples set threads=1) runs, and the run page says that it changed
// nothing.
func TestFormJobFileInertOption(t *testing.T) {
	ts := newTestServer(t, Config{})
	jobFile := "[global]\nfilename=" + ts.dataDir + "/jf.dat\nsize=1m\nioengine=null\n[reader]\nthreads=1\nrw=randread\n"
	form := url.Values{"jobfile": {jobFile}, "iodepth": {"1,4,16"}, "ioengine": {"io_uring"}, "numjobs": {""},
		"rw": {"randread"}, "bs": {"4k"}, "runtime": {"10"}, "repeat": {"1"}, "direct": {"on"}}
	rec := ts.do(t, http.MethodPost, "/runs", form.Encode())
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("form: %d %.1000s", rec.Code, rec.Body)
	}
	loc := rec.Header().Get("Location")
	id, _ := strconv.ParseInt(strings.TrimPrefix(loc, "/runs/"), 10, 64)
	waitStatus(t, ts.store, id, db.StatusDone)
	body := ts.do(t, http.MethodGet, loc, "").Body.String()
	if !strings.Contains(body, "Options that change nothing") || !strings.Contains(body, "jobfile:6: threads: an option of fio&#39;s tiobench profile") {
		t.Errorf("the run page does not say that threads=1 changed nothing")
	}
}
