package launch

import (
	"context"
	"errors"
	"sync"
)

// EventPercent is the event of a run on a fio server: how far its step
// is and its IOPS, as fio's server tells its client each second.
const EventPercent = "percent"

// PercentEvent is how far a step on a fio server has gone.
type PercentEvent struct {
	Step    int     `json:"step"` // 1-based
	Total   int     `json:"total"`
	Percent float64 `json:"percent"`   // fio's (FromFio), else estimated from the jobs' runtime; -1: unknown
	Elapsed float64 `json:"elapsed_s"` // since the step's jobs started
	Phase   string  `json:"phase"`     // probing, running, done, failed, cancelled
	// IOPS is the jobs' IOPS: fio's figure of the last second while they
	// run (FromFio), the step's once done; 0 before fio has said.
	IOPS float64 `json:"iops,omitempty"`
	// FromFio: Percent and IOPS are the server's own status, not an
	// estimate.
	FromFio bool `json:"from_fio,omitempty"`
}

// Remote is a run this launcher shows but does not run itself — one an
// iolab agent runs, one on a fio server (run through fio's client), or a
// run of a serial group that waits for the hosts before it: its page has
// the run's events and its Cancel button, like a local run's. Whoever
// runs it publishes its events, watches Context (cancelled by Cancel and
// Shutdown) and calls End once, or hands it over to the launcher.
type Remote struct {
	l     *Launcher
	t     *task
	owned bool
	once  sync.Once

	mu   sync.Mutex
	last map[string]Event // the latest event of each type, for Latest
}

// Adopt registers stored run id as run elsewhere. owned says this
// process runs it (a fio server's client): Shutdown then waits for its
// End. An agent's run is not owned: the agent runs it on while the
// dashboard is gone, and the dashboard that starts again adopts it again.
func (l *Launcher) Adopt(id int64, owned bool) (*Remote, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, errShutdown
	}
	if _, ok := l.tasks[id]; ok {
		return nil, errors.New("launch: run is already active here")
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	t := &task{id: id, feed: newFeed(), ctx: ctx, cancel: cancel, started: true, done: make(chan struct{})}
	l.tasks[id] = t
	if owned {
		l.wg.Add(1)
	}
	return &Remote{l: l, t: t, owned: owned, last: map[string]Event{}}, nil
}

// ID is the run's id.
func (r *Remote) ID() int64 { return r.t.id }

// Context is cancelled when the user cancels the run or the server shuts
// down (Cancelled tells which).
func (r *Remote) Context() context.Context { return r.t.ctx }

// Cancelled reports whether the run's user cancelled it.
func (r *Remote) Cancelled() bool { return errors.Is(context.Cause(r.t.ctx), errCancelled) }

// Publish sends an event to the run's page.
func (r *Remote) Publish(ev Event) {
	r.mu.Lock()
	r.last[ev.Type] = ev
	r.mu.Unlock()
	r.t.feed.publish(ev)
}

// Latest is the last event of type typ published, if any.
func (r *Remote) Latest(typ string) (Event, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev, ok := r.last[typ]
	return ev, ok
}

// End publishes the run's end and forgets it; its status is the caller's
// to store. Calls after the first (or after Handover) do nothing.
func (r *Remote) End(status, msg string) {
	r.once.Do(func() {
		r.forget()
		r.t.feed.publish(Event{Type: EventDone, Data: DoneEvent{Status: status, Error: msg}})
	})
}

// forget takes the run off the launcher.
func (r *Remote) forget() {
	l := r.l
	l.mu.Lock()
	if l.tasks[r.t.id] == r.t {
		delete(l.tasks, r.t.id)
	}
	l.mu.Unlock()
	r.t.cancel(nil)
	close(r.t.done)
	if r.owned {
		l.wg.Done()
	}
}

// Done is closed once the run has ended or been handed over.
func (r *Remote) Done() <-chan struct{} { return r.t.done }

// Handover gives a stored queued run, held here until now (a serial
// group's run on this machine, waiting for the hosts before it), to the
// launcher, which starts it as Launch would once its devices are free.
// Its page keeps its event stream. It fails when the run was cancelled
// or the server is shutting down.
func (r *Remote) Handover(prep *Prepared) error {
	l := r.l
	err := errors.New("launch: the run was cancelled before its turn")
	r.once.Do(func() {
		l.mu.Lock()
		switch {
		case l.closed:
			err = errShutdown
		case r.t.ctx.Err() == nil && l.tasks[r.t.id] == r.t:
			runCtx, cancel := context.WithCancelCause(context.Background())
			t := &task{id: r.t.id, prep: prep, feed: r.t.feed, ctx: runCtx, cancel: cancel, done: make(chan struct{})}
			l.tasks[t.id] = t
			l.queue = append(l.queue, t)
			l.scheduleLocked()
			err = nil
		}
		l.mu.Unlock()
		if err != nil {
			r.forget()
			r.t.feed.publish(Event{Type: EventDone, Data: DoneEvent{Status: "cancelled", Error: err.Error()}})
			return
		}
		r.t.cancel(nil)
		close(r.t.done)
		if r.owned {
			l.wg.Done()
		}
	})
	return err
}

// Wait returns when run id, queued or running here (local or adopted),
// has ended (or been handed over), or at once when it is not here.
func (l *Launcher) Wait(ctx context.Context, id int64) error {
	l.mu.Lock()
	t, ok := l.tasks[id]
	l.mu.Unlock()
	if !ok {
		return nil
	}
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Latest is run id's current step (its start or end) and its latest
// progress, as its page would replay them; ok is false when the run is
// not active here.
func (l *Launcher) Latest(id int64) (step, progress *Event, ok bool) {
	l.mu.Lock()
	t, ok := l.tasks[id]
	l.mu.Unlock()
	if !ok {
		return nil, nil, false
	}
	f := t.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.step != nil {
		ev := *f.step
		step = &ev
	}
	if n := len(f.samples); n > 0 {
		ev := f.samples[n-1]
		progress = &ev
	}
	return step, progress, true
}
