// Package handlers is iolab's dashboard: the HTML pages, the JSON API
// under /api, CSV exports and server-sent progress events, served with
// echo. One Server holds the store, the templates and the launcher that
// runs plans in the background; Register lists every route.
//
// Access: with a Config.Token (main passes one on every address, loopback
// included, given or generated, unless --no-token opens a loopback
// dashboard), launching, cancelling and deleting need it, as
// "Authorization: Bearer TOKEN" or as the session cookie that the /login
// form sets (a random id per login, kept here for 12 hours or until
// /logout; HttpOnly, SameSite=Strict). Wrong tokens are counted per client
// address and lock it out for a while (429). Forms are
// protected against cross-site requests with net/http's
// CrossOriginProtection (Sec-Fetch-Site, else Origin against Host) on
// every non-GET request: it needs no token in the forms, and scripts
// without those headers (curl, iolab --push) still pass with the bearer
// token. On a loopback address only requests for localhost or a loopback
// IP are answered, so a page of another site cannot reach the dashboard
// by DNS rebinding.
//
// Limits (HTTPLimits): timeouts for slow clients, a cap on connections
// that idle and slow clients cannot fill (conns.go), a cap on event
// streams per client and in all (streams.go), a few turns for the
// requests that read whole runs, bounded bodies; the run document and the
// steps CSV are written a step at a time. Every answer forbids framing
// and sends a Content-Security-Policy (headers.go).
package handlers

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"iolab/bench"
	"iolab/bench/guard"
	"iolab/bench/launch"
	"iolab/bench/sweep"
	"iolab/db"
	"iolab/handlers/chart"
	"iolab/handlers/report"
	"iolab/web"

	"github.com/labstack/echo/v4"
)

// Config is what a Server is built from.
type Config struct {
	Store *db.Store
	// Runner is the model of the runners that run plans: each run gets a
	// new bench.Runner with its Sys, Interval and Log (its own, for its
	// progress counter). nil is the live machine.
	Runner *bench.Runner
	// Token, when set, is needed to launch, cancel and delete runs and
	// to mint agent tokens (and, with ReadNeedsToken, to read anything),
	// whatever the listen address: a token given is a token enforced.
	// No Token is an open dashboard; New refuses RequireToken or
	// ReadNeedsToken without one.
	Token          string
	RequireToken   bool
	ReadNeedsToken bool
	// AllowTargets are the devices and files runs from the web may use, by
	// exact path; files under DataDir (existing, or created with size=)
	// are allowed too, and a relative target is taken under DataDir.
	AllowTargets []string
	DataDir      string
	// Quota bounds what runs may lay out in DataDir (zero fields:
	// launch.DefaultQuota's); its Dir is DataDir's.
	Quota  launch.Quota
	Logger *slog.Logger
	// ProgressEvery is how often a running step's IOPS is published
	// (default launch.LiveEvery).
	ProgressEvery time.Duration
	// Limits bound the plans the dashboard takes (zero fields: the
	// defaults, sweep.DefaultLimits).
	Limits sweep.Limits
	// HTTP bounds what clients may hold of the server (zero fields: the
	// defaults, DefaultHTTPLimits).
	HTTP HTTPLimits
	// Listen is the address the server listens on (host:port); on a
	// loopback one, requests for other hosts are refused (checkHost).
	Listen string
	// Fleet is how the dashboard drives other hosts (handlers/hosts.go).
	Fleet FleetConfig
}

// Server serves the dashboard.
type Server struct {
	store          *db.Store
	newRunner      func() *bench.Runner
	launcher       *launch.Launcher
	token          string
	sessions       *sessions
	logins         *loginLimiter // wrong dashboard tokens, per address
	agentFails     *loginLimiter // unknown agent tokens, per address (agentapi.go)
	readNeedsToken bool
	allowTargets   []string
	dataDir        string
	guard          *guard.Guard  // the allow-list pinned at the start: every runner's
	quota          *launch.Quota // nil without a data directory
	limits         sweep.Limits
	httpLimits     HTTPLimits
	turns          map[routeClass]chan struct{} // heavy requests', uploads'
	turnWaiters    atomic.Int64                 // requests waiting for a turn (httpserver.go)
	conns          *conns                       // the Listener's connections (conns.go)
	streams        *streams                     // the event streams open (streams.go)
	listen         string
	loopbackHost   string // the listen address's host when it is loopback, else ""
	log            *slog.Logger
	pages          map[string]*template.Template
	static         fs.FS
	crossOrigin    *http.CrossOriginProtection
	cache          *respCache // the cached class's answers (answer_cache.go)
	planned        *plannedSteps
	fleet          *fleetState
	prune          *pruneState // the dashboard's prune (prune.go)
}

// pageNames are the templates, each parsed with layout.html.
var pageNames = []string{"runs", "run", "new", "chart", "login", "error", "prune"}

// The launcher records the dashboard's runs in the store through its own
// Recorder interface: it sits below the store and does not import it.
var _ launch.Recorder = (*db.Store)(nil)

// New builds a server: it parses every template (a bad one is an error
// here, not on a request) and checks the static files.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil {
		return nil, errors.New("handlers: no store")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	model := bench.Runner{Log: log}
	if cfg.Runner != nil {
		model.Sys, model.Interval, model.Log = cfg.Runner.Sys, cfg.Runner.Interval, cfg.Runner.Log
	}
	var s *Server
	// Every step checks its targets through the guard again as it
	// prepares them, and opens only what it checked: a file swapped for a
	// symlink to a device while its run was queued is refused then.
	newRunner := func() *bench.Runner {
		// Verify state files and dumps go to the data directory, where
		// a later web run's verify_state_load finds them.
		return &bench.Runner{Sys: model.Sys, Interval: model.Interval, Log: model.Log, Guard: s.guard, StateDir: s.dataDir}
	}
	if cfg.RequireToken && cfg.Token == "" {
		return nil, errors.New("handlers: a token is required but none is set")
	}
	if cfg.ReadNeedsToken && cfg.Token == "" {
		return nil, errors.New("handlers: reading needs a token, but none is set")
	}
	token := cfg.Token
	hl := cfg.HTTP.withDefaults()
	turns := map[routeClass]chan struct{}{heavy: make(chan struct{}, hl.MaxHeavy), upload: make(chan struct{}, hl.MaxUploads)}
	s = &Server{store: cfg.Store, newRunner: newRunner, limits: cfg.Limits, token: token, readNeedsToken: cfg.ReadNeedsToken,
		sessions: newSessions(), logins: newLoginLimiter(), agentFails: newLoginLimiter(), httpLimits: hl, turns: turns, conns: newConns(hl.MaxConns), streams: newStreams(hl.MaxStreams, hl.MaxStreamsPerClient), listen: cfg.Listen,
		log: log, pages: map[string]*template.Template{}, crossOrigin: http.NewCrossOriginProtection(),
		cache: newRespCache(hl.CacheBytes), planned: &plannedSteps{counts: map[plannedKey]int{}}, prune: newPruneState()}
	if cfg.Listen != "" && IsLoopback(cfg.Listen) {
		host, _, _ := net.SplitHostPort(cfg.Listen)
		s.loopbackHost = host
	}
	for _, t := range cfg.AllowTargets {
		if !filepath.IsAbs(t) {
			return nil, fmt.Errorf("handlers: allowed target %q: give an absolute path", t)
		}
		s.allowTargets = append(s.allowTargets, filepath.Clean(t))
	}
	if cfg.DataDir != "" {
		abs, err := filepath.Abs(cfg.DataDir)
		if err != nil {
			return nil, fmt.Errorf("handlers: data dir: %w", err)
		}
		if s.dataDir, err = filepath.EvalSymlinks(abs); err != nil {
			return nil, fmt.Errorf("handlers: data dir: %w", err)
		}
		q := cfg.Quota
		q.Dir = s.dataDir
		s.quota = &q
	}
	// The allow-list is pinned now, once: what its names point to later
	// does not change what was allowed, and an allowed device that is not
	// there stops the start.
	g, err := launch.AllowList{Targets: s.allowTargets, DataDir: s.dataDir, Whose: "this server's"}.Guard()
	if err != nil {
		return nil, fmt.Errorf("handlers: --allow-target: %w", err)
	}
	s.guard = g
	tfs := web.Templates()
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(templateFuncs).ParseFS(tfs, "layout.html", "statdiff.html", "runparts.html", "pts.html", name+".html")
		if err != nil {
			return nil, fmt.Errorf("handlers: template %s: %w", name, err)
		}
		s.pages[name] = t
	}
	static, err := web.Static()
	if err != nil {
		return nil, err
	}
	s.static = static
	s.launcher = launch.NewLauncher(cfg.Store, newRunner, log, cfg.ProgressEvery)
	s.launcher.Quota = s.quota
	if err := s.initFleet(cfg.Fleet); err != nil {
		return nil, err
	}
	return s, nil
}

// Register adds every route to e, with the error handler and the
// middleware.
func (s *Server) Register(e *echo.Echo) {
	e.HTTPErrorHandler = s.handleError
	// The client's address is the connection's: X-Forwarded-For is the
	// client's to write, and the login limit goes by address.
	e.IPExtractor = echo.ExtractIPDirect()
	e.Pre(securityHeaders, s.checkHost)
	e.Use(s.logRequests, s.checkCrossOrigin)
	for _, r := range s.routes() {
		mw := []echo.MiddlewareFunc{s.classify(r.class)}
		switch r.access {
		case readAccess:
			mw = append(mw, s.requireRead)
		case writeAccess:
			mw = append(mw, s.requireWrite)
		case adminAccess:
			mw = append(mw, s.requireAdmin)
		}
		switch r.class { // after the access check
		case cached:
			mw = append(mw, s.cached)
		case listed:
			mw = append(mw, s.listCached)
		}
		e.Add(r.method, r.path, r.handler, mw...)
	}
	e.Group("/static", s.classify(light)).StaticFS("/", s.static)
}

// access is who may use a route: anyone, readers (everyone unless
// ReadNeedsToken), or only with the token.
type access int

const (
	openAccess access = iota
	readAccess
	writeAccess
	adminAccess // the token's holder, on a dashboard with a token (prune.go)
)

// route is one row of the route table: everything about one route.
type route struct {
	method, path string
	handler      echo.HandlerFunc
	access       access
	class        routeClass
}

// routes lists every route: pages, the JSON API, imports and compares.
func (s *Server) routes() []route {
	return append([]route{
		// Pages.
		{"GET", "/", s.runsPage, readAccess, listed},
		{"GET", "/runs", s.runsPage, readAccess, listed},
		{"GET", "/runs/new", s.newRunPage, readAccess, light},
		{"POST", "/runs", s.createRun, writeAccess, light},
		{"POST", "/runs/pts", s.createPTSRun, writeAccess, light},
		{"GET", "/runs/:id", s.runPage, readAccess, cached},
		{"GET", "/runs/:id/steps.csv", s.stepsCSV, readAccess, cached},
		{"GET", "/runs/:id/log", s.runLog, readAccess, heavy},
		{"POST", "/runs/:id/cancel", s.cancelRun, writeAccess, light},
		{"POST", "/runs/:id/delete", s.deleteRun, writeAccess, light},
		{"GET", "/charts", s.chartPage, readAccess, cached},
		{"GET", "/charts/export.csv", s.chartCSV, readAccess, cached},
		{"GET", "/login", s.loginPage, openAccess, light},
		{"GET", "/favicon.ico", s.favicon, openAccess, light},
		{"POST", "/login", s.login, openAccess, light},
		{"POST", "/logout", s.logout, openAccess, light},

		// JSON API.
		{"GET", "/api/runs", s.apiListRuns, readAccess, listed},
		{"POST", "/api/runs", s.apiCreateRun, writeAccess, light},
		{"GET", "/api/runs/:id", s.apiGetRun, readAccess, cached},
		{"DELETE", "/api/runs/:id", s.apiDeleteRun, writeAccess, light},
		{"POST", "/api/runs/:id/cancel", s.apiCancelRun, writeAccess, light},
		{"GET", "/api/runs/:id/events", s.apiEvents, readAccess, stream},
		{"GET", "/api/charts", s.apiChart, readAccess, cached},
		{"GET", "/api/presets", s.apiPresets, readAccess, light},

		// Import and push: iolab exports and fio JSON, token-protected.
		{"POST", "/api/import", s.apiImport, writeAccess, upload},
		{"GET", "/import", s.importPage, readAccess, light},
		{"POST", "/import", s.importSubmit, writeAccess, upload},

		// Compare page, labels and rename (handlers/compare.go, labels.go).
		{"GET", "/compare", s.compareView, readAccess, cached},
		{"GET", "/compare/export.csv", s.compareCSV, readAccess, cached},
		{"GET", "/report", s.reportDownload, readAccess, heavy},
		{"POST", "/runs/:id/rename", s.renameRun, writeAccess, light},
		{"POST", "/runs/:id/labels", s.editLabels, writeAccess, light},
		{"PATCH", "/api/runs/:id", s.apiPatchRun, writeAccess, light},
	}, append(s.fleetRoutes(), s.pruneRoutes()...)...)
}

// Shutdown cancels the runs: the running step ends cancelled, schedulers
// are restored, the runs are marked cancelled. Call it after the HTTP
// server's own Shutdown.
func (s *Server) Shutdown(ctx context.Context) error {
	s.prune.shutdown()
	s.fleet.stop()
	return s.launcher.Shutdown(ctx)
}

// errorBody is the API's error answer.
type errorBody struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
	// Errors lists every field's error when a request has several (the
	// first is Error and Field).
	Errors []fieldErrorBody `json:"errors,omitempty"`
}

// handleError turns a handler's error into a status and a page (or JSON
// under /api): db.ErrNotFound is 404, a ValidationError (or a
// chart.QueryError, a report.InputError) 400 with its message and field,
// an echo.HTTPError its code; anything else is logged and answered 500.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	status, msg, field := http.StatusInternalServerError, "internal error", ""
	var all []fieldErrorBody
	var ve *ValidationError
	var ves ValidationErrors
	var qe *chart.QueryError
	var re *report.InputError
	var he *echo.HTTPError
	var be *busyError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &be):
		status, msg = http.StatusTooManyRequests, be.Error()
		c.Response().Header().Set("Retry-After", retryAfter(be.retry))
	case errors.As(err, &mbe):
		status, msg = http.StatusRequestEntityTooLarge, tooLargeMsg(mbe.Limit)
	case db.FaultOf(err) != db.NoFault:
		var retry bool
		status, msg, retry, _ = storeFault(err, s.store.Path())
		if retry {
			c.Response().Header().Set("Retry-After", "1")
		}
		s.log.Error("store fault", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
	case errors.Is(err, db.ErrNotFound):
		status, msg = http.StatusNotFound, "not found"
		if he, ok := err.(notFoundError); ok {
			msg = he.what + " not found"
		}
	case errors.As(err, &ves) && len(ves) > 0:
		status, msg, field = http.StatusBadRequest, ves[0].Msg, ves[0].Field
		for _, v := range ves {
			all = append(all, fieldErrorBody{Field: v.Field, Error: v.Msg})
		}
	case errors.As(err, &ve):
		status, msg, field = http.StatusBadRequest, ve.Msg, ve.Field
	case errors.As(err, &qe):
		status, msg, field = http.StatusBadRequest, qe.Msg, qe.Field
	case errors.As(err, &re):
		status, msg, field = http.StatusBadRequest, re.Msg, re.Field
	case errors.As(err, &he):
		status, msg = he.Code, fmt.Sprint(he.Message)
	case errors.Is(err, context.Canceled) && c.Request().Context().Err() != nil:
		// The client hung up before its answer (an agent that gave up
		// on an upload and sends it again, a closed tab): nothing failed
		// here, and the request log says it.
		status, msg = statusClientClosed, "the client closed the request"
	default:
		s.log.Error("request failed", "method", c.Request().Method, "path", c.Request().URL.Path, "err", err)
	}
	if status == http.StatusUnauthorized {
		c.Response().Header().Set("WWW-Authenticate", `Bearer realm="iolab"`)
	}
	if isAPI(c) {
		_ = c.JSON(status, errorBody{Error: msg, Field: field, Errors: all})
		return
	}
	data := errorPage{pageBase: s.base(c, http.StatusText(status)), Status: status, Message: msg,
		Login: status == http.StatusUnauthorized}
	if rerr := s.render(c, status, "error", &data); rerr != nil {
		s.log.Error("render the error page", "err", rerr)
		_ = c.String(status, msg)
	}
}

// statusClientClosed is the status the request log gives a request
// whose client went away before its answer: nginx's 499.
const statusClientClosed = 499

// notFoundError is a 404 that says what is missing.
type notFoundError struct{ what string }

func (e notFoundError) Error() string { return e.what + " not found" }
func (e notFoundError) Is(t error) bool {
	return t == db.ErrNotFound
}

func isAPI(c echo.Context) bool {
	p := c.Request().URL.Path
	return strings.HasPrefix(p, "/api/") || strings.HasSuffix(p, ".csv")
}

// logRequests is the request log.
func (s *Server) logRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		err := next(c)
		if err != nil {
			c.Error(err)
		}
		req := c.Request()
		s.log.Info("request", "method", req.Method, "path", req.URL.Path, "status", c.Response().Status,
			"bytes", c.Response().Size, "dur", time.Since(start).Round(time.Microsecond), "remote", c.RealIP())
		return nil
	}
}

// checkCrossOrigin refuses cross-site browser requests that change
// anything.
func (s *Server) checkCrossOrigin(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := s.crossOrigin.Check(c.Request()); err != nil {
			return echo.NewHTTPError(http.StatusForbidden, "cross-origin request refused: "+err.Error())
		}
		return next(c)
	}
}

// authorized reports whether the request carries the token (or a live
// session's cookie), or none is needed.
func (s *Server) authorized(c echo.Context) bool {
	if s.token == "" {
		return true
	}
	if h := c.Request().Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		return s.tokenMatches(strings.TrimPrefix(h, "Bearer "))
	}
	if ck, err := c.Cookie(sessionCookie); err == nil {
		return s.sessions.valid(ck.Value, time.Now())
	}
	return false
}

func (s *Server) tokenMatches(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) == 1
}

const sessionCookie = "iolab_session"

var errNeedToken = echo.NewHTTPError(http.StatusUnauthorized,
	"this needs the server's token: send Authorization: Bearer TOKEN, or log in at /login")

// checkAccess is requireWrite's and requireRead's test: a wrong bearer
// token counts against the client's address like a wrong login, and an
// address locked out gets 429 before its token is looked at.
func (s *Server) checkAccess(c echo.Context) error {
	h := c.Request().Header.Get("Authorization")
	if !strings.HasPrefix(h, "Bearer ") || s.token == "" {
		if s.authorized(c) {
			return nil
		}
		return errNeedToken
	}
	addr, now := clientAddr(c.Request().RemoteAddr), time.Now()
	if wait := s.logins.wait(addr, now); wait > 0 {
		return lockedOut(c, wait)
	}
	if s.tokenMatches(strings.TrimPrefix(h, "Bearer ")) {
		return nil
	}
	if wait := s.logins.failed(addr, now); wait > 0 {
		return lockedOut(c, wait)
	}
	return errNeedToken
}

// lockedOut is the 429 of an address with too many wrong tokens.
func lockedOut(c echo.Context, wait time.Duration) error {
	c.Response().Header().Set("Retry-After", retryAfter(wait))
	return echo.NewHTTPError(http.StatusTooManyRequests, lockedOutMsg(wait))
}

func lockedOutMsg(wait time.Duration) string {
	return fmt.Sprintf("too many wrong tokens from your address: try again in %s", wait.Round(time.Second))
}

func (s *Server) requireWrite(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := s.checkAccess(c); err != nil {
			return err
		}
		return next(c)
	}
}

func (s *Server) requireRead(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if !s.readNeedsToken {
			return next(c)
		}
		if err := s.checkAccess(c); err != nil {
			if err == errNeedToken && !isAPI(c) && c.Request().Method == http.MethodGet {
				return c.Redirect(http.StatusSeeOther, "/login?next="+urlQueryEscape(c.Request().URL.RequestURI()))
			}
			return err
		}
		return next(c)
	}
}

// pageBase is what the layout shows on every page.
type pageBase struct {
	Title string
	// NeedsLogin is true when a token is set and the browser has not
	// given it: the header links to /login.
	NeedsLogin bool
	LoggedIn   bool
}

func (s *Server) base(c echo.Context, title string) pageBase {
	ok := s.authorized(c)
	return pageBase{Title: title, NeedsLogin: s.token != "" && !ok, LoggedIn: s.token != "" && ok}
}

// render executes page into a buffer, then writes it: a template error is
// a 500, never half a page.
func (s *Server) render(c echo.Context, status int, page string, data any) error {
	t, ok := s.pages[page]
	if !ok {
		return fmt.Errorf("handlers: no page %q", page)
	}
	var buf bytes.Buffer
	if h, ok := data.(interface{ sizeHint() int }); ok {
		buf.Grow(h.sizeHint())
	}
	if err := t.ExecuteTemplate(&buf, "layout", data); err != nil {
		return fmt.Errorf("handlers: render %s: %w", page, err)
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// runIDParam reads the :id of a run route.
func runIDParam(c echo.Context) (int64, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id < 1 {
		return 0, notFoundError{what: "run " + strconv.Quote(c.Param("id"))}
	}
	return id, nil
}

// getRun reads a run, a missing one being a 404 that names it.
func (s *Server) getRun(ctx context.Context, id int64) (*db.Run, error) {
	r, err := s.store.GetRun(ctx, id)
	if errors.Is(err, db.ErrNotFound) {
		return nil, notFoundError{what: fmt.Sprintf("run %d", id)}
	}
	return r, err
}

// errorPage is the error page's data.
type errorPage struct {
	pageBase
	Status  int
	Message string
	Login   bool
}

// loginPageData is the login form's data.
type loginPageData struct {
	pageBase
	Next  string
	Error string
}

func (s *Server) loginPage(c echo.Context) error {
	data := loginPageData{pageBase: s.base(c, "Log in"), Next: safeNext(c.QueryParam("next"))}
	return s.render(c, http.StatusOK, "login", &data)
}

// login checks the token and starts a session: a new random id in the
// cookie, valid for sessionTTL or until logout. Wrong tokens from one
// address lock it out for a while (429).
func (s *Server) login(c echo.Context) error {
	next := safeNext(c.FormValue("next"))
	if s.token == "" {
		return c.Redirect(http.StatusSeeOther, next)
	}
	addr, now := clientAddr(c.Request().RemoteAddr), time.Now()
	again := func(status int, msg string) error {
		data := loginPageData{pageBase: s.base(c, "Log in"), Next: next, Error: msg}
		return s.render(c, status, "login", &data)
	}
	if wait := s.logins.wait(addr, now); wait > 0 {
		c.Response().Header().Set("Retry-After", retryAfter(wait))
		return again(http.StatusTooManyRequests, lockedOutMsg(wait))
	}
	if !s.tokenMatches(c.FormValue("token")) {
		if wait := s.logins.failed(addr, now); wait > 0 {
			c.Response().Header().Set("Retry-After", retryAfter(wait))
			return again(http.StatusTooManyRequests, lockedOutMsg(wait))
		}
		return again(http.StatusUnauthorized, "wrong token")
	}
	s.logins.succeeded(addr)
	if ck, err := c.Cookie(sessionCookie); err == nil {
		s.sessions.revoke(ck.Value) // a new login, a new id
	}
	id, err := s.sessions.create(now)
	if err != nil {
		return err
	}
	c.SetCookie(&http.Cookie{Name: sessionCookie, Value: id, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: c.Scheme() == "https", MaxAge: int(sessionTTL / time.Second)})
	return c.Redirect(http.StatusSeeOther, next)
}

// logout ends the session: its id no longer works, whoever holds it.
func (s *Server) logout(c echo.Context) error {
	if ck, err := c.Cookie(sessionCookie); err == nil {
		s.sessions.revoke(ck.Value)
	}
	c.SetCookie(&http.Cookie{Name: sessionCookie, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	return c.Redirect(http.StatusSeeOther, "/")
}

// favicon answers /favicon.ico, which browsers ask for on their own (the
// pages name /static/favicon.svg), with the same icon, so that no page
// leaves a 404 in the log and the console.
func (s *Server) favicon(c echo.Context) error {
	b, err := fs.ReadFile(s.static, "favicon.svg")
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "max-age=86400")
	return c.Blob(http.StatusOK, "image/svg+xml", b)
}
