package agent

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"iolab/bench/launch"
	"iolab/bench/sweep"
)

// link is a running run's line to the dashboard: it sends the run's
// events every Heartbeat (an empty batch when there are none), which
// renews the lease, and stops the run when the dashboard says so (its
// user cancelled it, or the lease is no longer this agent's). A
// dashboard that does not answer does not stop the run: it goes on here
// to its end, its steps kept in this agent's store and sent when the
// dashboard is back (a dashboard that starts again holds the run for
// this agent until then; see Timing.Lost), and a cancel given
// meanwhile is the answer to the first heartbeat that gets through.
type link struct {
	a      *Agent
	runID  int64
	cancel context.CancelCauseFunc

	mu        sync.Mutex
	pending   []Event
	lastHeard time.Time // the dashboard's last answer about the run
	away      bool      // no answer for a lease: said once in the log
	wake      chan struct{}
	quit      chan struct{}
	done      chan struct{}
}

// leaseLost is why a run stops when its lease is gone.
type leaseLost struct{ msg string }

func (e *leaseLost) Error() string { return e.msg }

// errUserCancel is why a run stops when its user cancelled it.
var errUserCancel = errors.New("cancelled by the user on the dashboard")

func newLink(a *Agent, runID int64, cancel context.CancelCauseFunc, since time.Time) *link {
	return &link{a: a, runID: runID, cancel: cancel, lastHeard: since,
		wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
}

// maxPending bounds the events kept while the dashboard is away: the
// oldest progress events go first, steps and notices are kept.
const maxPending = MaxEvents

// add queues an event; a step's event is sent at once.
func (l *link) add(ev launch.Event) {
	data, err := json.Marshal(ev.Data)
	if err != nil {
		return
	}
	l.mu.Lock()
	if len(l.pending) >= maxPending {
		for i, p := range l.pending {
			if p.Type == launch.EventProgress {
				l.pending = append(l.pending[:i], l.pending[i+1:]...)
				break
			}
		}
		if len(l.pending) >= maxPending {
			l.pending = l.pending[1:]
		}
	}
	l.pending = append(l.pending, Event{Type: ev.Type, Data: data})
	l.mu.Unlock()
	if ev.Type == launch.EventStep {
		select {
		case l.wake <- struct{}{}:
		default:
		}
	}
}

// heard records an answer about the run.
func (l *link) heard(a Ack) {
	l.mu.Lock()
	l.lastHeard = time.Now()
	back := l.away
	l.away = false
	l.mu.Unlock()
	if back {
		l.a.log.Info("the dashboard answers again; the run went on here", "run", l.runID)
	}
	if a.Cancel {
		l.cancel(errUserCancel)
	}
}

// failed looks at a request about the run that did not go through: a
// refusal ends the run (the lease is gone, the run is not this agent's,
// or its token was revoked); silence does not (see link).
func (l *link) failed(err error) {
	var e *Error
	if errors.As(err, &e) && (e.Code == http.StatusConflict || e.Code == http.StatusNotFound || e.Code == http.StatusUnauthorized) {
		l.cancel(&leaseLost{msg: "the dashboard ended this agent's hold on the run: " + e.Msg})
		return
	}
	l.mu.Lock()
	since := time.Since(l.lastHeard)
	say := !l.away && since > l.a.timing.Lease
	if say {
		l.away = true
	}
	l.mu.Unlock()
	if say {
		l.a.log.Warn("no answer from the dashboard: the run goes on here, and its results are sent when the dashboard is back",
			"run", l.runID, "for", since.Round(time.Second), "err", err)
	}
}

func (l *link) loop() {
	defer close(l.done)
	t := time.NewTicker(l.a.timing.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-l.quit:
			l.send()
			return
		case <-t.C:
		case <-l.wake:
		}
		l.send()
	}
}

// send sends the pending events (or none: a heartbeat).
func (l *link) send() {
	l.mu.Lock()
	batch := l.pending
	l.mu.Unlock()
	var ack Ack
	ctx, cancel := context.WithTimeout(context.Background(), min(10*time.Second, l.a.timing.Lease))
	defer cancel()
	err := l.a.call(ctx, http.MethodPost, runPath(l.runID, "events"), &Events{Events: batch}, &ack, l.a.timing.Lease)
	if err != nil {
		l.failed(err)
		return
	}
	l.mu.Lock()
	l.pending = l.pending[len(batch):]
	l.mu.Unlock()
	l.heard(ack)
}

// stop sends what is pending and ends the loop.
func (l *link) stop() {
	close(l.quit)
	<-l.done
}

// uploader uploads each finished step as it ends, trying again while
// the dashboard is away; what it has not uploaded when the run ends is
// left to push.
type uploader struct {
	a     *Agent
	runID int64
	uid   string

	mu     sync.Mutex
	queue  []*sweep.StepResult
	closed bool
	wake   chan struct{}
	done   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
}

func newUploader(ctx context.Context, a *Agent, runID int64, uid string) *uploader {
	u := &uploader{a: a, runID: runID, uid: uid, wake: make(chan struct{}, 1), done: make(chan struct{})}
	u.ctx, u.cancel = context.WithCancel(ctx)
	go u.loop()
	return u
}

func (u *uploader) add(res *sweep.StepResult) {
	u.mu.Lock()
	u.queue = append(u.queue, res)
	u.mu.Unlock()
	select {
	case u.wake <- struct{}{}:
	default:
	}
}

// close ends the loop once it has tried the queue, or after a few
// seconds when the dashboard is away: push sends the rest.
func (u *uploader) close() {
	u.mu.Lock()
	u.closed = true
	u.mu.Unlock()
	select {
	case u.wake <- struct{}{}:
	default:
	}
	select {
	case <-u.done:
	case <-time.After(5 * time.Second):
		u.cancel()
		<-u.done
	}
	u.cancel()
}

func (u *uploader) loop() {
	defer close(u.done)
	ctx := u.ctx
	var bo backoff
	for {
		u.mu.Lock()
		var next *sweep.StepResult
		if len(u.queue) > 0 {
			next = u.queue[0]
		}
		closed := u.closed
		u.mu.Unlock()
		if next == nil {
			if closed {
				return
			}
			select {
			case <-u.wake:
			case <-ctx.Done():
				return
			}
			continue
		}
		err := u.a.upload(ctx, u.runID, u.uid, next)
		var e *Error
		switch {
		case err == nil || (errors.As(err, &e) && e.Code != http.StatusTooManyRequests && e.Code < 500):
			if err != nil {
				u.a.log.Warn("the dashboard refused a step; it stays here", "step", next.Step.Seq, "err", err)
			}
			bo = backoff{}
			u.mu.Lock()
			u.queue = u.queue[1:]
			u.mu.Unlock()
		case closed:
			return // the dashboard is away: push sends the rest
		default:
			select {
			case <-time.After(bo.next()):
			case <-u.wake:
			case <-ctx.Done():
				return
			}
		}
	}
}
