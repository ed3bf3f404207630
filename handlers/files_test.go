package handlers

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPlanFiles: the web's files are fio's: a job without filename gets
// fio's names in the data directory, relative names in a list are each
// under it, and a job file's default names must be in an allowed
// directory.
func TestPlanFiles(t *testing.T) {
	ts := newTestServer(t, Config{})
	for _, tc := range []struct {
		name string
		req  PlanRequest
		want []string
	}{
		{"no filename", PlanRequest{Name: "d", Options: map[string]OptionValue{"size": "64k", "nrfiles": "2"}},
			[]string{filepath.Join(ts.dataDir, "d.0.0"), filepath.Join(ts.dataDir, "d.0.1")}},
		{"a list of relative names", PlanRequest{Name: "l", Options: map[string]OptionValue{"size": "64k", "filename": `a:b\:c`}},
			[]string{filepath.Join(ts.dataDir, "a"), filepath.Join(ts.dataDir, "b:c")}},
		{"a relative directory", PlanRequest{Name: "r", Options: map[string]OptionValue{"size": "64k", "directory": "."}},
			[]string{ts.dataDir + "/r.0.0"}},
	} {
		plan, err := ts.srv.BuildPlan(&tc.req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := plan.Base.Groups[0].Jobs[0].FilePaths(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: files %q, want %q", tc.name, got, tc.want)
		}
	}
	rec := ts.do(t, "POST", "/api/runs", `{"jobfile":"[a]\nsize=1m\n"}`)
	var got errorBody
	json.Unmarshal(rec.Body.Bytes(), &got)
	if rec.Code != http.StatusBadRequest || got.Field != "jobfile" || !strings.Contains(got.Error, "set directory=") {
		t.Errorf("a job file's job without filename or directory: %d %+v, want 400 asking for a directory", rec.Code, got)
	}
}
