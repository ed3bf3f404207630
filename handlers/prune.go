package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"iolab/db"

	"github.com/labstack/echo/v4"
)

// Retention on the dashboard: the prune page and API, for the admin
// only (adminAccess: a dashboard with a token, its holder, a store that
// can be written). A GET is the dry run (the runs a rule would delete,
// with the total, and those it keeps with why); the confirm (POST, so
// under the cross-origin check every form has) names the runs the dry
// run listed, and only those of them that the rule still selects go:
// nothing the admin did not see, nothing that started since. The prune
// runs on the server's lifetime, not the request's, one at a time; its
// state is at /prune and /api/prune/last.

// maxPruneIDs bounds the runs one confirm names (a form of them is
// about 7 bytes a run, within HTTPLimits.MaxBody).
const maxPruneIDs = 100_000

// pruneShown is how many runs the page lists of each kind; the confirm
// names them all.
const pruneShown = 500

// pruneRoutes are the prune page's and API's routes.
func (s *Server) pruneRoutes() []route {
	return []route{
		{"GET", "/prune", s.prunePage, adminAccess, light},
		{"POST", "/prune", s.pruneForm, adminAccess, light},
		{"GET", "/api/prune", s.apiPrunePlan, adminAccess, light},
		{"POST", "/api/prune", s.apiPrune, adminAccess, light},
		{"GET", "/api/prune/last", s.apiPruneLast, adminAccess, light},
	}
}

// requireAdmin lets through the token's holder on a dashboard that has a
// token and a store it can write. An open dashboard (--no-token) cannot
// tell an admin from anyone else, so it refuses: deleting runs wholesale
// is the one thing it keeps to the machine's own `iolab prune`.
func (s *Server) requireAdmin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.token == "" {
			return echo.NewHTTPError(http.StatusForbidden, "pruning runs needs an admin: this dashboard has no token (--no-token), "+
				"so it cannot tell one from any visitor; start it with a token, or run iolab prune on its machine")
		}
		if err := s.checkAccess(c); err != nil {
			if err == errNeedToken && !isAPI(c) && c.Request().Method == http.MethodGet {
				return c.Redirect(http.StatusSeeOther, "/login?next="+urlQueryEscape(c.Request().URL.RequestURI()))
			}
			return err
		}
		if s.store.ReadOnly() {
			return echo.NewHTTPError(http.StatusForbidden, "pruning runs needs a store that can be written: "+
				db.FaultMessage(db.FaultReadOnly, s.store.Path()))
		}
		return next(c)
	}
}

// pruneParams are a prune's rule as the page's form and the API's query
// give it.
type pruneParams struct {
	OlderThan string `json:"older_than" form:"older_than" query:"older_than"`
	Tag       string `json:"tag" form:"tag" query:"tag"`
	Status    string `json:"status" form:"status" query:"status"` // comma-separated
	Keep      string `json:"keep" form:"keep" query:"keep"`
}

func (p pruneParams) empty() bool {
	return p.OlderThan == "" && p.Tag == "" && p.Status == "" && p.Keep == ""
}

// rule checks p and makes it a rule, with what the dashboard knows of
// the runs it runs and the agents' leases.
func (s *Server) pruneRule(p pruneParams, now time.Time) (db.PruneRule, error) {
	var (
		r    db.PruneRule
		errs ValidationErrors
		err  error
	)
	if p.OlderThan = strings.TrimSpace(p.OlderThan); p.OlderThan != "" {
		if r.OlderThan, err = db.ParsePruneAge(p.OlderThan, now); err != nil {
			errs = append(errs, &ValidationError{Field: "older_than", Msg: err.Error()})
		}
	}
	if r.Statuses, err = db.ParsePruneStatuses(p.Status); err != nil {
		errs = append(errs, &ValidationError{Field: "status", Msg: err.Error()})
	}
	r.Tag = strings.TrimSpace(p.Tag)
	if k := strings.TrimSpace(p.Keep); k != "" {
		if r.Keep, err = strconv.Atoi(k); err != nil || r.Keep < 1 || r.Keep > db.MaxPruneKeep {
			errs = append(errs, &ValidationError{Field: "keep", Msg: fmt.Sprintf("keep %q: want a whole number of runs from 1 to %d", k, db.MaxPruneKeep)})
			r.Keep = 0
		}
	}
	if len(errs) > 0 {
		return r, errs
	}
	if err := r.Check(); err != nil {
		return r, &ValidationError{Msg: err.Error()}
	}
	r.Protect = s.pruneProtect
	return r, nil
}

// pruneProtect is why the dashboard keeps run id though the store would
// let it go.
func (s *Server) pruneProtect(id int64) string {
	if s.launcher.Active(id) {
		return "queued or running on this dashboard"
	}
	if s.fleet != nil {
		return s.fleet.hub.Holds(id)
	}
	return ""
}

// pruneJob is one prune the dashboard ran or is running.
type pruneJob struct {
	Rule      pruneParams     `json:"rule"`
	Confirmed int             `json:"confirmed"` // the runs the confirm named
	Planned   int             `json:"planned"`   // of those, the ones the rule still deletes
	Done      int             `json:"done"`      // of Planned, the ones handled so far
	Running   bool            `json:"running"`
	Started   time.Time       `json:"started"`
	Ended     time.Time       `json:"ended,omitzero"`
	Result    *db.PruneResult `json:"result,omitempty"`
	Before    *db.Space       `json:"space_before,omitempty"`
	After     *db.Space       `json:"space_after,omitempty"`
	Error     string          `json:"error,omitempty"`
	rule      db.PruneRule    // what Rule says
	ids       map[int64]bool  // what the confirm named
}

// pruneState holds the dashboard's prune: one at a time, on the server's
// lifetime (Shutdown stops it between batches).
type pruneState struct {
	ctx  context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu   sync.Mutex
	last *pruneJob
}

func newPruneState() *pruneState {
	ctx, stop := context.WithCancel(context.Background())
	return &pruneState{ctx: ctx, stop: stop}
}

// shutdown stops a prune between its batches and waits for it.
func (ps *pruneState) shutdown() {
	ps.stop()
	ps.wg.Wait()
}

// snapshot is a copy of the last prune; nil when there was none.
func (ps *pruneState) snapshot() *pruneJob {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.last == nil {
		return nil
	}
	j := *ps.last
	return &j
}

// startPrune starts a prune of the runs ids that rule selects.
func (s *Server) startPrune(p pruneParams, rule db.PruneRule, ids []int64) (*pruneJob, error) {
	ps := s.prune
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.last != nil && ps.last.Running {
		return nil, echo.NewHTTPError(http.StatusConflict, "a prune is running: wait for it to end (see /prune)")
	}
	if ps.ctx.Err() != nil {
		return nil, echo.NewHTTPError(http.StatusServiceUnavailable, "the dashboard is stopping")
	}
	set := make(map[int64]bool, len(ids))
	for _, id := range ids {
		set[id] = true
	}
	j := &pruneJob{Rule: p, Confirmed: len(set), Running: true, Started: time.Now(), rule: rule, ids: set}
	ps.last = j
	ps.wg.Add(1)
	go func() {
		defer ps.wg.Done()
		s.runPrune(ps.ctx, j)
	}()
	out := *j
	return &out, nil
}

// runPrune plans j's rule afresh, deletes the planned runs the confirm
// named, and gives the space back.
func (s *Server) runPrune(ctx context.Context, j *pruneJob) {
	ps := s.prune
	set := func(f func()) {
		ps.mu.Lock()
		defer ps.mu.Unlock()
		f()
	}
	fail := func(err error) {
		s.log.Error("prune", "err", err)
		set(func() { j.Error, j.Running, j.Ended = err.Error(), false, time.Now() })
	}
	plan, err := s.store.PlanPrune(ctx, j.rule)
	if err != nil {
		fail(err)
		return
	}
	plan.Delete = slices.DeleteFunc(plan.Delete, func(r db.PruneRun) bool { return !j.ids[r.ID] })
	set(func() { j.Planned = len(plan.Delete) })
	// The size on disk before: the deletes grow the write-ahead log
	// until the checkpoint after them.
	start, err := s.store.Space(ctx)
	if err != nil {
		fail(err)
		return
	}
	res, err := s.store.Prune(ctx, plan, func(done int) { set(func() { j.Done = done }) })
	set(func() { j.Result = res })
	if err != nil {
		fail(err)
		return
	}
	s.log.Info("pruned runs", "deleted", len(res.Deleted), "skipped", len(res.Skipped), "bytes", res.Bytes)
	before, after, err := s.store.GiveBack(ctx)
	if err != nil {
		fail(err)
		return
	}
	before.FileBytes, before.WALBytes = start.FileBytes, start.WALBytes
	set(func() { j.Before, j.After, j.Running, j.Ended = &before, &after, false, time.Now() })
}

// prunePageData is the prune page.
type prunePageData struct {
	pageBase
	Rule   pruneParams
	Errors map[string]string
	Plan   *db.PrunePlan
	IDs    string // the dry run's runs, comma-separated, for the confirm
	Shown  []db.PruneRun
	More   int // runs to delete not listed
	Kept   []db.PruneRun
	Space  db.Space
	Last   *pruneJob
}

// prunePage is the form, the dry run of the rule in its query (with the
// confirm) and the last prune.
func (s *Server) prunePage(c echo.Context) error {
	var p pruneParams
	if err := (&echo.DefaultBinder{}).BindQueryParams(c, &p); err != nil {
		return &ValidationError{Msg: "the prune's query: " + err.Error()}
	}
	data := prunePageData{pageBase: s.base(c, "Prune runs"), Rule: p, Last: s.prune.snapshot()}
	status := http.StatusOK
	if !p.empty() {
		rule, err := s.pruneRule(p, time.Now())
		if err == nil {
			data.Plan, err = s.store.PlanPrune(c.Request().Context(), rule)
		}
		if err != nil {
			if data.Errors = validationFields(err); data.Errors == nil {
				return err
			}
			status = http.StatusBadRequest
		}
	}
	if data.Plan != nil {
		ids := make([]string, len(data.Plan.Delete))
		for i, r := range data.Plan.Delete {
			ids[i] = strconv.FormatInt(r.ID, 10)
		}
		data.IDs = strings.Join(ids, ",")
		data.Shown = data.Plan.Delete[:min(len(data.Plan.Delete), pruneShown)]
		data.More = len(data.Plan.Delete) - len(data.Shown)
		data.Kept = data.Plan.Kept[:min(len(data.Plan.Kept), pruneShown)]
	}
	sp, err := s.store.Space(c.Request().Context())
	if err != nil {
		return err
	}
	data.Space = sp
	return s.render(c, status, "prune", &data)
}

// validationFields maps a validation error's fields to their messages
// ("" the form's own); nil when err is not one.
func validationFields(err error) map[string]string {
	var list ValidationErrors
	var one *ValidationError
	switch {
	case errors.As(err, &list):
	case errors.As(err, &one):
		list = ValidationErrors{one}
	default:
		return nil
	}
	m := map[string]string{}
	for _, v := range list {
		m[v.Field] = v.Msg
	}
	return m
}

// parsePruneIDs reads the confirm's runs: ids separated by commas or
// spaces, at most maxPruneIDs.
func parsePruneIDs(v string) ([]int64, error) {
	fields := strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })
	if len(fields) == 0 {
		return nil, &ValidationError{Field: "ids", Msg: "no runs to delete: confirm the runs the dry run listed"}
	}
	if len(fields) > maxPruneIDs {
		return nil, &ValidationError{Field: "ids", Msg: fmt.Sprintf("%d runs: at most %d in one prune", len(fields), maxPruneIDs)}
	}
	ids := make([]int64, len(fields))
	for i, f := range fields {
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil || id < 1 {
			return nil, &ValidationError{Field: "ids", Msg: fmt.Sprintf("%q is not a run id", truncate(f, 40))}
		}
		ids[i] = id
	}
	return ids, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// pruneForm is the page's confirm: it starts the prune and goes back to
// the page, which shows it.
func (s *Server) pruneForm(c echo.Context) error {
	p := pruneParams{OlderThan: c.FormValue("older_than"), Tag: c.FormValue("tag"), Status: c.FormValue("status"), Keep: c.FormValue("keep")}
	rule, err := s.pruneRule(p, time.Now())
	if err != nil {
		return err
	}
	ids, err := parsePruneIDs(c.FormValue("ids"))
	if err != nil {
		return err
	}
	if _, err := s.startPrune(p, rule, ids); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/prune")
}

// prunePlanBody is the API's dry run.
type prunePlanBody struct {
	*db.PrunePlan
	Space db.Space `json:"space"`
}

func (s *Server) apiPrunePlan(c echo.Context) error {
	var p pruneParams
	if err := (&echo.DefaultBinder{}).BindQueryParams(c, &p); err != nil {
		return &ValidationError{Msg: "the prune's query: " + err.Error()}
	}
	rule, err := s.pruneRule(p, time.Now())
	if err != nil {
		return err
	}
	plan, err := s.store.PlanPrune(c.Request().Context(), rule)
	if err != nil {
		return err
	}
	sp, err := s.store.Space(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, prunePlanBody{PrunePlan: plan, Space: sp})
}

// PruneRequest is the API's confirm: the rule, as the dry run's query
// gave it, and the runs the dry run listed.
type PruneRequest struct {
	OlderThan string  `json:"older_than"`
	Tag       string  `json:"tag"`
	Status    string  `json:"status"` // comma-separated
	Keep      int     `json:"keep"`
	IDs       []int64 `json:"ids"`
}

func (s *Server) apiPrune(c echo.Context) error {
	var req PruneRequest
	dec := json.NewDecoder(c.Request().Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return formError(err, &ValidationError{Msg: "the body is not a prune: " + err.Error()})
	}
	p := pruneParams{OlderThan: req.OlderThan, Tag: req.Tag, Status: req.Status}
	if req.Keep != 0 {
		p.Keep = strconv.Itoa(req.Keep)
	}
	rule, err := s.pruneRule(p, time.Now())
	if err != nil {
		return err
	}
	if len(req.IDs) == 0 || len(req.IDs) > maxPruneIDs {
		return &ValidationError{Field: "ids", Msg: fmt.Sprintf("ids: the runs the dry run (GET /api/prune) listed, 1 to %d of them", maxPruneIDs)}
	}
	j, err := s.startPrune(p, rule, req.IDs)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Location", "/api/prune/last")
	return c.JSON(http.StatusAccepted, j)
}

func (s *Server) apiPruneLast(c echo.Context) error {
	j := s.prune.snapshot()
	if j == nil {
		return notFoundError{"a prune"}
	}
	return c.JSON(http.StatusOK, j)
}
