package db

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// checkStepJSON reads run's steps as JSON and checks them against the
// steps as SQLite holds them now, read whole and encoded.
func checkStepJSON(t *testing.T, s *Store, what string, run int64) {
	t.Helper()
	var got [][]byte
	if err := s.EachStepJSON(context.Background(), run, func(b []byte) error {
		got = append(got, b)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := readUncached(t, s, run, LoadAll())
	if len(got) != len(want) {
		t.Fatalf("%s: %d steps, want %d", what, len(got), len(want))
	}
	for i := range want {
		w, err := json.Marshal(&want[i])
		if err != nil {
			t.Fatal(err)
		}
		if string(got[i]) != string(w) {
			t.Fatalf("%s: step %d's JSON differs from the step SQLite holds", what, i)
		}
	}
}

// A step's JSON is written once and kept, and never served for a step
// stored again, updated, or deleted with its run.
func TestStepJSONNeverStale(t *testing.T) {
	ctx := context.Background()
	s, id := storeLoadTestRun(t)
	checkStepJSON(t, s, "first read", id)
	if n := len(s.stepCache.docs); n != 9 {
		t.Fatalf("the cache holds %d steps' JSON, want the run's 9", n)
	}
	checkStepJSON(t, s, "second read", id)

	st := testStep(rand.New(rand.NewPCG(7, 8)), 8, 500, 5, false)
	if err := s.SaveStep(ctx, id, &st); err != nil {
		t.Fatal(err)
	}
	checkStepJSON(t, s, "step 8 stored again", id)
	if _, err := s.write.ExecContext(ctx, `UPDATE steps SET error = 'changed' WHERE run_id = ? AND seq = 3`, id); err != nil {
		t.Fatal(err)
	}
	checkStepJSON(t, s, "step 3 updated", id)

	if err := s.DeleteRun(ctx, id); err != nil {
		t.Fatal(err)
	}
	id2 := storeNineSteps(t, s)
	checkStepJSON(t, s, "another run in the deleted one's place", id2)

	s.stepCache = newStepCache(1)
	checkStepJSON(t, s, "a full cache", id2)
	if n := len(s.stepCache.docs); n > 1 {
		t.Fatalf("a cache of 1 byte holds %d steps' JSON", n)
	}
}
