package cli

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"strconv"

	"iolab/bench/launch"
	"iolab/bench/system"
	"iolab/db"
)

// The store is what the launcher records runs in and what recovers the
// runs a killed process left: the launcher declares both and imports no
// store, so the wiring here is where they meet.
var (
	_ launch.Recorder = (*db.Store)(nil)
	_ launch.Recovery = (*db.Store)(nil)
)

// openStore opens the run store and puts back any I/O scheduler that a run
// killed halfway left switched.
func openStore(ctx context.Context, path string, logger *slog.Logger) (*db.Store, error) {
	if path == "" {
		var err error
		if path, err = db.DefaultPath(); err != nil {
			return nil, err
		}
	}
	store, err := db.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if store.ReadOnly() {
		// Runs can be read; nothing can be recorded, not even a
		// scheduler put back.
		logger.Warn("the store is read-only: runs can be read, not written", "db", store.Path())
		return store, nil
	}
	if err := launch.RestoreSchedulers(ctx, store, system.FS{}, logger); err != nil {
		store.Close()
		return nil, err
	}
	return store, nil
}

// runID reads the run id that is the command's one operand.
func runID(e *env, args []string) (int64, error) {
	if len(args) != 1 {
		return 0, e.usage()
	}
	id, err := strconv.ParseInt(args[0], 10, 64)
	if err != nil || id < 1 {
		return 0, usageError{fmt.Sprintf("iolab %s: %q is not a run id (see iolab runs)", e.cmd.name, args[0])}
	}
	return id, nil
}

// storedRunFlags are the flags of a command whose one operand is a stored
// run's id (show, export): --db; it runs f on that run.
func storedRunFlags(f func(ctx context.Context, e *env, store *db.Store, id int64) error) func(fs *flag.FlagSet) runFunc {
	return func(fs *flag.FlagSet) runFunc {
		dbPath := dbFlag(fs)
		return func(ctx context.Context, e *env, args []string) error {
			id, err := runID(e, args)
			if err != nil {
				return err
			}
			store, err := openStoreFlag(ctx, e, *dbPath)
			if err != nil {
				return err
			}
			defer store.Close()
			return f(ctx, e, store, id)
		}
	}
}

// openStoreFlag opens the store of a command's --db flag, logging to its
// standard error.
func openStoreFlag(ctx context.Context, e *env, path string) (*db.Store, error) {
	return openStore(ctx, path, slog.New(slog.NewTextHandler(e.stderr, nil)))
}
