// Package fleet runs one plan on several hosts of the fleet as a fleet
// run (the dashboard's "group"), one run per host, linked by its uid:
// the dashboard's own machine (through bench/launch, as a web run), iolab
// agents (through the agent hub: they take the run when they next ask for
// work) and fio servers (through bench/fioserver: each step's jobs as a
// fio job file, run with this machine's fio client, each host's results
// imported into its own run). The hosts run at once, or one after another
// (serial) for hosts that share a device or a network. Each run has its
// own page, live events and Cancel; the group's page compares them.
package fleet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"iolab/bench"
	"iolab/bench/fioserver"
	"iolab/bench/launch"
	"iolab/bench/sweep"
	"iolab/db"
	"iolab/handlers/agent"
)

// Member is one host of a fleet run: Host is nil for the dashboard's own
// machine (Kind db.HostLocal).
type Member struct {
	Kind string
	Host *db.Host
}

// Name is what the fleet run calls the member.
func (m Member) Name() string {
	if m.Host == nil {
		return "this host"
	}
	return m.Host.Name
}

// Launcher starts fleet runs.
type Launcher struct {
	Store *db.Store
	Local *launch.Launcher
	Hub   *agent.Hub
	Fio   *fioserver.Runner
	Log   *slog.Logger

	mu      sync.Mutex
	remotes map[int64]*launch.Remote // adopted runs, until they end
}

// MemberError is why a host cannot run a plan.
type MemberError struct {
	Host string
	Msg  string
}

func (e *MemberError) Error() string { return fmt.Sprintf("host %s: %s", e.Host, e.Msg) }

// Check says, before anything is stored, whether each member can run
// the prepared plan (its steps as Prepare made them): an agent with a valid token whose last hello allows every
// target; a fio server on the allow-list that answers a probe now, with
// the devices it allows, and a plan iolab can hand to fio (no scheduler sweep, discard, dropped
// caches or automatic repeats: fio's client cannot do them there). The
// dashboard's own machine is the caller's to check (its allow-list). The
// error joins a *MemberError per host.
func (g *Launcher) Check(ctx context.Context, prep *launch.Prepared, members []Member) error {
	if len(members) == 0 {
		return errors.New("no hosts")
	}
	plan, steps := prep.Plan, prep.Steps
	var errs []error
	seen := map[string]bool{}
	fail := func(m Member, format string, args ...any) {
		errs = append(errs, &MemberError{Host: m.Name(), Msg: fmt.Sprintf(format, args...)})
	}
	for _, m := range members {
		if seen[m.Name()] {
			fail(m, "given twice")
			continue
		}
		seen[m.Name()] = true
		switch m.Kind {
		case db.HostLocal:
		case db.HostAgent:
			if !m.Host.HasToken {
				fail(m, "the agent has no valid token (revoked, or never issued): issue one on the Hosts page")
				continue
			}
			var refused []string
			for _, p := range bench.ConfigPaths(&plan.Base) {
				if !m.Host.Offers(p) && !slices.Contains(refused, p) {
					refused = append(refused, p)
				}
			}
			if len(refused) > 0 {
				fail(m, "%v: not on the agent's allow-list (%s) as it last said; give absolute paths the agent allows",
					refused, describeOffers(m.Host))
			}
		case db.HostFio:
			switch {
			case g.Fio == nil:
				fail(m, "this dashboard drives no fio server")
				continue
			case plan.SweepsAxis(sweep.AxisScheduler):
				fail(m, "iolab cannot switch a fio server's I/O scheduler: sweep the scheduler on agents or this host")
				continue
			case plan.Discard || plan.DropCaches:
				fail(m, "iolab cannot discard or drop caches on a fio server before each step: uncheck them, or use agents")
				continue
			case plan.AutoRepeat != nil:
				fail(m, "automatic repeats need each step's results as it ends; give a number of repeats for fio servers")
				continue
			}
			fh := FioHost(m.Host)
			ok := true
			for i := range steps {
				if err := g.Fio.Check(ctx, []fioserver.Host{fh}, &steps[i].Config); err != nil {
					fail(m, "%v", err)
					ok = false
					break
				}
			}
			// A server that does not answer now would fail the run at
			// its first step: say so before anything is stored.
			if _, err := g.Fio.Probe(ctx, fh); ok && err != nil {
				fail(m, "%v: start fio --server there, or leave the host out", err)
			}
		default:
			fail(m, "kind %q", m.Kind)
		}
	}
	return errors.Join(errs...)
}

// describeOffers says what an agent allows.
func describeOffers(h *db.Host) string {
	if len(h.Devices) == 0 {
		return "nothing: start it with --allow-target or --data-dir"
	}
	return fmt.Sprint(h.Devices)
}

// FioHost is a fio server host as bench/fioserver takes it.
func FioHost(h *db.Host) fioserver.Host {
	return fioserver.Host{Name: h.Name, Addr: h.Address, Port: h.Port, AllowTargets: h.Devices}
}

// Launch stores fleet run fr (its name, serial) with a queued run of the
// prepared plan per member, in order, and starts them: all at once, or
// each when the one before it has ended. It returns the fleet run with its members. Check
// first: Launch does not.
func (g *Launcher) Launch(ctx context.Context, fr *db.FleetRun, prep *launch.Prepared, members []Member) (*db.FleetRun, error) {
	if err := g.Store.CreateFleetRun(ctx, fr); err != nil {
		return nil, err
	}
	units := make([]*unit, len(members))
	for i, m := range members {
		u, err := g.prepare(ctx, fr, i, prep, m)
		if err != nil {
			// The runs stored so far never start.
			for _, v := range units[:i] {
				v.abandon(g, err)
			}
			return nil, err
		}
		units[i] = u
	}
	if fr.Serial {
		for i, u := range units[1:] {
			g.hold(u, fmt.Sprintf("the hosts before it in the group (serial): %s first", members[i].Name()))
		}
		go func() {
			for _, u := range units {
				u.start(g)
				u.wait(g)
			}
		}()
	} else {
		for _, u := range units {
			u.start(g)
		}
	}
	return g.Store.GetFleetRun(ctx, fr.UID)
}

// unit is one member's run, stored and not yet started.
type unit struct {
	m      Member
	id     int64
	uid    string
	prep   *launch.Prepared
	remote *launch.Remote // an agent's or fio server's run, or a held local run
	held   bool
	turn   chan struct{} // closed when its turn comes
}

// prepare stores member m's run and joins it to fleet run fr. This
// machine's run is the prepared record (prep.Record: the plan was
// prepared against this machine's targets when it is one of the hosts).
func (g *Launcher) prepare(ctx context.Context, fr *db.FleetRun, pos int, prep *launch.Prepared, m Member) (*unit, error) {
	plan := prep.Plan
	u := &unit{m: m, prep: prep, turn: make(chan struct{})}
	var rec *db.Run
	switch m.Kind {
	case db.HostLocal:
		if prep.Record == nil {
			return nil, errors.New("fleet: the plan was not prepared for this machine")
		}
		rec = prep.Record
	case db.HostAgent:
		rec = &db.Run{Name: plan.Name, Source: db.SourceAgent, Plan: *plan, Hostname: m.Host.Hostname}
		if env := m.Host.Details.Env; env != nil {
			rec.Host = *env
		}
		paths := bench.ConfigPaths(&plan.Base)
		for _, t := range m.Host.Details.Targets {
			if slices.Contains(paths, t.Path) {
				rec.Targets = append(rec.Targets, t)
			}
		}
	case db.HostFio:
		rec = &db.Run{Name: plan.Name, Source: db.SourceFio, Plan: *plan, Hostname: m.Host.Hostname}
		rec.Host.Hostname, rec.Host.Arch = m.Host.Hostname, m.Host.Details.Arch
	}
	if rec.Hostname == "" && m.Host != nil {
		rec.Hostname = m.Host.Name
	}
	rec.Status = db.StatusQueued
	if _, err := g.Store.CreateRun(ctx, rec); err != nil {
		return nil, err
	}
	u.id, u.uid = rec.ID, rec.UID
	gm := db.FleetRunMember{RunID: rec.ID, Position: pos, HostKind: m.Kind, HostName: m.Name()}
	if m.Host != nil {
		gm.HostID = m.Host.ID
	} else {
		gm.HostName = rec.Hostname
	}
	if err := g.Store.AddFleetRunMember(ctx, fr.UID, gm); err != nil {
		return nil, err
	}
	if m.Kind != db.HostLocal {
		r, err := g.Local.Adopt(rec.ID, m.Kind == db.HostFio)
		if err != nil {
			return nil, err
		}
		u.remote = r
		g.keep(r)
	}
	return u, nil
}

// hold makes a unit's run wait for its turn, shown as queued with why:
// a local run is held by an adopted Remote until it is handed over to
// the launcher. Cancelling it before its turn ends it at once.
func (g *Launcher) hold(u *unit, why string) {
	if u.remote == nil {
		r, err := g.Local.Adopt(u.id, false)
		if err != nil {
			return // shutting down: the next start marks it interrupted
		}
		u.remote = r
	}
	u.held = true
	u.remote.Publish(launch.Event{Type: launch.EventQueued, Data: launch.QueuedEvent{Waiting: why}})
	go func() {
		select {
		case <-u.turn:
		case <-u.remote.Done():
		case <-u.remote.Context().Done():
			g.endEarly(u)
		}
	}()
}

// endEarly ends a run cancelled (or shut down) before its turn.
func (g *Launcher) endEarly(u *unit) {
	msg := "the dashboard shut down"
	if u.remote.Cancelled() {
		msg = "cancelled by the user before its turn"
		if err := g.Store.SetRunStatus(context.Background(), u.id, db.StatusCancelled, msg); err != nil {
			g.log().Warn("group run: store its status", "run", u.id, "err", err)
		}
	}
	u.remote.End(db.StatusCancelled, msg)
}

// start starts the unit's run, unless it ended while it waited.
func (u *unit) start(g *Launcher) {
	ctx := context.Background()
	close(u.turn)
	if u.remote != nil {
		select {
		case <-u.remote.Done():
			return
		default:
		}
		if u.remote.Context().Err() != nil {
			g.endEarly(u)
			return
		}
	}
	switch u.m.Kind {
	case db.HostLocal:
		var err error
		if u.held {
			err = u.remote.Handover(u.prep)
		} else {
			err = g.Local.LaunchStored(ctx, u.id, u.prep)
		}
		if err != nil {
			g.log().Warn("group run on this host did not start", "run", u.id, "err", err)
		}
	case db.HostAgent:
		g.Hub.Queue(u.m.Host.ID, u.id, u.uid, u.prep.Plan, u.remote)
	case db.HostFio:
		go g.runFio(u)
	}
}

// wait returns when the unit's run has ended.
func (u *unit) wait(g *Launcher) {
	if u.m.Kind == db.HostLocal {
		_ = g.Local.Wait(context.Background(), u.id)
		return
	}
	<-u.remote.Done()
}

// abandon ends a unit's run that will never start.
func (u *unit) abandon(g *Launcher, why error) {
	_ = g.Store.SetRunStatus(context.Background(), u.id, db.StatusFailed, "the group could not be started: "+why.Error())
	if u.remote != nil {
		u.remote.End(db.StatusFailed, why.Error())
	}
}

// fail ends a unit's run that failed to start.
func (g *Launcher) fail(u *unit, err error) {
	_ = g.Store.SetRunStatus(context.Background(), u.id, db.StatusFailed, err.Error())
	u.remote.End(db.StatusFailed, err.Error())
}

func (g *Launcher) keep(r *launch.Remote) {
	g.mu.Lock()
	if g.remotes == nil {
		g.remotes = map[int64]*launch.Remote{}
	}
	g.remotes[r.ID()] = r
	g.mu.Unlock()
	go func() {
		<-r.Done()
		g.mu.Lock()
		delete(g.remotes, r.ID())
		g.mu.Unlock()
	}()
}

// Latest is the latest step event and progress (IOPS, or a fio server's
// percent) of group run id, when it is active here.
func (g *Launcher) Latest(id int64) (step, progress *launch.Event) {
	g.mu.Lock()
	r := g.remotes[id]
	g.mu.Unlock()
	if r != nil {
		if ev, ok := r.Latest(launch.EventStep); ok {
			step = &ev
		}
		for _, typ := range []string{launch.EventPercent, launch.EventProgress} {
			if ev, ok := r.Latest(typ); ok {
				progress = &ev
				break
			}
		}
		return step, progress
	}
	step, progress, _ = g.Local.Latest(id)
	return step, progress
}

func (g *Launcher) log() *slog.Logger {
	if g.Log != nil {
		return g.Log
	}
	return slog.New(slog.DiscardHandler)
}

// Resume holds again the runs agents were running when this dashboard
// stopped (db.Open leaves them running): each is adopted for its page
// and handed to the hub, which shows it "agent unreachable" until its
// agent's next word, and lost after agent.Timing.Lost without one. A run
// whose agent is gone (deleted, or its token revoked) is interrupted. Call
// it before the agents' requests are served: a run not held yet would
// be refused to its agent, which would stop it.
func (g *Launcher) Resume(ctx context.Context) error {
	members, err := g.Store.RunningAgentRuns(ctx)
	if err != nil {
		return err
	}
	for _, m := range members {
		run, err := g.Store.GetRun(ctx, m.RunID)
		if err != nil {
			return err
		}
		host, err := g.Store.GetHost(ctx, m.HostID)
		if m.HostKind != db.HostAgent || errors.Is(err, db.ErrNotFound) || (err == nil && !host.HasToken) {
			msg := fmt.Sprintf("the dashboard started again while agent %s ran this run, and the agent is gone (deleted, or its token revoked)", m.HostName)
			if err := g.Store.SetRunStatus(ctx, m.RunID, db.StatusInterrupted, msg); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		r, err := g.Local.Adopt(m.RunID, false)
		if err != nil {
			return err
		}
		g.keep(r)
		g.Hub.Resume(host.ID, host.Name, run.ID, run.UID, &run.Plan, r, host.LastSeen)
	}
	return nil
}
