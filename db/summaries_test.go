package db

import (
	"context"
	"math/rand/v2"
	"reflect"
	"testing"

	"iolab/bench/joblog"
	"iolab/bench/summary"
)

// checkSummaries reads run's summaries and checks them against the steps
// as SQLite holds them now, read whole and made summaries.
func checkSummaries(t *testing.T, s *Store, what string, run int64) []summary.StepView {
	t.Helper()
	got, err := s.Summaries(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	if want := summary.StepViews(readUncached(t, s, run, summaryLoad)); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: the summaries differ from the steps SQLite holds", what)
	}
	return got
}

// A step's summary is made once and kept; it is never served for a step
// stored again, updated in place, or deleted with its run, even when
// SQLite gives the new row the old one's id.
func TestSummariesNeverStale(t *testing.T) {
	ctx := context.Background()
	s, id := storeLoadTestRun(t)
	first := checkSummaries(t, s, "first read", id)
	if n := len(s.stepCache.sums); n != 9 {
		t.Fatalf("the cache holds %d summaries, want the run's 9", n)
	}
	if n := len(s.stepCache.entries); n != 0 {
		t.Fatalf("the cache holds %d steps' rows after reading summaries, want none", n)
	}
	again := checkSummaries(t, s, "second read", id)
	if &again[4].Result.Groups[0].Jobs[0] != &first[4].Result.Groups[0].Jobs[0] {
		t.Fatal("the second read made step 4's summary again: want the one kept")
	}
	// A read's slice is its own: a step set in it is no later read's.
	again[4] = summary.StepView{}
	first[5].Error = "not stored"
	checkSummaries(t, s, "a read's steps replaced", id)

	// Stored again with fio logs: the timeline draws the IOPS log, and
	// nothing reads the others.
	st := testStep(rand.New(rand.NewPCG(7, 8)), 8, 500, 5, false)
	st.Result.Groups[0].Jobs[0].Logs = []joblog.Log{
		{Kind: joblog.BW, File: "t_bw.1.log", Data: []byte("1000, 4096, 0, 4096, 0\n"), Lines: 1},
		{Kind: joblog.IOPS, File: "t_iops.1.log", Data: []byte("1000, 1, 0, 4096, 0\n"), Lines: 1}}
	if err := s.SaveStep(ctx, id, &st); err != nil {
		t.Fatal(err)
	}
	got := checkSummaries(t, s, "step 8 stored again", id)
	if reflect.DeepEqual(got[8].Result.Groups[0].Jobs[0].Dirs, first[8].Result.Groups[0].Jobs[0].Dirs) {
		t.Fatal("step 8's summary is what it was before it was stored again")
	}
	if logs := got[8].Result.Groups[0].Jobs[0].Logs; len(logs) != 1 || logs[0].Kind != joblog.IOPS {
		t.Fatalf("step 8's logs: %+v, want its IOPS log alone", logs)
	}

	if _, err := s.write.ExecContext(ctx, `UPDATE steps SET error = 'changed' WHERE run_id = ? AND seq = 3`, id); err != nil {
		t.Fatal(err)
	}
	if got := checkSummaries(t, s, "step 3 updated", id); got[3].Error != "changed" {
		t.Fatalf("step 3 updated: error %q", got[3].Error)
	}

	if err := s.DeleteRun(ctx, id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Summaries(ctx, id); err == nil {
		t.Fatal("the summaries of a deleted run: no error")
	}
	id2 := storeNineSteps(t, s)
	checkSummaries(t, s, "another run in the deleted one's place", id2)
}

// Summaries read through a cache too small to keep them are read right,
// and the cache stays within its budget.
func TestSummariesBudget(t *testing.T) {
	s, id := storeLoadTestRun(t)
	s.stepCache = newStepCache(1)
	checkSummaries(t, s, "a full cache", id)
	if n := len(s.stepCache.sums); n > 1 {
		t.Fatalf("a cache of 1 byte holds %d summaries", n)
	}
}
