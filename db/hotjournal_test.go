package db

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
)

// A store left with a hot journal (a process killed while it created or
// migrated the store, before WAL was on) opens: SQLite rolls the journal
// back, which a read-only probe cannot do.
func TestOpenAfterKillWithHotJournal(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	conn, err := sql.Open("sqlite", src+"?_pragma=journal_mode(DELETE)&_pragma=cache_size(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	for _, q := range []string{"PRAGMA user_version = 1", "CREATE TABLE runs (x BLOB)", "BEGIN IMMEDIATE"} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatal(q, err)
		}
	}
	// Enough to spill the one-page cache: the journal is hot and the file
	// half written, as a kill would leave them.
	for range 200 {
		if _, err := conn.ExecContext(ctx, "INSERT INTO runs VALUES (zeroblob(4000))"); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "iolab.db")
	for _, suffix := range []string{"", "-journal"} {
		b, err := os.ReadFile(src + suffix)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := checkForeign(ctx, path); err != nil {
		t.Fatalf("checkForeign: %v", err)
	}
}
