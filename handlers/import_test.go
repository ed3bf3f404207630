package handlers

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
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
		`href="/runs?tag=iommu%3doff"`, `href="/runs?tag=after%20fw%20update"`,
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
	if !strings.Contains(body, `href="/runs?tag=kernel%20bump"`) || strings.Contains(body, `href="/runs?tag=iommu%3doff"`) {
		t.Error("the labels form's change is not on the page")
	}
	if !strings.Contains(body, `name="name" value="renamed"`) {
		t.Error("the rename is not on the page")
	}
}
