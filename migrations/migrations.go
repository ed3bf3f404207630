// Package migrations holds iolab's database schema as forward-only SQL
// files, NNNN_name.sql, embedded in the binary. The db package applies those
// newer than the database's PRAGMA user_version in order, each in one
// transaction with its version bump, when it opens a store. A migration is
// never edited once released: a change is a new file.
package migrations

import "embed"

// FS holds the migration files.
//
//go:embed *.sql
var FS embed.FS
