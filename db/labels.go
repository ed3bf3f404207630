package db

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Bounds on a run's name and labels.
const (
	MaxNameLen  = 200
	MaxLabelLen = 100
	MaxLabels   = 50
)

// CleanLabel trims a label and checks it: not empty, at most MaxLabelLen
// characters, no control characters.
func CleanLabel(l string) (string, error) {
	l = strings.TrimSpace(l)
	switch {
	case l == "":
		return "", fmt.Errorf("a label cannot be empty")
	case utf8.RuneCountInString(l) > MaxLabelLen:
		return "", fmt.Errorf("label %q is longer than %d characters", l, MaxLabelLen)
	case !utf8.ValidString(l):
		return "", fmt.Errorf("label %q is not valid UTF-8", l)
	case strings.ContainsFunc(l, isControl):
		return "", fmt.Errorf("label %q has control characters", l)
	}
	return l, nil
}

// CleanLabels cleans every label, drops duplicates (keeping the first
// place) and checks the count.
func CleanLabels(labels []string) ([]string, error) {
	out := []string{}
	for _, l := range labels {
		c, err := CleanLabel(l)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	if len(out) > MaxLabels {
		return nil, fmt.Errorf("%d labels: at most %d", len(out), MaxLabels)
	}
	return out, nil
}

// CleanName trims a run's name and checks it: not empty, at most
// MaxNameLen characters, no control characters.
func CleanName(name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return "", fmt.Errorf("the name cannot be empty")
	case utf8.RuneCountInString(name) > MaxNameLen:
		return "", fmt.Errorf("the name is longer than %d characters", MaxNameLen)
	case !utf8.ValidString(name):
		return "", fmt.Errorf("the name is not valid UTF-8")
	case strings.ContainsFunc(name, isControl):
		return "", fmt.Errorf("the name has control characters")
	}
	return name, nil
}

// RenameRun sets a run's name (cleaned with CleanName).
func (s *Store) RenameRun(ctx context.Context, id int64, name string) error {
	name, err := CleanName(name)
	if err != nil {
		return fmt.Errorf("db: rename run %d: %w", id, err)
	}
	res, err := s.write.ExecContext(ctx, `UPDATE runs SET name = ? WHERE id = ?`, name, id)
	if err != nil {
		return fmt.Errorf("db: rename run %d: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("db: rename run %d: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("db: rename run %d: run %w", id, ErrNotFound)
	}
	return nil
}

// SetTags replaces a run's labels (cleaned with CleanLabels) and returns
// them.
func (s *Store) SetTags(ctx context.Context, id int64, tags []string) ([]string, error) {
	clean, err := CleanLabels(tags)
	if err != nil {
		return nil, fmt.Errorf("db: set run %d labels: %w", id, err)
	}
	var j jsonWriter
	text := j.list(clean)
	if j.err != nil {
		return nil, fmt.Errorf("db: set run %d labels: %w", id, j.err)
	}
	res, err := s.write.ExecContext(ctx, `UPDATE runs SET tags = ? WHERE id = ?`, text, id)
	if err != nil {
		return nil, fmt.Errorf("db: set run %d labels: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return nil, fmt.Errorf("db: set run %d labels: %w", id, err)
	} else if n == 0 {
		return nil, fmt.Errorf("db: set run %d labels: run %w", id, ErrNotFound)
	}
	if len(clean) == 0 {
		return nil, nil
	}
	return clean, nil
}

// EditTags adds and removes labels in one transaction and returns the
// run's labels after. Removing a label the run lacks is no error.
func (s *Store) EditTags(ctx context.Context, id int64, add, remove []string) ([]string, error) {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("db: edit run %d labels: %w", id, err)
	}
	defer tx.Rollback()
	var text string
	if err := tx.QueryRowContext(ctx, `SELECT tags FROM runs WHERE id = ?`, id).Scan(&text); err != nil {
		return nil, fmt.Errorf("db: edit run %d labels: run %w", id, notFound(err))
	}
	var tags []string
	if err := json.Unmarshal([]byte(text), &tags); err != nil {
		return nil, fmt.Errorf("db: edit run %d labels: stored labels: %w", id, err)
	}
	tags = append(tags, add...)
	rm, err := CleanLabels(remove)
	if err != nil {
		return nil, fmt.Errorf("db: edit run %d labels: %w", id, err)
	}
	tags = slices.DeleteFunc(tags, func(t string) bool { return slices.Contains(rm, strings.TrimSpace(t)) })
	clean, err := CleanLabels(tags)
	if err != nil {
		return nil, fmt.Errorf("db: edit run %d labels: %w", id, err)
	}
	var j jsonWriter
	out := j.list(clean)
	if j.err != nil {
		return nil, fmt.Errorf("db: edit run %d labels: %w", id, j.err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE runs SET tags = ? WHERE id = ?`, out, id); err != nil {
		return nil, fmt.Errorf("db: edit run %d labels: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("db: edit run %d labels: %w", id, err)
	}
	if len(clean) == 0 {
		return nil, nil
	}
	return clean, nil
}
