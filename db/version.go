package db

import (
	"context"
	"encoding/json"
	"fmt"
)

// RunVersions returns the versions of runs ids, in their order. A run's
// version changes whenever the run or any of its steps does, whichever
// process writes it (triggers keep it: migration 0006), so that what is
// drawn of a run at one version is what would be drawn again. A run that
// does not exist is ErrNotFound.
func (s *Store) RunVersions(ctx context.Context, ids []int64) ([]int64, error) {
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	rows, err := s.read.QueryContext(ctx, `SELECT id, version FROM runs WHERE id IN (SELECT value FROM json_each(?))`, string(list))
	if err != nil {
		return nil, fmt.Errorf("db: run versions: %w", err)
	}
	defer rows.Close()
	got := make(map[int64]int64, len(ids))
	for rows.Next() {
		var id, v int64
		if err := rows.Scan(&id, &v); err != nil {
			return nil, fmt.Errorf("db: run versions: %w", err)
		}
		got[id] = v
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("db: run versions: %w", err)
	}
	out := make([]int64, len(ids))
	for i, id := range ids {
		v, ok := got[id]
		if !ok {
			return nil, fmt.Errorf("db: run %d: %w", id, ErrNotFound)
		}
		out[i] = v
	}
	return out, nil
}
