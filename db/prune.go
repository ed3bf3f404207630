package db

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Pruning: which stored runs a retention rule lets go, and deleting them.
// PlanPrune chooses and says why each run it matched is kept; Prune
// deletes the plan's runs in batches, one transaction each, checking again
// in each batch's SQL that a run is still free to go (its status and its
// group's, its upload), so a run that started, or was queued into a group,
// since the plan is kept and a prune killed halfway leaves whole runs.

// MaxPruneKeep bounds PruneRule.Keep: a larger N keeps every run of any
// lab anyway, and bounding it keeps hostile values out of the arithmetic.
const MaxPruneKeep = 1_000_000

// PruneRule is what a prune selects. A run goes when it matches every
// field that is set, unless it is kept (PruneRun.Kept); at least one
// field must be set.
type PruneRule struct {
	// OlderThan: runs created before it; zero: any age.
	OlderThan time.Time
	// Tag: runs with this tag; "": any.
	Tag string
	// Statuses: runs in one of these; empty: any.
	Statuses []string
	// Keep > 0 keeps the newest Keep finished runs of each host and
	// workload (Workload), counted over every stored run whatever the
	// other fields say: after the prune each still has its newest Keep.
	Keep int
	// Protect, when set, says why a run must stay ("" when it may go):
	// what the caller knows that the store does not (the dashboard's
	// leases and launches).
	Protect func(id int64) string
}

// Check says what is wrong with a rule, as a ValidationError-like
// message; nil when it can be planned.
func (r PruneRule) Check() error {
	if r.OlderThan.IsZero() && r.Tag == "" && len(r.Statuses) == 0 && r.Keep == 0 {
		return errors.New("say what to prune: an age, a tag, a status or a number of runs to keep")
	}
	if r.Keep < 0 || r.Keep > MaxPruneKeep {
		return fmt.Errorf("keep %d: want 1 to %d runs per host and workload", r.Keep, MaxPruneKeep)
	}
	if r.OlderThan.After(time.Now()) {
		return errors.New("older than a time to come: give an age of zero or more")
	}
	for _, s := range r.Statuses {
		if !slices.Contains(statuses, s) {
			return fmt.Errorf("status %q: want one of %s", s, strings.Join(statuses, ", "))
		}
	}
	return checkText("tag", r.Tag, MaxLabelLen)
}

// PruneRun is a run a prune matched: it goes, or Kept says why not.
type PruneRun struct {
	ID       int64     `json:"id"`
	Name     string    `json:"name"`
	Status   string    `json:"status"`
	Hostname string    `json:"host"`
	Workload string    `json:"workload"`
	Created  time.Time `json:"created"`
	// Bytes is about what the run's rows hold (their text and numbers
	// as stored, before SQLite's page overhead).
	Bytes int64 `json:"bytes"`
	// Kept says why a matched run stays; "" when it goes.
	Kept string `json:"kept,omitempty"`
}

// PrunePlan is what a prune would do: the runs that go, the runs the
// rule matched but keeps (with why), and the bytes of those that go.
type PrunePlan struct {
	Delete []PruneRun `json:"delete"`
	Kept   []PruneRun `json:"kept"`
	Bytes  int64      `json:"bytes"`
}

// pruneRow is a stored run as a prune sees it.
type pruneRow struct {
	PruneRun
	tags []string
}

// PlanPrune lists what rule would delete and what it keeps, newest first,
// deleting nothing.
func (s *Store) PlanPrune(ctx context.Context, rule PruneRule) (*PrunePlan, error) {
	if err := rule.Check(); err != nil {
		return nil, err
	}
	all, err := s.pruneRows(ctx)
	if err != nil {
		return nil, fmt.Errorf("db: plan prune: %w", err)
	}
	held, err := s.heldRuns(ctx)
	if err != nil {
		return nil, fmt.Errorf("db: plan prune: %w", err)
	}
	// all is newest first: the first Keep of each host and workload stay.
	type hw struct{ host, workload string }
	rank := map[hw]int{}
	plan := &PrunePlan{Delete: []PruneRun{}, Kept: []PruneRun{}}
	for _, r := range all {
		k := hw{r.Hostname, r.Workload}
		if unfinishedWhy(r.Status) == "" {
			rank[k]++ // a run still going may yet fail: it is not one of the N
		}
		if !rule.matches(r) {
			continue
		}
		why := unfinishedWhy(r.Status)
		if why == "" {
			why = held[r.ID]
		}
		if why == "" && rule.Protect != nil {
			why = rule.Protect(r.ID)
		}
		if why == "" && rule.Keep > 0 && rank[k] <= rule.Keep {
			why = fmt.Sprintf("kept by keep %d: number %d, newest first, of host %q, workload %q", rule.Keep, rank[k], r.Hostname, r.Workload)
		}
		r.Kept = why
		if why != "" {
			plan.Kept = append(plan.Kept, r.PruneRun)
		} else {
			plan.Delete = append(plan.Delete, r.PruneRun)
		}
	}
	if err := s.runBytes(ctx, plan.Delete); err != nil {
		return nil, fmt.Errorf("db: plan prune: %w", err)
	}
	if err := s.runBytes(ctx, plan.Kept); err != nil {
		return nil, fmt.Errorf("db: plan prune: %w", err)
	}
	for _, r := range plan.Delete {
		plan.Bytes += r.Bytes
	}
	return plan, nil
}

func (rule PruneRule) matches(r pruneRow) bool {
	return (rule.OlderThan.IsZero() || r.Created.Before(rule.OlderThan)) &&
		(rule.Tag == "" || slices.Contains(r.tags, rule.Tag)) &&
		(len(rule.Statuses) == 0 || slices.Contains(rule.Statuses, r.Status))
}

// unfinishedWhy is why a run in status must stay: it is queued or
// running (here, on an agent, or on a fio server); "" otherwise.
func unfinishedWhy(status string) string {
	if status == StatusQueued || status == StatusRunning {
		return "it is " + status
	}
	return ""
}

// pruneRows reads every run as a prune sees it, newest first. A run's
// workload is its column (migration 0011), which CreateRun and imports
// set and opening the store fills in for the runs stored before; a run
// whose column is still NULL (a store a process left between 0011 and
// the fill, opened read-only since) has its plan read instead.
func (s *Store) pruneRows(ctx context.Context) ([]pruneRow, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id, name, status, hostname, created_at, tags, workload,
		CASE WHEN workload IS NULL THEN plan END
		FROM runs ORDER BY created_at DESC, id DESC`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var list []pruneRow
	for rows.Next() {
		var (
			r              Run
			created        int64
			tags           string
			workload, plan sql.NullString
		)
		if err := rows.Scan(&r.ID, &r.Name, &r.Status, &r.Hostname, &created, &tags, &workload, &plan); err != nil {
			return nil, err
		}
		fields := []jsonField{{"tags", tags, &r.Tags}}
		if !workload.Valid {
			fields = append(fields, jsonField{"plan", plan.String, &r.Plan})
		}
		if err := unmarshalFields(fields); err != nil {
			return nil, fmt.Errorf("run %d: %w", r.ID, err)
		}
		if !workload.Valid {
			workload.String = Workload(r)
		}
		list = append(list, pruneRow{PruneRun: PruneRun{ID: r.ID, Name: r.Name, Status: r.Status, Hostname: r.Hostname,
			Workload: workload.String, Created: time.Unix(0, created)}, tags: r.Tags})
	}
	return list, rows.Err()
}

// heldSQL are the runs that must stay though finished, with why: a
// member of a group another member of which is queued or running (the
// group's page and report need all of its hosts), and on an agent a run
// its dashboard does not have whole yet.
const heldSQL = `
	SELECT gr.run_id, 'its group ' || quote(g.name) || ' (' || g.uid || ') is still running'
	FROM group_runs gr JOIN run_groups g ON g.uid = gr.group_uid
	WHERE EXISTS (SELECT 1 FROM group_runs o JOIN runs x ON x.id = o.run_id
		WHERE o.group_uid = gr.group_uid AND x.status IN ('queued', 'running'))
	UNION ALL
	SELECT run_id, 'not yet uploaded to its dashboard ' || dashboard FROM agent_runs WHERE synced_at IS NULL`

// heldRuns maps the runs heldSQL holds to why.
func (s *Store) heldRuns(ctx context.Context) (map[int64]string, error) {
	rows, err := s.read.QueryContext(ctx, heldSQL)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	held := map[int64]string{}
	for rows.Next() {
		var (
			id  int64
			why string
		)
		if err := rows.Scan(&id, &why); err != nil {
			return nil, err
		}
		if held[id] == "" {
			held[id] = why
		}
	}
	return held, rows.Err()
}

// runBytesSQL is about what a run's rows hold: the bytes of their text
// and blobs, and 8 bytes a number (a sample's row has a dozen). It reads
// no value: octet_length takes a text's size from its record header,
// and a result's samples are counted by their last index (they are
// stored 0, 1, 2, …), one seek in the primary key.
const runBytesSQL = `
	SELECT r.id, octet_length(r.name) + octet_length(r.plan) + octet_length(r.host) + octet_length(r.targets) + octet_length(r.tags)
		+ octet_length(r.engines) + octet_length(r.schedulers) + octet_length(r.error) + octet_length(r.hostname) + octet_length(r.target) + 128
	+ coalesce((SELECT sum(octet_length(st.axes) + octet_length(st.config) + octet_length(st.schedulers) + octet_length(st.cpu)
		+ octet_length(st.proc) + octet_length(st.error) + coalesce(octet_length(st.result_host), 0)
		+ coalesce(octet_length(st.result_groups), 0) + 96) FROM steps st WHERE st.run_id = r.id), 0)
	+ coalesce((SELECT sum(octet_length(sr.job) + octet_length(sr.job_name) + octet_length(sr.error)
		+ coalesce(octet_length(sr.read_slat_bins), 0) + coalesce(octet_length(sr.read_clat_bins), 0) + coalesce(octet_length(sr.read_lat_bins), 0)
		+ coalesce(octet_length(sr.write_slat_bins), 0) + coalesce(octet_length(sr.write_clat_bins), 0) + coalesce(octet_length(sr.write_lat_bins), 0)
		+ coalesce(octet_length(sr.fio), 0) + coalesce(octet_length(sr.qos), 0) + 8 * 56
		+ 8 * 12 * (SELECT coalesce(max(sa.idx) + 1, 0) FROM samples sa WHERE sa.result_id = sr.id)
		+ coalesce((SELECT sum(octet_length(lg.data) + octet_length(lg.file) + 32) FROM result_logs lg WHERE lg.result_id = sr.id), 0))
		FROM steps st JOIN step_results sr ON sr.step_id = st.id WHERE st.run_id = r.id), 0)
	FROM runs r WHERE r.id IN (%s)`

// runBytes fills in the Bytes of runs, a batch at a time.
func (s *Store) runBytes(ctx context.Context, runs []PruneRun) error {
	at := make(map[int64]int, len(runs))
	for i, r := range runs {
		at[r.ID] = i
	}
	for b := range slices.Chunk(runs, pruneBatch) {
		ids := make([]any, len(b))
		for i, r := range b {
			ids[i] = r.ID
		}
		rows, err := s.read.QueryContext(ctx, fmt.Sprintf(runBytesSQL, placeholders(len(b))), ids...)
		if err != nil {
			return err
		}
		for rows.Next() {
			var id, n int64
			if err := rows.Scan(&id, &n); err != nil {
				rows.Close()
				return err
			}
			runs[at[id]].Bytes = n
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
	}
	return nil
}

// pruneBatch is how many runs one of a prune's transactions deletes: a
// few seconds' work at most, so other writers wait little between them.
const pruneBatch = 50

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

// PruneResult is what a prune did.
type PruneResult struct {
	Deleted []int64 `json:"deleted"`
	// Skipped are the planned runs a batch found no longer free to go (a
	// run that started, or joined a running group, since the plan), or
	// gone already.
	Skipped []int64 `json:"skipped"`
	Bytes   int64   `json:"bytes"` // the deleted runs' PruneRun.Bytes
}

// Prune deletes plan's runs, pruneBatch to a transaction, each batch
// checking again that its runs may go. progress, when set, is told after
// each batch how many runs are done. A cancelled ctx stops between
// batches: what was deleted is whole runs.
func (s *Store) Prune(ctx context.Context, plan *PrunePlan, progress func(done int)) (*PruneResult, error) {
	if err := s.writable(); err != nil {
		return nil, fmt.Errorf("db: prune: %w", err)
	}
	res := &PruneResult{Deleted: []int64{}, Skipped: []int64{}}
	bytes := map[int64]int64{}
	for _, r := range plan.Delete {
		bytes[r.ID] = r.Bytes
	}
	done := 0
	for b := range slices.Chunk(plan.Delete, pruneBatch) {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("db: prune: %w", err)
		}
		ids := make([]int64, len(b))
		for i, r := range b {
			ids[i] = r.ID
		}
		deleted, err := s.pruneBatch(ctx, ids)
		if err != nil {
			return res, fmt.Errorf("db: prune: %w", err)
		}
		for _, id := range ids {
			if slices.Contains(deleted, id) {
				res.Deleted = append(res.Deleted, id)
				res.Bytes += bytes[id]
			} else {
				res.Skipped = append(res.Skipped, id)
			}
		}
		done += len(b)
		if progress != nil {
			progress(done)
		}
	}
	return res, nil
}

// pruneBatch deletes, in one transaction, those of ids that are still
// free to go, their groups left without runs with them, and returns them.
func (s *Store) pruneBatch(ctx context.Context, ids []int64) ([]int64, error) {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	// What may go is read again under the write lock: held runs and
	// unfinished ones stay.
	rows, err := tx.QueryContext(ctx, `SELECT id, (SELECT group_uid FROM group_runs WHERE run_id = r.id)
		FROM runs r WHERE id IN (`+placeholders(len(ids))+`) AND status NOT IN ('queued', 'running')
		AND id NOT IN (SELECT run_id FROM (`+heldSQL+`))`, args...)
	if err != nil {
		return nil, err
	}
	var (
		free   []int64
		groups []string
	)
	for rows.Next() {
		var (
			id  int64
			grp sql.NullString
		)
		if err := rows.Scan(&id, &grp); err != nil {
			rows.Close()
			return nil, err
		}
		free = append(free, id)
		if grp.Valid && !slices.Contains(groups, grp.String) {
			groups = append(groups, grp.String)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(free) == 0 {
		return nil, nil
	}
	list := make([]string, len(free))
	for i, id := range free {
		list[i] = strconv.FormatInt(id, 10)
	}
	// The ids are our own integers. Steps, results, samples, logs and
	// group memberships go with their run (ON DELETE CASCADE).
	if _, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE id IN (`+strings.Join(list, ", ")+`)`); err != nil {
		return nil, err
	}
	// A group whose every run went goes too; one still being filled by
	// its launch has a member that is queued, so is not among these.
	for _, g := range groups {
		if _, err := tx.ExecContext(ctx, `DELETE FROM run_groups WHERE uid = ?
			AND NOT EXISTS (SELECT 1 FROM group_runs WHERE group_uid = ?)`, g, g); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	slices.SortFunc(free, func(a, b int64) int { return cmp.Compare(a, b) })
	return free, nil
}

// MaxPruneAge bounds an age: older than a century is older than any run.
const MaxPruneAge = 100 * 365 * 24 * time.Hour

// ParsePruneAge reads an age as the CLI and the dashboard take it: a
// whole number and a unit, s, m, h, d or w ("90d", "12h", "2w"), or a
// date, YYYY-MM-DD (midnight, local time), as the time itself. It
// returns the time runs must be created before.
func ParsePruneAge(v string, now time.Time) (time.Time, error) {
	v = strings.TrimSpace(v)
	if d, err := time.ParseInLocation(time.DateOnly, v, time.Local); err == nil {
		if d.After(now) {
			return time.Time{}, fmt.Errorf("age %q: a date to come; give one past", v)
		}
		return d, nil
	}
	bad := fmt.Errorf("age %q: want a whole number and a unit, s, m, h, d or w (e.g. 90d), or a date YYYY-MM-DD", v)
	i := 0
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	if i == 0 || i > 12 {
		return time.Time{}, bad
	}
	n, err := strconv.ParseInt(v[:i], 10, 64)
	if err != nil {
		return time.Time{}, bad
	}
	unit, ok := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour,
		"d": 24 * time.Hour, "w": 7 * 24 * time.Hour}[v[i:]]
	if !ok {
		return time.Time{}, bad
	}
	if n > int64(MaxPruneAge/unit) {
		return time.Time{}, fmt.Errorf("age %q: at most a hundred years", v)
	}
	return now.Add(-time.Duration(n) * unit), nil
}

// ParsePruneStatuses reads a comma-separated list of run statuses.
func ParsePruneStatuses(v string) ([]string, error) {
	var out []string
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if !slices.Contains(statuses, s) {
			return nil, fmt.Errorf("status %q: want one of %s", s, strings.Join(statuses, ", "))
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}
