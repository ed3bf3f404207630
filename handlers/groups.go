package handlers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"

	"iolab/bench/launch"
	"iolab/bench/summary"
	"iolab/bench/units"
	"iolab/db"
	"iolab/handlers/agent"
	"iolab/handlers/fleet"
	"iolab/handlers/report"

	"github.com/labstack/echo/v4"
)

// LocalHost is the name of the dashboard's own machine in a plan's hosts.
const LocalHost = "local"

// isGroup reports whether a request's hosts make a group: any but this
// machine alone.
func isGroup(hosts []string) bool {
	return len(hosts) > 0 && !(len(hosts) == 1 && hosts[0] == LocalHost)
}

// groupMembers finds a request's hosts: LocalHost, or the names of the
// Hosts page.
func (s *Server) groupMembers(ctx context.Context, names []string) ([]fleet.Member, error) {
	if len(names) > 64 {
		return nil, &ValidationError{Field: "hosts", Msg: "at most 64 hosts in a group"}
	}
	var out []fleet.Member
	for _, n := range names {
		if n == LocalHost {
			out = append(out, fleet.Member{Kind: db.HostLocal})
			continue
		}
		h, err := s.store.HostByName(ctx, n)
		if errors.Is(err, db.ErrNotFound) {
			return nil, &ValidationError{Field: "hosts", Msg: fmt.Sprintf("no host is called %q (see /hosts; %q is this machine)", n, LocalHost)}
		}
		if err != nil {
			return nil, err
		}
		out = append(out, fleet.Member{Kind: h.Kind, Host: h})
	}
	return out, nil
}

// targetOK checks one of a plan's targets: against the allow-list for a
// plan of this machine; for a group's, it must be an absolute path (each
// host resolves it itself) and on this machine's allow-list when this
// machine is one of the hosts. The group checks the other hosts.
func (s *Server) targetOK(req *PlanRequest, p string, mountedWrite bool) error {
	if !req.grouped {
		return s.checkTarget(p, mountedWrite)
	}
	if p == "" {
		return nil
	}
	if !filepath.IsAbs(p) {
		return fmt.Errorf("%s: give an absolute path: each host of the group resolves it itself", p)
	}
	if req.groupLocal {
		return s.checkTarget(p, mountedWrite)
	}
	return nil
}

// resolveFor is a target list as a plan takes it: relative names under
// the data directory for a plan of this machine, as given for a group's.
func (s *Server) resolveFor(req *PlanRequest, list string) string {
	if req.grouped {
		return list
	}
	return s.resolveTargets(list)
}

// launchGroup checks a plan for every host of a request and starts it as
// a group; nothing starts unless every host can run it.
func (s *Server) launchGroup(ctx context.Context, req *PlanRequest) (*db.FleetRun, error) {
	if req.PTS != nil {
		return nil, ptsRequestAlone(req) // this machine's device alone
	}
	members, err := s.groupMembers(ctx, req.Hosts)
	if err != nil {
		return nil, err
	}
	req.grouped = true
	req.groupLocal = slices.ContainsFunc(members, func(m fleet.Member) bool { return m.Kind == db.HostLocal })
	if req.TraceBlock && slices.ContainsFunc(members, func(m fleet.Member) bool { return m.Kind != db.HostLocal }) {
		return nil, &ValidationError{Field: "trace_block", Msg: "trace_block traces this machine's block layer; agents and fio servers cannot trace yet: run it on this machine alone, or leave it off"}
	}
	// Prepared once: against this machine's targets when it is one of
	// the hosts; the group checks the others'.
	check := launch.CheckNone
	if req.groupLocal {
		check = launch.CheckExisting
	}
	prep, err := s.prepare(req, check)
	if err != nil {
		return nil, err
	}
	if err := s.fleet.groups.Check(ctx, prep, members); err != nil {
		var msgs []string
		for _, e := range joined(err) {
			msgs = append(msgs, e.Error())
		}
		return nil, &ValidationError{Field: "hosts", Msg: strings.Join(msgs, "\n")}
	}
	return s.fleet.groups.Launch(ctx, &db.FleetRun{Name: prep.Plan.Name, Serial: req.Serial}, prep, members)
}

// joined lists the errors errors.Join put together.
func joined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// createdGroup is POST /api/runs's answer for a group.
type createdGroup struct {
	ID    int64        `json:"id"` // the first host's run
	URL   string       `json:"url"`
	Group string       `json:"group"`
	Runs  []groupRunAt `json:"runs"`
}

// groupRunAt is one host's run of a group.
type groupRunAt struct {
	ID   int64  `json:"id"`
	Host string `json:"host"`
	Kind string `json:"kind"`
	URL  string `json:"url"`
}

func groupURL(uid string) string { return "/groups/" + uid }

func (s *Server) apiCreateGroup(c echo.Context, req *PlanRequest) error {
	g, err := s.launchGroup(c.Request().Context(), req)
	if err != nil {
		return err
	}
	out := createdGroup{URL: groupURL(g.UID), Group: g.UID}
	for _, m := range g.Members {
		out.Runs = append(out.Runs, groupRunAt{ID: m.RunID, Host: m.HostName, Kind: m.HostKind, URL: fmt.Sprintf("/runs/%d", m.RunID)})
	}
	if len(out.Runs) > 0 {
		out.ID = out.Runs[0].ID
	}
	c.Response().Header().Set("Location", out.URL)
	return c.JSON(http.StatusCreated, out)
}

// groupMemberView is one host's run on the group's page and in
// /api/groups/UID.
type groupMemberView struct {
	RunID    int64  `json:"run_id"`
	URL      string `json:"url"`
	Host     string `json:"host"`
	Kind     string `json:"kind"`
	Hostname string `json:"hostname"`
	Kernel   string `json:"kernel"`
	Status   string `json:"status"`
	Error    string `json:"error,omitempty"`
	Steps    int    `json:"steps"`   // stored
	Planned  int    `json:"planned"` // in the plan
	// Progress says what the run does now: its step, and its IOPS (a
	// fio server: its share done).
	Progress string `json:"progress,omitempty"`
	// Agent: whether the agent running the run is heard from.
	Agent *agent.Reach `json:"agent,omitempty"`
}

// groupView is GET /api/groups/UID.
type groupView struct {
	UID     string            `json:"uid"`
	Name    string            `json:"name"`
	Serial  bool              `json:"serial"`
	Active  bool              `json:"active"` // a run is queued or running
	Members []groupMemberView `json:"members"`
}

// loadGroup reads a group with its runs' state.
func (s *Server) loadGroup(ctx context.Context, uid string) (*groupView, error) {
	g, err := s.store.GetFleetRun(ctx, uid)
	if errors.Is(err, db.ErrNotFound) {
		return nil, notFoundError{what: "group " + uid}
	}
	if err != nil {
		return nil, err
	}
	v := &groupView{UID: g.UID, Name: g.Name, Serial: g.Serial}
	for _, m := range g.Members {
		r, err := s.store.GetRun(ctx, m.RunID)
		if errors.Is(err, db.ErrNotFound) {
			continue // deleted since
		}
		if err != nil {
			return nil, err
		}
		mv := groupMemberView{RunID: r.ID, URL: fmt.Sprintf("/runs/%d", r.ID), Host: m.HostName, Kind: m.HostKind,
			Hostname: r.Hostname, Kernel: r.Kernel, Status: r.Status, Error: r.Error, Steps: r.Steps}
		if steps, err := r.Plan.Steps(); err == nil {
			mv.Planned = len(steps)
		}
		if r.Status == db.StatusQueued || r.Status == db.StatusRunning {
			v.Active = true
			mv.Progress = progressText(s.fleet.groups.Latest(r.ID))
			mv.Agent = s.agentReach(r.ID)
		}
		v.Members = append(v.Members, mv)
	}
	return v, nil
}

// progressText says a run's current step and its latest figure.
func progressText(step, progress *launch.Event) string {
	var parts []string
	if step != nil {
		if se, ok := step.Data.(launch.StepEvent); ok {
			parts = append(parts, fmt.Sprintf("step %d/%d %s", se.Step, se.Total, se.Label))
		}
	}
	if progress != nil {
		switch p := progress.Data.(type) {
		case launch.ProgressEvent:
			parts = append(parts, p.Phase+": "+p.IOPSText())
			if lat := p.LatText(); lat != "" {
				parts = append(parts, lat)
			}
		case launch.PercentEvent:
			if p.Percent >= 0 {
				parts = append(parts, fmt.Sprintf("%s: %.0f %%", p.Phase, p.Percent))
			} else {
				parts = append(parts, p.Phase)
			}
			if p.IOPS > 0 {
				parts = append(parts, units.Count(p.IOPS)+" IOPS")
			}
		}
	}
	return strings.Join(parts, " · ")
}

func (s *Server) apiGroup(c echo.Context) error {
	v, err := s.loadGroup(c.Request().Context(), c.Param("uid"))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, v)
}

// cancelGroup cancels every run of group uid still queued or running:
// the later hosts of a serial group first, so that none starts as the
// one before it ends. A run that ends meanwhile stays as it ended. It
// returns the group and the runs it cancelled.
func (s *Server) cancelGroup(c echo.Context) (*groupView, []int64, error) {
	v, err := s.loadGroup(c.Request().Context(), c.Param("uid"))
	if err != nil {
		return nil, nil, err
	}
	var cancelled []int64
	for i := len(v.Members) - 1; i >= 0; i-- {
		m := v.Members[i]
		if m.Status != db.StatusQueued && m.Status != db.StatusRunning {
			continue
		}
		if err := s.cancel(c, m.RunID); err != nil {
			if he, ok := errors.AsType[*echo.HTTPError](err); ok && he.Code == http.StatusConflict {
				continue // it ended since it was read
			}
			return nil, nil, err
		}
		cancelled = append(cancelled, m.RunID)
	}
	slices.Reverse(cancelled)
	return v, cancelled, nil
}

// cancelledGroup is POST /api/groups/UID/cancel's answer.
type cancelledGroup struct {
	URL       string  `json:"url"`
	Cancelled []int64 `json:"cancelled"` // the runs it cancelled, in the group's order
}

func (s *Server) apiCancelGroup(c echo.Context) error {
	v, ids, err := s.cancelGroup(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, cancelledGroup{URL: groupURL(v.UID), Cancelled: append([]int64{}, ids...)})
}

func (s *Server) cancelGroupForm(c echo.Context) error {
	v, _, err := s.cancelGroup(c)
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, groupURL(v.UID))
}

// groupPageData is a group's page: the hosts' runs and how they go, the
// statistical differences between the hosts, and the compare page of
// their runs, with the hosts as the series.
type groupPageData struct {
	comparePageData
	Group  *groupView
	Stats  *hostStats
	HasFio bool
	// Fleet is the hosts as one system (groups_fleet.go); nil before a
	// step is done.
	Fleet *groupFleet
}

func (s *Server) groupPage(c echo.Context) error {
	ctx := c.Request().Context()
	v, err := s.loadGroup(ctx, c.Param("uid"))
	if err != nil {
		return err
	}
	var ids []int64
	for _, m := range v.Members {
		ids = append(ids, m.RunID)
	}
	data := &groupPageData{Group: v}
	if len(ids) > 0 {
		cd, err := s.compareData(c, ids)
		if err != nil {
			return err
		}
		data.comparePageData = *cd
		data.Warnings = report.GroupWarnings(cd.Runs)
		data.Stats = hostDiffs(cd.Runs, v.Members, cmp.Or(cd.Lat, summary.LatTotal), cd.Lat != "")
		if data.Fleet, err = s.fleetOnPage(c, v.UID, ids); err != nil {
			return err
		}
	}
	name := v.Name
	if name == "" {
		name = v.UID[:8]
	}
	data.pageBase = s.base(c, "Group "+name)
	for _, m := range v.Members {
		data.HasFio = data.HasFio || m.Kind == db.HostFio
	}
	return s.render(c, http.StatusOK, "group", data)
}
