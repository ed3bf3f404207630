package handlers

import (
	"bytes"
	"compress/gzip"
	"container/list"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"iolab/db"

	"github.com/labstack/echo/v4"
)

// The answers of the routes of class cached (a run's page, its charts,
// CSVs and document, the compare page) are cached, gzipped, per run
// version: a run's version (db.Store.RunVersions) changes with anything
// stored of it, by whichever process, so an answer built at one version
// is the answer at that version. A finished run's pages are then built
// once; a running run's, once per stored step. The routes of class
// listed (the runs list, `/`, `/runs` and GET /api/runs, any filter,
// sort or page) are cached per version of the whole store
// (db.Store.ListVersion: every commit, by this process or another,
// moves it), for the list shows nothing but what is stored; a 30,000-run
// lab's list is then built once per change rather than once per view.
// Each answer carries an ETag of its key, and a client that already
// holds it gets 304. Requests for an answer being built wait for it
// rather than build it again (one flight per key), and only the one
// building a run's answer takes a heavy turn: cached answers need none,
// and the list's, light, never did. The cache holds at most
// HTTPLimits.CacheBytes of gzipped answers, least recently used out
// first; an answer larger than a quarter of that is streamed as before,
// uncached.

// respCache is the cache of answers.
type respCache struct {
	budget, maxEntry int64
	salt             string // this process's: ETags do not outlive the templates that built them

	mu      sync.Mutex
	size    int64
	lru     *list.List // of *cachedAnswer, most recently used first
	entries map[string]*list.Element
	flights map[string]chan struct{}

	builds atomic.Int64 // answers built (a turn taken to build one)
}

// held is the bytes the cache holds, and its budget.
func (rc *respCache) held() (size, budget int64) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.size, rc.budget
}

// cachedAnswer is one answer: its headers and gzipped body, or (tooBig)
// the mark of an answer too large to keep, so that requests for it go
// straight to the handler.
type cachedAnswer struct {
	key         string
	contentType string
	disposition string
	gz          []byte
	tooBig      bool
}

func (a *cachedAnswer) cost() int64 { return int64(len(a.gz) + len(a.key) + 128) }

func newRespCache(budget int64) *respCache {
	salt := make([]byte, 8)
	_, _ = rand.Read(salt)
	return &respCache{budget: budget, maxEntry: budget / 4, salt: hex.EncodeToString(salt),
		lru: list.New(), entries: map[string]*list.Element{}, flights: map[string]chan struct{}{}}
}

// etag is the ETag of the answer with key, gzipped or not: the two are
// different representations (RFC 9110 §8.8.3), and a cache between
// client and server that keeps both (Vary: Accept-Encoding) must not
// take the one for the other.
func (rc *respCache) etag(key string, gzipped bool) string {
	coding := "identity"
	if gzipped {
		coding = "gzip"
	}
	sum := sha256.Sum256([]byte(rc.salt + "\x00" + key + "\x00" + coding))
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// get returns the answer with key, or nil.
func (rc *respCache) get(key string) *cachedAnswer {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if el, ok := rc.entries[key]; ok {
		rc.lru.MoveToFront(el)
		return el.Value.(*cachedAnswer)
	}
	return nil
}

// put keeps a, dropping the least recently used answers to stay within
// the budget.
func (rc *respCache) put(a *cachedAnswer) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if el, ok := rc.entries[a.key]; ok {
		rc.size -= el.Value.(*cachedAnswer).cost()
		rc.lru.Remove(el)
	}
	rc.entries[a.key] = rc.lru.PushFront(a)
	rc.size += a.cost()
	for rc.size > rc.budget && rc.lru.Len() > 1 {
		old := rc.lru.Back()
		o := old.Value.(*cachedAnswer)
		rc.lru.Remove(old)
		delete(rc.entries, o.key)
		rc.size -= o.cost()
	}
}

// join returns the flight building key's answer, and whether the caller
// is to build it (then it must call land).
func (rc *respCache) join(key string) (done chan struct{}, build bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if f, ok := rc.flights[key]; ok {
		return f, false
	}
	f := make(chan struct{})
	rc.flights[key] = f
	return f, true
}

// land ends key's flight: those waiting look in the cache again.
func (rc *respCache) land(key string) {
	rc.mu.Lock()
	f := rc.flights[key]
	delete(rc.flights, key)
	rc.mu.Unlock()
	close(f)
}

// cacheKey is the key of the request's answer: the route, its query,
// whether the client is logged in (the layout says so), and each run it
// reads with its version and its state in this server's launcher. ok is
// false when the request names runs it cannot parse or that do not
// exist: its handler answers those.
func (s *Server) cacheKey(c echo.Context) (key string, ok bool, err error) {
	req := c.Request()
	var ids []int64
	if p := c.Param("id"); p != "" {
		id, err := strconv.ParseInt(p, 10, 64)
		if err != nil || id < 1 {
			return "", false, nil
		}
		ids = append(ids, id)
	}
	q := req.URL.Query()
	for _, name := range []string{"run", "runs", "showrun"} {
		for _, v := range q[name] {
			for _, f := range strings.Split(v, ",") {
				if f = strings.TrimSpace(f); f == "" {
					continue
				}
				id, err := strconv.ParseInt(f, 10, 64)
				if err != nil || id < 1 {
					return "", false, nil
				}
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 || len(ids) > 50 {
		return "", false, nil
	}
	versions, err := s.store.RunVersions(req.Context(), ids)
	if errors.Is(err, db.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s?%s auth=%t", req.Method, c.Path(), req.URL.RawQuery, s.authorized(c))
	for _, v := range c.ParamValues() {
		fmt.Fprintf(&b, " param=%q", v)
	}
	for i, id := range ids {
		fmt.Fprintf(&b, " run=%d@%d active=%t waiting=%q", id, versions[i], s.launcher.Active(id), s.launcher.Waiting(id))
		if r := s.agentReach(id); r != nil {
			fmt.Fprintf(&b, " agent=%q", r.Text)
		}
	}
	return b.String(), true, nil
}

// listKey is the key of a runs list's answer: the route, its query,
// whether the client is logged in (the layout says so), and the store's
// version. The list shows nothing of the launcher (a queued run is
// queued in the store; a run's page, not the list, says it waits or
// that its agent is away), so nothing else makes its answer.
func (s *Server) listKey(c echo.Context) (key string, ok bool, err error) {
	req := c.Request()
	version, err := s.store.ListVersion(req.Context())
	if err != nil {
		return "", false, err
	}
	return fmt.Sprintf("%s %s?%s auth=%t list=%s", req.Method, c.Path(), req.URL.RawQuery, s.authorized(c), version), true, nil
}

// answerKeyFunc makes the key of a request's answer; ok is false for a
// request whose answer is not to be cached.
type answerKeyFunc func(c echo.Context) (key string, ok bool, err error)

// cached serves the answer from the cache, or builds it (with a heavy
// turn) and keeps it; see respCache.
func (s *Server) cached(next echo.HandlerFunc) echo.HandlerFunc {
	return s.cachedBy(s.cacheKey, s.withTurn)(next)
}

// listCached is cached for the runs list: keyed by listKey, built
// without a turn, as a light route is.
func (s *Server) listCached(next echo.HandlerFunc) echo.HandlerFunc {
	return s.cachedBy(s.listKey, func(c echo.Context, next echo.HandlerFunc) error { return next(c) })(next)
}

// cachedBy is the cache's middleware with answers keyed by key and built
// (or served uncached) through run.
func (s *Server) cachedBy(key answerKeyFunc, run func(echo.Context, echo.HandlerFunc) error) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			err := s.serveCached(c, next, key, run)
			if err != nil {
				// An error's page is no run's answer.
				h := c.Response().Header()
				h.Del("ETag")
				h.Del("Cache-Control")
			}
			return err
		}
	}
}

func (s *Server) serveCached(c echo.Context, next echo.HandlerFunc, keyOf answerKeyFunc, run func(echo.Context, echo.HandlerFunc) error) error {
	key, ok, err := keyOf(c)
	if err != nil {
		return err
	}
	if !ok {
		return run(c, next)
	}
	// A cached answer goes gzipped to a client that takes gzip; one being
	// built, or too large to keep, goes as the handler writes it.
	gz := acceptsGzip(c.Request().Header.Get("Accept-Encoding"))
	inm := c.Request().Header.Get("If-None-Match")
	h := c.Response().Header()
	h.Set("Cache-Control", "no-cache")
	h.Add("Vary", "Accept-Encoding")
	notModified := func(gzipped bool) bool {
		etag := s.cache.etag(key, gzipped)
		h.Set("ETag", etag)
		return etagMatches(inm, etag)
	}
	if notModified(gz) {
		return c.NoContent(http.StatusNotModified)
	}
	ctx := c.Request().Context()
	for {
		if a := s.cache.get(key); a != nil {
			if a.tooBig {
				if notModified(false) {
					return c.NoContent(http.StatusNotModified)
				}
				return run(c, next)
			}
			return serveAnswer(c, a, gz)
		}
		done, build := s.cache.join(key)
		if !build {
			select {
			case <-done:
				continue
			case <-ctx.Done():
				return echo.NewHTTPError(http.StatusServiceUnavailable, "the request ended while its answer was being built")
			}
		}
		defer s.cache.land(key)
		if notModified(false) {
			return c.NoContent(http.StatusNotModified)
		}
		return run(c, func(c echo.Context) error { return s.buildAnswer(c, next, key) })
	}
}

// withTurn runs next with one of the heavy requests' turns, and gives
// what it allocated back before the turn goes to the next.
func (s *Server) withTurn(c echo.Context, next echo.HandlerFunc) error {
	release, err := s.turn(c.Request().Context(), s.turns[heavy])
	if err != nil {
		return err
	}
	defer release()
	defer freeAfterBuild(allocated())
	return next(c)
}

// freeAfterBuild collects a heavy request's garbage and returns it to
// the system. A build keeps little of what it allocates: the pages and
// charts of a long run are drawn from its steps' summaries, but write
// their answer several times over (a 500-step run's page is a 4 MB
// timeline option, escaped, in 5 MB of HTML), and the compare page and
// the report read the steps whole (a 500-step run's job results are
// 200 MB: each holds eight fixed-size histograms). Left to the
// collector's pacing, the garbage of one build is still held when the
// next one starts, and the server's RSS grows to two or three builds'
// worth. What is live after a build (the caches) is small beside that,
// so the collection costs a few percent of a build. But returning the
// garbage of a small build made the next one fault its pages back in, a
// third of a long run's page build: a build that allocated less than
// freeAfterBytes is left to the collector, unless the server holds
// freeAboveBytes already.
func freeAfterBuild(before uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Uint64()-before >= freeAfterBytes || s[1].Value.Uint64()-s[2].Value.Uint64() >= freeAboveBytes {
		debug.FreeOSMemory()
	}
}

// A long run's page, drawn from its steps' summaries, allocates about
// 40 MB; the caches hold up to 128 MB (their budgets).
const (
	freeAfterBytes = 48 << 20
	freeAboveBytes = 160 << 20
)

// allocated is the bytes the server has allocated on the heap since it
// started (runtime/metrics).
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// buildAnswer runs next, its answer going to the client as it is written
// and, gzipped, to the cache, unless it is not a whole 200, or grows
// past the cache's largest entry.
func (s *Server) buildAnswer(c echo.Context, next echo.HandlerFunc, key string) error {
	s.cache.builds.Add(1)
	resp := c.Response()
	tw := &teeWriter{ResponseWriter: resp.Writer, limit: s.cache.maxEntry}
	tw.gz = gzipWriters.Get().(*gzip.Writer)
	tw.gz.Reset(&tw.buf)
	resp.Writer = tw
	defer func() { resp.Writer = tw.ResponseWriter }()
	err := next(c)
	if err != nil || tw.failed || notWhole(c) || tw.status != http.StatusOK {
		tw.drop()
		return err
	}
	if tw.over {
		tw.drop()
		s.cache.put(&cachedAnswer{key: key, tooBig: true})
		return nil
	}
	if err := tw.gz.Close(); err != nil {
		tw.drop()
		return nil
	}
	gzipWriters.Put(tw.gz)
	h := tw.Header()
	s.cache.put(&cachedAnswer{key: key, contentType: h.Get(echo.HeaderContentType),
		disposition: h.Get("Content-Disposition"), gz: bytes.Clone(tw.buf.Bytes())})
	return nil
}

var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	return w
}}

// teeWriter passes an answer on to the client and gzips a copy.
type teeWriter struct {
	http.ResponseWriter
	status int
	gz     *gzip.Writer
	buf    bytes.Buffer
	limit  int64
	over   bool // the copy grew past limit: dropped
	failed bool // a write to the client failed: the copy may be short
}

func (w *teeWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
		if code != http.StatusOK {
			// Only a 200 is the run's answer at its version.
			w.Header().Del("ETag")
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *teeWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if !w.over && w.gz != nil {
		if _, err := w.gz.Write(p); err != nil || int64(w.buf.Len()) > w.limit {
			w.over = true
			w.buf = bytes.Buffer{}
		}
	}
	n, err := w.ResponseWriter.Write(p)
	if err != nil {
		w.failed = true
	}
	return n, err
}

// drop lets the copy go.
func (w *teeWriter) drop() {
	if w.gz != nil {
		w.gz.Reset(io.Discard)
		gzipWriters.Put(w.gz)
		w.gz = nil
	}
	w.buf = bytes.Buffer{}
}

// Unwrap lets http.ResponseController reach the connection (deadlines,
// flushes).
func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// serveAnswer writes a cached answer: gzipped to a client that takes
// gzip (every browser), else unzipped as it is written.
func serveAnswer(c echo.Context, a *cachedAnswer, gzipped bool) error {
	h := c.Response().Header()
	h.Set(echo.HeaderContentType, a.contentType)
	if a.disposition != "" {
		h.Set("Content-Disposition", a.disposition)
	}
	if gzipped {
		h.Set("Content-Encoding", "gzip")
		h.Set("Content-Length", strconv.Itoa(len(a.gz)))
		c.Response().WriteHeader(http.StatusOK)
		_, _ = c.Response().Write(a.gz)
		return nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(a.gz))
	if err != nil {
		return err
	}
	c.Response().WriteHeader(http.StatusOK)
	_, _ = io.Copy(c.Response(), zr)
	return nil
}

// acceptsGzip reports whether an Accept-Encoding header takes gzip
// (RFC 9110 §12.5.3): named, or by *, without q=0.
func acceptsGzip(header string) bool {
	for _, part := range strings.Split(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding != "gzip" && coding != "x-gzip" && coding != "*" {
			continue
		}
		if _, q, ok := strings.Cut(strings.ReplaceAll(params, " ", ""), "q="); ok {
			if v, err := strconv.ParseFloat(q, 64); err == nil && v == 0 {
				continue
			}
		}
		return true
	}
	return false
}

// etagMatches reports whether an If-None-Match header names etag
// (RFC 9110 §13.1.2, weak comparison).
func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	if strings.TrimSpace(header) == "*" {
		return true
	}
	for _, t := range strings.Split(header, ",") {
		if strings.TrimPrefix(strings.TrimSpace(t), "W/") == etag {
			return true
		}
	}
	return false
}

// markNotWhole tells the cache that the answer being written was cut
// short (the store failed midway, after the first byte): it is not kept.
func markNotWhole(c echo.Context) { c.Set(notWholeKey, true) }

func notWhole(c echo.Context) bool { v, _ := c.Get(notWholeKey).(bool); return v }

const notWholeKey = "iolab.notWhole"
