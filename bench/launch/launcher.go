package launch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"iolab/bench"
	"iolab/bench/record"
	"iolab/bench/sweep"
)

// Event is one server-sent event of a run's progress.
type Event struct {
	Type string // EventQueued, EventStep, EventProgress, EventNotice or EventDone
	Data any    // QueuedEvent, StepEvent, ProgressEvent, NoticeEvent or DoneEvent, sent as JSON
}

// Event types.
const (
	EventQueued   = "queued"
	EventStep     = "step"
	EventProgress = "progress"
	EventNotice   = "notice"
	EventDone     = "done"
)

// StepEvent says a step started (Status "") or ended.
type StepEvent struct {
	Step   int               `json:"step"` // 1-based
	Total  int               `json:"total"`
	Axes   []sweep.AxisValue `json:"axes"`
	Repeat int               `json:"repeat"` // 1-based
	Label  string            `json:"label"`
	Status string            `json:"status,omitempty"`
	Error  string            `json:"error,omitempty"`
	// Jobs are a done step's IOPS (read and write) per job, then the
	// total of alike jobs (summary.FiguresOf); none for a step that did
	// not finish.
	Jobs []JobIOPS `json:"jobs,omitempty"`
}

// JobIOPS is one job's IOPS in a finished step, or over the last
// interval of a running one.
type JobIOPS struct {
	Name  string  `json:"name"`
	Total bool    `json:"total,omitempty"` // the step's alike jobs added up
	IOPS  float64 `json:"iops"`
}

// ProgressEvent is the running step's IOPS over the last interval.
type ProgressEvent struct {
	Step    int     `json:"step"`
	Total   int     `json:"total"`
	Elapsed float64 `json:"elapsed_s"` // since the step's first I/O
	// Phase is what the step does: "discard" (or "prepare": dropping
	// caches, switching the scheduler) before its first I/O, "ramp",
	// "measure".
	Phase string `json:"phase"`
	// IOPS is the step's jobs added up when they are alike (Summed);
	// otherwise 0, and Jobs has each one's.
	IOPS   float64 `json:"iops"`
	Summed bool    `json:"summed"`
	// Jobs are each job's IOPS, then their total when they are alike
	// (as StepEvent's), when the step runs more than one job.
	Jobs []JobIOPS `json:"jobs,omitempty"`
	// More counts the jobs left out of Jobs (at most 16 are named).
	More     int     `json:"more,omitempty"`
	Left     float64 `json:"left_s"` // time left for the whole run; -1 when unknown
	RunSince float64 `json:"run_s"`  // since the run started
	// ClatP99 is the step's clat p99 so far in µs (Tick.ClatP99), when
	// known.
	ClatP99 float64 `json:"clat_p99_us,omitempty"`
}

// DoneEvent ends a run's stream.
type DoneEvent struct {
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// NoticeEvent is what the runner tells the user before a job runs, in
// fio's words ("job: Laying out IO file (1 file / 64MiB)").
type NoticeEvent struct {
	Message string `json:"message"`
}

// QueuedEvent says what a queued run waits for.
type QueuedEvent struct {
	Waiting string `json:"waiting"`
}

// feed is a run's small pub/sub: subscribers get what happens from the
// moment they join, after a replay of the current step and its progress
// so a page opened mid-step draws the whole step.
type feed struct {
	mu      sync.Mutex
	subs    map[chan Event]struct{}
	step    *Event  // the current step's start
	samples []Event // its progress events
	queued  *Event
	done    *Event
}

func newFeed() *feed { return &feed{subs: map[chan Event]struct{}{}} }

// maxReplay bounds the progress events kept for late subscribers: an
// hour's step at LiveEvery.
const maxReplay = 4 * 3600

func (f *feed) publish(ev Event) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch ev.Type {
	case EventQueued:
		f.queued = &ev
	case EventStep:
		if se, ok := ev.Data.(StepEvent); ok && se.Status == "" {
			f.step, f.samples = &ev, f.samples[:0]
		}
		f.queued = nil
	case EventProgress:
		if len(f.samples) < maxReplay {
			f.samples = append(f.samples, ev)
		}
	case EventDone:
		f.done = &ev
	}
	for ch := range f.subs {
		select {
		case ch <- ev:
		default: // a slow reader misses a point rather than stalling the run
			if ev.Type == EventDone { // but never the end
				select {
				case <-ch:
				default:
				}
				select {
				case ch <- ev:
				default:
				}
			}
		}
		if ev.Type == EventDone {
			close(ch)
			delete(f.subs, ch)
		}
	}
}

// subscribe returns the replay and a channel of what follows; the channel
// is closed after the done event. cancel unsubscribes.
func (f *feed) subscribe() (replay []Event, ch chan Event, cancel func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.queued != nil {
		replay = append(replay, *f.queued)
	}
	if f.step != nil {
		replay = append(replay, *f.step)
		replay = append(replay, f.samples...)
	}
	ch = make(chan Event, 64)
	if f.done != nil {
		replay = append(replay, *f.done)
		close(ch)
		return replay, ch, func() {}
	}
	f.subs[ch] = struct{}{}
	return replay, ch, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if _, ok := f.subs[ch]; ok {
			delete(f.subs, ch)
			close(ch)
		}
	}
}

// task is one run handed to the launcher.
type task struct {
	id      int64
	prep    *Prepared
	feed    *feed
	ctx     context.Context
	cancel  context.CancelCauseFunc
	started bool
	waiting string // what a queued run waits for
	done    chan struct{}
}

// Launcher runs plans from the web in background goroutines, one run per
// target device at a time; a run whose device is busy waits, queued, in
// the order runs were launched. Its runs outlive the requests that
// launched them and end with Shutdown.
type Launcher struct {
	store     Recorder
	newRunner func() *bench.Runner
	log       *slog.Logger
	// ProgressEvery is how often a running step's IOPS is published.
	progressEvery time.Duration
	// Quota, when set (before the first launch), is checked again as
	// each run starts: it may have waited while the data directory
	// filled.
	Quota *Quota

	mu     sync.Mutex
	tasks  map[int64]*task // queued and running, by run id
	queue  []*task         // queued, in launch order
	busy   map[string]int64
	closed bool
	wg     sync.WaitGroup
}

// NewLauncher returns a launcher that records runs in store and runs each
// with a runner from newRunner (one per run: CompletedIOs is per runner).
func NewLauncher(store Recorder, newRunner func() *bench.Runner, log *slog.Logger, progressEvery time.Duration) *Launcher {
	if progressEvery <= 0 {
		progressEvery = LiveEvery
	}
	return &Launcher{store: store, newRunner: newRunner, log: log, progressEvery: progressEvery,
		tasks: map[int64]*task{}, busy: map[string]int64{}}
}

// errShutdown is the cause of runs cancelled by Shutdown.
var errShutdown = errors.New("the server shut down")

// errCancelled is the cause of runs cancelled by a user.
var errCancelled = errors.New("cancelled by the user")

// Launch stores a prepared plan (its Record) as a queued run and starts
// it as soon as its devices are free (Prepared.Devices). The run is
// detached from ctx's cancellation.
func (l *Launcher) Launch(ctx context.Context, prep *Prepared) (int64, error) {
	rec := prep.Record
	rec.Status = record.StatusQueued
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	if closed {
		return 0, errShutdown
	}
	id, err := l.store.CreateRun(ctx, rec)
	if err != nil {
		return 0, err
	}
	if err := l.LaunchStored(ctx, id, prep); err != nil {
		return 0, err
	}
	return id, nil
}

// LaunchStored starts stored queued run id as Launch does, once its
// devices are free (a group's run, stored with the group). When the
// launcher is shutting down the run is marked cancelled.
func (l *Launcher) LaunchStored(ctx context.Context, id int64, prep *Prepared) error {
	runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	t := &task{id: id, prep: prep, feed: newFeed(), ctx: runCtx, cancel: cancel, done: make(chan struct{})}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		cancel(errShutdown)
		_ = l.store.SetRunStatus(context.WithoutCancel(ctx), id, record.StatusCancelled, errShutdown.Error())
		return errShutdown
	}
	l.tasks[id] = t
	l.queue = append(l.queue, t)
	l.scheduleLocked()
	l.mu.Unlock()
	return nil
}

// scheduleLocked starts every queued run whose devices are free and not
// wanted by a run queued before it.
func (l *Launcher) scheduleLocked() {
	claimed := map[string]int64{}
	rest := l.queue[:0]
	for _, t := range l.queue {
		blocker := ""
		for _, d := range t.prep.Devices {
			if id, ok := l.busy[d]; ok {
				blocker = fmt.Sprintf("run %d is using %s", id, d)
				break
			}
			if id, ok := claimed[d]; ok {
				blocker = fmt.Sprintf("run %d, queued before it, needs %s", id, d)
				break
			}
		}
		if blocker != "" {
			for _, d := range t.prep.Devices {
				if _, ok := claimed[d]; !ok {
					claimed[d] = t.id
				}
			}
			if blocker != t.waiting {
				t.waiting = blocker
				t.feed.publish(Event{Type: EventQueued, Data: QueuedEvent{Waiting: blocker}})
			}
			rest = append(rest, t)
			continue
		}
		for _, d := range t.prep.Devices {
			l.busy[d] = t.id
		}
		t.started, t.waiting = true, ""
		l.wg.Add(1)
		go l.run(t)
	}
	clear(l.queue[len(rest):])
	l.queue = rest
}

// run executes one task on its own goroutine.
func (l *Launcher) run(t *task) {
	defer l.wg.Done()
	defer close(t.done)
	runner := l.newRunner()
	plan, steps := t.prep.Plan, t.prep.Steps
	if runner.Interval == 0 {
		runner.Interval = SampleInterval(steps)
	}
	prog := NewProgress(runner, steps, l.progressEvery, func(tk Tick) {
		t.feed.publish(Event{Type: EventProgress, Data: ProgressEventOf(tk, plan.Discard)})
	})
	runner.Notice = func(msg string) {
		t.feed.publish(Event{Type: EventNotice, Data: NoticeEvent{Message: msg}})
	}
	hooks := Hooks{Waiting: func(msg string) {
		t.feed.publish(Event{Type: EventQueued, Data: QueuedEvent{Waiting: msg}})
	}, Quota: l.Quota}
	hooks.PlanHooks = sweep.PlanHooks{
		StepStarted: func(st *sweep.Step, total int) {
			prog.StepStarted(st)
			t.feed.publish(Event{Type: EventStep, Data: StepStartEvent(st, total)})
		},
		StepDone: func(res *sweep.StepResult) error {
			t.feed.publish(Event{Type: EventStep, Data: StepEndEvent(res, len(steps))})
			return nil
		},
	}
	l.log.Info("run started", "run", t.id, "name", plan.Name, "steps", len(steps))
	_, status, err := Execute(t.ctx, l.store, runner, t.id, t.prep, hooks)
	prog.Stop()
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	l.log.Info("run ended", "run", t.id, "status", status, "err", msg)
	l.mu.Lock()
	delete(l.tasks, t.id)
	for _, d := range t.prep.Devices {
		if l.busy[d] == t.id {
			delete(l.busy, d)
		}
	}
	if !l.closed {
		l.scheduleLocked()
	}
	l.mu.Unlock()
	if (status == record.StatusFailed || status == record.StatusPartial) && msg == "" {
		if r, err := l.store.GetRun(context.WithoutCancel(t.ctx), t.id); err == nil {
			msg = r.Error
		}
	}
	t.feed.publish(Event{Type: EventDone, Data: DoneEvent{Status: status, Error: msg}})
}

// Subscribe returns the events of a queued or running run; ok is false
// when the launcher does not have it (it ended, or never ran here).
func (l *Launcher) Subscribe(id int64) (replay []Event, ch chan Event, cancel func(), ok bool) {
	l.mu.Lock()
	t, ok := l.tasks[id]
	l.mu.Unlock()
	if !ok {
		return nil, nil, nil, false
	}
	replay, ch, cancel = t.feed.subscribe()
	return replay, ch, cancel, true
}

// Waiting says what a queued run waits for; "" when it is not queued here.
func (l *Launcher) Waiting(id int64) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t, ok := l.tasks[id]; ok && !t.started {
		return t.waiting
	}
	return ""
}

// Active reports whether the launcher has run id, queued or running.
func (l *Launcher) Active(id int64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.tasks[id]
	return ok
}

// ErrNotActive is Cancel's error for a run that is not queued or running
// here.
var ErrNotActive = errors.New("the run is not queued or running on this server")

// Cancel stops run id: a running one ends its step (which is stored as
// cancelled) and restores the schedulers; a queued one never starts.
func (l *Launcher) Cancel(ctx context.Context, id int64) error {
	l.mu.Lock()
	t, ok := l.tasks[id]
	if !ok {
		l.mu.Unlock()
		return ErrNotActive
	}
	if t.started {
		l.mu.Unlock()
		t.cancel(errCancelled)
		return nil
	}
	l.queue = slices.DeleteFunc(l.queue, func(x *task) bool { return x == t })
	delete(l.tasks, id)
	l.scheduleLocked()
	l.mu.Unlock()
	t.cancel(errCancelled)
	close(t.done)
	err := l.store.SetRunStatus(context.WithoutCancel(ctx), id, record.StatusCancelled, errCancelled.Error())
	t.feed.publish(Event{Type: EventDone, Data: DoneEvent{Status: record.StatusCancelled, Error: errCancelled.Error()}})
	return err
}

// Shutdown cancels every run: running ones end their step cleanly (step
// stored as cancelled, schedulers restored, run marked cancelled), queued
// ones are marked cancelled. It waits for them until ctx ends.
func (l *Launcher) Shutdown(ctx context.Context) error {
	l.mu.Lock()
	l.closed = true
	queued := l.queue
	l.queue = nil
	var running []*task
	for _, t := range l.tasks {
		if t.started {
			running = append(running, t)
		}
	}
	for _, t := range queued {
		delete(l.tasks, t.id)
	}
	l.mu.Unlock()
	var errs []error
	for _, t := range queued {
		t.cancel(errShutdown)
		close(t.done)
		errs = append(errs, l.store.SetRunStatus(context.WithoutCancel(ctx), t.id, record.StatusCancelled, errShutdown.Error()))
		t.feed.publish(Event{Type: EventDone, Data: DoneEvent{Status: record.StatusCancelled, Error: errShutdown.Error()}})
	}
	for _, t := range running {
		t.cancel(errShutdown)
	}
	waited := make(chan struct{})
	go func() { l.wg.Wait(); close(waited) }()
	select {
	case <-waited:
	case <-ctx.Done():
		errs = append(errs, fmt.Errorf("launcher: runs still ending: %w", ctx.Err()))
	}
	return errors.Join(errs...)
}
