package handlers

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// heldConns are a test's raw client connections, closed at its end.
type heldConns struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (h *heldConns) add(c net.Conn) {
	h.mu.Lock()
	h.conns = append(h.conns, c)
	h.mu.Unlock()
}

func (h *heldConns) closeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.conns {
		c.Close()
	}
	h.conns = nil
}

// closedByServer counts the held connections the server has closed: a
// read finds EOF (or a reset) at once.
func (h *heldConns) closedByServer() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, c := range h.conns {
		c.SetReadDeadline(time.Now().Add(time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); err != nil {
			if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
				n++
			}
		}
	}
	return n
}

// dialFrom connects to addr from the loopback address from
// ("": the default).
func dialFrom(t *testing.T, from, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// answeredWithin checks that a normal request (a new connection, as a
// browser's next tab) is answered 200 within bound while the server is
// held: the server is not blocked. bound is no speed claim: a free server
// answers in milliseconds.
func answeredWithin(t *testing.T, ls *liveServer, bound time.Duration, when string) {
	t.Helper()
	client := &http.Client{Timeout: bound, Transport: &http.Transport{DisableKeepAlives: true}}
	for i := range 3 {
		start := time.Now()
		resp, err := client.Get(ls.url + "/api/runs")
		if err != nil {
			t.Fatalf("%s: request %d not answered within %v: %v", when, i+1, bound, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: request %d: %d", when, i+1, resp.StatusCode)
		}
		t.Logf("%s: answered in %v", when, time.Since(start).Round(time.Millisecond))
	}
}

// launchLong starts a run that goes on for a minute (cancelled at the
// test's end) and returns its id: its event stream stays open.
func (ls *liveServer) launchLong(t *testing.T) int64 {
	t.Helper()
	status, _, body := ls.send(t, "POST", "/api/runs", strings.NewReader(`{"name":"long","options":{"filename":"long.dat","size":"1m",
		"rw":"randread","ioengine":"psync","runtime":"60s","time_based":1,"rate_iops":50}}`), "Content-Type", "application/json")
	var created createdRun
	if err := json.Unmarshal([]byte(body), &created); status != http.StatusCreated || err != nil {
		t.Fatalf("launch: %d %s", status, body)
	}
	t.Cleanup(func() { ls.send(t, "POST", fmt.Sprintf("/api/runs/%d/cancel", created.ID), nil) })
	return created.ID
}

// TestConnectionsNotExhausted: 512 kept-alive idle connections, 512
// slow-loris clients or 512 event streams (issue 23, item 7: each blocked
// every new request for about 2 minutes) leave the dashboard answering a
// normal request within 1 s, during and after.
func TestConnectionsNotExhausted(t *testing.T) {
	const n = 512
	ls := startLive(t, Config{})
	if ls.srv.httpLimits.MaxConns != n {
		t.Fatalf("MaxConns %d: this test fills %d", ls.srv.httpLimits.MaxConns, n)
	}
	run := ls.launchLong(t)

	for _, tc := range []struct {
		name string
		// hold opens one connection and leaves it as the attack does.
		hold func(t *testing.T, held *heldConns)
	}{
		{"idle keep-alive", func(t *testing.T, held *heldConns) {
			c := dialFrom(t, "", ls.addr)
			held.add(c)
			fmt.Fprintf(c, "GET /static/app.css HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			if resp.StatusCode != 200 || resp.Close {
				t.Fatalf("the idle client's request: %d, close %v", resp.StatusCode, resp.Close)
			}
		}},
		{"slow-loris", func(t *testing.T, held *heldConns) {
			c := dialFrom(t, "", ls.addr)
			held.add(c)
			fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
			go func() { // a byte every 100 ms, for as long as it is let
				for range 30 {
					time.Sleep(100 * time.Millisecond)
					if _, err := c.Write([]byte("a")); err != nil {
						return
					}
				}
			}()
		}},
		{"slow bodies", func(t *testing.T, held *heldConns) {
			c := dialFrom(t, "", ls.addr)
			held.add(c)
			fmt.Fprintf(c, "POST /login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\nnext=")
			go func() { // a byte every 100 ms, for as long as it is let
				for range 30 {
					time.Sleep(100 * time.Millisecond)
					if _, err := c.Write([]byte("a")); err != nil {
						return
					}
				}
			}()
		}},
		{"event streams", func(t *testing.T, held *heldConns) {
			c := dialFrom(t, "", ls.addr)
			held.add(c)
			fmt.Fprintf(c, "GET /api/runs/%d/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", run)
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			line, err := bufio.NewReader(c).ReadString('\n')
			if err != nil || !strings.HasPrefix(line, "HTTP/1.1 200") {
				t.Fatalf("event stream: %q %v", line, err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			held := &heldConns{}
			defer held.closeAll()
			for range n {
				tc.hold(t, held)
			}
			if tc.name == "slow bodies" { // every handler waits for its body
				deadline := time.Now().Add(5 * time.Second)
				for ls.srv.conns.awaitingBodies() < n {
					if time.Now().After(deadline) {
						t.Fatalf("%d of %d handlers wait for their bodies", ls.srv.conns.awaitingBodies(), n)
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			answeredWithin(t, ls, time.Second, fmt.Sprintf("with %d %s connections held", n, tc.name))
			if tc.name == "event streams" {
				// The oldest streams ended; their connections went idle.
				ls.srv.streams.mu.Lock()
				open := ls.srv.streams.n
				ls.srv.streams.mu.Unlock()
				if max := ls.srv.httpLimits.MaxStreamsPerClient; open != max {
					t.Errorf("%d event streams open from one address that opened %d; want its cap, %d", open, n, max)
				}
			} else {
				closed := held.closedByServer()
				t.Logf("the server closed %d of the %d held connections", closed, n)
				if closed == 0 {
					t.Errorf("the server closed none of %d %s connections, yet answered", n, tc.name)
				}
			}
			held.closeAll()
			answeredWithin(t, ls, time.Second, "after")
		})
	}
}

// TestEventStreamCaps: a client's streams over its cap close its own
// oldest (another client's stream is untouched); streams over the total
// cap are refused with 429 and Retry-After.
func TestEventStreamCaps(t *testing.T) {
	ls := startLive(t, Config{HTTP: HTTPLimits{MaxStreams: 3, MaxStreamsPerClient: 2}})
	run := ls.launchLong(t)
	held := &heldConns{}
	defer held.closeAll()
	open := func(from string) (net.Conn, *bufio.Reader, *http.Response) {
		c := dialFrom(t, from, ls.addr)
		held.add(c)
		fmt.Fprintf(c, "GET /api/runs/%d/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", run)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		return c, br, resp
	}
	// ended reports whether the stream's answer ended (the server
	// closed the stream): its body reads to EOF within a second.
	ended := func(resp *http.Response) bool {
		done := make(chan error, 1)
		go func() { _, err := io.Copy(io.Discard, resp.Body); done <- err }()
		select {
		case err := <-done:
			return err == nil
		case <-time.After(time.Second):
			return false
		}
	}
	_, _, a1 := open("127.0.0.2")
	_, _, b1 := open("127.0.0.3")
	_, _, a2 := open("127.0.0.2")
	for _, r := range []*http.Response{a1, b1, a2} {
		if r.StatusCode != 200 {
			t.Fatalf("stream: %d", r.StatusCode)
		}
	}
	// The third of 127.0.0.2 closes its first; 127.0.0.3's stays.
	_, _, a3 := open("127.0.0.2")
	if a3.StatusCode != 200 {
		t.Fatalf("a client's third stream: %d", a3.StatusCode)
	}
	if !ended(a1) {
		t.Error("a client's oldest stream stayed open over its cap of 2")
	}
	if ended(b1) {
		t.Error("another client's stream was closed")
	}
	// Three open (a2, a3, b1): a fourth client is refused.
	_, _, c1 := open("127.0.0.4")
	body, _ := io.ReadAll(c1.Body)
	if c1.StatusCode != http.StatusTooManyRequests || c1.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "event streams are open") {
		t.Fatalf("a stream over the total cap: %d, Retry-After %q: %s", c1.StatusCode, c1.Header.Get("Retry-After"), body)
	}
	answeredWithin(t, ls, time.Second, "with every stream taken")
}

// TestTurnWaitersBounded: requests waiting for a turn hold their
// connections, so only a few may wait: with the one upload turn held by
// a stalled import and maxTurnWaiters imports waiting, the next import
// is answered 429 at once, not after HeavyWait, and a page still is.
func TestTurnWaitersBounded(t *testing.T) {
	const wait = 4 * time.Second
	ls := startLive(t, Config{HTTP: HTTPLimits{MaxConns: 16, MaxUploads: 1, HeavyWait: wait}})
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() { // holds the upload turn: its body stalls
		r, _ := http.NewRequest("POST", ls.url+"/api/import", pr)
		r.ContentLength = 1 << 19
		if resp, err := attackClient.Do(r); err == nil {
			resp.Body.Close()
		}
	}()
	pw.Write(make([]byte, 1<<10))
	deadline := time.Now().Add(5 * time.Second)
	for len(ls.srv.turns[upload]) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the stalled import never took the upload turn")
		}
		time.Sleep(10 * time.Millisecond)
	}
	n := ls.srv.maxTurnWaiters()
	for range n {
		go func() {
			if resp, err := attackClient.Post(ls.url+"/api/import", "application/json", strings.NewReader("{}")); err == nil {
				resp.Body.Close()
			}
		}()
	}
	for ls.srv.turnWaiters.Load() < int64(n) {
		if time.Now().After(deadline) {
			t.Fatalf("%d imports waiting, want %d", ls.srv.turnWaiters.Load(), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	status, h, body := ls.send(t, "POST", "/api/import", strings.NewReader("{}"))
	if took := time.Since(start); status != http.StatusTooManyRequests || h.Get("Retry-After") == "" || took >= wait {
		t.Fatalf("an import over %d waiting: %d after %v (Retry-After %q), want 429 at once: %s", n, status, took.Round(time.Millisecond), h.Get("Retry-After"), body)
	}
	answeredWithin(t, ls, time.Second, fmt.Sprintf("with %d imports waiting for the held turn", n))
}

// awaitingBodies is how many connections' handlers wait for their
// request's body.
func (cs *conns) awaitingBodies() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	n := 0
	for c := range cs.all {
		if c.serving && c.awaitingBody {
			n++
		}
	}
	return n
}

// TestConnectionsAllServing: when every connection is serving a request
// (here, event streams), a new one is told so, 503 with Retry-After, and
// closed, instead of waiting unseen in the backlog.
func TestConnectionsAllServing(t *testing.T) {
	ls := startLive(t, Config{HTTP: HTTPLimits{MaxConns: 4, MaxStreams: 10, MaxStreamsPerClient: 10}})
	run := ls.launchLong(t)
	held := &heldConns{}
	defer held.closeAll()
	for range 4 {
		c := dialFrom(t, "", ls.addr)
		held.add(c)
		fmt.Fprintf(c, "GET /api/runs/%d/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", run)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 200") {
			t.Fatalf("event stream: %q %v", line, err)
		}
	}
	c := dialFrom(t, "", ls.addr)
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "every connection") {
		t.Fatalf("a connection over the cap: %d, Retry-After %q: %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	held.closeAll()
	// The streams end as their server side sees the clients gone.
	deadline := time.Now().Add(5 * time.Second)
	for ls.srv.conns.count() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections still open 5 s after their clients closed them", ls.srv.conns.count())
		}
		time.Sleep(10 * time.Millisecond)
	}
	answeredWithin(t, ls, time.Second, "after the streams closed")
}

func (cs *conns) count() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.all)
}
