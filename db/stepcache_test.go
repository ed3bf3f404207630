package db

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"

	"iolab/bench"
	"iolab/bench/sweep"
)

// readUncached reads a run's steps as StepsFor does, without the step cache.
func readUncached(t *testing.T, s *Store, id int64, load StepLoad) []sweep.StepResult {
	t.Helper()
	ctx := context.Background()
	tx, err := s.read.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	steps, err := readSteps(ctx, tx, id, load, nil)
	if err != nil {
		t.Fatal(err)
	}
	return steps
}

func stepIDStamp(t *testing.T, s *Store, run int64, seq int) (id, stamp int64) {
	t.Helper()
	if err := s.read.QueryRow(`SELECT id, stamp FROM steps WHERE run_id = ? AND seq = ?`, run, seq).Scan(&id, &stamp); err != nil {
		t.Fatal(err)
	}
	return id, stamp
}

// The step cache never serves what a step held before it was stored
// again, updated in place, or deleted with its run, even when SQLite
// gives the new row the old one's id; and what it returns is the
// reader's own.
func TestStepCacheNeverStale(t *testing.T) {
	ctx := context.Background()
	s, id := storeLoadTestRun(t)
	load := StepLoad{Hists: ClatHist, Samples: EverySample}
	check := func(what string, run int64) []sweep.StepResult {
		t.Helper()
		got, err := s.StepsFor(ctx, run, load)
		if err != nil {
			t.Fatal(err)
		}
		if want := readUncached(t, s, run, load); !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: the cached read differs from SQLite's", what)
		}
		return got
	}
	first := check("first read", id)
	if n := len(s.stepCache.entries); n != 8 { // the failed step has no results
		t.Fatalf("the cache holds %d steps, want 8", n)
	}
	check("second read", id)

	// The last step stored again, with other figures: its row is
	// deleted and inserted, and gets the same id back.
	oldID, oldStamp := stepIDStamp(t, s, id, 8)
	st := testStep(rand.New(rand.NewPCG(7, 8)), 8, 500, 5, false)
	if err := s.SaveStep(ctx, id, &st); err != nil {
		t.Fatal(err)
	}
	newID, newStamp := stepIDStamp(t, s, id, 8)
	if newID != oldID || newStamp == oldStamp {
		t.Fatalf("step 8 stored again: id %d→%d, stamp %d→%d; want the id reused and a new stamp", oldID, newID, oldStamp, newStamp)
	}
	got := check("step 8 stored again", id)
	if reflect.DeepEqual(got[8].Result.Groups[0].Jobs[0].Dirs, first[8].Result.Groups[0].Jobs[0].Dirs) {
		t.Fatal("step 8 reads back as it was before it was stored again")
	}

	// Updated in place: a new stamp.
	_, before := stepIDStamp(t, s, id, 3)
	if _, err := s.write.ExecContext(ctx, `UPDATE steps SET error = 'changed' WHERE run_id = ? AND seq = 3`, id); err != nil {
		t.Fatal(err)
	}
	if _, after := stepIDStamp(t, s, id, 3); after == before {
		t.Fatalf("step 3 updated: stamp stayed %d", after)
	}
	check("step 3 updated", id)

	// What a read returns is its own: changing it changes no later read.
	got[1].Result.Groups[0].Jobs[0].Samples[0].IOs[bench.Read] = 12345
	got[1].Result.Groups[0].Jobs[0].Dirs[bench.Read].Clat.Hist.Counts[3] = 12345
	for _, sm := range got[1].Result.Groups[0].Jobs[0].Samples {
		if sm.Lat != nil {
			sm.Lat.N = 12345
		}
	}
	check("a read's steps changed", id)

	// The run deleted and another stored: its steps reuse the ids.
	if err := s.DeleteRun(ctx, id); err != nil {
		t.Fatal(err)
	}
	id2 := storeNineSteps(t, s)
	if reused, _ := stepIDStamp(t, s, id2, 0); reused > oldID {
		t.Logf("the new run's steps did not reuse ids (first %d)", reused)
	}
	check("another run in the deleted one's place", id2)
}

// The cache stays within its budget, dropping entries.
func TestStepCacheBudget(t *testing.T) {
	ctx := context.Background()
	s, id := storeLoadTestRun(t)
	s.stepCache = newStepCache(1) // every entry is over it: at most the last one stays
	load := StepLoad{Hists: ClatHist, Samples: EverySample}
	got, err := s.StepsFor(ctx, id, load)
	if err != nil {
		t.Fatal(err)
	}
	if want := readUncached(t, s, id, load); !reflect.DeepEqual(got, want) {
		t.Fatal("a read through a full cache differs from SQLite's")
	}
	if n := len(s.stepCache.entries); n > 1 {
		t.Fatalf("a cache of 1 byte holds %d steps", n)
	}
}
