package handlers

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"

	"iolab/bench/summary"
	"iolab/handlers/report"

	"github.com/labstack/echo/v4"
)

// reportDownload is the one-click write-up of the run or compare page:
// GET /report?run=ID… (and axis=, base= for one run; lat=, the
// latency its tables and charts show) downloads the
// self-contained HTML report.
func (s *Server) reportDownload(c echo.Context) error {
	ids, err := compareIDs(c.QueryParams())
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return &ValidationError{Field: "run", Msg: "name at least one run (run=ID)"}
	}
	for _, id := range ids {
		if _, err := s.getRun(c.Request().Context(), id); err != nil {
			return err
		}
	}
	lat, err := summary.ParseLatKind(strings.TrimSpace(c.QueryParam("lat")))
	if err != nil {
		return &ValidationError{Field: "lat", Msg: "lat: " + err.Error()}
	}
	rep, err := report.Build(c.Request().Context(), s.store, ids, report.Options{Axis: c.QueryParam("axis"), Base: c.QueryParam("base"), Lat: lat})
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := rep.WriteHTML(&buf); err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s"`, report.FileName(ids, ".html")))
	return c.HTMLBlob(http.StatusOK, buf.Bytes())
}
