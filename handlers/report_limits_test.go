package handlers

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"iolab/handlers/report"
)

// A report of more runs than it covers is the request's fault: the
// package report's InputError is answered 400 with its message, as a
// ValidationError is.
func TestReportTooManyRuns(t *testing.T) {
	ts := newTestServer(t, Config{})
	var q []string
	for i := range report.MaxRuns + 1 {
		run, _ := seedRun(t, ts.store, "run-"+strconv.Itoa(i), []string{"1"}, 1)
		q = append(q, "run="+strconv.FormatInt(run.ID, 10))
	}
	rec := ts.do(t, http.MethodGet, "/report?"+strings.Join(q, "&"), "")
	if rec.Code != http.StatusBadRequest {
		t.Fatalf("%d runs: %d, want 400", len(q), rec.Code)
	}
	if want := "a report covers at most " + strconv.Itoa(report.MaxRuns) + " runs"; !strings.Contains(rec.Body.String(), want) {
		t.Errorf("the answer does not say %q:\n%s", want, rec.Body)
	}
	if rec := ts.do(t, http.MethodGet, "/report?"+strings.Join(q[:report.MaxRuns], "&"), ""); rec.Code != http.StatusOK {
		t.Errorf("%d runs: %d, want 200", report.MaxRuns, rec.Code)
	}
}
