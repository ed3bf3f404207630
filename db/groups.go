package db

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"iolab/bench/system"
)

// FleetRun is one plan run on several hosts of the fleet: one run per
// host. The dashboard calls it a group (its pages, URLs and JSON), and so
// do its SQL tables (run_groups, group_runs); in Go, a group is fio's
// reporting group (bench.Group).
type FleetRun struct {
	UID     string           `json:"uid"`
	Name    string           `json:"name"`
	Serial  bool             `json:"serial"` // the hosts ran one after another
	Created time.Time        `json:"created_at"`
	Members []FleetRunMember `json:"members"`
}

// FleetRunMember is one host's run in a fleet run.
type FleetRunMember struct {
	RunID    int64  `json:"run_id"`
	Position int    `json:"position"`
	HostID   int64  `json:"host_id,omitempty"` // 0: the dashboard's machine, or a host deleted since
	HostKind string `json:"host_kind"`         // HostLocal, HostFio or HostAgent
	HostName string `json:"host_name"`
}

// CreateFleetRun stores a new fleet run without members and sets its UID.
func (s *Store) CreateFleetRun(ctx context.Context, g *FleetRun) error {
	if g.UID == "" {
		g.UID = newUID()
	}
	if g.Created.IsZero() {
		g.Created = time.Now()
	}
	if g.Name != "" {
		if err := checkText("group name", g.Name, MaxNameLen); err != nil {
			return fmt.Errorf("db: create group: %w", err)
		}
	}
	_, err := s.write.ExecContext(ctx, `INSERT INTO run_groups (uid, name, serial, created_at) VALUES (?, ?, ?, ?)`,
		g.UID, g.Name, g.Serial, g.Created.UnixNano())
	if err != nil {
		return fmt.Errorf("db: create group: %w", err)
	}
	return nil
}

// AddFleetRunMember makes run m.RunID a member of fleet run uid.
func (s *Store) AddFleetRunMember(ctx context.Context, uid string, m FleetRunMember) error {
	var host sql.NullInt64
	if m.HostID != 0 {
		host = sql.NullInt64{Int64: m.HostID, Valid: true}
	}
	_, err := s.write.ExecContext(ctx, `INSERT INTO group_runs (run_id, group_uid, position, host_id, host_kind, host_name)
		VALUES (?, ?, ?, ?, ?, ?)`, m.RunID, uid, m.Position, host, m.HostKind, m.HostName)
	if err != nil {
		return fmt.Errorf("db: add run %d to group %s: %w", m.RunID, uid, err)
	}
	return nil
}

// GetFleetRun reads a fleet run and its members, in order.
func (s *Store) GetFleetRun(ctx context.Context, uid string) (*FleetRun, error) {
	g := &FleetRun{UID: uid}
	var created int64
	err := s.read.QueryRowContext(ctx, `SELECT name, serial, created_at FROM run_groups WHERE uid = ?`, uid).
		Scan(&g.Name, &g.Serial, &created)
	if err != nil {
		return nil, fmt.Errorf("db: group %s: %w", uid, notFound(err))
	}
	g.Created = time.Unix(0, created)
	rows, err := s.read.QueryContext(ctx, `SELECT run_id, position, coalesce(host_id, 0), host_kind, host_name
		FROM group_runs WHERE group_uid = ? ORDER BY position`, uid)
	if err != nil {
		return nil, fmt.Errorf("db: group %s: %w", uid, err)
	}
	defer rows.Close()
	for rows.Next() {
		var m FleetRunMember
		if err := rows.Scan(&m.RunID, &m.Position, &m.HostID, &m.HostKind, &m.HostName); err != nil {
			return nil, fmt.Errorf("db: group %s: %w", uid, err)
		}
		g.Members = append(g.Members, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: group %s: %w", uid, err)
	}
	return g, nil
}

// FleetRunOf is the fleet run that run id belongs to, with its member row;
// ErrNotFound when it is in none.
func (s *Store) FleetRunOf(ctx context.Context, id int64) (string, FleetRunMember, error) {
	var (
		uid string
		m   = FleetRunMember{RunID: id}
	)
	err := s.read.QueryRowContext(ctx, `SELECT group_uid, position, coalesce(host_id, 0), host_kind, host_name
		FROM group_runs WHERE run_id = ?`, id).Scan(&uid, &m.Position, &m.HostID, &m.HostKind, &m.HostName)
	if err != nil {
		return "", FleetRunMember{}, fmt.Errorf("db: group of run %d: %w", id, notFound(err))
	}
	return uid, m, nil
}

// RunningAgentRuns lists the runs agents are running for the dashboard
// (source agent, status running) with their place in their group: what
// a dashboard that starts again holds for its agents, which go on while
// it is away (Open leaves these runs running).
func (s *Store) RunningAgentRuns(ctx context.Context) ([]FleetRunMember, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT g.run_id, g.position, coalesce(g.host_id, 0), g.host_kind, g.host_name
		FROM runs r JOIN group_runs g ON g.run_id = r.id WHERE r.status = ? AND r.source = ? ORDER BY r.id`, StatusRunning, SourceAgent)
	if err != nil {
		return nil, fmt.Errorf("db: running agent runs: %w", err)
	}
	defer rows.Close()
	var out []FleetRunMember
	for rows.Next() {
		var m FleetRunMember
		if err := rows.Scan(&m.RunID, &m.Position, &m.HostID, &m.HostKind, &m.HostName); err != nil {
			return nil, fmt.Errorf("db: running agent runs: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: running agent runs: %w", err)
	}
	return out, nil
}

// SetRunHost records where a run runs once the host says it: its
// environment and its targets resolved there (an agent's, as it starts
// the run; a fio server's, as its probe says). Hostname, Kernel and
// Target follow them when they say.
func (s *Store) SetRunHost(ctx context.Context, id int64, host system.HostInfo, targets []system.Target) error {
	r := Run{Status: StatusRunning, Source: SourceLocal, Host: host, Targets: targets}
	fillSummary(&r)
	if err := CheckRun(&r); err != nil {
		return fmt.Errorf("db: run %d host: %w", id, err)
	}
	var j jsonWriter
	h, t := j.text(host), j.text(targets)
	if j.err != nil {
		return fmt.Errorf("db: run %d host: %w", id, j.err)
	}
	res, err := s.write.ExecContext(ctx, `UPDATE runs SET host = ?, targets = ?,
		hostname = CASE WHEN ? = '' THEN hostname ELSE ? END, kernel = CASE WHEN ? = '' THEN kernel ELSE ? END,
		target = CASE WHEN ? = '' THEN target ELSE ? END WHERE id = ?`,
		h, t, r.Hostname, r.Hostname, r.Kernel, r.Kernel, r.Target, r.Target, id)
	if err != nil {
		return fmt.Errorf("db: run %d host: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("db: run %d host: %w", id, ErrNotFound)
	}
	return nil
}

// StoredSteps lists the seqs of run id's stored steps, in order, with
// their statuses.
func (s *Store) StoredSteps(ctx context.Context, id int64) (map[int]string, error) {
	// Whether the run exists, not the whole run: agents ask this with
	// every step they upload.
	tx, err := s.read.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("db: run %d steps: %w", id, err)
	}
	defer tx.Rollback()
	if err := runExists(ctx, tx, id); err != nil {
		return nil, fmt.Errorf("db: run %d steps: %w", id, err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT seq, status FROM steps WHERE run_id = ?`, id)
	if err != nil {
		return nil, fmt.Errorf("db: run %d steps: %w", id, err)
	}
	defer rows.Close()
	out := map[int]string{}
	for rows.Next() {
		var (
			seq    int
			status string
		)
		if err := rows.Scan(&seq, &status); err != nil {
			return nil, fmt.Errorf("db: run %d steps: %w", id, err)
		}
		out[seq] = status
	}
	return out, rows.Err()
}

// AgentRun is, on an agent, a run it ran for a dashboard: the local copy
// (RunID in this store), the dashboard and the run's id there.
type AgentRun struct {
	RunID     int64
	Dashboard string
	RemoteID  int64
}

// AddAgentRun records that local run a.RunID is dashboard run a.RemoteID.
func (s *Store) AddAgentRun(ctx context.Context, a AgentRun) error {
	_, err := s.write.ExecContext(ctx, `INSERT INTO agent_runs (run_id, dashboard, remote_id) VALUES (?, ?, ?)`,
		a.RunID, a.Dashboard, a.RemoteID)
	if err != nil {
		return fmt.Errorf("db: agent run %d: %w", a.RunID, err)
	}
	return nil
}

// UnsyncedAgentRuns lists the runs done for dashboard that it does not
// have whole yet, oldest first.
func (s *Store) UnsyncedAgentRuns(ctx context.Context, dashboard string) ([]AgentRun, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT run_id, remote_id FROM agent_runs
		WHERE dashboard = ? AND synced_at IS NULL ORDER BY run_id`, dashboard)
	if err != nil {
		return nil, fmt.Errorf("db: agent runs: %w", err)
	}
	defer rows.Close()
	var out []AgentRun
	for rows.Next() {
		a := AgentRun{Dashboard: dashboard}
		if err := rows.Scan(&a.RunID, &a.RemoteID); err != nil {
			return nil, fmt.Errorf("db: agent runs: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// SetAgentRunSynced records that the dashboard has all of run id.
func (s *Store) SetAgentRunSynced(ctx context.Context, id int64) error {
	res, err := s.write.ExecContext(ctx, `UPDATE agent_runs SET synced_at = ? WHERE run_id = ?`, time.Now().UnixNano(), id)
	if err != nil {
		return fmt.Errorf("db: agent run %d synced: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("db: agent run %d: %w", id, ErrNotFound)
	}
	return nil
}
