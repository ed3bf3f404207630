package db

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// The space a store takes and giving it back. A new store is created
// with auto_vacuum=INCREMENTAL (Open's DSN sets it before the first
// table): pages freed by deleting runs go on SQLite's freelist, and
// GiveBack moves them off the end of the file. A store created before
// that has auto_vacuum=NONE, which only a VACUUM can change: Vacuum
// rewrites it once, switched. That is not a migration: migrations run in
// a transaction, which VACUUM cannot, and rewriting a large store holds
// every writer off and needs its size again in free disk, which an
// upgrade should not do unasked (`iolab prune --vacuum` asks).

// Space is the store's file and SQLite's count of its pages.
type Space struct {
	FileBytes  int64  `json:"file_bytes"` // the database file, without its -wal
	WALBytes   int64  `json:"wal_bytes"`
	PageSize   int64  `json:"page_size"`
	Pages      int64  `json:"pages"`
	FreePages  int64  `json:"free_pages"`  // on the freelist: reused before the file grows
	AutoVacuum string `json:"auto_vacuum"` // none, full or incremental
	// Checkpointed is false when readers kept the last checkpoint from
	// copying the whole WAL back: the file shrinks at a later one.
	Checkpointed bool `json:"checkpointed"`
}

// Bytes is what the store takes on disk: its file and its WAL.
func (sp Space) Bytes() int64 { return sp.FileBytes + sp.WALBytes }

// FreeBytes is what the freelist holds.
func (sp Space) FreeBytes() int64 { return sp.FreePages * sp.PageSize }

var autoVacuumModes = map[int64]string{0: "none", 1: "full", 2: "incremental"}

// Space reads the store's size and page counts.
func (s *Store) Space(ctx context.Context) (Space, error) {
	sp := Space{Checkpointed: true}
	var mode int64
	for _, p := range []struct {
		pragma string
		v      *int64
	}{{"page_size", &sp.PageSize}, {"page_count", &sp.Pages}, {"freelist_count", &sp.FreePages}, {"auto_vacuum", &mode}} {
		if err := s.read.QueryRowContext(ctx, "PRAGMA "+p.pragma).Scan(p.v); err != nil {
			return sp, fmt.Errorf("db: space: %s: %w", p.pragma, err)
		}
	}
	sp.AutoVacuum = autoVacuumModes[mode]
	fi, err := os.Stat(s.path)
	if err != nil {
		return sp, fmt.Errorf("db: space: %w", err)
	}
	sp.FileBytes = fi.Size()
	if fi, err := os.Stat(s.path + "-wal"); err == nil {
		sp.WALBytes = fi.Size()
	} else if !errors.Is(err, os.ErrNotExist) {
		return sp, fmt.Errorf("db: space: %w", err)
	}
	return sp, nil
}

// vacuumChunk is how many free pages one incremental_vacuum moves (16
// MiB of 4 KiB pages): each is a transaction of its own, so writers wait
// for one chunk at most.
const vacuumChunk = 4096

// GiveBack gives the freelist's pages back to the file system: an
// incremental vacuum, a chunk at a time, then a checkpoint that copies
// the WAL into the file and truncates both. It reports the space before
// and after. A store with auto_vacuum=NONE gives nothing back (its free
// pages are reused by new runs); Vacuum switches it.
func (s *Store) GiveBack(ctx context.Context) (before, after Space, err error) {
	if err := s.writable(); err != nil {
		return before, after, fmt.Errorf("db: give back space: %w", err)
	}
	if before, err = s.Space(ctx); err != nil {
		return before, after, err
	}
	if before.AutoVacuum == "incremental" {
		for free := before.FreePages; free > 0; {
			if err := ctx.Err(); err != nil {
				return before, after, fmt.Errorf("db: give back space: %w", err)
			}
			if _, err := s.write.ExecContext(ctx, fmt.Sprintf("PRAGMA incremental_vacuum(%d)", vacuumChunk)); err != nil {
				return before, after, fmt.Errorf("db: give back space: %w", err)
			}
			var left int64
			if err := s.write.QueryRowContext(ctx, "PRAGMA freelist_count").Scan(&left); err != nil {
				return before, after, fmt.Errorf("db: give back space: %w", err)
			}
			if left >= free {
				break // nothing moved: another writer's pages, or none left to move
			}
			free = left
		}
	}
	done, err := s.checkpoint(ctx)
	if err != nil {
		return before, after, err
	}
	after, err = s.Space(ctx)
	after.Checkpointed = done
	return before, after, err
}

// Vacuum rewrites the store with auto_vacuum=INCREMENTAL: the whole
// file is copied without its free pages, holding off every other writer
// meanwhile and needing about the file's size in free disk. After it,
// GiveBack gives freed pages back.
func (s *Store) Vacuum(ctx context.Context) (before, after Space, err error) {
	if err := s.writable(); err != nil {
		return before, after, fmt.Errorf("db: vacuum: %w", err)
	}
	if before, err = s.Space(ctx); err != nil {
		return before, after, err
	}
	// The mode set now is the one VACUUM writes the new file with.
	if _, err := s.write.ExecContext(ctx, "PRAGMA auto_vacuum = INCREMENTAL"); err != nil {
		return before, after, fmt.Errorf("db: vacuum: %w", err)
	}
	if _, err := s.write.ExecContext(ctx, "VACUUM"); err != nil {
		return before, after, fmt.Errorf("db: vacuum: %w", err)
	}
	done, err := s.checkpoint(ctx)
	if err != nil {
		return before, after, err
	}
	after, err = s.Space(ctx)
	after.Checkpointed = done
	return before, after, err
}

// checkpoint copies the WAL into the file and truncates it; false when
// a reader kept it from finishing.
func (s *Store) checkpoint(ctx context.Context) (bool, error) {
	var busy, logged, copied int64
	if err := s.write.QueryRowContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)").Scan(&busy, &logged, &copied); err != nil {
		return false, fmt.Errorf("db: checkpoint: %w", err)
	}
	return busy == 0 && logged == copied, nil
}
