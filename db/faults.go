package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
	"modernc.org/sqlite"

	"iolab/migrations"
)

// Fault is what went wrong with the store itself, not with the request
// that met it: the server's fault, answered 507 or 503, never 400.
type Fault int

const (
	NoFault       Fault = iota
	FaultFull           // the store's disk is full (SQLITE_FULL, ENOSPC)
	FaultReadOnly       // the store was opened read-only, or its file system is
	FaultBusy           // another process holds the write lock past busy_timeout
	FaultIO             // an I/O error, a file that cannot be opened, corruption
)

// SQLite's primary result codes (sqlite3.h); an extended code carries its
// primary one in its low byte.
const (
	sqliteBusy     = 5
	sqliteLocked   = 6
	sqliteReadOnly = 8
	sqliteIOErr    = 10
	sqliteCorrupt  = 11
	sqliteFull     = 13
	sqliteCantOpen = 14
	sqliteNotADB   = 26
)

// ReadOnlyError is a write refused by a store opened read-only.
type ReadOnlyError struct{ Path string }

func (e *ReadOnlyError) Error() string { return FaultMessage(FaultReadOnly, e.Path) }

// writable refuses, before any SQL, the writes of a read-only store with
// a message that says so and why (SQLite's own is "attempt to write a
// readonly database (8)").
func (s *Store) writable() error {
	if s.readOnly {
		return &ReadOnlyError{Path: s.path}
	}
	return nil
}

// FaultOf says which store fault err is, NoFault when it is none (a
// request's own error, a missing run…).
func FaultOf(err error) Fault {
	if err == nil {
		return NoFault
	}
	if _, ok := errors.AsType[*ReadOnlyError](err); ok {
		return FaultReadOnly
	}
	if c := sqliteCode(err); c != 0 {
		switch c {
		case sqliteFull:
			return FaultFull
		case sqliteReadOnly:
			return FaultReadOnly
		case sqliteBusy, sqliteLocked:
			return FaultBusy
		case sqliteIOErr, sqliteCorrupt, sqliteCantOpen, sqliteNotADB:
			return FaultIO
		}
	}
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return FaultFull
	case errors.Is(err, syscall.EROFS):
		return FaultReadOnly
	}
	return NoFault
}

// sqliteCode is the primary SQLite result code of err, 0 when err is not
// SQLite's.
func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() & 0xff
	}
	return 0
}

// FaultMessage is what to tell a user of fault f of the store at path:
// what happened and what to do.
func FaultMessage(f Fault, path string) string {
	switch f {
	case FaultFull:
		return fmt.Sprintf("the store's disk is full (%s): free space, then retry", path)
	case FaultReadOnly:
		return fmt.Sprintf("read-only store (%s): runs can be read, not written; make the file and its directory writable and restart iolab to write", path)
	case FaultBusy:
		return fmt.Sprintf("the store (%s) is busy: another process holds its write lock; retry in a moment", path)
	case FaultIO:
		return fmt.Sprintf("the store (%s) failed to read or write its file (an I/O error or a damaged file): check the disk, then retry", path)
	}
	return ""
}

// ReadOnly reports whether the store was opened read-only: its file or
// directory is not writable (or its file system is mounted read-only).
// Reads work; every write fails with FaultReadOnly.
func (s *Store) ReadOnly() bool { return s.readOnly }

// notWritable says why the existing store at path cannot be written
// (the file, or its directory where SQLite keeps the -wal and -shm
// files, refuses writing: permissions or a read-only mount), "" when it
// can.
func notWritable(path string) string {
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	for _, p := range []string{path, filepath.Dir(path)} {
		if err := unix.Access(p, unix.W_OK); err != nil {
			return fmt.Sprintf("%s: %v", p, err)
		}
	}
	return ""
}

// openReadOnly opens the existing store at path for reading only: no
// migration, no marking of interrupted runs. SQLite reads a WAL database
// read-only when it can map its -shm file; where it cannot (the
// directory is read-only), the file is opened immutable, which reads what
// was last checkpointed — all of it for a store closed cleanly.
func openReadOnly(ctx context.Context, path, why string) (*Store, error) {
	if err := checkForeign(ctx, path); err != nil {
		return nil, fmt.Errorf("db: open %s: %w", path, err)
	}
	s := &Store{proc: "/proc", self: processOwner("/proc", os.Getpid()), path: path, stepCache: newStepCache(stepCacheBytes), readOnly: true}
	var err error
	for _, extra := range []string{"", "&immutable=1"} {
		dsn := "file:" + path + "?mode=ro" + extra + "&_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)&_pragma=query_only(1)"
		if s.write, err = openChecked(ctx, dsn, 1); err != nil {
			continue
		}
		if s.read, err = openChecked(ctx, dsn+"&_pragma=mmap_size(1073741824)", 4); err != nil {
			s.write.Close()
			continue
		}
		break
	}
	if err != nil {
		return nil, fmt.Errorf("db: open %s read-only (%s): %w", path, why, err)
	}
	list, err := loadMigrations(migrations.FS)
	if err == nil {
		var have int
		if err = s.read.QueryRowContext(ctx, "PRAGMA user_version").Scan(&have); err == nil && have != len(list) {
			err = fmt.Errorf("its schema is version %d, this iolab's %d, and a read-only store cannot be migrated: open it once where it is writable", have, len(list))
		}
	}
	if err == nil {
		err = s.prepare(ctx)
	}
	if err != nil {
		s.Close()
		return nil, fmt.Errorf("db: open %s read-only (%s): %w", path, why, err)
	}
	return s, nil
}

// openChecked opens dsn with at most conns connections and reads from it
// once, so that a file SQLite cannot read fails here.
func openChecked(ctx context.Context, dsn string, conns int) (*sql.DB, error) {
	d, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	d.SetMaxOpenConns(conns)
	var n int
	if err := d.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}
