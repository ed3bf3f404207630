package fleet

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"iolab/bench/fioserver"
	"iolab/bench/launch"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"
)

// runFio runs a unit's plan on its fio server, a step at a time: each
// step's jobs through fioserver.Runner (a fio job file, fio's client), its
// results imported into the unit's run and stored as the step ends. The
// run's page gets each step's share done and its IOPS as fio's server
// tells them each second (EventPercent; fioserver.Status), and the
// step's figures once it ends.
// A server that cannot be reached, or speaks another fio protocol, ends
// the run: its next steps would fail alike. Each step is checked against
// the host's allowed targets as stored when it starts (a run may wait in
// a serial group while the host is removed and added again with other
// targets); a host no longer stored ends the run.
func (g *Launcher) runFio(u *unit) {
	r := u.remote
	ctx := r.Context()
	keep := context.WithoutCancel(ctx)
	host := FioHost(u.m.Host)
	steps := u.prep.Steps
	if err := g.Store.SetRunStatus(keep, u.id, db.StatusRunning, ""); err != nil {
		g.fail(u, err)
		return
	}
	var (
		results []sweep.StepResult
		stopErr error
		probed  bool
	)
	for i := range steps {
		st := &steps[i]
		if ctx.Err() != nil {
			break
		}
		now, err := g.Store.GetHost(keep, u.m.Host.ID)
		if err != nil {
			stopErr = fmt.Errorf("before step %d: fio host %s: %w", st.Seq+1, host.Name, err)
			if errors.Is(err, db.ErrNotFound) {
				stopErr = fmt.Errorf("before step %d: fio host %s was removed from the Hosts page, and its allowed targets with it", st.Seq+1, host.Name)
			}
			break
		}
		host = FioHost(now)
		r.Publish(launch.Event{Type: launch.EventStep, Data: launch.StepStartEvent(st, len(steps))})
		res := sweep.StepResult{Step: *st, Start: time.Now()}
		hrs, err := g.Fio.Run(ctx, []fioserver.Host{host}, &st.Config, func(p fioserver.Progress) {
			r.Publish(launch.Event{Type: launch.EventPercent, Data: launch.PercentEvent{Step: st.Seq + 1, Total: len(steps),
				Percent: p.Percent, Elapsed: p.Elapsed.Seconds(), Phase: string(p.Phase), IOPS: p.IOPS, FromFio: p.FromFio}})
		})
		res.End = time.Now()
		var hr *fioserver.HostResult
		if len(hrs) == 1 {
			hr = &hrs[0]
		}
		if hr != nil && !hr.Start.IsZero() {
			res.Start, res.End = hr.Start, hr.End
		}
		switch {
		case ctx.Err() != nil:
			res.Status, res.Error = sweep.StepCancelled, "cancelled: fio's client told the server to stop the jobs"
		case err != nil:
			res.Status, res.Error = sweep.StepFailed, err.Error()
		case hr == nil || hr.Import == nil:
			res.Status, res.Error = sweep.StepFailed, "fio printed no results"
		default:
			res.Status, res.Result = sweep.StepDone, hr.Import.Result
			// A fio server's figures are checked as an import's are: a
			// hostile or broken server's numbers fail its step.
			if nerr := db.CheckStepNumbers(&res); nerr != nil {
				res.Status, res.Error, res.Result = sweep.StepFailed, "fio server "+host.Name+" sent figures out of range: "+nerr.Error(), nil
			}
			if notes := hr.Notes; len(notes) > 0 {
				g.log().Info("fio server", "host", host.Name, "notes", strings.Join(notes, "; "))
			}
		}
		if hr != nil && hr.Info.Hostname != "" && !probed {
			probed = true
			g.probed(keep, u, hr.Info)
		}
		if err := g.Store.SaveStep(keep, u.id, &res); err != nil {
			stopErr = err
			break
		}
		results = append(results, res)
		r.Publish(launch.Event{Type: launch.EventStep, Data: launch.StepEndEvent(&res, len(steps))})
		if res.Status == sweep.StepCancelled {
			break
		}
		if errors.Is(err, fioserver.ErrUnreachable) || errors.Is(err, fioserver.ErrVersion) || errors.Is(err, fioserver.ErrNotAllowed) {
			stopErr = fmt.Errorf("stopped after step %d: %w", st.Seq+1, err)
			break
		}
	}
	status := launch.RunStatus(ctx, len(steps), results, stopErr)
	var msgs []string
	switch {
	case status == db.StatusCancelled && r.Cancelled():
		msgs = append(msgs, "cancelled by the user")
	case status == db.StatusCancelled:
		msgs = append(msgs, "the server shut down")
	}
	if stopErr != nil {
		msgs = append(msgs, stopErr.Error())
	}
	if status == db.StatusFailed || status == db.StatusPartial {
		if ferr := launch.FailedSteps(results); ferr != nil {
			msgs = append(msgs, ferr.Error())
		}
	}
	msg := strings.Join(msgs, "; ")
	if err := g.Store.SetRunStatus(keep, u.id, status, msg); err != nil {
		g.log().Warn("fio run: store its status", "run", u.id, "err", err)
	}
	g.log().Info("fio server run ended", "run", u.id, "host", host.Name, "status", status, "err", msg)
	r.End(status, msg)
}

// probed records what a fio server said of itself: on its run (the host
// the comparison names) and on its host.
func (g *Launcher) probed(ctx context.Context, u *unit, info fioserver.HostInfo) {
	run, err := g.Store.GetRun(ctx, u.id)
	if err != nil {
		return
	}
	h := run.Host
	h.Hostname, h.Arch = info.Hostname, info.Arch
	if err := g.Store.SetRunHost(ctx, u.id, h, run.Targets); err != nil {
		g.log().Warn("fio run: store its host", "run", u.id, "err", err)
	}
	g.fioSeen(ctx, u.m.Host, info)
}

// fioSeen records that fio server host h answered now, and what its
// probe said.
func (g *Launcher) fioSeen(ctx context.Context, h *db.Host, info fioserver.HostInfo) {
	d := h.Details
	d.FioVersion, d.OS, d.Arch, d.LastError = info.FioVersion, info.OS, info.Arch, ""
	env := system.HostInfo{Hostname: info.Hostname, Arch: info.Arch}
	d.Env = &env
	if err := g.Store.HostSeen(ctx, h.ID, time.Now(), "", &d); err != nil {
		g.log().Warn("fio host seen", "host", h.Name, "err", err)
	}
}

// ProbeFio asks every fio server host who it is (fio's probe: nothing
// runs), recording when it answered and what it said, or why it did not.
func (g *Launcher) ProbeFio(ctx context.Context) {
	hosts, err := g.Store.ListHosts(ctx)
	if err != nil || g.Fio == nil {
		return
	}
	done := make(chan struct{})
	n := 0
	for i := range hosts {
		h := &hosts[i]
		if h.Kind != db.HostFio || h.Run != 0 {
			continue // a running host answers through its run
		}
		n++
		go func() {
			defer func() { done <- struct{}{} }()
			info, err := g.Fio.Probe(ctx, FioHost(h))
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				d := h.Details
				d.LastError = err.Error()
				// Not seen: last_seen stays when it last answered.
				if serr := g.Store.HostSeen(ctx, h.ID, time.Time{}, "", &d); serr != nil {
					g.log().Warn("fio host", "host", h.Name, "err", serr)
				}
				return
			}
			g.fioSeen(ctx, h, info)
		}()
	}
	for range n {
		<-done
	}
}
