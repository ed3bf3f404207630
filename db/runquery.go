package db

import (
	"context"
	"database/sql"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The runs list's one query builder: the dashboard's runs page, GET
// /api/runs and `iolab runs` all read a page of runs through RunPage
// (ListRuns reads them all through the same filter). Every filter and
// sort is a walk along an index of migrations 0001 and 0011, and a page
// is keyset-paginated: it starts after (or ends before) a cursor holding
// the sort key and id of a run, never at an OFFSET that reads every run
// before it.

// MaxRunPage bounds a page of runs.
const MaxRunPage = 100

// DefaultRunPage is a page's size when none is asked for.
const DefaultRunPage = 50

// MaxCursorLen bounds a cursor's text: a name's key (MaxRunNameLen bytes,
// base64) and two integers.
const MaxCursorLen = 1024

// runSort is one order of the runs list.
type runSort struct {
	Name string // as sort= and --sort name it
	// Column is the runs column sorted on before created_at and id; ""
	// for the date's order, created_at and id alone. Each has an index
	// (column, created_at).
	Column string
	// Desc is the order the sort takes when not asked: newest first.
	Desc bool
}

// runSorts lists the runs list's orders; the first is the default.
var runSorts = []runSort{
	{Name: "date", Desc: true},
	{Name: "name", Column: "name"},
	{Name: "host", Column: "hostname"},
	{Name: "status", Column: "status"},
}

// RunSorts lists the sort names the runs list takes, the default first.
func RunSorts() []string {
	var l []string
	for _, s := range runSorts {
		l = append(l, s.Name)
	}
	return l
}

// RunSort is an order of the runs list as sort= names it: a sort's name,
// or "-" and the name for the reverse of its order, "" for the default
// (newest first).
type RunSort string

// parse returns the sort and whether it runs descending.
func (o RunSort) parse() (runSort, bool, error) {
	name, rev := strings.CutPrefix(string(o), "-")
	if name == "" && !rev {
		return runSorts[0], runSorts[0].Desc, nil
	}
	for _, s := range runSorts {
		if s.Name == name {
			return s, s.Desc != rev, nil
		}
	}
	return runSort{}, false, fmt.Errorf("sort %.40q: use one of %s, or one of them after a - for the reverse order", string(o), strings.Join(RunSorts(), ", "))
}

// Check reports whether o names a sort.
func (o RunSort) Check() error {
	_, _, err := o.parse()
	return err
}

// Key is the name of the sort o is, and whether it runs descending;
// the default's for a sort it does not know.
func (o RunSort) Key() (name string, desc bool) {
	s, desc, err := o.parse()
	if err != nil {
		return runSorts[0].Name, runSorts[0].Desc
	}
	return s.Name, desc
}

// Reverse is the reverse order of o's.
func (o RunSort) Reverse() RunSort {
	s, desc, err := o.parse()
	if err != nil {
		return o
	}
	if desc == s.Desc {
		return RunSort("-" + s.Name)
	}
	return RunSort(s.Name)
}

// RunQuery asks for a page of runs: those RunFilter keeps, in Sort's
// order, the Limit (DefaultRunPage when 0, at most MaxRunPage) after the
// run After names, or those before Before's (a Next or Prev of the
// previous page); the first page without either.
type RunQuery struct {
	RunFilter
	Sort          RunSort
	After, Before string
}

// RunPage is a page of runs with where it lies among those the filter
// keeps.
type RunPage struct {
	Runs  []ListedRun
	Total int // runs the filter keeps
	// First is the position of Runs[0] among them, from 1 (0 for an
	// empty page).
	First int
	// Next and Prev are the cursors of the pages after and before this
	// one, for RunQuery's After and Before; "" when there is none.
	Next, Prev string
}

// cursor is a place in the runs list's order: a run's sort key.
type cursor struct {
	key     string // the sorted column's value; "" for the date's order
	created int64
	id      int64
}

// String writes c as the URL carries it: created_at (ns) and id, then for
// a column's order its value in base64url.
func (c cursor) String(s runSort) string {
	t := strconv.FormatInt(c.created, 10) + "." + strconv.FormatInt(c.id, 10)
	if s.Column != "" {
		t += "." + base64.RawURLEncoding.EncodeToString([]byte(c.key))
	}
	return t
}

func parseCursor(text string, s runSort) (cursor, error) {
	bad := func(why string) (cursor, error) {
		return cursor{}, fmt.Errorf("cursor %.40q %s: use a link's after= or before= as the page gave it", text, why)
	}
	if len(text) > MaxCursorLen {
		return bad(fmt.Sprintf("is %d bytes (at most %d)", len(text), MaxCursorLen))
	}
	parts := strings.Split(text, ".")
	want := 2
	if s.Column != "" {
		want = 3
	}
	if len(parts) != want {
		return bad(fmt.Sprintf("is not one of the %s order's", s.Name))
	}
	var c cursor
	var err1, err2 error
	c.created, err1 = strconv.ParseInt(parts[0], 10, 64)
	c.id, err2 = strconv.ParseInt(parts[1], 10, 64)
	if err1 != nil || err2 != nil {
		return bad("is not a cursor")
	}
	if want == 3 {
		k, err := base64.RawURLEncoding.DecodeString(parts[2])
		if err != nil {
			return bad("is not a cursor")
		}
		c.key = string(k)
	}
	return c, nil
}

// listSQL is a filter and a sort as SQL: the tables read, the
// conditions, and the columns of the order. Which table drives the walk
// is chosen here rather than left to the planner, which, given a facet's
// IN list, reads every run of the value by rowid and sorts them:
//   - a filter on a runs column (host, kernel, target, status, source,
//     workload) walks that column's index, (column, created_at, id), and
//     probes each facet asked for by its key;
//   - a filter on facets alone walks the first facet's key, (kind, value,
//     created_at, run_id), newest first, joining runs only for what it
//     must read there (a name, another order);
//   - no filter walks the sort's index.
type listSQL struct {
	from  string   // "runs r", or "run_facets f0" with or without runs r joined
	id    string   // the run id's column
	key   []string // the order's columns, ending in created_at and the id
	where []string
	args  []any
}

func newListSQL(f RunFilter, s runSort) listSQL {
	var l listSQL
	type facet struct{ kind, value string }
	var facets []facet
	for _, c := range []facet{{"engine", f.Engine}, {"scheduler", f.Scheduler}, {"tag", f.Tag}} {
		if c.value != "" {
			facets = append(facets, c)
		}
	}
	var cols []string
	var colArgs []any
	for _, c := range []struct{ col, v string }{
		{"r.hostname", f.Hostname}, {"r.kernel", f.Kernel}, {"r.target", f.Target}, {"r.status", f.Status},
		{"r.source", f.Source}, {"r.workload", f.Workload},
	} {
		if c.v != "" {
			cols = append(cols, c.col+" = ?")
			colArgs = append(colArgs, c.v)
		}
	}
	created, id := "r.created_at", "r.id"
	l.from = "runs r"
	if len(facets) > 0 && len(cols) == 0 {
		// Driven by the first facet: runs joined only when a condition
		// or the order reads them.
		created, id = "f0.created_at", "f0.run_id"
		l.from = "run_facets f0"
		if f.Name != "" || s.Column != "" {
			l.from += " JOIN runs r ON r.id = f0.run_id"
		}
		l.where = append(l.where, "f0.kind = ? AND f0.value = ?")
		l.args = append(l.args, facets[0].kind, facets[0].value)
		facets = facets[1:]
	}
	l.id = id
	l.where = append(l.where, cols...)
	l.args = append(l.args, colArgs...)
	for _, fc := range facets {
		l.where = append(l.where, "EXISTS (SELECT 1 FROM run_facets f WHERE f.kind = ? AND f.value = ? AND f.created_at = "+created+
			" AND f.run_id = "+id+")")
		l.args = append(l.args, fc.kind, fc.value)
	}
	if f.Name != "" {
		// LIKE folds ASCII letters' case; % and _ in the name are its own.
		esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(f.Name)
		l.where = append(l.where, `r.name LIKE ? ESCAPE '\'`)
		l.args = append(l.args, "%"+esc+"%")
	}
	if !f.Since.IsZero() {
		l.where = append(l.where, created+" >= ?")
		l.args = append(l.args, f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		l.where = append(l.where, created+" < ?")
		l.args = append(l.args, f.Until.UnixNano())
	}
	l.key = []string{created, id}
	if s.Column != "" {
		l.key = append([]string{"r." + s.Column}, l.key...)
	}
	return l
}

// beyond adds the condition of the runs past c in the order, ascending or
// not: a row value comparison, which SQLite walks along the index.
func (l *listSQL) beyond(c cursor, desc bool) {
	op := ">"
	if desc {
		op = "<"
	}
	marks := "?, ?"
	args := []any{c.created, c.id}
	if len(l.key) == 3 {
		marks = "?, ?, ?"
		args = append([]any{c.key}, args...)
	}
	l.where = append(l.where, "("+strings.Join(l.key, ", ")+") "+op+" ("+marks+")")
	l.args = append(l.args, args...)
}

func (l *listSQL) whereSQL() string {
	if len(l.where) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(l.where, " AND ")
}

func (l *listSQL) orderBy(desc bool) string {
	dir := " ASC"
	if desc {
		dir = " DESC"
	}
	cols := slices.Clone(l.key)
	for i := range cols {
		cols[i] += dir
	}
	return " ORDER BY " + strings.Join(cols, ", ")
}

// keyOf is r's place in s's order.
func (s runSort) keyOf(r *ListedRun) cursor {
	c := cursor{created: r.Created.UnixNano(), id: r.ID}
	switch s.Column {
	case "name":
		c.key = r.Name
	case "hostname":
		c.key = r.Hostname
	case "status":
		c.key = r.Status
	}
	return c
}

// pageSQL is the query of a page's run ids: those the filter keeps, past
// c (when given) in the order asked, limit of them (0: all).
func pageSQL(f RunFilter, s runSort, desc bool, c *cursor, limit int) (string, []any) {
	l := newListSQL(f, s)
	if c != nil {
		l.beyond(*c, desc)
	}
	q := "SELECT " + l.id + " FROM " + l.from + l.whereSQL() + l.orderBy(desc)
	if limit > 0 {
		q += " LIMIT ?"
		l.args = append(l.args, limit)
	}
	return q, l.args
}

// countSQL counts the runs the filter keeps, before c in the order asked
// when c is given.
func countSQL(f RunFilter, s runSort, desc bool, c *cursor) (string, []any) {
	if c == nil {
		s = runSorts[0] // the order is not read: no join for it
	}
	l := newListSQL(f, s)
	if c != nil {
		l.beyond(*c, !desc)
	}
	return "SELECT count(*) FROM " + l.from + l.whereSQL(), l.args
}

// RunPage reads a page of runs (see RunQuery) with its counts, in one read
// transaction: the counts are of the runs the page was read from.
func (s *Store) RunPage(ctx context.Context, q RunQuery) (*RunPage, error) {
	page, err := s.runPage(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("db: runs page: %w", err)
	}
	return page, nil
}

func (s *Store) runPage(ctx context.Context, q RunQuery) (*RunPage, error) {
	srt, desc, err := q.Sort.parse()
	if err != nil {
		return nil, err
	}
	limit := q.Limit
	switch {
	case limit <= 0:
		limit = DefaultRunPage
	case limit > MaxRunPage:
		return nil, fmt.Errorf("limit %d: at most %d", limit, MaxRunPage)
	}
	if q.After != "" && q.Before != "" {
		return nil, fmt.Errorf("after and before both given: a page starts after a run or ends before one")
	}
	var at *cursor
	back := q.Before != ""
	if t := q.After + q.Before; t != "" {
		c, err := parseCursor(t, srt)
		if err != nil {
			return nil, err
		}
		at = &c
	}
	// The store's version before the transaction reads anything.
	version, err := s.listCache.check(ctx, s.read)
	if err != nil {
		return nil, err
	}
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	// A page before the cursor is read backwards from it, then turned.
	qs, args := pageSQL(q.RunFilter, srt, desc != back, at, limit)
	ids, err := queryIDs(ctx, tx, qs, args)
	if err != nil {
		return nil, err
	}
	if back {
		slices.Reverse(ids)
	}
	page := &RunPage{}
	if page.Runs, err = runsByID(ctx, tx, ids); err != nil {
		return nil, err
	}
	qs, args = countSQL(q.RunFilter, srt, desc, nil)
	if page.Total, err = s.listCache.count(ctx, version, tx, qs, args); err != nil {
		return nil, err
	}
	if len(page.Runs) == 0 {
		return page, nil // past either end: the list links to its first page
	}
	first := srt.keyOf(&page.Runs[0])
	page.First = 1
	if at != nil {
		qs, args = countSQL(q.RunFilter, srt, desc, &first)
		before, err := s.listCache.count(ctx, version, tx, qs, args)
		if err != nil {
			return nil, err
		}
		page.First = before + 1
	}
	if page.First > 1 {
		page.Prev = first.String(srt)
	}
	if page.First-1+len(page.Runs) < page.Total {
		page.Next = srt.keyOf(&page.Runs[len(page.Runs)-1]).String(srt)
	}
	return page, nil
}

func queryIDs(ctx context.Context, tx *sql.Tx, q string, args []any) ([]int64, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// listedColumns are the columns scanListed reads, in its order.
const listedColumns = `r.id, coalesce(r.uid, ''), r.name, r.status, r.source, r.created_at, r.started_at, r.finished_at,
	r.hostname, r.kernel, r.target, r.engines, r.schedulers, r.tags, r.error,
	coalesce(r.workload, ''), coalesce(r.planned_lo, 0), coalesce(r.planned_hi, 0),
	(SELECT count(*) FROM steps WHERE run_id = r.id)`

func scanListed(row scanner) (ListedRun, error) {
	var (
		r                         ListedRun
		created                   int64
		started, finished         sql.NullInt64
		engines, schedulers, tags string
	)
	err := row.Scan(&r.ID, &r.UID, &r.Name, &r.Status, &r.Source, &created, &started, &finished,
		&r.Hostname, &r.Kernel, &r.Target, &engines, &schedulers, &tags, &r.Error,
		&r.Workload, &r.PlannedMin, &r.PlannedMax, &r.Steps)
	if err != nil {
		return r, err
	}
	r.Created = time.Unix(0, created)
	r.Started, r.Finished = timeNS(started), timeNS(finished)
	err = unmarshalFields([]jsonField{{"engines", engines, &r.Engines}, {"schedulers", schedulers, &r.Schedulers}, {"tags", tags, &r.Tags}})
	if err != nil {
		return r, fmt.Errorf("run %d: %w", r.ID, err)
	}
	for _, l := range []*[]string{&r.Engines, &r.Schedulers, &r.Tags} {
		if len(*l) == 0 {
			*l = nil
		}
	}
	return r, nil
}

// runsByID reads the runs of ids as the list does, in their order.
func runsByID(ctx context.Context, tx *sql.Tx, ids []int64) ([]ListedRun, error) {
	runs := []ListedRun{}
	if len(ids) == 0 {
		return runs, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+listedColumns+` FROM runs r WHERE r.id IN (?`+
		strings.Repeat(", ?", len(ids)-1)+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	byID := make(map[int64]ListedRun, len(ids))
	for rows.Next() {
		r, err := scanListed(rows)
		if err != nil {
			return nil, err
		}
		byID[r.ID] = r
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, id := range ids {
		if r, ok := byID[id]; ok {
			runs = append(runs, r)
		}
	}
	return runs, nil
}

// MaxRunChoices bounds the values RunChoices gives of one filter: past
// it, the list offers a text field instead of a list to pick from.
const MaxRunChoices = 200

// RunChoices are the values the runs list's filters offer: each column's
// distinct values, sorted; nil for one with more than MaxRunChoices.
type RunChoices struct {
	Hosts, Kernels, Targets, Workloads, Engines, Schedulers, Tags []string
}

// RunChoices reads the distinct values of the list's filters, each along
// its index.
func (s *Store) RunChoices(ctx context.Context) (*RunChoices, error) {
	c := &s.listCache
	version, err := c.check(ctx, s.read)
	if err != nil {
		return nil, fmt.Errorf("db: run choices: %w", err)
	}
	c.mu.Lock()
	cached := c.choices
	c.mu.Unlock()
	if cached != nil {
		return cached.clone(), nil
	}
	ch, err := s.runChoices(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.version == version && c.choices == nil {
		c.choices = ch.clone()
	}
	c.mu.Unlock()
	return ch, nil
}

// clone is a copy of ch sharing nothing with it.
func (ch *RunChoices) clone() *RunChoices {
	return &RunChoices{Hosts: slices.Clone(ch.Hosts), Kernels: slices.Clone(ch.Kernels), Targets: slices.Clone(ch.Targets),
		Workloads: slices.Clone(ch.Workloads), Engines: slices.Clone(ch.Engines), Schedulers: slices.Clone(ch.Schedulers),
		Tags: slices.Clone(ch.Tags)}
}

func (s *Store) runChoices(ctx context.Context) (*RunChoices, error) {
	var ch RunChoices
	for _, c := range []struct {
		list *[]string
		q    string
		args []any
	}{
		{&ch.Hosts, `SELECT DISTINCT hostname FROM runs WHERE hostname <> '' ORDER BY hostname LIMIT ?`, nil},
		{&ch.Kernels, `SELECT DISTINCT kernel FROM runs WHERE kernel <> '' ORDER BY kernel LIMIT ?`, nil},
		{&ch.Targets, `SELECT DISTINCT target FROM runs WHERE target <> '' ORDER BY target LIMIT ?`, nil},
		{&ch.Workloads, `SELECT DISTINCT workload FROM runs WHERE workload <> '' ORDER BY workload LIMIT ?`, nil},
		{&ch.Engines, `SELECT DISTINCT value FROM run_facets WHERE kind = ? ORDER BY value LIMIT ?`, []any{"engine"}},
		{&ch.Schedulers, `SELECT DISTINCT value FROM run_facets WHERE kind = ? ORDER BY value LIMIT ?`, []any{"scheduler"}},
		{&ch.Tags, `SELECT DISTINCT value FROM run_facets WHERE kind = ? ORDER BY value LIMIT ?`, []any{"tag"}},
	} {
		rows, err := s.read.QueryContext(ctx, c.q, append(c.args, MaxRunChoices+1)...)
		if err != nil {
			return nil, fmt.Errorf("db: run choices: %w", err)
		}
		var l []string
		for rows.Next() {
			var v string
			if err := rows.Scan(&v); err != nil {
				rows.Close()
				return nil, fmt.Errorf("db: run choices: %w", err)
			}
			l = append(l, v)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("db: run choices: %w", err)
		}
		if len(l) <= MaxRunChoices {
			*c.list = l
		}
	}
	return &ch, nil
}

// fillWorkloads sets the workload and planned steps of the runs stored
// before they were columns (migration 0011), from their plans, in one
// transaction.
func (s *Store) fillWorkloads(ctx context.Context) error {
	rows, err := s.write.QueryContext(ctx, `SELECT `+runColumns+` FROM runs r WHERE r.workload IS NULL OR r.planned_hi IS NULL`)
	if err != nil {
		return fmt.Errorf("fill workloads: %w", err)
	}
	type fill struct {
		id     int64
		w      string
		lo, hi int
	}
	var fills []fill
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			rows.Close()
			return fmt.Errorf("fill workloads: %w", err)
		}
		lo, hi := r.Plan.Planned()
		fills = append(fills, fill{r.ID, Workload(r), lo, hi})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("fill workloads: %w", err)
	}
	if len(fills) == 0 {
		return nil
	}
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("fill workloads: %w", err)
	}
	defer tx.Rollback()
	for _, f := range fills {
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET workload = ?, planned_lo = ?, planned_hi = ? WHERE id = ?`, f.w, f.lo, f.hi, f.id); err != nil {
			return fmt.Errorf("fill workloads: %w", err)
		}
	}
	return tx.Commit()
}
