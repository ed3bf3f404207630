package db

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"iolab/bench/system"
)

// Host kinds: what runs a group's plan on a host.
const (
	HostFio   = "fio-server"  // `fio --server`, driven with this machine's fio client
	HostAgent = "iolab-agent" // `iolab agent`, which connects to the dashboard
	HostLocal = "local"       // the dashboard's own machine (in a group only)
)

// Host states, as Host.State tells them.
const (
	HostIdle    = "idle"
	HostRunning = "running"
	HostOffline = "offline"
)

// SourceAgent is the source of a run an iolab agent ran for a group.
const SourceAgent = "agent"

func init() { sources = append(sources, SourceAgent) }

// Bounds on what a host row holds.
const (
	MaxHostNameLen = 64
	MaxHostDevices = 64
)

// HostDetails is what a host said of itself: an agent at its last hello,
// a fio server at its last probe.
type HostDetails struct {
	// An agent's environment, the targets it allows resolved, its
	// allow-list and data directory as given, and its iolab version.
	Env          *system.HostInfo `json:"env,omitempty"`
	Targets      []system.Target  `json:"targets,omitempty"`
	AllowTargets []string         `json:"allow_targets,omitempty"`
	DataDir      string           `json:"data_dir,omitempty"`
	Version      string           `json:"version,omitempty"`
	// A fio server's probe: its fio release, OS and architecture.
	FioVersion string `json:"fio_version,omitempty"`
	OS         string `json:"os,omitempty"`
	Arch       string `json:"arch,omitempty"`
	// LastError is why the host could not be reached the last time it was
	// tried; "" when it answered.
	LastError string `json:"last_error,omitempty"`
}

// Host is one host a dashboard knows.
type Host struct {
	ID   int64  `json:"id"`
	Kind string `json:"kind"` // HostFio or HostAgent
	Name string `json:"name"` // what the dashboard calls it; unique
	// Address is a fio server's IP address or name, or the address an
	// agent last connected from; Port a fio server's port (0: fio's).
	Address  string `json:"address"`
	Port     int    `json:"port,omitempty"`
	Hostname string `json:"hostname,omitempty"`
	Kernel   string `json:"kernel,omitempty"`
	CPU      string `json:"cpu,omitempty"`
	// Devices are what jobs may use there: a fio server's allowed
	// devices and files (fleet.Host.AllowTargets: a job's filename must
	// be one of them, byte for byte), an agent's allow-list and "files
	// under DIR".
	Devices  []string    `json:"devices"`
	Details  HostDetails `json:"details"`
	Created  time.Time   `json:"created_at"`
	LastSeen time.Time   `json:"last_seen,omitzero"`
	// HasToken: an agent whose token was issued and not revoked.
	HasToken bool      `json:"has_token,omitempty"`
	Revoked  time.Time `json:"revoked_at,omitzero"`
	// Run is the run the host runs now (0: none), as read; State is set
	// by SetState.
	Run   int64  `json:"run,omitempty"`
	State string `json:"state,omitempty"`
}

// SetState sets h.State: running while it runs a run, offline when it has
// not been seen for offlineAfter (or ever, or its token is revoked), else
// idle.
func (h *Host) SetState(now time.Time, offlineAfter time.Duration) {
	switch {
	case h.Run != 0:
		h.State = HostRunning
	case h.LastSeen.IsZero() || now.Sub(h.LastSeen) > offlineAfter || !h.Revoked.IsZero():
		h.State = HostOffline
	default:
		h.State = HostIdle
	}
}

// CheckHostName refuses a host name that is not 1 to 64 letters, digits,
// '.', '-' and '_' (it appears in URLs, legends and file names).
func CheckHostName(name string) error {
	if name == "" || len(name) > MaxHostNameLen || strings.IndexFunc(name, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.')
	}) >= 0 {
		return fmt.Errorf("host name %q: 1 to %d letters, digits, '.', '-' and '_'", name, MaxHostNameLen)
	}
	return nil
}

// checkHost checks what a host row may hold.
func checkHost(h *Host) error {
	if h.Kind != HostFio && h.Kind != HostAgent {
		return fmt.Errorf("host kind %q: %s or %s", h.Kind, HostFio, HostAgent)
	}
	if err := CheckHostName(h.Name); err != nil {
		return err
	}
	if h.Port < 0 || h.Port > 65535 {
		return fmt.Errorf("port %d is not a port", h.Port)
	}
	if len(h.Devices) > MaxHostDevices {
		return fmt.Errorf("%d devices: at most %d", len(h.Devices), MaxHostDevices)
	}
	for _, f := range []struct{ what, v string }{{"address", h.Address}, {"hostname", h.Hostname}, {"kernel", h.Kernel}, {"CPU", h.CPU}} {
		if err := checkText(f.what, f.v, MaxHostLen); err != nil {
			return err
		}
	}
	for _, d := range h.Devices {
		if err := checkText("device", d, MaxTargetLen); err != nil {
			return err
		}
	}
	return nil
}

// hostColumns are the columns scanHost reads, in its order.
const hostColumns = `h.id, h.kind, h.name, h.address, h.port, h.hostname, h.kernel, h.cpu, h.devices, h.info,
	h.created_at, h.last_seen, h.token_hash IS NOT NULL AND h.revoked_at IS NULL, h.revoked_at,
	coalesce((SELECT g.run_id FROM group_runs g JOIN runs r ON r.id = g.run_id
		WHERE g.host_id = h.id AND r.status = 'running' ORDER BY g.run_id DESC LIMIT 1), 0)`

func scanHost(row scanner) (Host, error) {
	var (
		h                Host
		devices, info    string
		created          int64
		seen, revoked    sql.NullInt64
		hasToken         bool
		hostname, kernel string
	)
	err := row.Scan(&h.ID, &h.Kind, &h.Name, &h.Address, &h.Port, &hostname, &kernel, &h.CPU, &devices, &info,
		&created, &seen, &hasToken, &revoked, &h.Run)
	if err != nil {
		return Host{}, err
	}
	h.Hostname, h.Kernel, h.HasToken = hostname, kernel, hasToken
	h.Created, h.LastSeen, h.Revoked = time.Unix(0, created), timeNS(seen), timeNS(revoked)
	if err := unmarshalFields([]jsonField{{"devices", devices, &h.Devices}, {"info", info, &h.Details}}); err != nil {
		return Host{}, fmt.Errorf("host %d: %w", h.ID, err)
	}
	if h.Devices == nil {
		h.Devices = []string{}
	}
	return h, nil
}

// AddHost stores a new host and sets h.ID. A name already taken is an
// error that says so.
func (s *Store) AddHost(ctx context.Context, h *Host) (int64, error) {
	if err := checkHost(h); err != nil {
		return 0, fmt.Errorf("db: add host: %w", err)
	}
	if h.Created.IsZero() {
		h.Created = time.Now()
	}
	var j jsonWriter
	devices, info := j.list(h.Devices), j.text(h.Details)
	if j.err != nil {
		return 0, fmt.Errorf("db: add host: %w", j.err)
	}
	err := s.write.QueryRowContext(ctx, `INSERT INTO hosts (kind, name, address, port, hostname, kernel, cpu, devices, info, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		h.Kind, h.Name, h.Address, h.Port, h.Hostname, h.Kernel, h.CPU, devices, info, h.Created.UnixNano()).Scan(&h.ID)
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") {
			return 0, fmt.Errorf("db: add host: %w", &NameTakenError{Name: h.Name})
		}
		return 0, fmt.Errorf("db: add host %s: %w", h.Name, err)
	}
	return h.ID, nil
}

// NameTakenError is a host name another host has.
type NameTakenError struct{ Name string }

func (e *NameTakenError) Error() string {
	return fmt.Sprintf("a host is already called %q", e.Name)
}

// GetHost reads one host.
func (s *Store) GetHost(ctx context.Context, id int64) (*Host, error) {
	h, err := scanHost(s.read.QueryRowContext(ctx, `SELECT `+hostColumns+` FROM hosts h WHERE h.id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("db: get host %d: %w", id, notFound(err))
	}
	return &h, nil
}

// HostByName reads the host called name.
func (s *Store) HostByName(ctx context.Context, name string) (*Host, error) {
	h, err := scanHost(s.read.QueryRowContext(ctx, `SELECT `+hostColumns+` FROM hosts h WHERE h.name = ?`, name))
	if err != nil {
		return nil, fmt.Errorf("db: host %q: %w", name, notFound(err))
	}
	return &h, nil
}

// ListHosts lists every host, by kind then name.
func (s *Store) ListHosts(ctx context.Context) ([]Host, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+hostColumns+` FROM hosts h ORDER BY h.kind, h.name`)
	if err != nil {
		return nil, fmt.Errorf("db: list hosts: %w", err)
	}
	defer rows.Close()
	hosts := []Host{}
	for rows.Next() {
		h, err := scanHost(rows)
		if err != nil {
			return nil, fmt.Errorf("db: list hosts: %w", err)
		}
		hosts = append(hosts, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: list hosts: %w", err)
	}
	return hosts, nil
}

// DeleteHost forgets a host; its runs stay, naming it.
func (s *Store) DeleteHost(ctx context.Context, id int64) error {
	res, err := s.write.ExecContext(ctx, `DELETE FROM hosts WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("db: delete host %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("db: delete host %d: %w", id, ErrNotFound)
	}
	return nil
}

// HostSeen records that host id answered or asked at at (the zero time
// leaves its last seen time alone), and, when given (non-nil d), what it
// says of itself now. addr, when not "", is an agent's address.
func (s *Store) HostSeen(ctx context.Context, id int64, at time.Time, addr string, d *HostDetails) error {
	q := `UPDATE hosts SET last_seen = coalesce(?, last_seen), address = CASE WHEN ? = '' THEN address ELSE ? END`
	args := []any{nsTime(at), addr, addr}
	if d != nil {
		h := Host{Kind: HostAgent, Name: "x", Address: addr}
		if d.Env != nil {
			h.Hostname, h.Kernel, h.CPU = d.Env.Hostname, d.Env.KernelRelease, d.Env.CPUModel
		}
		if err := checkHost(&h); err != nil {
			return fmt.Errorf("db: host %d: %w", id, err)
		}
		var j jsonWriter
		info := j.text(d)
		if j.err != nil {
			return fmt.Errorf("db: host %d: %w", id, j.err)
		}
		q += `, info = ?, hostname = CASE WHEN ? = '' THEN hostname ELSE ? END,
			kernel = CASE WHEN ? = '' THEN kernel ELSE ? END, cpu = CASE WHEN ? = '' THEN cpu ELSE ? END`
		args = append(args, info, h.Hostname, h.Hostname, h.Kernel, h.Kernel, h.CPU, h.CPU)
	}
	res, err := s.write.ExecContext(ctx, q+` WHERE id = ?`, append(args, id)...)
	if err != nil {
		return fmt.Errorf("db: host %d seen: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("db: host %d seen: %w", id, ErrNotFound)
	}
	return nil
}

// SetHostDevices sets what jobs may use on a host (a fio server's
// devices, an agent's allow-list as it reported it).
func (s *Store) SetHostDevices(ctx context.Context, id int64, devices []string) error {
	h := Host{Kind: HostFio, Name: "x", Devices: devices}
	if err := checkHost(&h); err != nil {
		return fmt.Errorf("db: host %d: %w", id, err)
	}
	var j jsonWriter
	if _, err := s.write.ExecContext(ctx, `UPDATE hosts SET devices = ? WHERE id = ?`, j.list(devices), id); err != nil {
		return fmt.Errorf("db: host %d devices: %w", id, err)
	}
	return nil
}

// RenameHost renames a host; a name another host has is a
// *NameTakenError.
func (s *Store) RenameHost(ctx context.Context, id int64, name string) error {
	if err := CheckHostName(name); err != nil {
		return fmt.Errorf("db: rename host %d: %w", id, err)
	}
	_, err := s.write.ExecContext(ctx, `UPDATE hosts SET name = ? WHERE id = ?`, name, id)
	if err != nil && strings.Contains(err.Error(), "UNIQUE") {
		return fmt.Errorf("db: rename host %d: %w", id, &NameTakenError{Name: name})
	}
	if err != nil {
		return fmt.Errorf("db: rename host %d: %w", id, err)
	}
	return nil
}

// Agent tokens are "iolab_ID_SECRET": the host's id, then 32 random bytes
// in hex. The store keeps the SHA-256 of the whole token (a token has 256
// random bits: no slow hash is needed to keep it from being guessed back),
// looks the host up by the id and compares the hashes in constant time.
const tokenPrefix = "iolab_"

// ErrUnknownToken is an agent token no host has.
var ErrUnknownToken = errors.New("unknown agent token")

// RevokedError is an agent token that was revoked.
type RevokedError struct {
	Host string
	At   time.Time
}

func (e *RevokedError) Error() string {
	return fmt.Sprintf("the token of agent %s was revoked on %s", e.Host, FormatTime(e.At))
}

func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// IssueAgentToken gives agent host id a new token, which replaces (and
// so revokes) any it had and clears a revocation. The token is returned
// once: only its hash is stored.
func (s *Store) IssueAgentToken(ctx context.Context, id int64) (string, error) {
	var secret [32]byte
	rand.Read(secret[:]) // never fails (crypto/rand)
	token := tokenPrefix + strconv.FormatInt(id, 10) + "_" + hex.EncodeToString(secret[:])
	res, err := s.write.ExecContext(ctx, `UPDATE hosts SET token_hash = ?, revoked_at = NULL WHERE id = ? AND kind = ?`,
		tokenHash(token), id, HostAgent)
	if err != nil {
		return "", fmt.Errorf("db: issue a token for host %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return "", fmt.Errorf("db: issue a token for host %d: no agent host %w", id, ErrNotFound)
	}
	return token, nil
}

// CreateAgent stores a new agent host called name and issues its token.
func (s *Store) CreateAgent(ctx context.Context, name string) (*Host, string, error) {
	h := &Host{Kind: HostAgent, Name: name, Devices: []string{}}
	if _, err := s.AddHost(ctx, h); err != nil {
		return nil, "", err
	}
	token, err := s.IssueAgentToken(ctx, h.ID)
	if err != nil {
		return nil, "", err
	}
	h.HasToken = true
	return h, token, nil
}

// RevokeAgentToken revokes agent host id's token: every request with it
// is refused from now on.
func (s *Store) RevokeAgentToken(ctx context.Context, id int64) error {
	res, err := s.write.ExecContext(ctx, `UPDATE hosts SET revoked_at = ? WHERE id = ? AND kind = ? AND token_hash IS NOT NULL`,
		time.Now().UnixNano(), id, HostAgent)
	if err != nil {
		return fmt.Errorf("db: revoke host %d's token: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("db: revoke host %d's token: no agent with a token %w", id, ErrNotFound)
	}
	return nil
}

// AgentByToken finds the agent token belongs to: ErrUnknownToken when
// none has it, a *RevokedError when it was revoked.
func (s *Store) AgentByToken(ctx context.Context, token string) (*Host, error) {
	rest, ok := strings.CutPrefix(token, tokenPrefix)
	idText, _, ok2 := strings.Cut(rest, "_")
	id, err := strconv.ParseInt(idText, 10, 64)
	if !ok || !ok2 || err != nil || len(token) > 128 {
		return nil, ErrUnknownToken
	}
	var (
		hash    sql.NullString
		revoked sql.NullInt64
		name    string
	)
	err = s.read.QueryRowContext(ctx, `SELECT token_hash, revoked_at, name FROM hosts WHERE id = ? AND kind = ?`, id, HostAgent).
		Scan(&hash, &revoked, &name)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrUnknownToken
	}
	if err != nil {
		return nil, fmt.Errorf("db: agent token: %w", err)
	}
	if !hash.Valid || subtle.ConstantTimeCompare([]byte(tokenHash(token)), []byte(hash.String)) != 1 {
		return nil, ErrUnknownToken
	}
	if revoked.Valid {
		return nil, &RevokedError{Host: name, At: timeNS(revoked)}
	}
	return s.GetHost(ctx, id)
}

// Offers reports whether an agent's last hello allows path as a target:
// on its allow-list, or under its data directory. The agent checks
// again, resolved, before it runs anything.
func (h *Host) Offers(path string) bool {
	if !filepath.IsAbs(path) {
		return false
	}
	path = filepath.Clean(path)
	if slices.Contains(h.Details.AllowTargets, path) {
		return true
	}
	d := h.Details.DataDir
	return d != "" && strings.HasPrefix(path, filepath.Clean(d)+"/")
}
