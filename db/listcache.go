package db

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
)

// The list cache keeps what a runs page counts (the runs a filter keeps,
// those before a page) and the filters' choices, for as long as the
// store has not changed: each is a walk along an index of every run
// (30,000 entries, a millisecond or two), several a page, while a page's
// own rows are a few index steps. SQLite's data_version, read on one
// connection held for it, changes whenever any other connection —
// this process's writer, another iolab's — commits; the cache is emptied
// then. A count read in a snapshot newer than the version it is kept
// under is emptied with it at the next look, so none outlives a change
// by more than one page.
//
// The same version keys the dashboard's cached runs pages (ListVersion):
// the held connection is one of the read pool's, opened query_only, so
// it never commits itself and every commit — the write connection's
// included — moves it. data_version counts per connection: a connection
// opened again (after an error) starts another count, told apart by its
// epoch.

// maxListCounts bounds the counts kept between two changes.
const maxListCounts = 4096

type listCache struct {
	mu      sync.Mutex
	conn    *sql.Conn // nil until first used
	epoch   int64     // connections opened: a new one counts data_version afresh
	version int64
	counts  map[string]int
	choices *RunChoices
}

// check reads the store's data_version, emptying the cache when it moved,
// and returns it: what is read after it, kept under it (keep), is at
// least as new as it.
func (c *listCache) check(ctx context.Context, db *sql.DB) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	err := c.current(ctx, db)
	return c.version, err
}

// current is check's; the caller holds c.mu.
func (c *listCache) current(ctx context.Context, db *sql.DB) error {
	if c.conn == nil {
		conn, err := db.Conn(context.WithoutCancel(ctx))
		if err != nil {
			return err
		}
		c.conn = conn
		c.epoch++
	}
	var v int64
	if err := c.conn.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
		c.conn.Close()
		c.conn, c.counts, c.choices = nil, nil, nil
		return err
	}
	if v != c.version || c.counts == nil {
		c.version, c.counts, c.choices = v, map[string]int{}, nil
	}
	return nil
}

// ListVersion is the store's version as the runs list reads it: it
// changes with every commit to the store, by this process or another,
// and a runs page (RunPage, RunChoices) read after it is at least as new
// as it. Read on one held connection, it costs a statement.
func (s *Store) ListVersion(ctx context.Context) (string, error) {
	c := &s.listCache
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.current(ctx, s.read); err != nil {
		return "", fmt.Errorf("db: list version: %w", err)
	}
	return fmt.Sprintf("%d.%d", c.epoch, c.version), nil
}

// count is the count q gives in tx, read after check gave version: from
// the cache when the store has not changed since.
func (c *listCache) count(ctx context.Context, version int64, tx *sql.Tx, q string, args []any) (int, error) {
	key := q + fmt.Sprint(args...)
	c.mu.Lock()
	n, ok := c.counts[key]
	ok = ok && c.version == version
	c.mu.Unlock()
	if ok {
		return n, nil
	}
	if err := tx.QueryRowContext(ctx, q, args...).Scan(&n); err != nil {
		return 0, err
	}
	c.mu.Lock()
	if c.version == version && c.counts != nil {
		if len(c.counts) >= maxListCounts {
			clear(c.counts)
		}
		c.counts[key] = n
	}
	c.mu.Unlock()
	return n, nil
}

func (c *listCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}
