package handlers

import (
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

// Any fio option iolab takes can be swept from the form's "other options"
// field and from the API, values that hold commas included; the run
// stores the sweeps and its steps' values, and its page, summary and
// charts show the axis as axis=value.
func TestOptionAxisSweep(t *testing.T) {
	ts := newTestServer(t, Config{})
	jobFile := "[global]\nfilename=" + ts.dataDir + "/oa.dat\nsize=1m\nioengine=null\niodepth=8\nruntime=50ms\ntime_based\n[reader]\nrw=randread\nbs=4k\n"
	want := []sweep.Sweep{
		{Axis: "iodepth_batch", Values: []string{"1", "8"}},
		{Axis: "cpus_allowed", Values: []string{"0,1", "0"}},
	}
	check := func(t *testing.T, id int64) {
		t.Helper()
		run := waitStatus(t, ts.store, id, db.StatusDone)
		if !slices.EqualFunc(run.Plan.Sweeps, want, func(a, b sweep.Sweep) bool { return a.Axis == b.Axis && slices.Equal(a.Values, b.Values) }) {
			t.Fatalf("stored sweeps %+v, want %+v", run.Plan.Sweeps, want)
		}
		steps, err := ts.store.Steps(t.Context(), id)
		if err != nil || len(steps) != 4 {
			t.Fatalf("%d steps: %v", len(steps), err)
		}
		for _, st := range steps {
			j := st.Step.Config.Jobs[0]
			if v := st.Step.Value("cpus_allowed"); (v == "0,1") != slices.Equal(j.CPUsAllowed, []int{0, 1}) {
				t.Errorf("step %s: cpus_allowed %v", &st.Step, j.CPUsAllowed)
			}
		}
		page := ts.do(t, http.MethodGet, "/runs/"+strconv.FormatInt(id, 10), "").Body.String()
		for _, s := range []string{"iodepth_batch", "cpus_allowed", "0,1"} {
			if !strings.Contains(page, s) {
				t.Errorf("the run page does not show %q", s)
			}
		}
		rec := ts.do(t, http.MethodGet, "/api/charts?kind=iops&run="+strconv.FormatInt(id, 10), "")
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "cpus_allowed=0,1") {
			t.Errorf("chart: %d, no series cpus_allowed=0,1 in %.2000s", rec.Code, rec.Body)
		}
	}

	t.Run("form", func(t *testing.T) {
		form := url.Values{"jobfile": {jobFile}, "iodepth": {"1,4,16"}, "ioengine": {"io_uring"}, "repeat": {"1"},
			"sweeps": {"iodepth_batch_submit=1,8\r\n\r\ncpus_allowed=0,1;0\r\n"}}
		rec := ts.do(t, http.MethodPost, "/runs", form.Encode())
		if rec.Code != http.StatusSeeOther {
			t.Fatalf("form: %d %.1000s", rec.Code, rec.Body)
		}
		id, _ := strconv.ParseInt(strings.TrimPrefix(rec.Header().Get("Location"), "/runs/"), 10, 64)
		check(t, id)

		// A bad line is the field's error, nothing starts.
		form.Set("sweeps", "filename=/a,/b")
		rec = ts.do(t, http.MethodPost, "/runs", form.Encode())
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `data-field="sweeps"`) || !strings.Contains(rec.Body.String(), "filename cannot be swept") {
			t.Errorf("a sweep of filename: %d %.3000s", rec.Code, rec.Body)
		}
	})
	t.Run("api", func(t *testing.T) {
		// The object's order is the sweeps' order: written by hand.
		doc := `{"jobfile": ` + string(must(json.Marshal(jobFile))) + `, "sweep": {"iodepth_batch_submit": [1, 8], "cpus_allowed": ["0,1", "0"]}}`
		rec := ts.do(t, http.MethodPost, "/api/runs", doc)
		if rec.Code != http.StatusCreated {
			t.Fatalf("api: %d %s", rec.Code, rec.Body)
		}
		var created createdRun
		if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil {
			t.Fatal(err)
		}
		check(t, created.ID)

		rec = ts.do(t, http.MethodPost, "/api/runs", `{"jobfile": `+string(must(json.Marshal(jobFile)))+`, "sweep": {"iodepth_batch": ["1", "x"]}}`)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `"field":"sweep.iodepth_batch"`) {
			t.Errorf("a bad value: %d %s", rec.Code, rec.Body)
		}
	})
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
