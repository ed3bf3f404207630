package db

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
)

// EachStepJSON calls fn with each of a run's steps in order as JSON, what
// encoding/json writes of the sweep.StepResult that EachStep reads with
// LoadAll: the steps of the run document (GET /api/runs/ID). A step's
// JSON is written once and kept in the step cache under its id and stamp
// (0009_step_stamp), so that the document of a running run written again
// after a step lands reads and encodes that one step; the rest comes from
// memory. The steps are read in one read transaction, a few at a time; fn
// must not keep or change the bytes, and an error from it stops the walk
// and is returned as it is.
func (s *Store) EachStepJSON(ctx context.Context, runID int64, fn func([]byte) error) error {
	tx, err := s.read.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("db: run %d steps: %w", runID, err)
	}
	defer tx.Rollback()
	wrap := func(err error) error { return fmt.Errorf("db: run %d steps: %w", runID, err) }
	if err := runExists(ctx, tx, runID); err != nil {
		return wrap(err)
	}
	keys, seqs, err := stepKeys(ctx, tx, runID)
	if err != nil {
		return wrap(err)
	}
	cache := s.stepCache
	for i := 0; i < len(keys); {
		if b := cache.stepJSON(keys[i]); b != nil {
			if err := fn(b); err != nil {
				return err
			}
			i++
			continue
		}
		// The steps the cache lacks, a few at a time (read whole, each is
		// a MB of job results).
		n := 1
		for i+n < len(keys) && n < eachStepBatch && cache.stepJSON(keys[i+n]) == nil {
			n++
		}
		after := int64(math.MinInt64)
		if i > 0 {
			after = seqs[i-1]
		}
		steps, err := readStepWindow(ctx, tx, runID, LoadAll(), stepWindow{after: after, limit: n}, nil)
		if err != nil {
			return wrap(err)
		}
		if len(steps) != n {
			return wrap(fmt.Errorf("read %d steps after seq %d, want %d", len(steps), after, n))
		}
		for k := range steps {
			if int64(steps[k].Step.Seq) != seqs[i+k] {
				return wrap(fmt.Errorf("read step %d, want %d", steps[k].Step.Seq, seqs[i+k]))
			}
			b, err := json.Marshal(&steps[k])
			if err != nil {
				return wrap(fmt.Errorf("step %d: %w", steps[k].Step.Seq, err))
			}
			cache.putStepJSON(keys[i+k], b)
			if err := fn(b); err != nil {
				return err
			}
		}
		i += n
	}
	return nil
}

// stepJSON is the kept JSON of the step key, or nil.
func (c *stepCache) stepJSON(key stepKey) []byte {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.docs[key]
}

// putStepJSON keeps b as the JSON of the step key.
func (c *stepCache) putStepJSON(key stepKey, b []byte) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.docs[key]; ok {
		c.size -= int64(len(old) + 64)
	}
	c.docs[key] = b
	c.size += int64(len(b) + 64)
	c.trimLocked(key)
}
