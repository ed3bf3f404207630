package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"time"

	"iolab/bench/launch"
	"iolab/db"
	"iolab/handlers/agent"

	"github.com/labstack/echo/v4"
)

// maxPlanBody bounds a POST /api/runs body (a job file included).
const maxPlanBody = 1 << 20

// createdRun is POST /api/runs's answer.
type createdRun struct {
	ID  int64  `json:"id"`
	URL string `json:"url"`
}

// apiCreateRun launches a plan: 201 {"id", "url"}, or 400 {"error",
// "field"} with nothing started.
func (s *Server) apiCreateRun(c echo.Context) error {
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, maxPlanBody+1))
	if err != nil {
		return formError(err, &ValidationError{Msg: "cannot read the plan: " + err.Error()})
	}
	if len(body) > maxPlanBody {
		return &ValidationError{Field: "", Msg: fmt.Sprintf("the plan is over %d bytes", maxPlanBody)}
	}
	var req PlanRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			return &ValidationError{Field: ute.Field, Msg: fmt.Sprintf("%s: %v", ute.Field, err)}
		}
		return &ValidationError{Msg: "the body is not a plan: " + err.Error()}
	}
	if isGroup(req.Hosts) {
		return s.apiCreateGroup(c, &req)
	}
	id, err := s.launch(c.Request().Context(), &req)
	if err != nil {
		return err
	}
	url := fmt.Sprintf("/runs/%d", id)
	c.Response().Header().Set("Location", url)
	return c.JSON(http.StatusCreated, createdRun{ID: id, URL: url})
}

// runDocument is GET /api/runs/{id}: the export document, with what a
// queued run waits for. apiGetRun writes it a step at a time; its fields
// are in the order written, the steps last.
type runDocument struct {
	*db.Export
	Waiting string       `json:"waiting,omitempty"`
	Agent   *agent.Reach `json:"agent,omitempty"`
	URL     string       `json:"url"`
}

// runDocumentHead is a runDocument without its steps.
type runDocumentHead struct {
	Format  string  `json:"format"`
	Version int     `json:"version"`
	Run     *db.Run `json:"run"`
	Waiting string  `json:"waiting,omitempty"`
	// Agent: whether the agent running the run is heard from (a run an
	// agent holds on this dashboard).
	Agent *agent.Reach `json:"agent,omitempty"`
	URL   string       `json:"url"`
}

// apiGetRun writes the run, then each step as the store reads it
// (db.Store.EachStep): a run of any length costs a few steps' memory,
// however many clients read it. A store error after the first byte cuts
// the document short, which no JSON reader takes for whole.
func (s *Server) apiGetRun(c echo.Context) error {
	ctx := c.Request().Context()
	id, err := runIDParam(c)
	if err != nil {
		return err
	}
	run, err := s.getRun(ctx, id)
	if err != nil {
		return err
	}
	head, err := json.Marshal(runDocumentHead{Format: db.ExportFormat, Version: db.ExportVersion, Run: run,
		Waiting: s.launcher.Waiting(id), Agent: s.agentReach(id), URL: fmt.Sprintf("/runs/%d", id)})
	if err != nil {
		return err
	}
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, echo.MIMEApplicationJSON)
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(append(head[:len(head)-1], `,"steps":[`...)); err != nil {
		return nil
	}
	sep := ""
	err = s.store.EachStepJSON(ctx, id, func(b []byte) error {
		if _, err := io.WriteString(w, sep); err != nil {
			return err
		}
		sep = ","
		_, err = w.Write(b)
		// A step's encoding (or, kept, its gzipping) is a millisecond
		// of CPU: let the light requests in between rather than after a
		// 10 ms time slice.
		runtime.Gosched()
		return err
	})
	if err != nil {
		markNotWhole(c)
		s.log.Warn("run document cut short", "run", id, "err", err)
		return nil
	}
	_, _ = io.WriteString(w, "]}\n")
	return nil
}

func (s *Server) apiCancelRun(c echo.Context) error {
	id, err := runIDParam(c)
	if err != nil {
		return err
	}
	if err := s.cancel(c, id); err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, createdRun{ID: id, URL: fmt.Sprintf("/runs/%d", id)})
}

func (s *Server) apiDeleteRun(c echo.Context) error {
	id, err := runIDParam(c)
	if err != nil {
		return err
	}
	if err := s.removeRun(c.Request().Context(), id); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) apiChart(c echo.Context) error {
	_, _, ch, err := s.queryChart(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, ch)
}

func (s *Server) apiPresets(c echo.Context) error {
	return c.JSON(http.StatusOK, presetInfos())
}

// sseHeartbeat keeps proxies from closing a quiet event stream.
const sseHeartbeat = 15 * time.Second

// apiEvents streams a run's progress as server-sent events: "queued"
// (what it waits for), "step" (a step started, or ended with its status
// and IOPS), "progress" (IOPS over the last interval, time left) and
// "done" (the run's final status), after which the stream ends. A run
// that is not queued or running here gets "done" at once.
func (s *Server) apiEvents(c echo.Context) error {
	ctx := c.Request().Context()
	id, err := runIDParam(c)
	if err != nil {
		return err
	}
	run, err := s.getRun(ctx, id)
	if err != nil {
		return err
	}
	w := c.Response()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// The stream has no deadline of its own (its route's class), but each
	// event must reach the client within WriteTimeout: a client that
	// stops reading is dropped.
	rc := http.NewResponseController(w)
	extend := func() { _ = rc.SetWriteDeadline(time.Now().Add(s.httpLimits.WriteTimeout)) }
	send := func(ev launch.Event) error {
		data, err := json.Marshal(ev.Data)
		if err != nil {
			return err
		}
		extend()
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.Type, data); err != nil {
			return err
		}
		w.Flush()
		return nil
	}
	replay, ch, cancel, ok := s.launcher.Subscribe(id)
	if !ok {
		// Ended (or never ran here): its status is final in the store.
		if run, err = s.getRun(ctx, id); err != nil {
			return nil
		}
		return send(launch.Event{Type: launch.EventDone, Data: launch.DoneEvent{Status: run.Status, Error: run.Error}})
	}
	defer cancel()
	for _, ev := range replay {
		if err := send(ev); err != nil {
			return nil
		}
	}
	beat := time.NewTicker(sseHeartbeat)
	defer beat.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-beat.C:
			extend()
			if _, err := io.WriteString(w, ": ping\n\n"); err != nil {
				return nil
			}
			w.Flush()
		case ev, open := <-ch:
			if !open {
				return nil
			}
			if err := send(ev); err != nil || ev.Type == launch.EventDone {
				return nil
			}
		}
	}
}
