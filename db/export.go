package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"iolab/bench/sweep"
)

// ExportFormat and ExportVersion identify an export document.
const (
	ExportFormat  = "iolab-run"
	ExportVersion = 1
)

// Export is a run as a self-contained document, written by `iolab export`
// and the API and read back by Import, on this host or another one.
type Export struct {
	Format  string             `json:"format"`  // ExportFormat
	Version int                `json:"version"` // ExportVersion
	Run     Run                `json:"run"`
	Steps   []sweep.StepResult `json:"steps"`
}

// Export reads run id and its steps as one document.
func (s *Store) Export(ctx context.Context, id int64) (*Export, error) {
	tx, err := s.read.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("db: export run %d: %w", id, err)
	}
	defer tx.Rollback()
	run, err := scanRun(tx.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs r WHERE r.id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("db: export run %d: %w", id, notFound(err))
	}
	steps, err := readSteps(ctx, tx, id, LoadAll(), nil)
	if err != nil {
		return nil, fmt.Errorf("db: export run %d: %w", id, err)
	}
	return &Export{Format: ExportFormat, Version: ExportVersion, Run: run, Steps: steps}, nil
}

// Import stores an exported run as a new one, in one transaction, and
// returns its id. The run keeps its uid, status, times, host and tags; its
// source becomes source (SourceImport, SourcePush or SourceFio). A run whose
// uid is already stored is not stored again: Import returns the existing
// run's id (ImportRun says which happened).
func (s *Store) Import(ctx context.Context, e *Export, source string) (int64, error) {
	id, _, err := s.ImportRun(ctx, e, source)
	return id, err
}

// ImportRun is Import that also reports whether the run was already there
// (by uid), in which case nothing is written.
func (s *Store) ImportRun(ctx context.Context, e *Export, source string) (id int64, existed bool, err error) {
	if err := s.writable(); err != nil {
		return 0, false, fmt.Errorf("db: import: %w", err)
	}
	if e.Format != ExportFormat {
		return 0, false, fmt.Errorf("db: import: format %q, want %q", e.Format, ExportFormat)
	}
	if e.Version < 1 || e.Version > ExportVersion {
		return 0, false, fmt.Errorf("db: import: version %d of %s, this iolab reads 1 to %d", e.Version, ExportFormat, ExportVersion)
	}
	r := e.Run
	r.Source = source
	if err := CheckRun(&r); err != nil {
		return 0, false, fmt.Errorf("db: import: %w", err)
	}
	if err := checkFinal(r.Status); err != nil {
		return 0, false, fmt.Errorf("db: import: %w", err)
	}
	if r.Created.IsZero() {
		return 0, false, fmt.Errorf("db: import: run has no created_at")
	}
	if r.UID != "" && !validUID(r.UID) {
		return 0, false, fmt.Errorf("db: import: run uid %q is not a run uid (letters, digits, - and _, at most 64)", r.UID)
	}
	if err := CheckPlanSteps(&r.Plan, e.Steps); err != nil {
		return 0, false, fmt.Errorf("db: import: %w", err)
	}
	for i := range e.Steps {
		if err := CheckStepNumbers(&e.Steps[i]); err != nil {
			return 0, false, fmt.Errorf("db: import: %w", err)
		}
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return 0, false, fmt.Errorf("db: import: %w", err)
	}
	defer tx.Rollback()
	if r.UID != "" {
		// Inside the write transaction, so two imports of one run cannot
		// both miss it.
		err := tx.QueryRowContext(ctx, `SELECT id FROM runs WHERE uid = ?`, r.UID).Scan(&id)
		switch {
		case err == nil:
			return id, true, nil
		case !errors.Is(err, sql.ErrNoRows):
			return 0, false, fmt.Errorf("db: import: %w", err)
		}
	}
	id, err = s.insertRun(ctx, tx, &r, false)
	if err != nil {
		return 0, false, fmt.Errorf("db: import: %w", err)
	}
	seen := make(map[int]bool, len(e.Steps))
	for i := range e.Steps {
		st := &e.Steps[i]
		if seen[st.Step.Seq] {
			return 0, false, fmt.Errorf("db: import: two steps with seq %d", st.Step.Seq)
		}
		seen[st.Step.Seq] = true
		if err := s.insertStep(ctx, tx, id, st); err != nil {
			return 0, false, fmt.Errorf("db: import: step %d: %w", st.Step.Seq, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, false, fmt.Errorf("db: import: %w", err)
	}
	return id, false, nil
}
