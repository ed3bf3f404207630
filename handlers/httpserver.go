package handlers

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"
)

// HTTPLimits bound what one client can hold of the server: time to send
// a request and to take an answer, connections, large requests at once,
// and body sizes. Zero fields take DefaultHTTPLimits' values.
type HTTPLimits struct {
	// ReadHeaderTimeout closes a connection that has not sent its
	// request's headers in time (a slow-loris client).
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included;
	// UploadReadTimeout an import's.
	ReadTimeout       time.Duration
	UploadReadTimeout time.Duration
	// WriteTimeout bounds writing an answer; HeavyWriteTimeout a large
	// one (a run document, a CSV, a chart). The event stream has none:
	// each event has WriteTimeout to reach the client.
	WriteTimeout      time.Duration
	HeavyWriteTimeout time.Duration
	// IdleTimeout closes a kept-alive connection with no new request.
	IdleTimeout time.Duration
	// MaxConns is the most connections open at once; a new one over it
	// closes the one that serves no request longest (conns.go).
	MaxConns int
	// MaxStreams is the most event streams open at once (more: 429), and
	// MaxStreamsPerClient the most of one address (more: its oldest is
	// closed) (streams.go).
	MaxStreams          int
	MaxStreamsPerClient int
	// MaxHeavy is the most large requests (run pages, run documents,
	// CSVs, charts, compares) handled at once, and MaxUploads the most
	// imports; another waits HeavyWait for a turn, then gets 429.
	// MaxHeavy stays below the store's read connections, so the light
	// pages always find one; a slow upload does not hold up the pages.
	MaxHeavy   int
	MaxUploads int
	HeavyWait  time.Duration
	// MaxBody bounds a request body (a plan, a form, a label edit);
	// MaxImport an import's. Beyond: 413.
	MaxBody   int64
	MaxImport int64
	// CacheBytes bounds the gzipped answers kept of run pages, charts,
	// CSVs and documents (answer_cache.go).
	CacheBytes int64
}

// DefaultHTTPLimits are sized for a small machine (2 cores): a dashboard
// for a few people and their scripts, not a public site. The heavy
// requests get all cores but one, so the light ones always have one.
func DefaultHTTPLimits() HTTPLimits {
	return HTTPLimits{
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       time.Minute,
		UploadReadTimeout: 5 * time.Minute,
		WriteTimeout:      30 * time.Second,
		HeavyWriteTimeout: 2 * time.Minute,
		IdleTimeout:       30 * time.Second,
		MaxConns:          512,
		// Streams stay well below MaxConns: the rest serve pages.
		MaxStreams:          128,
		MaxStreamsPerClient: 16,
		MaxHeavy:            max(1, runtime.GOMAXPROCS(0)-1),
		MaxUploads:          2,
		HeavyWait:           5 * time.Second,
		MaxBody:             1 << 20,
		MaxImport:           64 << 20,
		CacheBytes:          64 << 20,
	}
}

// withDefaults fills l's zero fields from DefaultHTTPLimits.
func (l HTTPLimits) withDefaults() HTTPLimits {
	d := DefaultHTTPLimits()
	for _, f := range []struct{ v, d *time.Duration }{
		{&l.ReadHeaderTimeout, &d.ReadHeaderTimeout}, {&l.ReadTimeout, &d.ReadTimeout},
		{&l.UploadReadTimeout, &d.UploadReadTimeout}, {&l.WriteTimeout, &d.WriteTimeout},
		{&l.HeavyWriteTimeout, &d.HeavyWriteTimeout}, {&l.IdleTimeout, &d.IdleTimeout}, {&l.HeavyWait, &d.HeavyWait},
	} {
		orDefault(f.v, *f.d)
	}
	orDefault(&l.MaxConns, d.MaxConns)
	orDefault(&l.MaxStreams, d.MaxStreams)
	orDefault(&l.MaxStreamsPerClient, d.MaxStreamsPerClient)
	orDefault(&l.MaxHeavy, d.MaxHeavy)
	orDefault(&l.MaxUploads, d.MaxUploads)
	orDefault(&l.MaxBody, d.MaxBody)
	orDefault(&l.MaxImport, d.MaxImport)
	orDefault(&l.CacheBytes, d.CacheBytes)
	return l
}

// orDefault sets *v to d when it is not positive.
func orDefault[T ~int | ~int64](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// HTTPServer is the dashboard as an http.Server with the limits' timeouts:
// serve it on Listener(ln), and Shutdown it before the Server.
func (s *Server) HTTPServer() *http.Server {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	s.Register(e)
	l := s.httpLimits
	return &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			s.conns.serving(r)
			e.ServeHTTP(w, r)
		}),
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ConnState:         s.conns.setState,
		ConnContext:       connContext,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// Listener wraps ln so that at most MaxConns connections are open at once
// and idle or slow clients cannot fill them (conns.go): a new connection
// over the cap closes one that serves no request.
func (s *Server) Listener(ln net.Listener) net.Listener {
	return &trackListener{Listener: ln, conns: s.conns}
}

// routeClass says what a route may cost: how large a body it takes, how
// long it may take to answer, and whether it takes a turn among the heavy
// requests.
type routeClass int

const (
	light  routeClass = iota // a list, a form, an action: small body, WriteTimeout
	heavy                    // a whole run read and drawn or written out: a turn, HeavyWriteTimeout
	upload                   // an import: a large body read with UploadReadTimeout, and a turn
	stream                   // the event stream: no deadline but each event's
	cached                   // heavy, its answers cached per run version: a turn only to build one (answer_cache.go)
	listed                   // light, its answers cached per store version: the runs list (answer_cache.go)
)

// classify sets the request's body limit and deadlines by its route's
// class, and for heavy ones waits for a turn.
func (s *Server) classify(class routeClass) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			l := s.httpLimits
			req := c.Request()
			rc := http.NewResponseController(c.Response())
			limit, read, write := l.MaxBody, l.ReadTimeout, l.WriteTimeout
			switch class {
			case heavy, cached:
				write = l.HeavyWriteTimeout
				read = max(read, write) // a cancelled read ends the request
			case upload:
				limit, read, write = l.MaxImport, l.UploadReadTimeout, l.UploadReadTimeout+l.HeavyWriteTimeout
			}
			// Deadlines on a recorder (tests without a server) are
			// not supported, and need not be.
			if class == stream {
				_ = rc.SetReadDeadline(time.Time{})
				_ = rc.SetWriteDeadline(time.Time{})
			} else {
				now := time.Now()
				_ = rc.SetReadDeadline(now.Add(read))
				_ = rc.SetWriteDeadline(now.Add(write))
			}
			if req.ContentLength > limit {
				return tooLarge(limit)
			}
			req.Body = http.MaxBytesReader(c.Response(), s.conns.watchBody(req), limit)
			if class == stream {
				ctx, release, err := s.streams.open(req.Context(), clientAddr(req.RemoteAddr))
				if err != nil {
					return err
				}
				defer release()
				c.SetRequest(req.WithContext(ctx))
			}
			if turns := s.turns[class]; turns != nil {
				release, err := s.turn(req.Context(), turns)
				if err != nil {
					return err
				}
				defer release()
			}
			return next(c)
		}
	}
}

// tooLarge is the 413 of a body over limit bytes.
func tooLarge(limit int64) error {
	return echo.NewHTTPError(http.StatusRequestEntityTooLarge, tooLargeMsg(limit))
}

func tooLargeMsg(limit int64) string {
	return fmt.Sprintf("the request body is over %d bytes, this route's limit", limit)
}

// turn waits up to HeavyWait for one of turns (heavy requests', or
// uploads'); when none frees up, it is a 429 that says when to try again.
// At most maxTurnWaiters requests wait at once; another is answered 429
// at once: a waiting request holds its connection, and a flood of them
// must not fill the connections that idle ones leave (conns.go).
func (s *Server) turn(ctx context.Context, turns chan struct{}) (release func(), err error) {
	select {
	case turns <- struct{}{}:
		return func() { <-turns }, nil
	default:
	}
	if s.turnWaiters.Add(1) > int64(s.maxTurnWaiters()) {
		s.turnWaiters.Add(-1)
		return nil, &busyError{retry: s.httpLimits.HeavyWait}
	}
	defer s.turnWaiters.Add(-1)
	t := time.NewTimer(s.httpLimits.HeavyWait)
	defer t.Stop()
	select {
	case turns <- struct{}{}:
		return func() { <-turns }, nil
	case <-t.C:
		return nil, &busyError{retry: s.httpLimits.HeavyWait}
	case <-ctx.Done():
		return nil, echo.NewHTTPError(http.StatusServiceUnavailable, "the request ended while it waited for a turn")
	}
}

// maxTurnWaiters is how many requests may wait for a turn at once: an
// eighth of the connections.
func (s *Server) maxTurnWaiters() int { return max(1, s.httpLimits.MaxConns/8) }

// busyError is a 429: too many large requests (or event streams) at
// once.
type busyError struct {
	retry time.Duration
	msg   string // "": the large requests'
}

func (e *busyError) Error() string {
	if e.msg != "" {
		return e.msg
	}
	return fmt.Sprintf("the server is busy with other large requests (run pages, documents, CSVs, charts, imports); try again in %s", e.retry.Round(time.Second))
}

// retryAfter is a Retry-After header's value for d: whole seconds, at
// least one.
func retryAfter(d time.Duration) string {
	return strconv.Itoa(max(1, int((d+time.Second-1)/time.Second)))
}

// checkHost refuses, on a loopback listener, a Host header that is not
// this machine's: a page on another site whose name was rebound to
// 127.0.0.1 (DNS rebinding) would otherwise reach the dashboard as if it
// were a local user. IP literals and localhost are never a rebound name.
func (s *Server) checkHost(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.loopbackHost == "" {
			return next(c)
		}
		host := c.Request().Host
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
		if host == "" || strings.EqualFold(host, "localhost") || strings.EqualFold(host, s.loopbackHost) {
			return next(c)
		}
		if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
			return next(c)
		}
		return echo.NewHTTPError(http.StatusMisdirectedRequest, fmt.Sprintf(
			"Host %q is not this server: it listens on %s, and answers only as localhost, 127.0.0.1 or [::1] (a page of another site reaching it through DNS rebinding is refused)",
			c.Request().Host, s.listen))
	}
}

// IsLoopback reports whether addr (host:port) listens on this machine only:
// localhost or a loopback IP.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
