package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"iolab/db"

	"github.com/labstack/echo/v4"
)

// renameRun is the run page's rename form: name=….
func (s *Server) renameRun(c echo.Context) error {
	id, err := runIDParam(c)
	if err != nil {
		return err
	}
	name, err := db.CleanName(c.FormValue("name"))
	if err != nil {
		return &ValidationError{Field: "name", Msg: err.Error()}
	}
	if _, err := s.getRun(c.Request().Context(), id); err != nil {
		return err
	}
	if err := s.store.RenameRun(c.Request().Context(), id, name); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, labelsNext(c, id))
}

// editLabels is the labels form: add=… (comma-separated or repeated) and
// remove=….
func (s *Server) editLabels(c echo.Context) error {
	id, err := runIDParam(c)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return &ValidationError{Msg: "bad form: " + err.Error()}
	}
	split := func(vs []string) []string {
		var out []string
		for _, v := range vs {
			for _, l := range strings.Split(v, ",") {
				if l = strings.TrimSpace(l); l != "" {
					out = append(out, l)
				}
			}
		}
		return out
	}
	add, remove := split(form["add"]), split(form["remove"])
	if _, err := db.CleanLabels(add); err != nil {
		return &ValidationError{Field: "add", Msg: err.Error()}
	}
	if _, err := s.getRun(c.Request().Context(), id); err != nil {
		return err
	}
	if _, err := s.store.EditTags(c.Request().Context(), id, add, remove); err != nil {
		return labelError(err)
	}
	return c.Redirect(http.StatusSeeOther, labelsNext(c, id))
}

// labelsNext is where a label or rename form goes back to: next= if
// local, else the run's page.
func labelsNext(c echo.Context, id int64) string {
	if n := c.FormValue("next"); n != "" {
		return safeNext(n)
	}
	return fmt.Sprintf("/runs/%d", id)
}

// labelError makes a refused label list (too many) a 400.
func labelError(err error) error {
	if strings.Contains(err.Error(), "labels: at most") {
		return &ValidationError{Field: "labels", Msg: err.Error()}
	}
	return err
}

// runPatch is PATCH /api/runs/:id: a new name, the full label list, or
// both; absent fields stay.
type runPatch struct {
	Name   *string   `json:"name"`
	Labels *[]string `json:"labels"`
}

func (s *Server) apiPatchRun(c echo.Context) error {
	id, err := runIDParam(c)
	if err != nil {
		return err
	}
	var p runPatch
	dec := json.NewDecoder(http.MaxBytesReader(c.Response(), c.Request().Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return formError(err, &ValidationError{Msg: "bad JSON: " + err.Error() + ` (want {"name": "…", "labels": ["…"]})`})
	}
	if p.Name == nil && p.Labels == nil {
		return &ValidationError{Msg: `nothing to change: give "name", "labels" or both`}
	}
	var name string
	if p.Name != nil {
		if name, err = db.CleanName(*p.Name); err != nil {
			return &ValidationError{Field: "name", Msg: err.Error()}
		}
	}
	if p.Labels != nil {
		if _, err := db.CleanLabels(*p.Labels); err != nil {
			return &ValidationError{Field: "labels", Msg: err.Error()}
		}
	}
	ctx := c.Request().Context()
	if _, err := s.getRun(ctx, id); err != nil {
		return err
	}
	if p.Name != nil {
		if err := s.store.RenameRun(ctx, id, name); err != nil {
			return err
		}
	}
	if p.Labels != nil {
		if _, err := s.store.SetTags(ctx, id, *p.Labels); err != nil {
			return err
		}
	}
	r, err := s.getRun(ctx, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, r)
}
