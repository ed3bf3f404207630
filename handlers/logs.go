package handlers

import (
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"

	"github.com/labstack/echo/v4"

	"iolab/bench/joblog"
	"iolab/db"
)

// fio's log files (write_bw_log, write_iops_log, write_lat_log,
// write_hist_log) of a web run are kept in the store, not written beside
// the server: the run page lists them, and /runs/:id/log gives each back
// as the file fio would have written, for fio2gnuplot, fio-plot or
// fiologparser_hist.py.

// logStep is one step's log files on the run page.
type logStep struct {
	Step  int // 1-based, as the step table numbers it
	Files []logFileLink
}

// logFileLink is one log file: its name, its lines, and whether the
// store cut it short (each file keeps its first joblog.StoredMax bytes).
type logFileLink struct {
	File, URL string
	Lines     int64
	Truncated bool
}

// logSteps groups a run's log files by step.
func logSteps(runID int64, files []db.LogFile) []logStep {
	var out []logStep
	for _, f := range files {
		if len(out) == 0 || out[len(out)-1].Step != f.Step+1 {
			out = append(out, logStep{Step: f.Step + 1})
		}
		q := url.Values{"step": {strconv.Itoa(f.Step + 1)}, "file": {f.File}}
		s := &out[len(out)-1]
		s.Files = append(s.Files, logFileLink{File: f.File, URL: fmt.Sprintf("/runs/%d/log?%s", runID, q.Encode()),
			Lines: f.Lines, Truncated: f.Truncated})
	}
	return out
}

// runLog answers one of a run's log files as text: step= (1-based) and
// file= as the run page lists them.
func (s *Server) runLog(c echo.Context) error {
	ctx := c.Request().Context()
	id, err := runIDParam(c)
	if err != nil {
		return err
	}
	if _, err := s.getRun(ctx, id); err != nil {
		return err
	}
	step, err := strconv.Atoi(c.QueryParam("step"))
	if err != nil || step < 1 {
		return &ValidationError{Field: "step", Msg: fmt.Sprintf("step %q: the step's number, from 1", c.QueryParam("step"))}
	}
	file := c.QueryParam("file")
	if file == "" {
		return &ValidationError{Field: "file", Msg: "file: the log file's name, as the run page lists it"}
	}
	lf, data, err := s.store.RunLogFile(ctx, id, step-1, file)
	if errors.Is(err, db.ErrNotFound) {
		return notFoundError{what: fmt.Sprintf("log file %q of run %d step %d", file, id, step)}
	}
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, "text/plain; charset=utf-8")
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": path.Base(file)}))
	if lf.Truncated {
		// The text is the file's first lines: say so to a script too.
		h.Set("X-Iolab-Log-Truncated", fmt.Sprintf("the first %d bytes of each job's log are kept, of %d lines", joblog.StoredMax, lf.Lines))
	}
	return c.Blob(http.StatusOK, "text/plain; charset=utf-8", data)
}
