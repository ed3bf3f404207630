package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"iolab/bench"
	"iolab/bench/guard"
	"iolab/bench/launch"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"
)

// Config is an agent's: the dashboard it works for, its token, what it
// lets the dashboard's runs use, and its own store, where every run it
// runs is kept as a local run.
type Config struct {
	Dashboard string // the dashboard's URL, http://lab:8080
	Token     string
	Name      string // what it asks to be called; "" keeps the name its token was issued for
	// Allow is its allow-list (Targets, DataDir): the dashboard's runs
	// may use nothing else here.
	Allow   launch.AllowList
	Store   *db.Store
	Sys     system.FS
	Log     *slog.Logger
	Version string
	// Limits bound the plans it takes (zero fields: sweep.DefaultLimits).
	Limits sweep.Limits
	// Quota bounds what its runs may lay out in Allow.DataDir (zero
	// fields: launch.DefaultQuota's; its Dir is Allow.DataDir).
	Quota launch.Quota
	// ProgressEvery is how often the running step's IOPS is sampled
	// (launch.LiveEvery); the samples are sent in batches.
	ProgressEvery time.Duration
	// HTTP is the client it connects with; nil: http.DefaultTransport's.
	HTTP *http.Client
}

// Agent runs a dashboard's runs on this host.
type Agent struct {
	cfg    Config
	base   string
	hc     *http.Client
	log    *slog.Logger
	timing Timing
	name   string
	guard  *guard.Guard // cfg.Allow pinned at New: every run's
}

// New checks cfg and returns its agent.
func New(cfg Config) (*Agent, error) {
	u, err := url.Parse(strings.TrimRight(cfg.Dashboard, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
		return nil, fmt.Errorf("agent: --dashboard %q is not a dashboard URL (e.g. http://lab:8080)", cfg.Dashboard)
	}
	if cfg.Token == "" {
		return nil, errors.New("agent: no token: issue one on the dashboard's Hosts page and give it with --token (or $IOLAB_AGENT_TOKEN)")
	}
	if cfg.Store == nil {
		return nil, errors.New("agent: no store")
	}
	for _, t := range cfg.Allow.Targets {
		if !filepath.IsAbs(t) {
			return nil, fmt.Errorf("agent: --allow-target %q: give an absolute path", t)
		}
	}
	if cfg.Allow.DataDir != "" && !filepath.IsAbs(cfg.Allow.DataDir) {
		return nil, fmt.Errorf("agent: --data-dir %q: give an absolute path", cfg.Allow.DataDir)
	}
	a := &Agent{cfg: cfg, base: u.String(), hc: cfg.HTTP, log: cfg.Log, timing: DefaultTiming(), name: cfg.Name}
	if a.hc == nil {
		a.hc = &http.Client{}
	}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	a.cfg.Allow.Whose = "this agent's"
	// Pinned once, now: an allowed device that is not there stops the
	// agent, and what the names point to later changes nothing.
	if a.guard, err = a.cfg.Allow.Guard(); err != nil {
		return nil, fmt.Errorf("agent: --allow-target: %w", err)
	}
	a.cfg.Quota.Dir = cfg.Allow.DataDir
	return a, nil
}

// Run works for the dashboard until ctx ends: it puts back the
// schedulers a killed run left switched, says hello, sends the dashboard
// what it lacks of runs done before (a dashboard that was away, an agent
// killed mid-run), then asks for work, runs it and asks again. It
// returns an error only when the dashboard refuses its token, or when
// ctx ends.
func (a *Agent) Run(ctx context.Context) error {
	if err := launch.RestoreSchedulers(ctx, a.cfg.Store, a.cfg.Sys, a.log); err != nil {
		a.log.Warn("restore schedulers", "err", err)
	}
	var bo backoff
	for {
		err := a.hello(ctx)
		if err == nil {
			break
		}
		if fatal(err) {
			return err
		}
		a.log.Warn("cannot reach the dashboard", "dashboard", a.base, "err", err)
		if !sleep(ctx, bo.next()) {
			return ctx.Err()
		}
	}
	bo = backoff{}
	for ctx.Err() == nil {
		err := a.sync(ctx)
		var w *Work
		if err == nil {
			w, err = a.poll(ctx)
		}
		if err != nil {
			if fatal(err) {
				return err
			}
			if ctx.Err() == nil {
				a.log.Warn("cannot reach the dashboard", "dashboard", a.base, "err", err)
				sleep(ctx, bo.next())
			}
			continue
		}
		bo = backoff{}
		if w != nil {
			a.execute(ctx, w)
		}
	}
	return ctx.Err()
}

// fatal reports an error the agent cannot get past: its token refused.
func fatal(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == http.StatusUnauthorized
}

func (a *Agent) hello(ctx context.Context) error {
	host, err := a.cfg.Sys.Host()
	if err != nil {
		return fmt.Errorf("agent: read this host: %w", err)
	}
	h := Hello{Name: a.name, Version: a.cfg.Version, Host: host, AllowTargets: a.cfg.Allow.Targets, DataDir: a.cfg.Allow.DataDir}
	for _, p := range a.cfg.Allow.Targets {
		if t, err := a.cfg.Sys.ResolveTarget(p); err == nil {
			h.Targets = append(h.Targets, t)
		}
	}
	var w Welcome
	if err := a.call(ctx, http.MethodPost, PathHello, &h, &w, 30*time.Second); err != nil {
		return err
	}
	a.timing, a.name = w.Timing(), w.Name
	a.log.Info("connected to the dashboard", "dashboard", a.base, "as", w.Name, "lease", a.timing.Lease, "note", w.Note)
	return nil
}

// poll asks for work; nil when none came within the poll's wait.
func (a *Agent) poll(ctx context.Context) (*Work, error) {
	var w Work
	path := PathWork + "?wait=" + strconv.Itoa(int(a.timing.Poll.Seconds()))
	err := a.call(ctx, http.MethodGet, path, nil, &w, a.timing.Poll+10*time.Second)
	if errors.Is(err, errNoContent) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &w, nil
}

// plan parses the work's plan as `iolab run` would its command line.
func (a *Agent) plan(w *Work) (*sweep.Plan, error) {
	plan, err := launch.NewPlan(launch.Spec{Name: w.Name, Args: w.Args, Sweeps: w.Sweeps, Repeat: w.Repeat, AutoRepeat: w.AutoRepeat,
		Discard: w.Discard, DropCaches: w.DropCaches, AllowDiskScheduler: w.AllowDiskScheduler, SkipImpossible: w.SkipImpossible,
		Exact: true, Limits: a.cfg.Limits, Quota: a.quota()})
	if err != nil {
		return nil, err
	}
	plan.Preset, plan.Runtime, plan.RampTime = w.Preset, w.Runtime, w.RampTime
	return plan, nil
}

// quota is the data directory's quota; nil without a data directory.
func (a *Agent) quota() *launch.Quota {
	if a.cfg.Quota.Dir == "" {
		return nil
	}
	return &a.cfg.Quota
}

// execute runs one leased run: checked against this host's allow-list
// and safety rules, run and stored here as a local run with the
// dashboard's uid, its progress sent up, each finished step uploaded as
// it ends, and the end told. Whatever the dashboard did not acknowledge
// stays for sync.
func (a *Agent) execute(ctx context.Context, w *Work) {
	a.log.Info("run leased", "run", w.RunID, "name", w.Name)
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// The lease is renewed from now on, not from the run's start: the
	// preflight lays out missing files, which on a file of many GiB
	// takes longer than a lease, and a lease run out while it did would
	// have the dashboard show the run unreachable before it began.
	lk := newLink(a, w.RunID, cancel, time.Now())
	go lk.loop()
	runner := &bench.Runner{Sys: a.cfg.Sys, Log: a.log, Guard: a.guard, StateDir: a.cfg.Allow.DataDir}
	runner.Notice = func(msg string) {
		lk.add(launch.Event{Type: launch.EventNotice, Data: launch.NoticeEvent{Message: msg}})
	}
	plan, err := a.plan(w)
	var prep *launch.Prepared
	if err == nil {
		prep, err = launch.PreparePlan(plan, runner, launch.Options{Check: launch.CheckTargets})
	}
	if err != nil {
		lk.stop()
		a.refuse(ctx, w, runner, err)
		return
	}
	rec := prep.Record
	rec.UID = w.UID
	_, err = a.cfg.Store.CreateRun(ctx, rec)
	if err != nil {
		lk.stop()
		a.refuse(ctx, w, runner, err)
		return
	}
	ar := db.AgentRun{RunID: rec.ID, Dashboard: a.base, RemoteID: w.RunID}
	if err := a.cfg.Store.AddAgentRun(ctx, ar); err != nil {
		a.log.Warn("record the run for the dashboard", "err", err)
	}
	var ack Ack
	if err := a.call(ctx, http.MethodPost, runPath(w.RunID, "start"), &Start{Host: rec.Host, Targets: rec.Targets}, &ack, 30*time.Second); err != nil {
		lk.failed(err)
	} else {
		lk.heard(ack)
	}
	up := newUploader(ctx, a, w.RunID, w.UID)

	steps := prep.Steps
	prog := launch.NewProgress(runner, steps, a.progressEvery(), func(tk launch.Tick) {
		lk.add(launch.Event{Type: launch.EventProgress, Data: launch.ProgressEventOf(tk, plan.Discard)})
	})
	hooks := launch.Hooks{Waiting: func(msg string) {
		lk.add(launch.Event{Type: launch.EventQueued, Data: launch.QueuedEvent{Waiting: msg}})
	}, Quota: a.quota()}
	hooks.StepStarted = func(st *sweep.Step, total int) {
		prog.StepStarted(st)
		lk.add(launch.Event{Type: launch.EventStep, Data: launch.StepStartEvent(st, total)})
	}
	hooks.StepDone = func(res *sweep.StepResult) error {
		lk.add(launch.Event{Type: launch.EventStep, Data: launch.StepEndEvent(res, len(steps))})
		up.add(res)
		return nil
	}
	_, status, runErr := launch.Execute(runCtx, a.cfg.Store, runner, rec.ID, prep, hooks)
	prog.Stop()
	lk.stop()
	up.close()
	msg := ""
	if runErr != nil {
		msg = runErr.Error()
	}
	if cause := context.Cause(runCtx); runCtx.Err() != nil && ctx.Err() == nil {
		// Stopped by the dashboard's word or by losing it, not by this
		// agent's own end (which leaves the run to the next start).
		status, msg = db.StatusCancelled, "cancelled by the user on the dashboard"
		if le, ok := errors.AsType[*leaseLost](cause); ok {
			status, msg = db.StatusInterrupted, le.Error()
		}
		if err := a.cfg.Store.SetRunStatus(context.WithoutCancel(ctx), rec.ID, status, msg); err != nil {
			a.log.Warn("store the run's status", "err", err)
		}
	}
	wait := a.timing.Lease
	if ctx.Err() != nil {
		// The agent itself is stopping (SIGINT, SIGTERM): the run ends
		// here, interrupted; the dashboard is told if it answers at once,
		// else at the next start.
		status, msg = db.StatusInterrupted, "the agent was stopped during the run"
		if err := a.cfg.Store.SetRunStatus(context.WithoutCancel(ctx), rec.ID, status, msg); err != nil {
			a.log.Warn("store the run's status", "err", err)
		}
		ctx, wait = context.WithoutCancel(ctx), 5*time.Second
	}
	a.log.Info("run ended here", "run", w.RunID, "local run", rec.ID, "status", status, "err", msg)
	// Whatever the uploads missed, and the end, within a lease's time;
	// else sync goes on trying between polls.
	pctx, pcancel := context.WithTimeout(ctx, wait)
	defer pcancel()
	var bo backoff
	for {
		err := a.push(pctx, ar, "")
		if err == nil || fatal(err) || !sleep(pctx, bo.next()) {
			if err != nil {
				a.log.Warn("the dashboard does not have the whole run yet; it is kept here and sent when it is back", "run", rec.ID, "err", err)
			}
			return
		}
	}
}

// refuse tells the dashboard this agent will not run the work: where it
// would have run, and why, as the run's failure.
func (a *Agent) refuse(ctx context.Context, w *Work, runner *bench.Runner, why error) {
	a.log.Warn("run refused", "run", w.RunID, "err", why)
	host, _ := runner.Sys.Host()
	var ack Ack
	_ = a.call(ctx, http.MethodPost, runPath(w.RunID, "start"), &Start{Host: host}, &ack, 30*time.Second)
	end := End{Status: db.StatusFailed, Error: fmt.Sprintf("agent %s refused the plan: %v", a.name, why)}
	if err := a.call(ctx, http.MethodPost, runPath(w.RunID, "end"), &end, &ack, 30*time.Second); err != nil {
		a.log.Warn("tell the dashboard", "run", w.RunID, "err", err)
	}
}

// sync sends the dashboard what it lacks of the runs done for it.
func (a *Agent) sync(ctx context.Context) error {
	runs, err := a.cfg.Store.UnsyncedAgentRuns(ctx, a.base)
	if err != nil {
		return err
	}
	for _, ar := range runs {
		if err := a.push(ctx, ar, "this agent stopped while it ran it (killed, or its machine went down) and has started again; the steps it had finished are kept"); err != nil {
			return err
		}
	}
	return nil
}

// push sends the steps of local run ar the dashboard does not have (by
// seq and status: a step is stored once, whatever the retries), then the
// run's end, and records that it has them all. why says what became of
// a run that was interrupted here: it replaces the store's "iolab
// stopped" and prefixes any other reason.
func (a *Agent) push(ctx context.Context, ar db.AgentRun, why string) error {
	var st RunState
	err := a.call(ctx, http.MethodGet, runPath(ar.RemoteID, ""), nil, &st, 30*time.Second)
	var e *Error
	if errors.As(err, &e) && e.Code == http.StatusNotFound {
		a.log.Warn("the dashboard no longer has the run: the local copy stays here", "run", ar.RunID, "remote", ar.RemoteID)
		return a.cfg.Store.SetAgentRunSynced(ctx, ar.RunID)
	}
	if err != nil {
		return err
	}
	local, err := a.cfg.Store.GetRun(ctx, ar.RunID)
	if err != nil {
		return err
	}
	if local.Status == db.StatusQueued || local.Status == db.StatusRunning {
		return nil // another process runs it
	}
	err = a.cfg.Store.EachStep(ctx, ar.RunID, db.LoadAll(), func(res *sweep.StepResult) error {
		if st.Steps[res.Step.Seq] == res.Status {
			return nil
		}
		return a.upload(ctx, ar.RemoteID, local.UID, res)
	})
	if err != nil {
		return err
	}
	end := End{Status: local.Status, Error: local.Error}
	switch {
	case local.Status != db.StatusInterrupted || why == "":
	case local.Error == db.StoppedMessage(db.StatusRunning) || local.Error == db.StoppedMessage(db.StatusQueued) || local.Error == "":
		end.Error = why
	default:
		end.Error = why + ": " + local.Error
	}
	var ack Ack
	if err := a.call(ctx, http.MethodPost, runPath(ar.RemoteID, "end"), &end, &ack, 30*time.Second); err != nil {
		return err
	}
	a.log.Info("the dashboard has the whole run", "run", ar.RunID, "remote", ar.RemoteID, "status there", ack.Status)
	return a.cfg.Store.SetAgentRunSynced(ctx, ar.RunID)
}

// upload stores one step on the dashboard.
func (a *Agent) upload(ctx context.Context, id int64, uid string, res *sweep.StepResult) error {
	var sa StepAck
	return a.call(ctx, http.MethodPut, runPath(id, "steps/"+strconv.Itoa(res.Step.Seq)), res, &sa, 2*time.Minute)
}

func (a *Agent) progressEvery() time.Duration {
	if a.cfg.ProgressEvery > 0 {
		return a.cfg.ProgressEvery
	}
	return launch.LiveEvery
}

func runPath(id int64, rest string) string {
	p := PathRuns + strconv.FormatInt(id, 10)
	if rest != "" {
		p += "/" + rest
	}
	return p
}

// errNoContent is a 204: no work.
var errNoContent = errors.New("no content")

// call sends body (JSON, unless nil) to the dashboard and decodes its
// answer into out; a refusal is an *Error with the dashboard's message.
func (a *Agent) call(ctx context.Context, method, path string, body, out any, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+a.cfg.Token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	switch {
	case resp.StatusCode == http.StatusNoContent:
		return errNoContent
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		if out == nil {
			return nil
		}
		if err := json.Unmarshal(answer, out); err != nil {
			return fmt.Errorf("%s %s: unexpected answer: %w", method, path, err)
		}
		return nil
	}
	var eb struct {
		Error string `json:"error"`
	}
	msg := strings.TrimSpace(string(answer))
	if json.Unmarshal(answer, &eb) == nil && eb.Error != "" {
		msg = eb.Error
	}
	return &Error{Code: resp.StatusCode, Msg: fmt.Sprintf("%s %s: %s: %s", method, path, resp.Status, msg)}
}

// backoff is the wait between tries: 250 ms doubling to 5 s.
type backoff struct{ d time.Duration }

func (b *backoff) next() time.Duration {
	b.d = min(max(2*b.d, 250*time.Millisecond), 5*time.Second)
	return b.d
}

// sleep waits d unless ctx ends first (false).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
