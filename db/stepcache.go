package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"sync"

	"iolab/bench"
	"iolab/bench/sweep"
)

// The step cache keeps what StepsFor and EachStep read of each step's job
// results and samples, by the step's id and stamp (0009_step_stamp): a
// step's results change only with its row, and any change of the row
// gives it a new stamp that no other row ever had, so an entry is that
// step's content for good. A page of a running run built again after a
// step lands then reads that one step from SQLite, and the rest from
// here. An entry holds the rows as scanned (the histograms in their
// sparse text, a few kB), not decoded job results (each ~90 kB of
// fixed-size histograms), and each read decodes them again into memory
// of its own: what a read returns shares nothing with the cache or with
// another read. The cache holds at most stepCacheBytes; past that,
// entries go, any first (entries of replaced steps are never asked for
// again and go in time).
//
// It serves the loads of StepsFor that read no Job options and no fio
// logs (the compare page's, the report's); beside those rows it keeps,
// under the same keys and within the same budget, each step's summary
// (summaries.go: what the run page, the charts and the steps CSV draw)
// and its JSON (stepjson.go: the run document's steps).

// stepCacheBytes bounds what the step cache holds, by the entries' own
// estimate of their size (cachedStep.size).
const stepCacheBytes = 64 << 20

type stepCache struct {
	budget int64

	mu      sync.Mutex
	size    int64
	entries map[stepKey]*cachedStep
	sums    map[stepKey]*cachedSummary // summaries.go
	docs    map[stepKey][]byte         // stepjson.go
}

type stepKey struct{ id, stamp int64 }

// cachedStep is one step's job results, in (group, job) order, with the
// histograms in hists.
type cachedStep struct {
	hists Hists
	jobs  []cachedJob
	size  int64
}

type cachedJob struct {
	rr      resultRowScan
	samples []bench.Sample
}

func newStepCache(budget int64) *stepCache {
	return &stepCache{budget: budget, entries: map[stepKey]*cachedStep{}, sums: map[stepKey]*cachedSummary{},
		docs: map[stepKey][]byte{}}
}

// serves reports whether c reads what load asks for.
func (c *stepCache) serves(load StepLoad) bool {
	return c != nil && !load.Jobs && load.Logs == nil
}

// fill reads the job results and samples of steps (read in tx, with ids
// and stamps) as readStepWindow does: from the cache, and from tx the
// steps it does not hold.
func (c *stepCache) fill(ctx context.Context, tx *sql.Tx, load StepLoad, steps []sweep.StepResult, ids, stamps []int64, dec repeatDecoder) error {
	entries := make([]*cachedStep, len(steps))
	var missing []int64
	want := load.Hists | ClatHist // what pages read, so that they share entries
	c.mu.Lock()
	for i := range steps {
		if steps[i].Result == nil {
			continue
		}
		e := c.entries[stepKey{ids[i], stamps[i]}]
		if e != nil && e.hists&load.Hists == load.Hists {
			entries[i] = e
			continue
		}
		if e != nil {
			want |= e.hists
		}
		missing = append(missing, ids[i])
	}
	c.mu.Unlock()
	if len(missing) > 0 {
		got, err := readCachedSteps(ctx, tx, missing, want)
		if err != nil {
			return err
		}
		c.mu.Lock()
		for i := range steps {
			if entries[i] != nil || steps[i].Result == nil {
				continue
			}
			e := got[ids[i]]
			if e == nil {
				e = &cachedStep{hists: want}
			}
			entries[i] = e
			c.putLocked(stepKey{ids[i], stamps[i]}, e)
		}
		c.mu.Unlock()
	}

	n := 0
	for _, e := range entries {
		if e != nil {
			n += len(e.jobs)
		}
	}
	// Every job result in one allocation, as readStepWindow does.
	jobs := make([]bench.JobResult, n)
	k := 0
	for i := range steps {
		e := entries[i]
		if e == nil {
			if load.Samples != nil {
				load.Samples(&steps[i]) // called for every step, as readStepWindow does
			}
			continue
		}
		res := steps[i].Result
		first := k
		var group *bench.GroupResult
		groupStart := k
		for j := range e.jobs {
			cj := &e.jobs[j]
			rr := cj.rr // a copy: the histograms load leaves out are not decoded
			rr.trimHists = load.Hists
			for d := range rr.dirs {
				for l := range rr.dirs[d].lats {
					if load.Hists&(1<<l) == 0 {
						rr.dirs[d].lats[l].bins = sql.NullString{}
					}
				}
			}
			if rr.groupIndex < 0 || rr.groupIndex >= len(res.Groups) {
				return fmt.Errorf("step %d: group %d of %d", steps[i].Step.Seq, rr.groupIndex, len(res.Groups))
			}
			if g := &res.Groups[rr.groupIndex]; g != group {
				if group != nil {
					group.Jobs = jobs[groupStart:k:k]
				}
				group, groupStart = g, k
			}
			if want := k - groupStart; rr.jobIndex != want {
				return fmt.Errorf("step %d: job %d, want %d", steps[i].Step.Seq, rr.jobIndex, want)
			}
			if err := rr.fill(&jobs[k], dec); err != nil {
				return fmt.Errorf("step %d: %w", steps[i].Step.Seq, err)
			}
			k++
		}
		if group != nil {
			group.Jobs = jobs[groupStart:k:k]
		}
		// Asked once the step's results are read, so that it can pick
		// by them.
		if load.Samples != nil && load.Samples(&steps[i]) {
			for j := range e.jobs {
				jobs[first+j].Samples = copySamples(e.jobs[j].samples)
			}
		}
	}
	return nil
}

// copySamples copies s, each interval latency included.
func copySamples(s []bench.Sample) []bench.Sample {
	if s == nil {
		return nil
	}
	out := make([]bench.Sample, len(s))
	copy(out, s)
	var lats []bench.IntervalLat
	for i := range out {
		if out[i].Lat != nil {
			if lats == nil {
				lats = make([]bench.IntervalLat, 0, len(out)-i)
			}
			lats = append(lats, *out[i].Lat)
			out[i].Lat = &lats[len(lats)-1]
		}
	}
	return out
}

// putLocked keeps e under key, dropping other entries to stay within the
// budget.
func (c *stepCache) putLocked(key stepKey, e *cachedStep) {
	if old, ok := c.entries[key]; ok {
		c.size -= old.size
	}
	c.entries[key] = e
	c.size += e.size
	c.trimLocked(key)
}

// trimLocked drops entries and summaries, any first but those of key,
// until the cache is within its budget.
func (c *stepCache) trimLocked(key stepKey) {
	if !trimOver(c, c.entries, key, func(e *cachedStep) int64 { return e.size }) {
		return
	}
	if !trimOver(c, c.sums, key, func(e *cachedSummary) int64 { return e.size }) {
		return
	}
	trimOver(c, c.docs, key, func(b []byte) int64 { return int64(len(b) + 64) })
}

// trimOver drops m's entries but key's while c is over its budget; false
// once it is within it.
func trimOver[V any](c *stepCache, m map[stepKey]V, key stepKey, size func(V) int64) bool {
	for k, v := range m {
		if c.size <= c.budget {
			return false
		}
		if k != key {
			delete(m, k)
			c.size -= size(v)
		}
	}
	return c.size > c.budget
}

// readCachedSteps reads the job results (with the histograms hists) and
// samples of the steps with ids, by step id.
func readCachedSteps(ctx context.Context, tx *sql.Tx, ids []int64, hists Hists) (map[int64]*cachedStep, error) {
	list, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]*cachedStep, len(ids))
	type at struct {
		e *cachedStep
		j int
	}
	byResult := map[int64]at{}
	rows, err := tx.QueryContext(ctx, `SELECT r.id, r.step_id, `+StepLoad{Hists: hists}.resultSelect()+`
		FROM step_results r WHERE r.step_id IN (SELECT value FROM json_each(?))
		ORDER BY r.step_id, r.group_index, r.job_index`, string(list))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var (
		resultID, stepID int64
		rr               resultRowScan
	)
	dest := append([]any{&resultID, &stepID}, rr.dest()...)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		e := out[stepID]
		if e == nil {
			e = &cachedStep{hists: hists, size: 256}
			out[stepID] = e
		}
		byResult[resultID] = at{e, len(e.jobs)}
		e.jobs = append(e.jobs, cachedJob{rr: rr})
		e.size += rr.size()
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()

	rows, err = tx.QueryContext(ctx, `SELECT s.result_id, s.at_ns, s.read_ios, s.write_ios, s.trim_ios, s.read_bytes, s.write_bytes, s.trim_bytes, `+sampleLatSelect+`
		FROM step_results r JOIN samples s ON s.result_id = r.id
		WHERE r.step_id IN (SELECT value FROM json_each(?))
		ORDER BY r.step_id, r.group_index, r.job_index, r.id, s.idx`, string(list))
	if err != nil {
		return nil, err
	}
	err = scanSamples(rows, func(id int64) (*[]bench.Sample, error) {
		a, ok := byResult[id]
		if !ok {
			return nil, fmt.Errorf("samples of unknown result %d", id)
		}
		return &a.e.jobs[a.j].samples, nil
	})
	if err != nil {
		return nil, err
	}
	for _, e := range out {
		for j := range e.jobs {
			for _, sm := range e.jobs[j].samples {
				e.size += 56
				if sm.Lat != nil {
					e.size += 48
				}
			}
		}
	}
	return out, nil
}

// size is about what the row holds in memory.
func (rr *resultRowScan) size() int64 {
	n := int64(512 + len(rr.name) + len(rr.errMsg) + len(rr.job.String) + len(rr.fio.String) + len(rr.qos.String))
	for d := range rr.dirs {
		for l := range rr.dirs[d].lats {
			n += int64(len(rr.dirs[d].lats[l].bins.String))
		}
	}
	return n
}
