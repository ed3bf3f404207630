package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"iolab/db"
)

const fioSample = "testdata/randrw-io_uring-qd8.json"

// postImportForm posts the import form as a browser would: multipart, with
// the file (if any) and the text fields.
func postImportForm(t *testing.T, ts *testServer, file []byte, fields map[string]string, header ...string) *httptest.ResponseRecorder {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	if file != nil {
		fw, err := mw.CreateFormFile("file", "upload.json")
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(file)
	}
	mw.Close()
	req := httptest.NewRequest(http.MethodPost, "/import", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	ts.e.ServeHTTP(rec, req)
	return rec
}

func TestImportPage(t *testing.T) {
	ts := newTestServer(t, Config{})
	rec := ts.do(t, http.MethodGet, "/import", "")
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /import: %d %s", rec.Code, rec.Body)
	}
	for _, want := range []string{`action="/import"`, `enctype="multipart/form-data"`, `type="file" name="file"`,
		`name="host"`, `name="kernel"`, `name="labels"`, `href="/import"`} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("the import page lacks %s", want)
		}
	}
	// The nav links to it on every page.
	if rec := ts.do(t, http.MethodGet, "/runs", ""); !strings.Contains(rec.Body.String(), `<a href="/import">Import</a>`) {
		t.Error("the runs page's nav has no link to /import")
	}
}

func TestImportForm(t *testing.T) {
	fio, err := os.ReadFile(fioSample)
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, Config{})
	rec := postImportForm(t, ts, fio, map[string]string{"host": "box-a", "kernel": "6.9.1-test", "labels": "iommu=off, after firmware update"})
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("POST /import: %d %s", rec.Code, rec.Body)
	}
	runs, err := ts.store.ListRuns(context.Background(), db.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 {
		t.Fatalf("%d runs stored, want 1", len(runs))
	}
	r := runs[0]
	if loc := rec.Header().Get("Location"); loc != "/runs/"+strconv.FormatInt(r.ID, 10) {
		t.Errorf("Location %q, want /runs/%d", loc, r.ID)
	}
	if r.Source != db.SourceFio {
		t.Errorf("source %q, want %q", r.Source, db.SourceFio)
	}
	if r.Hostname != "box-a" || r.Kernel != "6.9.1-test" {
		t.Errorf("host %q kernel %q, want the form's", r.Hostname, r.Kernel)
	}
	if !slices.Contains(r.Tags, "iommu=off") || !slices.Contains(r.Tags, "after firmware update") {
		t.Errorf("tags %q, want the form's labels", r.Tags)
	}
	steps, err := ts.store.StepsFor(context.Background(), r.ID, db.StepLoad{})
	if err != nil || len(steps) != 1 || steps[0].Result == nil {
		t.Fatalf("steps %v, %v: want one with a result", len(steps), err)
	}
	// The run's page shows it.
	if page := ts.do(t, http.MethodGet, "/runs/"+strconv.FormatInt(r.ID, 10), ""); page.Code != http.StatusOK {
		t.Errorf("the imported run's page: %d", page.Code)
	}
	// The same file again keeps one run.
	if rec := postImportForm(t, ts, fio, nil); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/runs/"+strconv.FormatInt(r.ID, 10) {
		t.Errorf("second import: %d to %q, want 303 to the same run", rec.Code, rec.Header().Get("Location"))
	}
	if runs, _ := ts.store.ListRuns(context.Background(), db.RunFilter{}); len(runs) != 1 {
		t.Errorf("%d runs after importing the same file twice, want 1", len(runs))
	}
}

func TestImportFormBadInput(t *testing.T) {
	fio, err := os.ReadFile(fioSample)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		file   []byte
		fields map[string]string
		field  string
	}{
		{"not JSON", []byte("fio-3.36\nthis is not json"), nil, "file"},
		{"truncated", fio[:len(fio)/2], nil, "file"},
		{"not fio's", []byte(`{"hello": "world"}`), nil, "file"},
		{"empty", []byte{}, nil, "file"},
		{"no file", nil, map[string]string{"host": "box-a"}, "file"},
		{"bad label", fio, map[string]string{"labels": "ok, bad\x01label"}, "labels"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := newTestServer(t, Config{})
			rec := postImportForm(t, ts, tc.file, tc.fields)
			if rec.Code != http.StatusBadRequest {
				t.Fatalf("%d, want 400: %s", rec.Code, rec.Body)
			}
			body := rec.Body.String()
			if !strings.Contains(body, `class="field-error" data-field="`+tc.field+`"`) {
				t.Errorf("no error next to %s in\n%s", tc.field, body)
			}
			if !strings.Contains(body, `id="import-form"`) {
				t.Error("the form is not shown again")
			}
			if tc.fields["host"] != "" && !strings.Contains(body, `value="`+tc.fields["host"]+`"`) {
				t.Error("the form lost the host field")
			}
			if runs, _ := ts.store.ListRuns(context.Background(), db.RunFilter{}); len(runs) != 0 {
				t.Errorf("%d runs stored after bad input", len(runs))
			}
		})
	}
}

func TestImportFormToken(t *testing.T) {
	fio, err := os.ReadFile(fioSample)
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, Config{Token: "sekrit", RequireToken: true})
	if rec := postImportForm(t, ts, fio, nil); rec.Code != http.StatusUnauthorized {
		t.Errorf("without the token: %d, want 401", rec.Code)
	}
	if runs, _ := ts.store.ListRuns(context.Background(), db.RunFilter{}); len(runs) != 0 {
		t.Errorf("%d runs stored without the token", len(runs))
	}
	if rec := postImportForm(t, ts, fio, nil, "Authorization", "Bearer sekrit"); rec.Code != http.StatusSeeOther {
		t.Errorf("with the token: %d, want 303: %s", rec.Code, rec.Body)
	}
}

func TestRunPageLabelsForms(t *testing.T) {
	ts := newTestServer(t, Config{})
	run, _ := seedRun(t, ts.store, "labelled", []string{"1", "4"}, 1)
	if _, err := ts.store.SetTags(context.Background(), run.ID, []string{"iommu=off", "after fw update"}); err != nil {
		t.Fatal(err)
	}
	id := strconv.FormatInt(run.ID, 10)
	rec := ts.do(t, http.MethodGet, "/runs/"+id, "")
	if rec.Code != http.StatusOK {
		t.Fatalf("run page: %d %s", rec.Code, rec.Body)
	}
	body := rec.Body.String()
	for _, want := range []string{
		`href="/runs?label=iommu%3doff"`, `href="/runs?label=after%20fw%20update"`,
		`action="/runs/` + id + `/rename"`, `name="name" value="labelled"`,
		`action="/runs/` + id + `/labels"`, `name="add"`, `<option value="iommu=off">`,
		`action="/runs/` + id + `/delete"`, `Delete run`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the run page lacks %s", want)
		}
	}
	// The forms post to routes that work.
	if rec := ts.do(t, http.MethodPost, "/runs/"+id+"/labels", "add=kernel+bump&remove=iommu%3Doff"); rec.Code != http.StatusSeeOther {
		t.Fatalf("labels form: %d %s", rec.Code, rec.Body)
	}
	if rec := ts.do(t, http.MethodPost, "/runs/"+id+"/rename", "name=renamed"); rec.Code != http.StatusSeeOther {
		t.Fatalf("rename form: %d %s", rec.Code, rec.Body)
	}
	body = ts.do(t, http.MethodGet, "/runs/"+id, "").Body.String()
	if !strings.Contains(body, `href="/runs?label=kernel%20bump"`) || strings.Contains(body, `href="/runs?label=iommu%3doff"`) {
		t.Error("the labels form's change is not on the page")
	}
	if !strings.Contains(body, `name="name" value="renamed"`) {
		t.Error("the rename is not on the page")
	}
}

// fioImports are real fio 3.33 outputs (see the README there).
const fioImports = "../bench/fio/testdata/import/"

// multipartFiles is a multipart body with one "file" part per file and
// the fields.
func multipartFiles(t *testing.T, files []string, fields map[string]string) (*bytes.Buffer, string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		fw, err := mw.CreateFormFile("file", filepath.Base(f))
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(data)
	}
	mw.Close()
	return &body, mw.FormDataContentType()
}

// TestImportedRunPages: fio's output of three stonewalled iodepths shows
// as three steps on the iodepth axis, with the options fio did not print,
// and the host facts it does not record read "unknown" on the run page,
// in the JSON API and in compare's differences — never as zeros.
func TestImportedRunPages(t *testing.T) {
	data, err := os.ReadFile(fioImports + "stonewall-qd.jsonplus.json")
	if err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, Config{})
	rec := ts.do(t, http.MethodPost, "/api/import?host=box7", string(data))
	if rec.Code != http.StatusCreated {
		t.Fatalf("POST /api/import: %d %s", rec.Code, rec.Body)
	}
	var created importedRun
	if err := json.Unmarshal(rec.Body.Bytes(), &created); err != nil {
		t.Fatal(err)
	}
	id := strconv.FormatInt(created.ID, 10)
	page := ts.do(t, http.MethodGet, "/runs/"+id, "")
	if page.Code != http.StatusOK {
		t.Fatalf("run page: %d", page.Code)
	}
	body := page.Body.String()
	for _, want := range []string{
		"<dt>host</dt><dd>box7</dd>", "<dt>kernel</dt><dd>unknown</dd>", "<dt>CPU</dt><dd>unknown</dd>",
		"<dt>memory</dt><dd>unknown</dd>", "<dt>IOMMU</dt><dd>unknown</dd>", "<dt>cmdline</dt><dd>unknown</dd>",
		`<li><code>time_based</code> on qd1: it ran its whole runtime=1 and moved 29.5MiB, more than its size 16.0MiB`,
		`<li><code>stonewall</code> on qd16: a new reporting group (groupid 2)`,
		`id="plan-notes"`, "--sweep=iodepth=1,4,16", "iodepth=16 #1",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the run page lacks %s", want)
		}
	}
	for _, bad := range []string{"0 ×", "0.0 GiB", "<dd></dd>", "<dd> ()</dd>"} {
		if strings.Contains(body, bad) {
			t.Errorf("the run page shows %q for what is unknown", bad)
		}
	}

	api := ts.do(t, http.MethodGet, "/api/runs/"+id, "")
	var got struct {
		Run struct {
			Host map[string]any `json:"host"`
			Plan struct {
				Inferred []map[string]string `json:"inferred"`
			} `json:"plan"`
		} `json:"run"`
	}
	if err := json.Unmarshal(api.Body.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, api.Body)
	}
	for _, k := range []string{"cpu_count", "mem_total", "iommu", "cpu_model", "cmdline"} {
		if v, ok := got.Run.Host[k]; ok {
			t.Errorf("the API's host says %s: %v for what was not recorded", k, v)
		}
	}
	if got.Run.Host["hostname"] != "box7" || len(got.Run.Plan.Inferred) != 5 || got.Run.Plan.Inferred[0]["option"] != "time_based" {
		t.Errorf("API host %v, inferred %v", got.Run.Host, got.Run.Plan.Inferred)
	}

	// The IOPS chart plots each job at its own iodepth, with fio's IOPS.
	csv := ts.do(t, http.MethodGet, "/charts/export.csv?kind=iops&run="+id, "").Body.String()
	for _, want := range []string{"\nqd1,1,1,0,7547.45", "\nqd1,4,1,0,11279.72", "\nqd1,16,1,0,29256.74"} {
		if !strings.Contains(csv, want) {
			t.Errorf("the IOPS chart's CSV lacks %q:\n%s", want, csv)
		}
	}

	local, _ := seedRun(t, ts.store, "local", []string{"1", "4"}, 1)
	cmp := ts.do(t, http.MethodGet, "/compare?runs="+strconv.FormatInt(local.ID, 10)+","+id, "")
	if cmp.Code != http.StatusOK {
		t.Fatalf("compare: %d %s", cmp.Code, cmp.Body)
	}
	for _, want := range []string{"<th>CPUs</th><td>4</td><td>unknown</td>", "<th>CPU</th><td>Test CPU</td><td>unknown</td>", "(box7, unknown)"} {
		if !strings.Contains(cmp.Body.String(), want) {
			t.Errorf("compare lacks %s", want)
		}
	}
}

// TestImportSeveralFiles: several of fio's outputs, through the form or
// the API, are one run whose steps repeat.
func TestImportSeveralFiles(t *testing.T) {
	ctx := context.Background()
	files := []string{fioImports + "repeats/1.json", fioImports + "repeats/2.json", fioImports + "repeats/3.json"}
	ts := newTestServer(t, Config{})
	body, ctype := multipartFiles(t, files, map[string]string{"name": "qd sweep", "host": "box7"})
	req := httptest.NewRequest(http.MethodPost, "/import", body)
	req.Header.Set("Content-Type", ctype)
	rec := httptest.NewRecorder()
	ts.e.ServeHTTP(rec, req)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("POST /import: %d %s", rec.Code, rec.Body)
	}
	runs, err := ts.store.ListRuns(ctx, db.RunFilter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	r := runs[0]
	if r.Name != "qd sweep" || r.Hostname != "box7" || r.Plan.Repeat != 3 || r.Steps != 6 {
		t.Errorf("run %q on %q: repeat %d, %d steps", r.Name, r.Hostname, r.Plan.Repeat, r.Steps)
	}
	// The API takes the same files, as the same run.
	body, ctype = multipartFiles(t, files, nil)
	req = httptest.NewRequest(http.MethodPost, "/api/import", body)
	req.Header.Set("Content-Type", ctype)
	rec = httptest.NewRecorder()
	ts.e.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"existing":true`) || !strings.Contains(rec.Body.String(), `"id":`+strconv.FormatInt(r.ID, 10)) {
		t.Errorf("POST /api/import, several files: %d %s", rec.Code, rec.Body)
	}
	// An iolab export does not join fio's outputs.
	exp, err := ts.store.Export(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(exp)
	run := filepath.Join(t.TempDir(), "run.json")
	os.WriteFile(run, doc, 0o644)
	body, ctype = multipartFiles(t, []string{fioImports + "fairness.json", run}, nil)
	req = httptest.NewRequest(http.MethodPost, "/api/import", body)
	req.Header.Set("Content-Type", ctype)
	rec = httptest.NewRecorder()
	ts.e.ServeHTTP(rec, req)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "not fio's JSON output") {
		t.Errorf("an export among fio's outputs: %d %s", rec.Code, rec.Body)
	}
	if runs, _ := ts.store.ListRuns(ctx, db.RunFilter{}); len(runs) != 1 {
		t.Errorf("%d runs", len(runs))
	}
}
