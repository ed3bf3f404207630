package handlers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"iolab/db"

	"github.com/labstack/echo/v4"
)

// maxImportBody bounds a POST /api/import body: a long run's export with
// samples and histograms, or fio's json+ with several documents.
const maxImportBody = 256 << 20

// importedRun is POST /api/import's answer.
type importedRun struct {
	ID       int64  `json:"id"`
	URL      string `json:"url"`
	Existing bool   `json:"existing,omitempty"` // the run (by uid) was already here
}

// importDoc is the one import path of POST /api/import and the import
// form: it parses body (an iolab export or fio's JSON output) and stores
// it, or stores nothing and returns a ValidationError (Field "file").
func (s *Server) importDoc(ctx context.Context, r io.Reader, o db.ImportOptions, push bool) (importedRun, error) {
	body, err := io.ReadAll(io.LimitReader(r, maxImportBody+1))
	if err != nil {
		return importedRun{}, err
	}
	if len(body) > maxImportBody {
		return importedRun{}, &ValidationError{Field: "file", Msg: fmt.Sprintf("the document is over %d bytes", maxImportBody)}
	}
	e, source, err := db.ParseImport(body, o)
	if err != nil {
		return importedRun{}, &ValidationError{Field: "file", Msg: err.Error()}
	}
	if source == db.SourceImport && push {
		source = db.SourcePush
	}
	id, existed, err := s.store.ImportRun(ctx, e, source)
	if err != nil {
		// ImportRun's checks (status, steps) are the document's fault.
		return importedRun{}, &ValidationError{Field: "file", Msg: err.Error()}
	}
	return importedRun{ID: id, URL: fmt.Sprintf("/runs/%d", id), Existing: existed}, nil
}

// apiImport stores an iolab export document or fio's JSON output (json or
// json+): 201 {"id", "url"} for a new run, 200 with "existing" when a run
// with the same uid is already stored, 400 {"error"} with nothing stored on
// bad input. Query parameters host, kernel, name and label (repeatable) say
// what fio's output does not.
func (s *Server) apiImport(c echo.Context) error {
	q := c.QueryParams()
	o := db.ImportOptions{Name: q.Get("name"), Hostname: q.Get("host"), Kernel: q.Get("kernel"), Labels: q["label"]}
	res, err := s.importDoc(c.Request().Context(), c.Request().Body, o, c.Request().Header.Get("X-Iolab-Push") != "")
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
	fh, err := c.FormFile("file")
	if err != nil {
		return again("file", "choose a file: fio's --output-format=json or json+ output, or an iolab export")
	}
	file, err := fh.Open()
	if err != nil {
		return again("file", "cannot read the upload: "+err.Error())
	}
	defer file.Close()
	o := db.ImportOptions{Name: strings.TrimSpace(f.Name), Hostname: f.Host, Kernel: f.Kernel, Labels: labels}
	res, err := s.importDoc(c.Request().Context(), file, o, false)
	var ve *ValidationError
	if errors.As(err, &ve) {
		return again(ve.Field, ve.Msg)
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, res.URL)
}
