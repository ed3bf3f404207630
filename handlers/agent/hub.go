package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"iolab/bench/launch"
	"iolab/bench/sweep"
	"iolab/db"
)

// Hub is the dashboard's side of the protocol: it queues runs for agents,
// hands each to its agent when it asks for work, holds the run's lease,
// relays its events to the run's page, stores its steps as they arrive,
// shows the run "agent unreachable" while its agent is silent and marks
// it interrupted when the agent is lost (reach.go). Its methods are what
// the handlers call, one per request, after Authenticate.
type Hub struct {
	store  *db.Store
	log    *slog.Logger
	timing Timing

	mu      sync.Mutex
	queues  map[int64][]*job // agent id → its queued runs, oldest first
	leases  map[int64]*lease // run id → its lease
	pollers map[int64]chan struct{}
	seen    map[int64]time.Time // last time an agent's last_seen was written
	buckets map[int64]*bucket
}

// job is a run queued for an agent.
type job struct {
	runID  int64
	uid    string
	agent  int64
	name   string // the agent's, as the dashboard calls it
	plan   *sweep.Plan
	remote *launch.Remote
}

// lease is a run an agent holds.
type lease struct {
	job *job
	// heard is the agent's last word about the run (a run held again by
	// a dashboard that started again: its host's last word before).
	heard time.Time
	until time.Time // when the run is lost, unless the agent is heard from
	// away: the run shows "agent unreachable" (no word for a lease, or
	// none since this dashboard started).
	away   bool
	cancel bool // its user cancelled it; the agent is told at its next request
}

// NewHub returns a hub over store. The runs it queues come with their
// pages (launch.Remote, see Queue).
func NewHub(store *db.Store, log *slog.Logger, timing Timing) *Hub {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Hub{store: store, log: log, timing: timing.withDefaults(),
		queues: map[int64][]*job{}, leases: map[int64]*lease{}, pollers: map[int64]chan struct{}{},
		seen: map[int64]time.Time{}, buckets: map[int64]*bucket{}}
}

// Timing is the hub's clock.
func (h *Hub) Timing() Timing { return h.timing }

// Run watches the leases until ctx ends: a run whose agent has not been
// heard from for a lease's length shows "agent unreachable", and is
// marked interrupted once the agent is lost (Timing.Lost).
func (h *Hub) Run(ctx context.Context) {
	t := time.NewTicker(min(time.Second, h.timing.Lease/10))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			h.expire(now)
		}
	}
}

// finish stores a run's final status and ends its page's stream.
func (h *Hub) finish(j *job, status, msg string) {
	ctx := context.Background()
	if err := h.store.SetRunStatus(ctx, j.runID, status, msg); err != nil {
		h.log.Warn("agent run: store its status", "run", j.runID, "err", err)
	}
	h.log.Info("agent run ended", "run", j.runID, "agent", j.agent, "status", status, "msg", msg)
	j.remote.End(status, msg)
}

func (h *Hub) agentName(id int64) string {
	if host, err := h.store.GetHost(context.Background(), id); err == nil {
		return host.Name
	}
	return fmt.Sprintf("#%d", id)
}

// Queue hands stored run id (queued, its plan plan) to agent agentID: it
// gets it when it next asks for work. remote is the run's page; when its
// user cancels it before the agent takes it, the run is cancelled here.
// The plan is checked (group.Launcher.Check): the agent checks it again
// against its own allow-list before it runs it.
func (h *Hub) Queue(agentID, runID int64, uid string, plan *sweep.Plan, remote *launch.Remote) {
	j := &job{runID: runID, uid: uid, agent: agentID, name: h.agentName(agentID), plan: plan, remote: remote}
	h.mu.Lock()
	h.queues[agentID] = append(h.queues[agentID], j)
	if ch := h.pollers[agentID]; ch != nil {
		close(ch)
		delete(h.pollers, agentID)
	}
	h.mu.Unlock()
	remote.Publish(launch.Event{Type: launch.EventQueued, Data: launch.QueuedEvent{
		Waiting: fmt.Sprintf("agent %s to ask for work", j.name)}})
	go h.watch(j)
}

// watch follows a job's page: a cancel by its user stops it (queued: at
// once; leased: the agent is told), a shutdown forgets it (queued: the
// next start marks it interrupted; leased: the agent runs on, and the
// next start holds it again, Resume).
func (h *Hub) watch(j *job) {
	select {
	case <-j.remote.Done():
		return
	case <-j.remote.Context().Done():
	}
	h.mu.Lock()
	q := h.queues[j.agent]
	queued := slices.Contains(q, j)
	h.queues[j.agent] = slices.DeleteFunc(q, func(x *job) bool { return x == j })
	var away *Reach
	if l, ok := h.leases[j.runID]; ok && l.job == j {
		l.cancel = true
		if l.away {
			r := h.reachOf(l)
			away = &r
		}
	}
	h.mu.Unlock()
	if away != nil && j.remote.Cancelled() {
		// The page says the cancel waits for the agent.
		h.log.Info("agent run cancelled while its agent is unreachable: it is told when it is back", "run", j.runID, "agent", j.name)
		j.remote.Publish(reachEvent(*away))
	}
	switch {
	case !j.remote.Cancelled():
		j.remote.End(db.StatusInterrupted, "the dashboard shut down")
	case queued:
		h.finish(j, db.StatusCancelled, "cancelled by the user before the agent took it")
	}
}

// Authenticate finds the agent a token belongs to: a *Error 401 that says
// why when none does (unknown, or revoked).
func (h *Hub) Authenticate(ctx context.Context, token string) (*db.Host, error) {
	host, err := h.store.AgentByToken(ctx, token)
	var re *db.RevokedError
	switch {
	case errors.Is(err, db.ErrUnknownToken):
		return nil, refuse(http.StatusUnauthorized, "unknown agent token: issue one on the dashboard's Hosts page (/hosts) and give it with --token")
	case errors.As(err, &re):
		e := refuse(http.StatusUnauthorized, "%s: this agent may no longer connect; issue it a new token on the Hosts page", re.Error())
		e.Err = re
		return nil, e
	case err != nil:
		return nil, err
	}
	return host, nil
}

// Allow takes one of agent id's requests from its budget; false: it sent
// too many (429).
func (h *Hub) Allow(id int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	b := h.buckets[id]
	if b == nil {
		b = &bucket{tokens: Burst, at: time.Now()}
		h.buckets[id] = b
	}
	return b.take(time.Now())
}

// bucket is a token bucket of RequestsPerSecond, Burst deep.
type bucket struct {
	tokens float64
	at     time.Time
}

func (b *bucket) take(now time.Time) bool {
	b.tokens = min(Burst, b.tokens+now.Sub(b.at).Seconds()*RequestsPerSecond)
	b.at = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

// touch records that agent host was seen now from addr, writing it at
// most every second.
func (h *Hub) touch(ctx context.Context, host *db.Host, addr string) {
	now := time.Now()
	h.mu.Lock()
	due := now.Sub(h.seen[host.ID]) >= time.Second
	if due {
		h.seen[host.ID] = now
	}
	h.mu.Unlock()
	if due {
		if err := h.store.HostSeen(ctx, host.ID, now, addr, nil); err != nil {
			h.log.Warn("agent seen", "agent", host.Name, "err", err)
		}
	}
}

// Hello registers what an agent says of itself.
func (h *Hub) Hello(ctx context.Context, host *db.Host, addr string, hello *Hello) (Welcome, error) {
	if len(hello.AllowTargets) > db.MaxHostDevices || len(hello.Targets) > db.MaxHostDevices {
		return Welcome{}, badRequest("at most %d allowed targets", db.MaxHostDevices)
	}
	w := Welcome{ID: host.ID, Name: host.Name, Lease: h.timing.Lease.Seconds(), Lost: h.timing.Lost.Seconds(),
		Heartbeat: h.timing.Heartbeat.Seconds(), Poll: h.timing.Poll.Seconds()}
	if hello.Name != "" && hello.Name != host.Name {
		err := h.store.RenameHost(ctx, host.ID, hello.Name)
		var taken *db.NameTakenError
		switch {
		case errors.As(err, &taken):
			w.Note = fmt.Sprintf("another host is called %s: this agent stays %s", hello.Name, host.Name)
		case err != nil:
			return Welcome{}, badRequest("%v", err)
		default:
			w.Name = hello.Name
		}
	}
	d := &db.HostDetails{Env: &hello.Host, Targets: hello.Targets, AllowTargets: hello.AllowTargets, DataDir: hello.DataDir, Version: hello.Version}
	if err := h.store.HostSeen(ctx, host.ID, time.Now(), addr, d); err != nil {
		return Welcome{}, badRequest("%v", err)
	}
	devices := slices.Clone(hello.AllowTargets)
	if hello.DataDir != "" {
		devices = append(devices, "files under "+hello.DataDir)
	}
	if err := h.store.SetHostDevices(ctx, host.ID, devices); err != nil {
		return Welcome{}, badRequest("%v", err)
	}
	h.log.Info("agent connected", "agent", w.Name, "addr", addr, "hostname", hello.Host.Hostname, "kernel", hello.Host.KernelRelease)
	return w, nil
}

// Poll waits up to wait for a run for agent host and leases it; nil when
// none came. A second poll of the same agent ends the first's wait.
func (h *Hub) Poll(ctx context.Context, host *db.Host, addr string, wait time.Duration) (*Work, error) {
	h.touch(ctx, host, addr)
	wait = min(max(wait, 0), MaxPollWait, h.timing.Poll)
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		h.mu.Lock()
		// An agent that asks for work holds no run: one it still held was
		// left behind (it restarted without saying so).
		var abandoned []*lease
		for id, l := range h.leases {
			if l.job.agent == host.ID {
				abandoned = append(abandoned, l)
				delete(h.leases, id)
			}
		}
		var j *job
		if q := h.queues[host.ID]; len(q) > 0 {
			j, h.queues[host.ID] = q[0], q[1:]
			now := time.Now()
			h.leases[j.runID] = &lease{job: j, heard: now, until: now.Add(h.timing.Lost)}
		}
		var wake chan struct{}
		if j == nil {
			if old := h.pollers[host.ID]; old != nil {
				close(old)
			}
			wake = make(chan struct{})
			h.pollers[host.ID] = wake
		}
		h.mu.Unlock()
		for _, l := range abandoned {
			h.finish(l.job, db.StatusInterrupted, fmt.Sprintf("agent %s asked for new work while it held this run: it was restarted", host.Name))
		}
		if j != nil {
			if err := h.store.SetRunStatus(ctx, j.runID, db.StatusRunning, ""); err != nil {
				return nil, err
			}
			w := workOf(j.runID, j.uid, j.plan, h.timing.Lease)
			j.remote.Publish(launch.Event{Type: launch.EventQueued, Data: launch.QueuedEvent{Waiting: fmt.Sprintf("agent %s to start it", host.Name)}})
			h.log.Info("agent run leased", "run", j.runID, "agent", host.Name)
			return &w, nil
		}
		select {
		case <-wake:
			continue
		case <-deadline.C:
		case <-ctx.Done():
		}
		h.mu.Lock()
		if h.pollers[host.ID] == wake {
			delete(h.pollers, host.ID)
		}
		h.mu.Unlock()
		return nil, nil
	}
}

// leased returns run id's lease if agent host holds it, renewed; else a
// 409 that says what became of the run.
func (h *Hub) leased(ctx context.Context, host *db.Host, id int64) (*lease, error) {
	if l := h.renew(host, id); l != nil {
		return l, nil
	}
	if err := h.owns(ctx, host, id); err != nil {
		return nil, err
	}
	r, err := h.store.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	msg := fmt.Sprintf("run %d is not leased to agent %s: it is %s", id, host.Name, r.Status)
	if r.Error != "" {
		msg += " (" + r.Error + ")"
	}
	return nil, refuse(http.StatusConflict, "%s", msg)
}

// owns refuses (404) a run that is not agent host's: runs of other hosts
// are none of its business.
func (h *Hub) owns(ctx context.Context, host *db.Host, id int64) error {
	_, m, err := h.store.FleetRunOf(ctx, id)
	if errors.Is(err, db.ErrNotFound) || (err == nil && (m.HostID != host.ID || m.HostKind != db.HostAgent)) {
		return refuse(http.StatusNotFound, "run %d is not one of agent %s's", id, host.Name)
	}
	return err
}

func ack(l *lease) Ack { return Ack{Status: db.StatusRunning, Cancel: l.cancel} }

// Start records where the run runs: the agent's environment and targets.
func (h *Hub) Start(ctx context.Context, host *db.Host, addr string, id int64, st *Start) (Ack, error) {
	h.touch(ctx, host, addr)
	l, err := h.leased(ctx, host, id)
	if err != nil {
		return Ack{}, err
	}
	if len(st.Targets) > db.MaxHostDevices {
		return Ack{}, badRequest("at most %d targets", db.MaxHostDevices)
	}
	if err := h.store.SetRunHost(ctx, id, st.Host, st.Targets); err != nil {
		return Ack{}, badRequest("%v", err)
	}
	l.job.remote.Publish(launch.Event{Type: launch.EventQueued, Data: launch.QueuedEvent{Waiting: fmt.Sprintf("agent %s is starting it", host.Name)}})
	return ack(l), nil
}

// Events relays a batch of the run's events to its page and renews the
// lease; an empty batch is a heartbeat.
func (h *Hub) Events(ctx context.Context, host *db.Host, addr string, id int64, evs *Events) (Ack, error) {
	h.touch(ctx, host, addr)
	if len(evs.Events) > MaxEvents {
		return Ack{}, badRequest("%d events in one batch: at most %d", len(evs.Events), MaxEvents)
	}
	l, err := h.leased(ctx, host, id)
	if err != nil {
		return Ack{}, err
	}
	for i, ev := range evs.Events {
		out, err := decodeEvent(ev)
		if err != nil {
			return Ack{}, badRequest("event %d: %v", i, err)
		}
		l.job.remote.Publish(out)
	}
	return ack(l), nil
}

// decodeEvent checks an agent's event: a known type, its data within
// bounds and of that type's shape.
func decodeEvent(ev Event) (launch.Event, error) {
	if len(ev.Data) > MaxEventData {
		return launch.Event{}, fmt.Errorf("%d bytes of data: at most %d", len(ev.Data), MaxEventData)
	}
	var data any
	switch ev.Type {
	case launch.EventStep:
		data = &launch.StepEvent{}
	case launch.EventProgress:
		data = &launch.ProgressEvent{}
	case launch.EventNotice:
		data = &launch.NoticeEvent{}
	case launch.EventQueued:
		data = &launch.QueuedEvent{}
	default:
		return launch.Event{}, fmt.Errorf("type %q: step, progress, notice or queued", ev.Type)
	}
	if err := json.Unmarshal(ev.Data, data); err != nil {
		return launch.Event{}, fmt.Errorf("%s: %w", ev.Type, err)
	}
	// The values, not pointers: the page's stream marshals what it gets.
	switch d := data.(type) {
	case *launch.StepEvent:
		return launch.Event{Type: ev.Type, Data: *d}, nil
	case *launch.ProgressEvent:
		return launch.Event{Type: ev.Type, Data: *d}, nil
	case *launch.NoticeEvent:
		return launch.Event{Type: ev.Type, Data: *d}, nil
	default:
		return launch.Event{Type: ev.Type, Data: *data.(*launch.QueuedEvent)}, nil
	}
}

// Step stores one of the run's finished steps: seq must be the step's,
// one of the plan's with its axes and repeat. Storing a step again
// replaces it (the same uid): a retried upload neither loses nor
// duplicates it. Steps are taken as long as the run is the agent's, lease
// or not: a step measured before the agent was lost is a step. A run that
// has ended keeps the steps it has (finishedStep).
func (h *Hub) Step(ctx context.Context, host *db.Host, addr string, id int64, seq int, res *sweep.StepResult) (StepAck, error) {
	h.touch(ctx, host, addr)
	if err := h.owns(ctx, host, id); err != nil {
		return StepAck{}, err
	}
	run, err := h.store.GetRun(ctx, id)
	if err != nil {
		return StepAck{}, err
	}
	if err := checkStep(&run.Plan, seq, res); err != nil {
		return StepAck{}, badRequest("step %d: %v", seq, err)
	}
	if err := db.CheckStepNumbers(res); err != nil {
		return StepAck{}, badRequest("%v", err)
	}
	have, err := h.store.StoredSteps(ctx, id)
	if err != nil {
		return StepAck{}, err
	}
	if err := finishedStep(run, seq, have[seq], res.Status); err != nil {
		return StepAck{}, err
	}
	a := StepAck{UID: StepUID(run.UID, seq), Stored: have[seq] != res.Status}
	if a.Stored {
		if err := h.store.SaveStep(ctx, id, res); err != nil {
			return StepAck{}, err
		}
	}
	h.renew(host, id)
	return a, nil
}

// finishedStep refuses (409) a step upload that would change a finished
// run: the figures of a run that ended — done, partial, failed, cancelled
// — are what its page, exports and comparisons showed, and an agent may
// not rewrite them. A run interrupted because its agent was lost (or
// its token revoked) still takes the steps it lacks (measured before the
// dashboard gave up on it), never one it has. stored is the status stored for the step ("" when none),
// status the upload's: the same again is a retry, which stores nothing.
func finishedStep(run *db.Run, seq int, stored, status string) error {
	if run.Status == db.StatusQueued || run.Status == db.StatusRunning || stored == status {
		return nil
	}
	if run.Status == db.StatusInterrupted {
		if stored == "" {
			return nil
		}
		return refuse(http.StatusConflict, "run %d ended (interrupted) with step %d stored as %s: a finished run's steps do not change", run.ID, seq, stored)
	}
	return refuse(http.StatusConflict, "run %d has ended (%s): a finished run's steps do not change, so step %d is refused; launch the run again for new figures", run.ID, run.Status, seq)
}

// checkStep checks an uploaded step against the run's plan.
func checkStep(plan *sweep.Plan, seq int, res *sweep.StepResult) error {
	if res.Step.Seq != seq {
		return fmt.Errorf("the body is step %d", res.Step.Seq)
	}
	switch res.Status {
	case sweep.StepDone, sweep.StepFailed, sweep.StepCancelled, db.StatusInterrupted:
	default:
		return fmt.Errorf("status %q: done, failed, cancelled or interrupted", res.Status)
	}
	if len(res.Error) > MaxErrorLen {
		return fmt.Errorf("an error of %d bytes: at most %d", len(res.Error), MaxErrorLen)
	}
	steps, err := plan.Steps()
	if err != nil {
		return err
	}
	limit := len(steps)
	if plan.AutoRepeat != nil {
		limit = len(steps) * max(1, plan.AutoRepeat.Max)
	}
	if seq < 0 || seq >= limit {
		return fmt.Errorf("the plan has steps 0 to %d", limit-1)
	}
	if seq < len(steps) {
		want := &steps[seq]
		if res.Step.Repeat != want.Repeat || !slices.Equal(res.Step.Axes, want.Axes) {
			return fmt.Errorf("its axes (%v, repeat %d) are not the plan's step %d (%v, repeat %d)",
				res.Step.Axes, res.Step.Repeat, seq, want.Axes, want.Repeat)
		}
	}
	return db.CheckStepText(res) // its jobs' names and options, its samples
}

// End stores the run's end as the agent saw it, when the agent still
// holds its lease (a dashboard that started again holds it too);
// otherwise the run keeps the status it has (the agent was lost:
// interrupted). The answer says the status it has.
func (h *Hub) End(ctx context.Context, host *db.Host, addr string, id int64, e *End) (Ack, error) {
	h.touch(ctx, host, addr)
	switch e.Status {
	case db.StatusDone, db.StatusPartial, db.StatusFailed, db.StatusCancelled, db.StatusInterrupted:
	default:
		return Ack{}, badRequest("status %q: done, partial, failed, cancelled or interrupted", e.Status)
	}
	if len(e.Error) > MaxErrorLen {
		return Ack{}, badRequest("an error of %d bytes: at most %d", len(e.Error), MaxErrorLen)
	}
	h.mu.Lock()
	l, ok := h.leases[id]
	if ok && l.job.agent == host.ID {
		delete(h.leases, id)
	}
	h.mu.Unlock()
	if ok && l.job.agent == host.ID {
		h.finish(l.job, e.Status, e.Error)
		return Ack{Status: e.Status}, nil
	}
	if err := h.owns(ctx, host, id); err != nil {
		return Ack{}, err
	}
	r, err := h.store.GetRun(ctx, id)
	if err != nil {
		return Ack{}, err
	}
	return Ack{Status: r.Status}, nil
}

// State is what the dashboard has of one of the agent's runs.
func (h *Hub) State(ctx context.Context, host *db.Host, addr string, id int64) (RunState, error) {
	h.touch(ctx, host, addr)
	if err := h.owns(ctx, host, id); err != nil {
		return RunState{}, err
	}
	r, err := h.store.GetRun(ctx, id)
	if err != nil {
		return RunState{}, err
	}
	steps, err := h.store.StoredSteps(ctx, id)
	if err != nil {
		return RunState{}, err
	}
	h.mu.Lock()
	l, ok := h.leases[id]
	leased := ok && l.job.agent == host.ID
	h.mu.Unlock()
	return RunState{Status: r.Status, Steps: steps, Leased: leased}, nil
}
