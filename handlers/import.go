package handlers

import (
	"fmt"
	"io"
	"net/http"

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

// apiImport stores an iolab export document or fio's JSON output (json or
// json+): 201 {"id", "url"} for a new run, 200 with "existing" when a run
// with the same uid is already stored, 400 {"error"} with nothing stored on
// bad input. Query parameters host, kernel, name and label (repeatable) say
// what fio's output does not.
func (s *Server) apiImport(c echo.Context) error {
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, maxImportBody+1))
	if err != nil {
		return err
	}
	if len(body) > maxImportBody {
		return &ValidationError{Msg: fmt.Sprintf("the document is over %d bytes", maxImportBody)}
	}
	q := c.QueryParams()
	o := db.ImportOptions{Name: q.Get("name"), Hostname: q.Get("host"), Kernel: q.Get("kernel"), Labels: q["label"]}
	e, source, err := db.ParseImport(body, o)
	if err != nil {
		return &ValidationError{Msg: err.Error()}
	}
	if source == db.SourceImport && c.Request().Header.Get("X-Iolab-Push") != "" {
		source = db.SourcePush
	}
	id, existed, err := s.store.ImportRun(c.Request().Context(), e, source)
	if err != nil {
		// ImportRun's checks (status, steps) are the document's fault.
		return &ValidationError{Msg: err.Error()}
	}
	url := fmt.Sprintf("/runs/%d", id)
	c.Response().Header().Set("Location", url)
	status := http.StatusCreated
	if existed {
		status = http.StatusOK
	}
	return c.JSON(status, importedRun{ID: id, URL: url, Existing: existed})
}
