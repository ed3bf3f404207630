package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"iolab/bench/record"
	"iolab/bench/sweep"
)

// Run is one stored run: record.Run, declared below the store so that
// the launcher records runs without importing it.
type Run = record.Run

// RunFilter selects runs for ListRuns and RunPage; empty fields match
// everything.
type RunFilter struct {
	Hostname  string
	Kernel    string
	Target    string
	Scheduler string // one of the run's Schedulers
	Engine    string // one of the run's Engines
	Status    string
	Source    string // one of Sources()
	Tag       string // one of the run's Tags
	Workload  string // the run's Workload, exactly
	Name      string // a part of the run's name, in any case of its ASCII letters
	// Since and Until bound the run's creation: since it, before Until.
	Since, Until time.Time
	Limit        int // ListRuns: 0 for no limit; RunPage: the page's size
}

// CreateRun stores a new run and sets r.ID. An empty Status is queued, an
// empty Source local, a zero Created now; Hostname, Kernel, Target, Engines
// and Schedulers are filled in from the host, targets and plan when empty.
func (s *Store) CreateRun(ctx context.Context, r *Run) (int64, error) {
	if err := s.writable(); err != nil {
		return 0, fmt.Errorf("db: create run: %w", err)
	}
	if r.Status == "" {
		r.Status = StatusQueued
	}
	if r.Source == "" {
		r.Source = SourceLocal
	}
	if r.Created.IsZero() {
		r.Created = time.Now()
	}
	if r.Status == StatusRunning && r.Started.IsZero() {
		r.Started = r.Created
	}
	fillSummary(r)
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("db: create run: %w", err)
	}
	defer tx.Rollback()
	id, err := s.insertRun(ctx, tx, r, true)
	if err != nil {
		return 0, fmt.Errorf("db: create run: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("db: create run: %w", err)
	}
	r.ID = id
	return id, nil
}

// fillSummary fills the run list's columns that were left empty.
func fillSummary(r *Run) {
	if r.Hostname == "" {
		r.Hostname = r.Host.Hostname
	}
	if r.Kernel == "" {
		r.Kernel = r.Host.KernelRelease
	}
	if r.Target == "" && len(r.Targets) > 0 {
		r.Target = r.Targets[0].Path
	}
	if r.Target == "" && len(r.Plan.Base.Groups) > 0 && len(r.Plan.Base.Groups[0].Jobs) > 0 {
		if p := r.Plan.Base.Groups[0].Jobs[0].FilePaths(); len(p) > 0 {
			r.Target = p[0]
		}
	}
	for _, sw := range r.Plan.Sweeps {
		switch sw.Axis {
		case sweep.AxisEngine:
			r.Engines = union(r.Engines, sw.Values...)
		case sweep.AxisScheduler:
			r.Schedulers = union(r.Schedulers, sw.Values...)
		}
	}
}

// union appends to list the values it lacks, in order.
func union(list []string, values ...string) []string {
	for _, v := range values {
		if v != "" && !slices.Contains(list, v) {
			list = append(list, v)
		}
	}
	return list
}

// insertRun checks r (CheckRun) and writes it as a new row; owned records
// this process as the one running it (not for imports).
func (s *Store) insertRun(ctx context.Context, tx *sql.Tx, r *Run, owned bool) (int64, error) {
	if err := CheckRun(r); err != nil {
		return 0, err
	}
	var j jsonWriter
	plan, host, targets := j.text(r.Plan), j.text(r.Host), j.text(r.Targets)
	engines, schedulers, tags := j.list(r.Engines), j.list(r.Schedulers), j.list(r.Tags)
	if j.err != nil {
		return 0, j.err
	}
	if r.UID == "" {
		r.UID = newUID()
	}
	lo, hi := r.Plan.Planned()
	var o owner
	if owned {
		o = s.self
	}
	// The id is the next after the largest ever given (run_ids), never a
	// deleted run's.
	res, err := tx.ExecContext(ctx, `INSERT INTO runs (id, name, status, source, created_at, started_at, finished_at,
		hostname, kernel, target, engines, schedulers, tags, plan, host, targets, error,
		owner_boot, owner_pid, owner_start, uid, workload, planned_lo, planned_hi)
		VALUES ((SELECT last + 1 FROM run_ids), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.Name, r.Status, r.Source, r.Created.UnixNano(), nsTime(r.Started), nsTime(r.Finished),
		r.Hostname, r.Kernel, r.Target, engines, schedulers, tags, plan, host, targets, r.Error,
		nullString(o.Boot), nullInt(int64(o.PID)), nullInt(int64(o.Start)), r.UID, Workload(*r), lo, hi)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

func nullString(v string) sql.NullString { return sql.NullString{String: v, Valid: v != ""} }
func nullInt(v int64) sql.NullInt64      { return sql.NullInt64{Int64: v, Valid: v != 0} }

// SetRunStatus sets a run's status and error. Becoming running sets its
// start time (once) and makes this process its owner; done, failed,
// cancelled and interrupted set its finish time.
func (s *Store) SetRunStatus(ctx context.Context, id int64, status, errMsg string) error {
	if !slices.Contains(statuses, status) {
		return fmt.Errorf("db: set run %d status: %q is not one of %s", id, status, strings.Join(statuses, ", "))
	}
	now := time.Now().UnixNano()
	unfinished := status == StatusQueued || status == StatusRunning
	var q string
	args := []any{status, errMsg}
	switch {
	case unfinished:
		q = `UPDATE runs SET status = ?, error = ?, owner_boot = ?, owner_pid = ?, owner_start = ?,
			started_at = CASE WHEN ? THEN coalesce(started_at, ?) ELSE started_at END WHERE id = ?`
		args = append(args, nullString(s.self.Boot), nullInt(int64(s.self.PID)), nullInt(int64(s.self.Start)),
			status == StatusRunning, now, id)
	default:
		q = `UPDATE runs SET status = ?, error = ?, finished_at = ? WHERE id = ?`
		args = append(args, now, id)
	}
	res, err := s.write.ExecContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("db: set run %d status: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("db: set run %d status: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("db: set run %d status: run %w", id, ErrNotFound)
	}
	return nil
}

// runColumns are the columns scanRun reads, in its order.
const runColumns = `r.id, r.name, r.status, r.source, r.created_at, r.started_at, r.finished_at,
	r.hostname, r.kernel, r.target, r.engines, r.schedulers, r.tags, r.plan, r.host, r.targets, r.error,
	(SELECT count(*) FROM steps WHERE run_id = r.id), coalesce(r.uid, '')`

type scanner interface{ Scan(dest ...any) error }

func scanRun(row scanner) (Run, error) {
	var (
		r                                              Run
		created                                        int64
		started, finished                              sql.NullInt64
		engines, schedulers, tags, plan, host, targets string
	)
	err := row.Scan(&r.ID, &r.Name, &r.Status, &r.Source, &created, &started, &finished,
		&r.Hostname, &r.Kernel, &r.Target, &engines, &schedulers, &tags, &plan, &host, &targets, &r.Error,
		&r.Steps, &r.UID)
	if err != nil {
		return Run{}, err
	}
	r.Created = time.Unix(0, created)
	r.Started, r.Finished = timeNS(started), timeNS(finished)
	err = unmarshalFields([]jsonField{
		{"engines", engines, &r.Engines},
		{"schedulers", schedulers, &r.Schedulers},
		{"tags", tags, &r.Tags},
		{"plan", plan, &r.Plan},
		{"host", host, &r.Host},
		{"targets", targets, &r.Targets},
	})
	if err != nil {
		return Run{}, fmt.Errorf("run %d: %w", r.ID, err)
	}
	// Empty lists are stored as [], and read back as nil.
	for _, l := range []*[]string{&r.Engines, &r.Schedulers, &r.Tags} {
		if len(*l) == 0 {
			*l = nil
		}
	}
	return r, nil
}

// GetRun reads one run, with its step count.
func (s *Store) GetRun(ctx context.Context, id int64) (*Run, error) {
	r, err := scanRun(s.read.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs r WHERE r.id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("db: get run %d: %w", id, notFound(err))
	}
	return &r, nil
}

// RunsByID reads the runs ids names in one query, each with its step
// count, in the order of ids; a run that is not stored is left out.
func (s *Store) RunsByID(ctx context.Context, ids []int64) ([]Run, error) {
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, fmt.Errorf("db: get runs: %w", err)
	}
	rows, err := s.read.QueryContext(ctx, `SELECT `+runColumns+` FROM runs r WHERE r.id IN (SELECT value FROM json_each(?))`, string(list))
	if err != nil {
		return nil, fmt.Errorf("db: get runs: %w", err)
	}
	defer rows.Close()
	byID := map[int64]Run{}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("db: get runs: %w", err)
		}
		byID[r.ID] = r
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: get runs: %w", err)
	}
	out := make([]Run, 0, len(byID))
	for _, id := range ids {
		if r, ok := byID[id]; ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// ListRuns lists the runs that match f, newest first, at most f.Limit of
// them when it is not 0.
func (s *Store) ListRuns(ctx context.Context, f RunFilter) ([]Run, error) {
	q, args := pageSQL(f, runSorts[0], true, nil, f.Limit)
	rows, err := s.read.QueryContext(ctx, `SELECT `+runColumns+` FROM runs r WHERE r.id IN (`+q+`) ORDER BY r.created_at DESC, r.id DESC`, args...)
	if err != nil {
		return nil, fmt.Errorf("db: list runs: %w", err)
	}
	defer rows.Close()
	runs := []Run{}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("db: list runs: %w", err)
		}
		runs = append(runs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: list runs: %w", err)
	}
	return runs, nil
}

// DeleteRun deletes a run with its steps, results and samples. Pending
// scheduler restores stay: the disks still need them.
func (s *Store) DeleteRun(ctx context.Context, id int64) error {
	res, err := s.write.ExecContext(ctx, `DELETE FROM runs WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("db: delete run %d: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("db: delete run %d: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("db: delete run %d: %w", id, ErrNotFound)
	}
	return nil
}

// jsonWriter marshals values to JSON text, keeping the first error.
type jsonWriter struct{ err error }

func (j *jsonWriter) text(v any) string {
	b, err := json.Marshal(v)
	if err != nil && j.err == nil {
		j.err = err
	}
	return string(b)
}

// list is a string list as a JSON array, [] when empty, so that json_each
// filters see an array.
func (j *jsonWriter) list(l []string) string {
	if len(l) == 0 {
		return "[]"
	}
	return j.text(l)
}
