package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"iolab/db"
	"iolab/handlers"

	"github.com/labstack/echo/v4"
)

// dashboard runs the real handlers over a fresh store, with a token.
func dashboard(t *testing.T) (*httptest.Server, *db.Store) {
	t.Helper()
	ctx := context.Background()
	store, err := db.Open(ctx, filepath.Join(t.TempDir(), "remote.db"))
	if err != nil {
		t.Fatal(err)
	}
	srv, err := handlers.New(handlers.Config{Store: store, Token: "s3cret", RequireToken: true})
	if err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	srv.Register(e)
	ts := httptest.NewServer(e)
	t.Cleanup(func() {
		ts.Close()
		srv.Shutdown(ctx)
		store.Close()
	})
	return ts, store
}

func countRuns(t *testing.T, s *db.Store) int {
	t.Helper()
	runs, err := s.ListRuns(context.Background(), db.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return len(runs)
}

func TestRunPushAndPushLater(t *testing.T) {
	ts, remote := dashboard(t)
	local := filepath.Join(t.TempDir(), "local.db")

	// Without the token the push fails (401), the run stays here and the
	// message says how to push it later.
	var stdout, stderr bytes.Buffer
	err := run([]string{"run", "--db", local, "--push", ts.URL, "--push-token=", "--name=p", "--ioengine=null", "--size=1m", "--rw=randread"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "401") || !strings.Contains(stderr.String(), "iolab push --db "+local) {
		t.Errorf("stderr: %s", stderr.String())
	}
	if n := countRuns(t, remote); n != 0 {
		t.Fatalf("%d runs on the dashboard after an unauthorized push", n)
	}

	// iolab push with the token: 201, then again: still one run.
	for i, want := range []string{"pushed as run 1", "already there as run 1"} {
		stdout.Reset()
		stderr.Reset()
		if err := run([]string{"push", "--db", local, "--token", "s3cret", "1", ts.URL}, &stdout, &stderr); err != nil {
			t.Fatalf("push %d: %v\n%s", i, err, stderr.String())
		}
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("push %d: %q, want %q", i, stdout.String(), want)
		}
	}
	if n := countRuns(t, remote); n != 1 {
		t.Fatalf("%d runs on the dashboard after pushing one run twice", n)
	}
	ctx := context.Background()
	localStore, err := db.Open(ctx, local)
	if err != nil {
		t.Fatal(err)
	}
	defer localStore.Close()
	mine, _ := localStore.Export(ctx, 1)
	theirs, _ := remote.Export(ctx, 1)
	if mine.Run.UID == "" || theirs.Run.UID != mine.Run.UID || theirs.Run.Source != db.SourcePush {
		t.Errorf("uid %q → %q, source %s", mine.Run.UID, theirs.Run.UID, theirs.Run.Source)
	}

	// run --push with the token pushes the new run straight away.
	stderr.Reset()
	if err := run([]string{"run", "--db", local, "--push", ts.URL, "--push-token", "s3cret", "--name=q", "--ioengine=null", "--size=1m"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "pushed as run 2") || countRuns(t, remote) != 2 {
		t.Errorf("run --push: %s", stderr.String())
	}

	// Unreachable dashboard: kept, with the hint.
	stderr.Reset()
	if err := run([]string{"run", "--db", local, "--push", "http://127.0.0.1:1", "--name=r", "--ioengine=null", "--size=1m"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "is kept here") {
		t.Errorf("unreachable: %s", stderr.String())
	}
}

func TestAPIImport(t *testing.T) {
	ts, remote := dashboard(t)
	fioJSON, err := os.ReadFile("testdata/randrw-io_uring-qd8.json")
	if err != nil {
		t.Fatal(err)
	}
	post := func(body []byte, token, query string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/api/import"+query, bytes.NewReader(body))
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m
	}
	if code, _ := post(fioJSON, "", ""); code != http.StatusUnauthorized {
		t.Errorf("no token: %d", code)
	}
	code, m := post(fioJSON, "s3cret", "?host=box&kernel=6.6.1&label=iommu%3Doff&label=a")
	if code != http.StatusCreated || m["url"] != "/runs/1" {
		t.Fatalf("fio import: %d %v", code, m)
	}
	r, err := remote.GetRun(context.Background(), 1)
	if err != nil || r.Source != db.SourceFio || r.Hostname != "box" || r.Kernel != "6.6.1" || strings.Join(r.Tags, ",") != "iommu=off,a" {
		t.Errorf("run %+v %v", r, err)
	}
	if code, m := post(fioJSON, "s3cret", ""); code != http.StatusOK || m["id"] != float64(1) {
		t.Errorf("again: %d %v", code, m)
	}
	for _, bad := range []string{"", "nonsense", `{"fio version": "fio-3.33", "jobs": []}`, string(fioJSON[:500])} {
		if code, m := post([]byte(bad), "s3cret", ""); code != http.StatusBadRequest || m["error"] == "" {
			t.Errorf("bad input %.20q: %d %v", bad, code, m)
		}
	}
	if n := countRuns(t, remote); n != 1 {
		t.Errorf("%d runs", n)
	}
}

func TestImportCommand(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "i.db")
	var stdout, stderr bytes.Buffer
	fioFile := "testdata/randrw-io_uring-qd8.json"
	if err := run([]string{"import", "--db", dbPath, "--host", "h1", "--kernel", "6.8.0", "--label", "x", fioFile}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if strings.TrimSpace(stdout.String()) != "1" {
		t.Errorf("stdout %q", stdout.String())
	}
	// Export it and import the export into another store: same run.
	stdout.Reset()
	if err := run([]string{"export", "--db", dbPath, "1"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	exp := filepath.Join(dir, "run1.json")
	os.WriteFile(exp, stdout.Bytes(), 0o644)
	other := filepath.Join(dir, "o.db")
	for i := range 2 {
		stdout.Reset()
		stderr.Reset()
		if err := run([]string{"import", "--db", other, exp}, &stdout, &stderr); err != nil {
			t.Fatal(err)
		}
		if strings.TrimSpace(stdout.String()) != "1" || (i == 1) != strings.Contains(stderr.String(), "already imported") {
			t.Errorf("import %d: %q %q", i, stdout.String(), stderr.String())
		}
	}
	// Bad files: a clear error, nothing stored (not even the good file
	// given with them).
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte("{\"fio version\": \"fio-3.33\", \"jobs\": [{\"jobname\": \"x\"}]}\n"), 0o644)
	empty := filepath.Join(dir, "o2.db")
	err := run([]string{"import", "--db", empty, fioFile, bad}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "bad.json") || !strings.Contains(err.Error(), "missing") {
		t.Errorf("bad file: %v", err)
	}
	if _, err := os.Stat(empty); err == nil {
		t.Error("a store was created for a failed import")
	}
}
