package db

import (
	"context"
	"database/sql"
	"fmt"
	"math"

	"iolab/bench/joblog"
	"iolab/bench/summary"
)

// summaryLoad is what a step's summary is made from: what the dashboard's
// pages draw of it — the slat, clat and lat histograms (the charts'
// latency kinds; the intended-start latencies
// come with the results), every sample, and the IOPS logs the timeline
// draws — and not the options each job ran with (its step's config has
// them), as the pages have always read it.
var summaryLoad = StepLoad{Hists: AllHists, Samples: EverySample, Logs: []joblog.Kind{joblog.IOPS}}

// Summaries reads a run's steps in order as summaries (summary.StepView):
// what the dashboard's run page, charts and CSVs draw of them. A step's
// summary is made once, from the step as summaryLoad reads it, and kept
// in the step cache under the step's id and stamp (0009_step_stamp), so
// that a page of a running run built again after a step lands reads that
// step from SQLite and the others from memory, decoding nothing. The
// steps are read in one read transaction; the steps returned share what
// they hold with the cache and every other reader, and must not be
// changed.
func (s *Store) Summaries(ctx context.Context, runID int64) ([]summary.StepView, error) {
	tx, err := s.read.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("db: run %d summaries: %w", runID, err)
	}
	defer tx.Rollback()
	out, err := readSummaries(ctx, tx, runID, s.stepCache)
	if err != nil {
		return nil, fmt.Errorf("db: run %d summaries: %w", runID, err)
	}
	return out, nil
}

func readSummaries(ctx context.Context, tx *sql.Tx, runID int64, cache *stepCache) ([]summary.StepView, error) {
	if err := runExists(ctx, tx, runID); err != nil {
		return nil, err
	}
	keys, seqs, err := stepKeys(ctx, tx, runID)
	if err != nil {
		return nil, err
	}
	out := make([]summary.StepView, len(keys))
	have := cache.summaries(keys, out)
	// The steps the cache lacks, a few at a time (each read whole is a
	// few hundred kB of job results): runs of them in seq order.
	for i := 0; i < len(keys); {
		if have[i] {
			i++
			continue
		}
		n := 0
		for i+n < len(keys) && !have[i+n] && n < eachStepBatch {
			n++
		}
		after := int64(math.MinInt64)
		if i > 0 {
			after = seqs[i-1]
		}
		steps, err := readStepWindow(ctx, tx, runID, summaryLoad, stepWindow{after: after, limit: n}, nil)
		if err != nil {
			return nil, err
		}
		if len(steps) != n {
			return nil, fmt.Errorf("read %d steps after seq %d, want %d", len(steps), after, n)
		}
		for k := range steps {
			if int64(steps[k].Step.Seq) != seqs[i+k] {
				return nil, fmt.Errorf("read step %d, want %d", steps[k].Step.Seq, seqs[i+k])
			}
			kept := summary.StepViewOf(&steps[k]) // not out's: the caller may change its own
			out[i+k] = kept
			cache.putSummary(keys[i+k], &kept)
		}
		i += n
	}
	return out, nil
}

// stepKeys are the cache keys and seqs of a run's steps, in order.
func stepKeys(ctx context.Context, tx *sql.Tx, runID int64) (keys []stepKey, seqs []int64, err error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, stamp, seq FROM steps WHERE run_id = ? ORDER BY seq`, runID)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k stepKey
		var seq int64
		if err := rows.Scan(&k.id, &k.stamp, &seq); err != nil {
			return nil, nil, err
		}
		keys, seqs = append(keys, k), append(seqs, seq)
	}
	return keys, seqs, rows.Err()
}

// summarySize is about what a step's summary holds in memory.
func summarySize(st *summary.StepView) int64 {
	n := int64(1024 + 256*len(st.Step.Axes))
	for _, j := range st.Step.Config.Jobs {
		n += 2048 + int64(len(j.Name))
	}
	for _, g := range st.Step.Config.Groups {
		n += 2048 * int64(len(g.Jobs))
	}
	if st.Result == nil {
		return n
	}
	for _, g := range st.Result.Groups {
		n += 128 + 256*int64(len(g.Disks))
		for k := range g.Jobs {
			j := &g.Jobs[k]
			n += 2048 + int64(len(j.Name)+len(j.Error))
			for d := range j.Dirs {
				dr := &j.Dirs[d]
				n += 16 * int64(len(dr.Slat.Hist)+len(dr.Clat.Hist)+len(dr.Lat.Hist)+len(dr.Intended.Hist))
				if b := dr.Block; b != nil {
					n += 256 + 16*int64(len(b.Submit.Hist)+len(b.Queue.Hist)+len(b.Device.Hist)+len(b.Completion.Hist))
				}
			}
			for _, sm := range j.Samples {
				n += 48
				if sm.Lat != nil {
					n += 48
				}
			}
			for _, l := range j.Logs {
				n += 64 + int64(len(l.File)+len(l.Data))
			}
		}
	}
	return n
}

// summaries sets out[i] to the kept summary of the step keys[i] where
// the cache holds one, and reports which it holds.
func (c *stepCache) summaries(keys []stepKey, out []summary.StepView) []bool {
	have := make([]bool, len(keys))
	if c == nil {
		return have
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, k := range keys {
		if e := c.sums[k]; e != nil {
			out[i], have[i] = *e.step, true
		}
	}
	return have
}

// putSummary keeps st as the summary of the step key.
func (c *stepCache) putSummary(key stepKey, st *summary.StepView) {
	if c == nil {
		return
	}
	e := &cachedSummary{step: st, size: summarySize(st)}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.sums[key]; ok {
		c.size -= old.size
	}
	c.sums[key] = e
	c.size += e.size
	c.trimLocked(key)
}

// cachedSummary is one step's summary.
type cachedSummary struct {
	step *summary.StepView
	size int64
}
