package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"iolab/bench/fioserver"
	"iolab/bench/system"
	"iolab/bench/units"
	"iolab/db"
	"iolab/handlers/agent"
	"iolab/handlers/fleet"
	"iolab/web"

	"github.com/labstack/echo/v4"
)

// FleetConfig is how the dashboard drives other hosts: fio servers (only
// on FioAllow's addresses, with Fio, this machine's fio client) and iolab
// agents (on Agents' clock).
type FleetConfig struct {
	// FioAllow holds the addresses fio servers may have (--fio-allow);
	// empty: no fio server can be added.
	FioAllow fioserver.AllowList
	// Fio is the fio binary; "" finds fio in PATH.
	Fio string
	// Agents is the agents' protocol clock (zero fields: the defaults).
	Agents agent.Timing
	// FioProbeEvery is how often fio servers are asked who they are (30 s).
	FioProbeEvery time.Duration
}

// fleetState is the server's fleet: the agent hub, the group launcher,
// and the background work (lease expiry, fio probes) stop ends.
type fleetState struct {
	cfg    FleetConfig
	hub    *agent.Hub
	groups *fleet.Launcher
	stop   context.CancelFunc
}

// initFleet builds the hub and the group launcher and starts their
// background work.
func (s *Server) initFleet(cfg FleetConfig) error {
	hub := agent.NewHub(s.store, s.log, cfg.Agents)
	runner := &fioserver.Runner{Fio: cfg.Fio, Allow: cfg.FioAllow} // probes answer within 10 s, also on a loaded host
	f := &fleetState{cfg: cfg, hub: hub,
		groups: &fleet.Launcher{Store: s.store, Local: s.launcher, Hub: hub, Fio: runner, Log: s.log}}
	ctx, cancel := context.WithCancel(context.Background())
	f.stop = cancel
	go hub.Run(ctx)
	if cfg.FioProbeEvery <= 0 {
		f.cfg.FioProbeEvery = 30 * time.Second
	}
	every := f.cfg.FioProbeEvery
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			f.groups.ProbeFio(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	for _, name := range []string{"hosts", "group"} {
		files := []string{"layout.html", name + ".html"}
		if name == "group" {
			// The group page is a compare page with the group above it.
			files = []string{"layout.html", "statdiff.html", "compare.html", "fleet.html", "group.html"}
		}
		t, err := template.New(name).Funcs(templateFuncs).ParseFS(web.Templates(), files...)
		if err != nil {
			return fmt.Errorf("handlers: template %s: %w", name, err)
		}
		s.pages[name] = t
	}
	// Before any agent's request: the runs agents went on with while
	// this dashboard was away are theirs again.
	if err := f.groups.Resume(ctx); err != nil {
		cancel()
		return fmt.Errorf("handlers: hold the agents' runs again: %w", err)
	}
	s.fleet = f
	return nil
}

// fleetRoutes are the hosts', the agents' and the groups' routes.
func (s *Server) fleetRoutes() []route {
	return []route{
		{"GET", "/hosts", s.hostsPage, readAccess, light},
		{"POST", "/hosts", s.addHostForm, writeAccess, light},
		{"POST", "/hosts/:id/token", s.issueTokenForm, writeAccess, light},
		{"POST", "/hosts/:id/revoke", s.revokeForm, writeAccess, light},
		{"POST", "/hosts/:id/delete", s.deleteHostForm, writeAccess, light},
		{"GET", "/api/hosts", s.apiHosts, readAccess, light},
		{"POST", "/api/hosts", s.apiAddHost, writeAccess, light},
		{"POST", "/api/hosts/:id/token", s.apiIssueToken, writeAccess, light},
		{"POST", "/api/hosts/:id/revoke", s.apiRevoke, writeAccess, light},
		{"DELETE", "/api/hosts/:id", s.apiDeleteHost, writeAccess, light},

		// The agents' protocol (handlers/agent): each agent's own token.
		{"POST", agent.PathHello, s.agentAPI(s.agentHello), openAccess, light},
		{"GET", agent.PathWork, s.agentAPI(s.agentWork), openAccess, light},
		{"GET", agent.PathRuns + ":id", s.agentAPI(s.agentState), openAccess, light},
		{"POST", agent.PathRuns + ":id/start", s.agentAPI(s.agentStart), openAccess, light},
		{"POST", agent.PathRuns + ":id/events", s.agentAPI(s.agentEvents), openAccess, light},
		{"PUT", agent.PathRuns + ":id/steps/:seq", s.agentAPI(s.agentStep), openAccess, upload},
		{"POST", agent.PathRuns + ":id/end", s.agentAPI(s.agentEnd), openAccess, light},

		// Groups: one plan on several hosts (handlers/groups.go).
		{"GET", "/groups/:uid", s.groupPage, readAccess, heavy},
		{"POST", "/groups/:uid/cancel", s.cancelGroupForm, writeAccess, light},
		{"GET", "/api/groups/:uid", s.apiGroup, readAccess, light},
		{"POST", "/api/groups/:uid/cancel", s.apiCancelGroup, writeAccess, light},
		// The group as one system (handlers/groups_fleet.go).
		{"GET", "/api/groups/:uid/fleet", s.apiGroupFleet, readAccess, heavy},
		{"GET", "/groups/:uid/fleet.csv", s.groupFleetCSV, readAccess, heavy},
	}
}

// offlineAfter is how long a host may go unheard before it is offline:
// an agent polls every Poll and heartbeats a running run; fio servers
// are probed every FioProbeEvery.
func (s *Server) offlineAfter(kind string) time.Duration {
	t := s.fleet.hub.Timing()
	if kind == db.HostFio {
		return 2*s.fleet.cfg.FioProbeEvery + 30*time.Second
	}
	return t.Poll + t.Lease
}

// hosts lists the hosts with their state.
func (s *Server) hosts(ctx context.Context) ([]db.Host, error) {
	hs, err := s.store.ListHosts(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	for i := range hs {
		hs[i].SetState(now, s.offlineAfter(hs[i].Kind))
	}
	return hs, nil
}

func (s *Server) apiHosts(c echo.Context) error {
	hs, err := s.hosts(c.Request().Context())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, hs)
}

// HostRequest adds a host: a fio server (kind fio-server, address, port,
// the devices and files its jobs may use, each as a job must name it) or
// an agent (kind iolab-agent: a token is issued and answered once).
type HostRequest struct {
	Kind    string   `json:"kind"`
	Name    string   `json:"name"`
	Address string   `json:"address,omitempty"`
	Port    int      `json:"port,omitempty"`
	Devices []string `json:"devices,omitempty"`
}

// addedHost is POST /api/hosts's answer: the host, and an agent's token
// (shown this once: only its hash is kept).
type addedHost struct {
	Host  *db.Host `json:"host"`
	Token string   `json:"token,omitempty"`
}

// addHost checks and stores a host. A fio server must be on the fio
// allow-list; it is probed at once (a server that does not answer is
// added, offline, with why).
func (s *Server) addHost(ctx context.Context, req *HostRequest) (*addedHost, error) {
	if err := db.CheckHostName(req.Name); err != nil {
		return nil, &ValidationError{Field: "name", Msg: err.Error()}
	}
	switch req.Kind {
	case db.HostAgent:
		h, token, err := s.store.CreateAgent(ctx, req.Name)
		if err != nil {
			return nil, hostStoreError(err)
		}
		return &addedHost{Host: h, Token: token}, nil
	case db.HostFio:
	default:
		return nil, &ValidationError{Field: "kind", Msg: fmt.Sprintf("kind %q: %s or %s", req.Kind, db.HostFio, db.HostAgent)}
	}
	f := s.fleet.groups.Fio
	if f.Allow.Empty() {
		return nil, &ValidationError{Field: "address", Msg: "this dashboard drives no fio server: start it with --fio-allow PREFIX (the addresses fio servers may have, e.g. 10.0.0.0/24)"}
	}
	var devices []string
	for _, d := range req.Devices {
		if d = strings.TrimSpace(d); d != "" {
			if err := fioserver.CheckAllowedTarget(d); err != nil {
				return nil, &ValidationError{Field: "devices", Msg: err.Error()}
			}
			devices = append(devices, d)
		}
	}
	fh := fioserver.Host{Name: req.Name, Addr: strings.TrimSpace(req.Address), Port: req.Port, AllowTargets: devices}
	info, perr := f.Probe(ctx, fh)
	if errors.Is(perr, fioserver.ErrNotAllowed) {
		return nil, &ValidationError{Field: "address", Msg: perr.Error()}
	}
	h := &db.Host{Kind: db.HostFio, Name: req.Name, Address: fh.Addr, Port: req.Port, Devices: devices}
	if _, err := s.store.AddHost(ctx, h); err != nil {
		return nil, hostStoreError(err)
	}
	d := db.HostDetails{FioVersion: info.FioVersion, OS: info.OS, Arch: info.Arch}
	seen := time.Now()
	if perr != nil {
		d.LastError, seen = perr.Error(), time.Time{}
	}
	if info.Hostname != "" {
		d.Env = &system.HostInfo{Hostname: info.Hostname, Arch: info.Arch}
	}
	if err := s.store.HostSeen(ctx, h.ID, seen, "", &d); err != nil {
		return nil, err
	}
	h, err := s.store.GetHost(ctx, h.ID)
	return &addedHost{Host: h}, err
}

// hostStoreError turns the store's refusals into 400s.
func hostStoreError(err error) error {
	var taken *db.NameTakenError
	if errors.As(err, &taken) {
		return &ValidationError{Field: "name", Msg: taken.Error()}
	}
	if errors.Is(err, db.ErrNotFound) {
		return err
	}
	if strings.Contains(err.Error(), "db: add host: ") {
		return &ValidationError{Msg: strings.TrimPrefix(err.Error(), "db: add host: ")}
	}
	return err
}

func (s *Server) apiAddHost(c echo.Context) error {
	var req HostRequest
	dec := json.NewDecoder(c.Request().Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return formError(err, &ValidationError{Msg: "the body is not a host: " + err.Error()})
	}
	added, err := s.addHost(c.Request().Context(), &req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, added)
}

// hostParam reads a host route's :id.
func (s *Server) hostParam(c echo.Context) (*db.Host, error) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id < 1 {
		return nil, notFoundError{what: "host " + strconv.Quote(c.Param("id"))}
	}
	h, err := s.store.GetHost(c.Request().Context(), id)
	if errors.Is(err, db.ErrNotFound) {
		return nil, notFoundError{what: fmt.Sprintf("host %d", id)}
	}
	return h, err
}

// issueToken gives an agent a new token (which replaces its old one).
func (s *Server) issueToken(c echo.Context) (*db.Host, string, error) {
	h, err := s.hostParam(c)
	if err != nil {
		return nil, "", err
	}
	if h.Kind != db.HostAgent {
		return nil, "", &ValidationError{Msg: fmt.Sprintf("host %s is a %s: only agents have tokens", h.Name, h.Kind)}
	}
	token, err := s.store.IssueAgentToken(c.Request().Context(), h.ID)
	return h, token, err
}

func (s *Server) apiIssueToken(c echo.Context) error {
	h, token, err := s.issueToken(c)
	if err != nil {
		return err
	}
	h.HasToken, h.Revoked = true, time.Time{}
	return c.JSON(http.StatusOK, addedHost{Host: h, Token: token})
}

// agentReach is whether the agent that runs run id is heard from; nil
// when no agent holds it here.
func (s *Server) agentReach(id int64) *agent.Reach {
	if r, ok := s.fleet.hub.Reach(id); ok {
		return &r
	}
	return nil
}

// revoke revokes an agent's token: its requests are refused from now on,
// the run it holds is interrupted and those queued for it fail.
func (s *Server) revoke(c echo.Context) (*db.Host, error) {
	h, err := s.hostParam(c)
	if err != nil {
		return nil, err
	}
	if err := s.store.RevokeAgentToken(c.Request().Context(), h.ID); err != nil {
		if errors.Is(err, db.ErrNotFound) {
			return nil, &ValidationError{Msg: fmt.Sprintf("host %s has no token to revoke", h.Name)}
		}
		return nil, err
	}
	s.log.Info("agent token revoked", "agent", h.Name)
	s.fleet.hub.Revoked(h.ID)
	return s.store.GetHost(c.Request().Context(), h.ID)
}

func (s *Server) apiRevoke(c echo.Context) error {
	h, err := s.revoke(c)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h)
}

func (s *Server) deleteHost(c echo.Context) error {
	h, err := s.hostParam(c)
	if err != nil {
		return err
	}
	if h.Run != 0 {
		return echo.NewHTTPError(http.StatusConflict, fmt.Sprintf("host %s runs run %d: cancel it first", h.Name, h.Run))
	}
	return s.store.DeleteHost(c.Request().Context(), h.ID)
}

func (s *Server) apiDeleteHost(c echo.Context) error {
	if err := s.deleteHost(c); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// hostsPageData is the Hosts page.
type hostsPageData struct {
	pageBase
	Hosts    []hostRow
	FioAllow string // the fio allow-list, "" when none
	// Token is a token just issued, shown this once, for TokenHost.
	Token, TokenHost string
	Dashboard        string // this dashboard's URL, for the agent's command line
	Error            string
	Form             HostRequest
}

func (s *Server) hostsData(c echo.Context) (*hostsPageData, error) {
	hs, err := s.hosts(c.Request().Context())
	if err != nil {
		return nil, err
	}
	rows := make([]hostRow, len(hs))
	for i := range hs {
		rows[i] = hostRowOf(&hs[i])
	}
	return &hostsPageData{pageBase: s.base(c, "Hosts"), Hosts: rows, FioAllow: s.fleet.groups.Fio.Allow.String(),
		Dashboard: c.Scheme() + "://" + c.Request().Host}, nil
}

// hostRow is one host on the Hosts page, with what a storage engineer
// picks hosts by in words: its CPUs and what each offered device is.
type hostRow struct {
	db.Host
	CPUs    string // "2 × AMD EPYC, governor performance"; "" before an agent's hello
	Offered []offeredDevice
}

// offeredDevice is one entry of a host's devices: a path, or an agent's
// "files under DIR".
type offeredDevice struct {
	Name string
	// What the agent found there: "loop, 128MiB, scheduler none";
	// Missing when it found nothing at the path.
	What    string
	Missing bool
}

func hostRowOf(h *db.Host) hostRow {
	row := hostRow{Host: *h}
	if env := h.Details.Env; env != nil && h.Kind == db.HostAgent {
		row.CPUs = env.CPU()
	}
	for _, d := range h.Devices {
		o := offeredDevice{Name: d}
		if h.Kind == db.HostAgent && slices.Contains(h.Details.AllowTargets, d) {
			i := slices.IndexFunc(h.Details.Targets, func(t system.Target) bool { return t.Path == d })
			if i < 0 {
				o.Missing = true // the agent resolves what it allows at its hello
			} else {
				o.What = targetWords(&h.Details.Targets[i])
			}
		}
		row.Offered = append(row.Offered, o)
	}
	return row
}

// targetWords says what a target is: model and firmware, driver, size,
// scheduler.
func targetWords(t *system.Target) string {
	var w []string
	if t.Model != "" {
		w = append(w, t.Model)
	}
	if t.Firmware != "" {
		w = append(w, "firmware "+t.Firmware)
	}
	if t.Driver != "" {
		w = append(w, t.Driver)
	}
	if t.Size > 0 {
		w = append(w, units.Bytes(float64(t.Size)))
	}
	if t.IsBlock && t.Scheduler != "" {
		w = append(w, "scheduler "+t.Scheduler)
	}
	return strings.Join(w, ", ")
}

func (s *Server) hostsPage(c echo.Context) error {
	data, err := s.hostsData(c)
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, "hosts", data)
}

// addHostForm takes the page's forms: a fio server (address, port,
// devices one a line or comma-separated) or an agent, whose token the
// page shows this once.
func (s *Server) addHostForm(c echo.Context) error {
	port, _ := strconv.Atoi(strings.TrimSpace(c.FormValue("port")))
	req := HostRequest{Kind: c.FormValue("kind"), Name: strings.TrimSpace(c.FormValue("name")),
		Address: strings.TrimSpace(c.FormValue("address")), Port: port,
		Devices: strings.FieldsFunc(c.FormValue("devices"), func(r rune) bool { return r == ',' || r == '\n' || r == ' ' })}
	added, err := s.addHost(c.Request().Context(), &req)
	var ve *ValidationError
	if errors.As(err, &ve) {
		data, derr := s.hostsData(c)
		if derr != nil {
			return derr
		}
		data.Error, data.Form = ve.Msg, req
		return s.render(c, http.StatusBadRequest, "hosts", data)
	}
	if err != nil {
		return err
	}
	if added.Token == "" {
		return c.Redirect(http.StatusSeeOther, "/hosts")
	}
	return s.showToken(c, added.Host.Name, added.Token)
}

// showToken renders the Hosts page with a token just issued.
func (s *Server) showToken(c echo.Context, host, token string) error {
	data, err := s.hostsData(c)
	if err != nil {
		return err
	}
	data.Token, data.TokenHost = token, host
	c.Response().Header().Set("Cache-Control", "no-store")
	return s.render(c, http.StatusOK, "hosts", data)
}

func (s *Server) issueTokenForm(c echo.Context) error {
	h, token, err := s.issueToken(c)
	if err != nil {
		return err
	}
	return s.showToken(c, h.Name, token)
}

func (s *Server) revokeForm(c echo.Context) error {
	if _, err := s.revoke(c); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/hosts")
}

func (s *Server) deleteHostForm(c echo.Context) error {
	if err := s.deleteHost(c); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/hosts")
}
