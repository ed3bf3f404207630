// Package db is iolab's run store: runs, their steps and every step's
// per-job results (with latency histograms and per-interval samples) in one
// SQLite file, shared by the CLI and the dashboard.
//
// The database is in WAL mode with its pragmas in the DSN. Writes go through
// one connection (SQLite allows one writer anyway, and serialising them in
// Go avoids SQLITE_BUSY between our own goroutines); reads use a pool of
// their own. Each step is saved in one transaction as it ends, so a run that
// dies keeps every finished step, and Open marks the runs whose process is
// gone as interrupted.
package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"iolab/bench/record"
	"iolab/migrations"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// ErrNotFound is returned, wrapped, when a run or a scheduler restore does
// not exist.
var ErrNotFound = errors.New("not found")

// Run statuses: record's, under the names the store's callers know.
const (
	StatusQueued      = record.StatusQueued
	StatusRunning     = record.StatusRunning
	StatusDone        = record.StatusDone
	StatusFailed      = record.StatusFailed
	StatusPartial     = record.StatusPartial
	StatusCancelled   = record.StatusCancelled
	StatusInterrupted = record.StatusInterrupted
)

// statuses lists every run status.
var statuses = record.Statuses()

// Statuses lists every run status.
func Statuses() []string { return append([]string(nil), statuses...) }

// Run sources: record's, and SourceAgent (hosts.go).
const (
	SourceLocal  = record.SourceLocal
	SourcePush   = record.SourcePush
	SourceImport = record.SourceImport
	SourceFio    = record.SourceFio
)

// sources lists every run source.
var sources = []string{SourceLocal, SourcePush, SourceImport, SourceFio}

// Sources lists every run source.
func Sources() []string { return append([]string(nil), sources...) }

// Store is the run store. Its methods are safe for concurrent use.
type Store struct {
	write *sql.DB // one connection: SQLite has one writer
	read  *sql.DB

	stmts writeStmts

	proc string // the /proc root, for telling whether a run's process lives
	self owner  // this process, recorded on the runs it queues or runs

	interrupted []int64
	path        string
	readOnly    bool // see ReadOnly

	stepCache *stepCache // what pages read of steps, by (id, stamp)
	listCache listCache  // what runs pages count, while the store is unchanged
}

// Path is the database file the store was opened on.
func (s *Store) Path() string { return s.path }

// DefaultPath is where the CLI and the dashboard keep the store:
// $XDG_DATA_HOME/iolab/iolab.db, or ~/.local/share/iolab/iolab.db when
// XDG_DATA_HOME is unset (or, as the XDG spec says to treat it, relative).
func DefaultPath() (string, error) {
	if dir := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "iolab", "iolab.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("db: default path: %w (set XDG_DATA_HOME or choose a file with --db)", err)
	}
	return filepath.Join(home, ".local", "share", "iolab", "iolab.db"), nil
}

// Open opens (creating it and its directory if need be) the store at path,
// brings its schema up to date, and marks as interrupted the runs left queued
// or running by a process that no longer exists, with their running steps
// (not those an agent runs: see MarkInterrupted);
// Interrupted tells which. An existing store that cannot be written (its
// file or directory read-only) is opened read-only (see ReadOnly).
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" || strings.Contains(path, "?") || strings.HasPrefix(path, "file:") || path == ":memory:" {
		return nil, fmt.Errorf("db: open %q: want a file path without '?'", path)
	}
	if why := notWritable(path); why != "" {
		return openReadOnly(ctx, path, why)
	}
	s, err := openWritable(ctx, path)
	if c := sqliteCode(err); c == sqliteReadOnly || c == sqliteCantOpen || errors.Is(err, syscall.EROFS) {
		// A store SQLite cannot write though access(2) said it could
		// (a lock or -shm file it may not create): read it if it can be.
		if _, serr := os.Stat(path); serr == nil {
			if ro, rerr := openReadOnly(ctx, path, err.Error()); rerr == nil {
				return ro, nil
			}
		}
	}
	return s, err
}

// openWritable is Open of a store that can be written.
func openWritable(ctx context.Context, path string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("db: open %s: %w", path, err)
	}
	if err := checkForeign(ctx, path); err != nil {
		return nil, fmt.Errorf("db: open %s: %w", path, err)
	}
	s := &Store{proc: "/proc", self: processOwner("/proc", os.Getpid()), path: path, stepCache: newStepCache(stepCacheBytes)}

	// Modernc runs the _pragma values on every new connection. An
	// immediate transaction takes the write lock at BEGIN, so a second
	// process waits on busy_timeout instead of failing when it upgrades a
	// read lock mid-transaction.
	pragmas := "?_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)"
	var err error
	// auto_vacuum before anything creates a table: a new store is
	// incremental (space.go); an older one keeps its mode until a VACUUM.
	s.write, err = sql.Open("sqlite", path+pragmas+"&_pragma=auto_vacuum(2)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("db: open %s: %w", path, err)
	}
	s.write.SetMaxOpenConns(1)
	if err := s.write.PingContext(ctx); err != nil {
		s.write.Close()
		return nil, fmt.Errorf("db: open %s: %w", path, err)
	}
	if err := s.migrate(ctx); err != nil {
		s.write.Close()
		return nil, fmt.Errorf("db: open %s: %w", path, err)
	}
	if err := s.fillWorkloads(ctx); err != nil {
		s.write.Close()
		return nil, fmt.Errorf("db: open %s: %w", path, err)
	}
	if err := s.prepare(ctx); err != nil {
		s.stmts.close()
		s.write.Close()
		return nil, fmt.Errorf("db: open %s: %w", path, err)
	}
	// Readers map the file: reading a run back then costs no system call
	// per page.
	s.read, err = sql.Open("sqlite", path+pragmas+"&_pragma=query_only(1)&_pragma=mmap_size(1073741824)")
	if err != nil {
		s.stmts.close()
		s.write.Close()
		return nil, fmt.Errorf("db: open %s: %w", path, err)
	}
	s.read.SetMaxOpenConns(max(4, runtime.GOMAXPROCS(0)))
	if s.interrupted, err = s.markInterrupted(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("db: open %s: %w", path, err)
	}
	return s, nil
}

// checkForeign refuses, before anything writes to it (journal mode
// included), a file at path that is not iolab's store: not SQLite at all,
// or a SQLite database of something else (no schema version, yet tables).
// A missing or empty file is a new store.
func checkForeign(ctx context.Context, path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) || (err == nil && fi.Size() == 0) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("not a regular file; give --db a file path")
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	head := make([]byte, 16)
	_, err = io.ReadFull(f, head)
	f.Close()
	if err != nil || string(head) != "SQLite format 3\x00" {
		return fmt.Errorf("not a SQLite database, so not an iolab store; give --db a new file or an iolab store")
	}
	// A hot journal (a process killed mid-transaction before WAL was on)
	// must be rolled back before anything reads the file, which a
	// read-only connection cannot do; rolling it back is SQLite's own
	// recovery, safe for any SQLite file.
	mode := "?mode=ro&"
	if _, err := os.Stat(path + "-journal"); err == nil {
		mode = "?"
	}
	probe, err := sql.Open("sqlite", "file:"+path+mode+"_pragma=busy_timeout(5000)")
	if err != nil {
		return err
	}
	defer probe.Close()
	var version, tables int
	if err := probe.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		if mode != "?mode=ro&" || FaultOf(err) != FaultIO {
			return fmt.Errorf("read schema version: %w", err)
		}
		// A WAL database on a read-only file system: SQLite cannot map
		// its -shm file, but can read the file as immutable.
		probe.Close()
		if probe, err = sql.Open("sqlite", "file:"+path+mode+"immutable=1&_pragma=busy_timeout(5000)"); err != nil {
			return err
		}
		defer probe.Close()
		if err := probe.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
	}
	if err := probe.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'").Scan(&tables); err != nil {
		return fmt.Errorf("read schema: %w", err)
	}
	if version == 0 && tables > 0 {
		return fmt.Errorf("a SQLite database of something else (%d tables, no iolab schema); give --db a new file or an iolab store", tables)
	}
	return nil
}

// Close closes the store's connections.
func (s *Store) Close() error {
	s.stmts.close()
	s.listCache.close()
	var errs []error
	if s.read != nil {
		errs = append(errs, s.read.Close())
	}
	errs = append(errs, s.write.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("db: close: %w", err)
	}
	return nil
}

// Interrupted returns the ids of the runs Open marked interrupted.
func (s *Store) Interrupted() []int64 { return slices.Clone(s.interrupted) }

// migration is one file of the migrations package.
type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations reads NNNN_name.sql files from fsys, checking that their
// versions run 1, 2, 3… without gaps or repeats.
func loadMigrations(fsys fs.FS) ([]migration, error) {
	names, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return nil, err
	}
	var list []migration
	for _, name := range names {
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("migration %s: want NNNN_name.sql", name)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		list = append(list, migration{version: v, name: name, sql: string(b)})
	}
	slices.SortFunc(list, func(a, b migration) int { return a.version - b.version })
	for i, m := range list {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: version %d, want %d (versions run 1, 2, 3… once each)", m.name, m.version, i+1)
		}
	}
	return list, nil
}

// migrate applies the migrations newer than the database's user_version,
// each in one transaction with its version bump. The version is read again
// inside each (write-locked) transaction, so two processes opening a new
// database at once apply each migration once.
func (s *Store) migrate(ctx context.Context) error {
	list, err := loadMigrations(migrations.FS)
	if err != nil {
		return err
	}
	var have int
	if err := s.write.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if have > len(list) {
		return fmt.Errorf("schema version %d is newer than this iolab's (%d): use a newer iolab", have, len(list))
	}
	for _, m := range list[have:] {
		if err := s.apply(ctx, m); err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	return nil
}

func (s *Store) apply(ctx context.Context, m migration) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var have int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err != nil {
		return err
	}
	if have >= m.version {
		return nil // another process got there first
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return err
	}
	// PRAGMA takes no parameters; the version is our own integer.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.version)); err != nil {
		return err
	}
	return tx.Commit()
}

// SchemaVersion is the database's schema version: the last migration
// applied.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	if err := s.read.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, fmt.Errorf("db: schema version: %w", err)
	}
	return v, nil
}

// MarkInterrupted marks as interrupted the queued and running runs whose
// process is gone, and their running steps, and returns their ids. Runs of
// a live process — a dashboard or another `iolab run` sharing the database
// — are left alone, and so are the runs an agent is running for a
// dashboard (source agent, running): the agent runs them, not the process
// that stored them, and goes on while its dashboard is away; the
// dashboard that starts again holds them for their agents
// (RunningAgentRuns). Open calls it; a long-lived process may call it
// again to notice runs whose process died since.
func (s *Store) MarkInterrupted(ctx context.Context) ([]int64, error) {
	ids, err := s.markInterrupted(ctx)
	if err != nil {
		return nil, fmt.Errorf("db: %w", err)
	}
	return ids, nil
}

// StoppedMessage is the error of a run its process left queued or running
// (status) when it stopped: what the next open marks it interrupted with.
func StoppedMessage(status string) string { return "iolab stopped while the run was " + status }

// markInterrupted finds the unfinished runs on the read connection and
// asks /proc about each owner once, outside any transaction: a dashboard
// calls it every 2 s, and with fifty agents' runs open (the dashboard
// their owner) a write transaction held over fifty owners' /proc reads
// kept every agent's request waiting on the one write connection. Only a
// run found dead is written, and only if its status and owner are still
// those read (a run that ended or was taken over since is left alone).
func (s *Store) markInterrupted(ctx context.Context) ([]int64, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id, status, owner_boot, owner_pid, owner_start
		FROM runs WHERE status IN ('queued', 'running') AND NOT (status = 'running' AND source = ?) ORDER BY id`, SourceAgent)
	if err != nil {
		return nil, fmt.Errorf("mark interrupted runs: %w", err)
	}
	type unfinished struct {
		id     int64
		status string
		boot   sql.NullString
		pid    sql.NullInt64
		start  sql.NullInt64
	}
	var dead []unfinished
	alive := map[owner]bool{}
	for rows.Next() {
		var u unfinished
		if err := rows.Scan(&u.id, &u.status, &u.boot, &u.pid, &u.start); err != nil {
			rows.Close()
			return nil, fmt.Errorf("mark interrupted runs: %w", err)
		}
		o := owner{Boot: u.boot.String, PID: int(u.pid.Int64), Start: uint64(u.start.Int64)}
		live, asked := alive[o]
		if !asked {
			if live = o.alive(s.proc); !live {
				o.settle(s.proc, 2*time.Second)
			}
			alive[o] = live
		}
		if !live {
			dead = append(dead, u)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("mark interrupted runs: %w", err)
	}
	if len(dead) == 0 {
		return nil, nil
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("mark interrupted runs: %w", err)
	}
	defer tx.Rollback()
	now := time.Now().UnixNano()
	var ids []int64
	for _, u := range dead {
		msg := StoppedMessage(u.status)
		res, err := tx.ExecContext(ctx, `UPDATE runs SET status = 'interrupted', finished_at = ?,
			error = CASE WHEN error = '' THEN ? ELSE error END
			WHERE id = ? AND status = ? AND owner_boot IS ? AND owner_pid IS ? AND owner_start IS ?`,
			now, msg, u.id, u.status, u.boot, u.pid, u.start)
		if err != nil {
			return nil, fmt.Errorf("mark run %d interrupted: %w", u.id, err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			continue // it moved on since it was read
		}
		if _, err := tx.ExecContext(ctx, `UPDATE steps SET status = 'interrupted',
			error = CASE WHEN error = '' THEN 'iolab stopped during the step' ELSE error END
			WHERE run_id = ? AND status = 'running'`, u.id); err != nil {
			return nil, fmt.Errorf("mark run %d's steps interrupted: %w", u.id, err)
		}
		ids = append(ids, u.id)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("mark interrupted runs: %w", err)
	}
	return ids, nil
}

// nsTime is t as nanoseconds since the epoch, or NULL for the zero time.
func nsTime(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixNano(), Valid: true}
}

// timeNS undoes nsTime, in the local time zone.
func timeNS(ns sql.NullInt64) time.Time {
	if !ns.Valid {
		return time.Time{}
	}
	return time.Unix(0, ns.Int64)
}

// notFound turns sql.ErrNoRows into ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}
