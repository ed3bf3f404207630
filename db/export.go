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
	if len(e.Steps) > MaxImportSteps {
		return 0, false, fmt.Errorf("db: import: %d steps: at most %d (--max-steps' default)", len(e.Steps), MaxImportSteps)
	}
	imp, err := s.beginImport(ctx, e.Run, source, len(e.Steps))
	if err != nil || imp.existed {
		return imp.id, imp.existed, err
	}
	defer imp.tx.Rollback()
	for i := range e.Steps {
		if err := imp.step(ctx, &e.Steps[i]); err != nil {
			return 0, false, err
		}
	}
	return imp.commit()
}

// runImport is an import under way: the run is inserted, its steps are
// added one by one (step), then commit stores it all or nothing.
type runImport struct {
	s       *Store
	tx      *sql.Tx
	id      int64
	existed bool // the run (by uid) was already stored: nothing to do
	seen    map[int]bool
	plan    *planSteps // the steps checked against the run's plan
}

// beginImport checks the run, opens the write transaction and inserts
// the run, or finds it already stored (existed, no transaction).
func (s *Store) beginImport(ctx context.Context, r Run, source string, steps int) (*runImport, error) {
	imp := &runImport{s: s, seen: map[int]bool{}}
	if err := s.writable(); err != nil {
		return imp, fmt.Errorf("db: import: %w", err)
	}
	r.Source = source
	if err := CheckRun(&r); err != nil {
		return imp, fmt.Errorf("db: import: %w", err)
	}
	if err := checkFinal(r.Status); err != nil {
		return imp, fmt.Errorf("db: import: %w", err)
	}
	if r.Created.IsZero() {
		return imp, fmt.Errorf("db: import: run has no created_at")
	}
	if r.UID != "" && !validUID(r.UID) {
		return imp, fmt.Errorf("db: import: run uid %q is not a run uid (letters, digits, - and _, at most 64)", r.UID)
	}
	var err error
	if imp.plan, err = newPlanSteps(&r.Plan, steps); err != nil {
		return imp, fmt.Errorf("db: import: %w", err)
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return imp, fmt.Errorf("db: import: %w", err)
	}
	if r.UID != "" {
		// Inside the write transaction, so two imports of one run cannot
		// both miss it.
		err := tx.QueryRowContext(ctx, `SELECT id FROM runs WHERE uid = ?`, r.UID).Scan(&imp.id)
		switch {
		case err == nil:
			tx.Rollback()
			imp.existed = true
			return imp, nil
		case !errors.Is(err, sql.ErrNoRows):
			tx.Rollback()
			return imp, fmt.Errorf("db: import: %w", err)
		}
	}
	imp.id, err = s.insertRun(ctx, tx, &r, false)
	if err != nil {
		tx.Rollback()
		return imp, fmt.Errorf("db: import: %w", err)
	}
	imp.tx = tx
	return imp, nil
}

// step adds one step; at most MaxImportSteps.
func (imp *runImport) step(ctx context.Context, st *sweep.StepResult) error {
	if len(imp.seen) >= MaxImportSteps {
		return fmt.Errorf("db: import: more than %d steps: at most %d (--max-steps' default)", MaxImportSteps, MaxImportSteps)
	}
	if imp.seen[st.Step.Seq] {
		return fmt.Errorf("db: import: two steps with seq %d", st.Step.Seq)
	}
	imp.seen[st.Step.Seq] = true
	if err := CheckStepText(st); err != nil {
		return fmt.Errorf("db: import: step %d: %w", st.Step.Seq, err)
	}
	if err := imp.plan.check(&st.Step); err != nil {
		return fmt.Errorf("db: import: %w", err)
	}
	if err := CheckStepNumbers(st); err != nil {
		return fmt.Errorf("db: import: %w", err)
	}
	if err := imp.s.insertStep(ctx, imp.tx, imp.id, st); err != nil {
		return fmt.Errorf("db: import: step %d: %w", st.Step.Seq, err)
	}
	return nil
}

// commit stores the run and its steps.
func (imp *runImport) commit() (int64, bool, error) {
	if err := imp.tx.Commit(); err != nil {
		return 0, false, fmt.Errorf("db: import: %w", err)
	}
	return imp.id, false, nil
}
