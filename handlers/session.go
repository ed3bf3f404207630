package handlers

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/url"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Session and login bounds.
const (
	sessionTTL  = 12 * time.Hour // a login lasts this long
	maxSessions = 1000           // past this, the login closest to expiring goes
	// loginTries wrong tokens from one address within loginWindow lock
	// it out for loginWindow, twice that the next time, and so on up to
	// maxLockout.
	loginTries  = 5
	loginWindow = time.Minute
	maxLockout  = time.Hour
)

// sessions are the logins: a random id per login, in the cookie, kept
// here by its SHA-256 (so a lookup's timing tells nothing of the ids)
// with its expiry, and forgotten at logout.
type sessions struct {
	mu     sync.Mutex
	expiry map[[sha256.Size]byte]time.Time
}

func newSessions() *sessions {
	return &sessions{expiry: map[[sha256.Size]byte]time.Time{}}
}

// create starts a login and returns its id (32 random bytes, hex).
func (ss *sessions) create(now time.Time) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	id := hex.EncodeToString(b)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var soonest [sha256.Size]byte
	var soonestAt time.Time
	for k, exp := range ss.expiry {
		if !now.Before(exp) {
			delete(ss.expiry, k)
		} else if soonestAt.IsZero() || exp.Before(soonestAt) {
			soonest, soonestAt = k, exp
		}
	}
	if len(ss.expiry) >= maxSessions {
		delete(ss.expiry, soonest)
	}
	ss.expiry[sha256.Sum256([]byte(id))] = now.Add(sessionTTL)
	return id, nil
}

// valid reports whether id is a login that has not expired or ended.
func (ss *sessions) valid(id string, now time.Time) bool {
	if id == "" {
		return false
	}
	k := sha256.Sum256([]byte(id))
	ss.mu.Lock()
	defer ss.mu.Unlock()
	exp, ok := ss.expiry[k]
	if ok && !now.Before(exp) {
		delete(ss.expiry, k)
		return false
	}
	return ok
}

// revoke ends a login.
func (ss *sessions) revoke(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.expiry, sha256.Sum256([]byte(id)))
}

// loginLimiter counts wrong tokens per client address — at /login and in
// Authorization headers — and locks an address out after loginTries
// within loginWindow, for longer each time.
type loginLimiter struct {
	mu      sync.Mutex
	clients map[string]*loginClient
}

type loginClient struct {
	fails   []time.Time // within loginWindow
	until   time.Time   // locked out until
	strikes int         // lockouts so far
	last    time.Time   // the last wrong token
}

func newLoginLimiter() *loginLimiter {
	return &loginLimiter{clients: map[string]*loginClient{}}
}

// clientAddr is the address a request came from: the connection's, never
// a header a client can write.
func clientAddr(remoteAddr string) string {
	if h, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return h
	}
	return remoteAddr
}

// wait is how long addr is still locked out; 0 when it may try.
func (l *loginLimiter) wait(addr string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.clients[addr]; ok && now.Before(c.until) {
		return c.until.Sub(now)
	}
	return 0
}

// failed counts a wrong token from addr and returns how long it is now
// locked out (0: not yet).
func (l *loginLimiter) failed(addr string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.clients) > 10000 {
		for a, c := range l.clients {
			if now.Sub(c.last) > maxLockout && now.After(c.until) {
				delete(l.clients, a)
			}
		}
	}
	c, ok := l.clients[addr]
	if !ok {
		c = &loginClient{}
		l.clients[addr] = c
	}
	if now.Sub(c.last) > maxLockout {
		c.strikes = 0 // an hour of quiet forgives the past
	}
	c.last = now
	kept := c.fails[:0]
	for _, t := range c.fails {
		if now.Sub(t) < loginWindow {
			kept = append(kept, t)
		}
	}
	c.fails = append(kept, now)
	if len(c.fails) < loginTries {
		return 0
	}
	c.fails = nil
	c.strikes++
	lock := min(loginWindow<<min(c.strikes-1, 10), maxLockout)
	c.until = now.Add(lock)
	return lock
}

// succeeded forgets addr's wrong tokens.
func (l *loginLimiter) succeeded(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.clients, addr)
}

// safeNext is where a login (or a label form) goes next: next itself when
// it is a path on this server, else "/". A browser strips tabs and
// newlines from a Location and reads a backslash as a slash, so
// "/\t/evil.example" and "/\\evil.example" are "//evil.example", another
// site; percent-encoded, they may be decoded on the way by a proxy or a
// later redirect. So next must start with one "/", and neither it nor any
// decoding of it may hold a control character, a backslash, "//" at its
// start, a scheme or a host.
func safeNext(next string) string {
	if !localPath(next) {
		return "/"
	}
	return next
}

func localPath(p string) bool {
	for range 4 { // "%2525..." is decoded once per pass
		if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.ContainsFunc(p, func(r rune) bool {
			return r < 0x20 || r == 0x7f || r == '\\' || !unicode.IsPrint(r) || r == utf8.RuneError
		}) {
			return false
		}
		u, err := url.Parse(p)
		if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
			return false
		}
		d, err := url.PathUnescape(p)
		if err != nil {
			return false
		}
		if d == p {
			return true
		}
		p = d
	}
	return false
}
