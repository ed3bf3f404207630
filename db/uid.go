package db

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// newUID returns a random 128-bit run uid as 32 lowercase hex digits.
func newUID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// validUID reports whether uid looks like a run uid: 1 to 64 characters of
// letters, digits, '-' and '_'.
func validUID(uid string) bool {
	if uid == "" || len(uid) > 64 {
		return false
	}
	return strings.IndexFunc(uid, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_')
	}) < 0
}

// RunByUID returns the id of the run with uid, or ErrNotFound.
func (s *Store) RunByUID(ctx context.Context, uid string) (int64, error) {
	var id int64
	err := s.read.QueryRowContext(ctx, `SELECT id FROM runs WHERE uid = ?`, uid).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("db: run uid %s: %w", uid, ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("db: run uid %s: %w", uid, err)
	}
	return id, nil
}
