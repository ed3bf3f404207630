package db

import (
	"context"
	"fmt"
	"time"

	"iolab/bench/record"
)

// SchedulerRestore is a disk whose I/O scheduler a run switched
// (record.SchedulerRestore).
type SchedulerRestore = record.SchedulerRestore

// AddSchedulerRestore records that run runID is about to switch disk's
// scheduler away from original, and returns the record's id for
// ClearSchedulerRestore.
func (s *Store) AddSchedulerRestore(ctx context.Context, runID int64, disk, original string) (int64, error) {
	var id int64
	err := s.write.QueryRowContext(ctx, `INSERT INTO scheduler_restores (run_id, disk, original, created_at)
		VALUES (?, ?, ?, ?) RETURNING id`, runID, disk, original, time.Now().UnixNano()).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("db: add scheduler restore for run %d disk %s: %w", runID, disk, err)
	}
	return id, nil
}

// ClearSchedulerRestore forgets a restore once the scheduler is back.
func (s *Store) ClearSchedulerRestore(ctx context.Context, id int64) error {
	res, err := s.write.ExecContext(ctx, `DELETE FROM scheduler_restores WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("db: clear scheduler restore %d: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("db: clear scheduler restore %d: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("db: clear scheduler restore %d: %w", id, ErrNotFound)
	}
	return nil
}

// SchedulerRestores lists the restores left behind by runs that are no
// longer queued or running — their process died (Open has marked them
// interrupted), or they were deleted — newest first: applied in this order,
// a disk switched by several dead runs ends with the scheduler it had before
// the first. Restores of runs that a live process is still running are left
// to that process.
func (s *Store) SchedulerRestores(ctx context.Context) ([]SchedulerRestore, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id, run_id, disk, original, created_at FROM scheduler_restores
		WHERE run_id NOT IN (SELECT id FROM runs WHERE status IN ('queued', 'running'))
		ORDER BY id DESC`)
	if err != nil {
		return nil, fmt.Errorf("db: scheduler restores: %w", err)
	}
	defer rows.Close()
	list := []SchedulerRestore{}
	for rows.Next() {
		var (
			r       SchedulerRestore
			created int64
		)
		if err := rows.Scan(&r.ID, &r.RunID, &r.Disk, &r.Original, &created); err != nil {
			return nil, fmt.Errorf("db: scheduler restores: %w", err)
		}
		r.Created = time.Unix(0, created)
		list = append(list, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: scheduler restores: %w", err)
	}
	return list, nil
}
