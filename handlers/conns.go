package handlers

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// conns are the connections of a Listener, with what each is doing, so
// that a full house never blocks a new client: when MaxConns are open, the
// connection that serves no request and has done so longest is closed to
// make room — a kept-alive idle one first, then one that has sent
// nothing, then one still sending its headers (a slow-loris client), then
// one whose request's handler still waits for its body (a slow-loris
// client of bodies: nothing has been done of that request yet). When
// every connection is serving a request, the new one is answered 503 with
// Retry-After and closed.
type conns struct {
	max int
	mu  sync.Mutex
	all map[*trackedConn]struct{}
}

// trackedConn is a connection of a Listener. Its state, serving,
// awaitingBody and since are under conns.mu.
type trackedConn struct {
	net.Conn
	conns *conns
	// state is what http.Server last said of it (ConnState); serving is
	// true from its request's handler start until it is idle again, so
	// an answer still being flushed after its handler returned is never
	// cut.
	state   http.ConnState
	serving bool
	// awaitingBody is true while a request's handler has not read its
	// body to the end (watchBody).
	awaitingBody bool
	since        time.Time
	once         sync.Once
}

func newConns(max int) *conns {
	return &conns{max: max, all: map[*trackedConn]struct{}{}}
}

// evictRank orders the connections that may be closed to make room:
// lower first; -1 is one that may not be.
func (c *trackedConn) evictRank() int {
	switch {
	case c.serving && c.awaitingBody:
		return 3
	case c.serving:
		return -1
	case c.state == http.StateIdle:
		return 0
	case c.state == http.StateNew:
		return 1
	case c.state == http.StateActive:
		return 2 // reading its request's headers
	}
	return -1
}

// add counts tc in; when that makes one too many, it returns the
// connection to close to make room (nil: none, and ok false when none
// may be closed: tc must go).
func (cs *conns) add(tc *trackedConn) (victim *trackedConn, ok bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if len(cs.all) < cs.max {
		cs.all[tc] = struct{}{}
		return nil, true
	}
	for c := range cs.all {
		r := c.evictRank()
		if r < 0 {
			continue
		}
		if victim == nil || r < victim.evictRank() || r == victim.evictRank() && c.since.Before(victim.since) {
			victim = c
		}
	}
	if victim == nil {
		return nil, false
	}
	delete(cs.all, victim)
	victim.state = http.StateClosed // taken: no other Accept picks it again
	cs.all[tc] = struct{}{}
	return victim, true
}

func (cs *conns) remove(tc *trackedConn) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	delete(cs.all, tc)
}

// setState is http.Server's ConnState hook.
func (cs *conns) setState(c net.Conn, state http.ConnState) {
	tc, ok := c.(*trackedConn)
	if !ok {
		return
	}
	cs.mu.Lock()
	if tc.state != http.StateClosed {
		tc.state, tc.since = state, time.Now()
		if state != http.StateActive {
			tc.serving, tc.awaitingBody = false, false
		}
	}
	cs.mu.Unlock()
	if state == http.StateClosed || state == http.StateHijacked {
		tc.once.Do(func() { cs.remove(tc) })
	}
}

// serving marks r's connection as serving a request, so that it is not
// closed to make room.
func (cs *conns) serving(r *http.Request) {
	tc, ok := r.Context().Value(connKey{}).(*trackedConn)
	if !ok {
		return
	}
	cs.mu.Lock()
	if tc.state == http.StateActive {
		tc.serving, tc.since = true, time.Now()
	}
	cs.mu.Unlock()
}

// watchBody returns r's body, which marks its connection as awaiting the
// body until it is read to its end or fails (conns' evictRank).
func (cs *conns) watchBody(r *http.Request) io.ReadCloser {
	tc, ok := r.Context().Value(connKey{}).(*trackedConn)
	if !ok || r.Body == nil || r.Body == http.NoBody {
		return r.Body
	}
	cs.mu.Lock()
	tc.awaitingBody = tc.serving
	cs.mu.Unlock()
	return &watchedBody{ReadCloser: r.Body, done: func() {
		cs.mu.Lock()
		tc.awaitingBody = false
		cs.mu.Unlock()
	}}
}

type watchedBody struct {
	io.ReadCloser
	done func()
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.done()
	}
	return n, err
}

func (b *watchedBody) Close() error {
	b.done()
	return b.ReadCloser.Close()
}

// connKey keys a request's connection in its context (ConnContext).
type connKey struct{}

// Close closes the connection and counts it out.
func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.conns.remove(c) })
	return err
}

// trackListener is a Listener's net.Listener.
type trackListener struct {
	net.Listener
	conns *conns
}

func (l *trackListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		tc := &trackedConn{Conn: c, conns: l.conns, state: http.StateNew, since: time.Now()}
		victim, ok := l.conns.add(tc)
		if victim != nil {
			victim.Close()
		}
		if !ok {
			// Every connection is serving a request: say so, before the
			// client sends one, and close. A new connection's send
			// buffer is empty, so the write does not wait.
			c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
			io.WriteString(c, busyAnswer)
			c.Close()
			continue
		}
		return tc, nil
	}
}

// busyAnswer is what a connection over the cap gets when every other
// one is serving a request.
var busyAnswer = func() string {
	const msg = "every connection of this server is serving a request: try again in a second\n"
	return fmt.Sprintf("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\nContent-Type: text/plain; charset=utf-8\r\n"+
		"Content-Length: %d\r\nConnection: close\r\n\r\n%s", len(msg), msg)
}()

// connContext is http.Server's ConnContext hook: the request's context
// knows its connection.
func connContext(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}
