package handlers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"

	"iolab/db"

	"github.com/labstack/echo/v4"
)

// importedRun is POST /api/import's answer.
type importedRun struct {
	ID       int64  `json:"id"`
	URL      string `json:"url"`
	Existing bool   `json:"existing,omitempty"` // the run (by uid) was already here
	// Group is the group fio's client output of several servers made,
	// one run per server (import_clients.go): ID is the first's, URL the
	// group's page.
	Group string `json:"group,omitempty"`
}

// importDoc is the one import path of POST /api/import and the import
// form: it parses body (an iolab export or fio's JSON output) and stores
// it, or stores nothing and returns a ValidationError (Field "file").
func (s *Server) importDoc(ctx context.Context, r io.Reader, o db.ImportOptions, push bool) (importedRun, error) {
	body, err := readImport(r, s.httpLimits.MaxImport)
	if err != nil {
		return importedRun{}, err
	}
	source := db.SourceImport
	if push {
		source = db.SourcePush
	} else if res, ok, err := s.importClients(ctx, body, o); ok {
		return res, err
	}
	// Parsed as it is stored: an export's steps one at a time, fio's jobs
	// counted before they are decoded; over a limit, nothing is stored
	// and the message names the limit.
	id, existed, err := s.store.ImportDocumentAs(ctx, body, o, source)
	if db.FaultOf(err) != db.NoFault {
		return importedRun{}, err // the store's fault, not the document's
	}
	if err != nil {
		return importedRun{}, &ValidationError{Field: "file", Msg: err.Error()}
	}
	return importedRun{ID: id, URL: fmt.Sprintf("/runs/%d", id), Existing: existed}, nil
}

// importFiles imports uploaded files: one as importDoc does, several
// (fio's outputs) as one run, each file's steps after the one before.
func (s *Server) importFiles(ctx context.Context, files []*multipart.FileHeader, o db.ImportOptions) (importedRun, error) {
	if len(files) == 1 {
		f, err := files[0].Open()
		if err != nil {
			return importedRun{}, &ValidationError{Field: "file", Msg: "cannot read the upload: " + err.Error()}
		}
		defer f.Close()
		return s.importDoc(ctx, f, o, false)
	}
	names := make([]string, len(files))
	docs := make([][]byte, len(files))
	left := s.httpLimits.MaxImport
	for i, fh := range files {
		f, err := fh.Open()
		if err != nil {
			return importedRun{}, &ValidationError{Field: "file", Msg: "cannot read the upload: " + err.Error()}
		}
		docs[i], err = readImport(f, left)
		f.Close()
		if err != nil {
			return importedRun{}, err
		}
		names[i], left = fh.Filename, left-int64(len(docs[i]))
	}
	e, err := db.ParseFioRun(names, docs, o)
	if err != nil {
		return importedRun{}, &ValidationError{Field: "file", Msg: err.Error()}
	}
	return s.storeImport(ctx, e, db.SourceFio)
}

// readImport reads an import document of at most limit bytes; a larger
// one is a 413. It reads in chunks and copies them once into a slice of
// the exact size: an over-large body costs its chunks and no more, where
// io.ReadAll's doubling would hold twice the limit at the end.
func readImport(r io.Reader, limit int64) ([]byte, error) {
	const chunk = 1 << 20
	var (
		chunks [][]byte
		total  int64
	)
	for {
		buf := make([]byte, chunk)
		n, err := io.ReadFull(r, buf)
		total += int64(n)
		if total > limit {
			return nil, tooLarge(limit)
		}
		chunks = append(chunks, buf[:n])
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if len(chunks) == 1 {
		return chunks[0], nil
	}
	body := make([]byte, 0, total)
	for i, c := range chunks {
		body = append(body, c...)
		chunks[i] = nil
	}
	return body, nil
}

// formError is a form or multipart body that could not be read: a 413 when
// it was over the route's limit, else the ValidationError bad.
func formError(err error, bad *ValidationError) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge(mbe.Limit)
	}
	return bad
}

// storeImport stores a parsed import; ImportRun's checks (status, steps)
// are the document's fault, a full or read-only store the server's.
func (s *Server) storeImport(ctx context.Context, e *db.Export, source string) (importedRun, error) {
	id, existed, err := s.store.ImportRun(ctx, e, source)
	if db.FaultOf(err) != db.NoFault {
		return importedRun{}, err // the store's fault, not the document's
	}
	if err != nil {
		return importedRun{}, &ValidationError{Field: "file", Msg: err.Error()}
	}
	return importedRun{ID: id, URL: fmt.Sprintf("/runs/%d", id), Existing: existed}, nil
}

// apiImport stores an iolab export document or fio's JSON output (json or
// json+): 201 {"id", "url"} for a new run, 200 with "existing" when a run
// with the same uid is already stored, 400 {"error"} with nothing stored on
// bad input. Query parameters host, kernel, name and label (repeatable) say
// what fio's output does not. A multipart/form-data body with several
// "file" parts (fio's outputs) is one run of them all.
func (s *Server) apiImport(c echo.Context) error {
	q := c.QueryParams()
	o := db.ImportOptions{Name: q.Get("name"), Hostname: q.Get("host"), Kernel: q.Get("kernel"), Labels: q["label"]}
	var res importedRun
	var err error
	if strings.HasPrefix(c.Request().Header.Get(echo.HeaderContentType), echo.MIMEMultipartForm) {
		bad := &ValidationError{Field: "file", Msg: "a multipart import wants one or more \"file\" parts"}
		form, ferr := c.MultipartForm()
		if ferr != nil {
			return formError(ferr, bad)
		}
		if len(form.File["file"]) == 0 {
			return bad
		}
		res, err = s.importFiles(c.Request().Context(), form.File["file"], o)
	} else {
		res, err = s.importDoc(c.Request().Context(), c.Request().Body, o, c.Request().Header.Get("X-Iolab-Push") != "")
	}
	if err != nil {
		return err
	}
	c.Response().Header().Set("Location", res.URL)
	status := http.StatusCreated
	if res.Existing {
		status = http.StatusOK
	}
	return c.JSON(status, res)
}

// The import form has its own template.
func init() { pageNames = append(pageNames, "import") }

// importForm is what the import form was given, shown again on an error.
type importForm struct {
	Name, Host, Kernel, Labels string
}

// importPageData is the import form.
type importPageData struct {
	pageBase
	Form   importForm
	Errors map[string]string
}

// importPage is GET /import: a form to upload fio's JSON output or an
// iolab export.
func (s *Server) importPage(c echo.Context) error {
	data := importPageData{pageBase: s.base(c, "Import")}
	return s.render(c, http.StatusOK, "import", &data)
}

// importSubmit is POST /import (multipart: file, and optional name, host,
// kernel, labels comma-separated): 303 to the run's page, or the form again
// with the error next to its field.
func (s *Server) importSubmit(c echo.Context) error {
	form, err := c.MultipartForm()
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge(mbe.Limit)
		}
	}
	f := importForm{Name: c.FormValue("name"), Host: strings.TrimSpace(c.FormValue("host")),
		Kernel: strings.TrimSpace(c.FormValue("kernel")), Labels: c.FormValue("labels")}
	again := func(field, msg string) error {
		data := importPageData{pageBase: s.base(c, "Import"), Form: f, Errors: map[string]string{field: msg}}
		return s.render(c, http.StatusBadRequest, "import", &data)
	}
	var labels []string
	for _, l := range strings.Split(f.Labels, ",") {
		if l = strings.TrimSpace(l); l != "" {
			labels = append(labels, l)
		}
	}
	if _, err := db.CleanLabels(labels); err != nil {
		return again("labels", err.Error())
	}
	if strings.TrimSpace(f.Name) != "" {
		if _, err := db.CleanName(f.Name); err != nil {
			return again("name", err.Error())
		}
	}
	if err != nil || len(form.File["file"]) == 0 {
		return again("file", "choose a file: fio's --output-format=json or json+ output, or an iolab export (or several of fio's outputs, as one run)")
	}
	o := db.ImportOptions{Name: strings.TrimSpace(f.Name), Hostname: f.Host, Kernel: f.Kernel, Labels: labels}
	res, err := s.importFiles(c.Request().Context(), form.File["file"], o)
	var ve *ValidationError
	if errors.As(err, &ve) {
		return again(ve.Field, ve.Msg)
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, res.URL)
}
