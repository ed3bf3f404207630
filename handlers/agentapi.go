package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"iolab/bench/sweep"
	"iolab/db"
	"iolab/handlers/agent"

	"github.com/labstack/echo/v4"
)

// agentHandler is one of the agents' routes, called with the agent its
// token belongs to.
type agentHandler func(c echo.Context, host *db.Host) error

// agentAPI checks an agent's request: its own token (Authorization:
// Bearer), refused with 401 and why when unknown or revoked. A valid token
// is always served, whatever came from its address before: agent tokens
// are 32 random bytes, so no number of guesses finds one, and a lockout
// that held the real agent back would only let anyone who shares its
// address (a NAT, the same machine) make its leases run out. Unknown
// tokens are counted per address apart from the dashboard's logins and
// answered 429 after loginTries within loginWindow, which bounds the
// work and the log lines a guesser costs; they lock out no one else. A
// revoked token is not counted: it matched its hash, so it is no guess,
// and counting it would keep the agent from hearing the 401 that stops
// it. Each agent's requests are rate-limited (429).
func (s *Server) agentAPI(fn agentHandler) echo.HandlerFunc {
	return func(c echo.Context) error {
		req := c.Request()
		addr, now := clientAddr(req.RemoteAddr), time.Now()
		token, _ := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer ")
		host, err := s.fleet.hub.Authenticate(req.Context(), token)
		if err != nil {
			var ae *agent.Error
			if errors.As(err, &ae) && ae.Code == http.StatusUnauthorized {
				if _, revoked := errors.AsType[*db.RevokedError](err); !revoked {
					if wait := s.agentFails.wait(addr, now); wait > 0 {
						return agentLockedOut(c, wait)
					}
					if wait := s.agentFails.failed(addr, now); wait > 0 {
						return agentLockedOut(c, wait)
					}
				}
				s.log.Warn("agent refused", "remote", addr, "err", ae.Msg)
			}
			return agentError(err)
		}
		if !s.fleet.hub.Allow(host.ID) {
			c.Response().Header().Set("Retry-After", "1")
			return echo.NewHTTPError(http.StatusTooManyRequests, fmt.Sprintf("agent %s: more than %d requests a second", host.Name, agent.RequestsPerSecond))
		}
		return agentError(fn(c, host))
	}
}

// agentLockedOut is the 429 of an address that sent too many unknown
// agent tokens.
func agentLockedOut(c echo.Context, wait time.Duration) error {
	c.Response().Header().Set("Retry-After", retryAfter(wait))
	return echo.NewHTTPError(http.StatusTooManyRequests, fmt.Sprintf(
		"too many unknown agent tokens from your address: try again in %s (a valid agent token is served at any time)", wait.Round(time.Second)))
}

// agentError turns the hub's refusals into their HTTP status.
func agentError(err error) error {
	var ae *agent.Error
	if errors.As(err, &ae) {
		return echo.NewHTTPError(ae.Code, ae.Msg)
	}
	return err
}

// readAgentJSON decodes an agent's body of at most limit bytes into v.
func readAgentJSON(c echo.Context, limit int64, v any) error {
	body, err := io.ReadAll(io.LimitReader(c.Request().Body, limit+1))
	if err != nil {
		return formError(err, &ValidationError{Msg: "cannot read the body: " + err.Error()})
	}
	if int64(len(body)) > limit {
		return tooLarge(limit)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return &ValidationError{Msg: "the body is not what this route takes: " + err.Error()}
	}
	return nil
}

func (s *Server) agentHello(c echo.Context, host *db.Host) error {
	var h agent.Hello
	if err := readAgentJSON(c, agent.MaxHelloBody, &h); err != nil {
		return err
	}
	w, err := s.fleet.hub.Hello(c.Request().Context(), host, clientAddr(c.Request().RemoteAddr), &h)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, w)
}

// agentWork long-polls for work: 200 with a leased run, or 204 when none
// came within ?wait= seconds.
func (s *Server) agentWork(c echo.Context, host *db.Host) error {
	wait, err := strconv.ParseFloat(c.QueryParam("wait"), 64)
	if err != nil || wait < 0 {
		wait = 0
	}
	w, err := s.fleet.hub.Poll(c.Request().Context(), host, clientAddr(c.Request().RemoteAddr), time.Duration(wait*float64(time.Second)))
	if err != nil {
		return err
	}
	if w == nil {
		return c.NoContent(http.StatusNoContent)
	}
	return c.JSON(http.StatusOK, w)
}

func (s *Server) agentState(c echo.Context, host *db.Host) error {
	id, err := runIDParam(c)
	if err != nil {
		return err
	}
	st, err := s.fleet.hub.State(c.Request().Context(), host, clientAddr(c.Request().RemoteAddr), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, st)
}

func (s *Server) agentStart(c echo.Context, host *db.Host) error {
	id, err := runIDParam(c)
	if err != nil {
		return err
	}
	var st agent.Start
	if err := readAgentJSON(c, agent.MaxHelloBody, &st); err != nil {
		return err
	}
	ack, err := s.fleet.hub.Start(c.Request().Context(), host, clientAddr(c.Request().RemoteAddr), id, &st)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, ack)
}

func (s *Server) agentEvents(c echo.Context, host *db.Host) error {
	id, err := runIDParam(c)
	if err != nil {
		return err
	}
	var evs agent.Events
	if err := readAgentJSON(c, agent.MaxEventsBody, &evs); err != nil {
		return err
	}
	ack, err := s.fleet.hub.Events(c.Request().Context(), host, clientAddr(c.Request().RemoteAddr), id, &evs)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, ack)
}

// agentStep stores one finished step (PUT: the same step again replaces
// it, so a retried upload is stored once).
func (s *Server) agentStep(c echo.Context, host *db.Host) error {
	id, err := runIDParam(c)
	if err != nil {
		return err
	}
	seq, err := strconv.Atoi(c.Param("seq"))
	if err != nil {
		return &ValidationError{Field: "seq", Msg: fmt.Sprintf("step %q is not a step number", c.Param("seq"))}
	}
	var res sweep.StepResult
	if err := readAgentJSON(c, agent.MaxStepBody, &res); err != nil {
		return err
	}
	a, err := s.fleet.hub.Step(c.Request().Context(), host, clientAddr(c.Request().RemoteAddr), id, seq, &res)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, a)
}

func (s *Server) agentEnd(c echo.Context, host *db.Host) error {
	id, err := runIDParam(c)
	if err != nil {
		return err
	}
	var e agent.End
	if err := readAgentJSON(c, agent.MaxHelloBody, &e); err != nil {
		return err
	}
	ack, err := s.fleet.hub.End(c.Request().Context(), host, clientAddr(c.Request().RemoteAddr), id, &e)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, ack)
}
