package db

import (
	"context"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
)

// pruneLab stores runs of two hosts and two workloads over 100 days, one
// a day (run i created i days before now, so higher ids are older), with
// two steps each; every third is tagged nightly, every fifth failed.
// It returns their ids, newest first.
func pruneLab(t *testing.T, s *Store, n int) []int64 {
	t.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	now := time.Now()
	var ids []int64
	for i := range n {
		r := testRun()
		r.Status = StatusDone
		r.Created = now.Add(-time.Duration(i) * 24 * time.Hour)
		r.Host.Hostname = []string{"lab1", "lab2"}[i%2]
		r.Plan.Base.Groups[0].Jobs[0].RW = []string{"randread", "randwrite"}[(i/2)%2]
		r.Tags = nil
		if i%3 == 0 {
			r.Tags = []string{"nightly"}
		}
		if i%5 == 4 {
			r.Status = StatusFailed
		}
		id, err := s.CreateRun(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		for seq := range 2 {
			st := testStep(rng, seq, 200, 4, false)
			if err := s.SaveStep(ctx, id, &st); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, id)
	}
	return ids
}

func planIDs(l []PruneRun) []int64 {
	out := []int64{}
	for _, r := range l {
		out = append(out, r.ID)
	}
	slices.Sort(out)
	return out
}

func TestPlanPruneSelects(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	ids := pruneLab(t, s, 20)
	// ids[i] is i days old, on lab1 when i is even; randread when i/2 is even.
	pick := func(keep func(i int) bool) []int64 {
		out := []int64{}
		for i, id := range ids {
			if keep(i) {
				out = append(out, id)
			}
		}
		slices.Sort(out)
		return out
	}
	now := time.Now()
	for _, tc := range []struct {
		name string
		rule PruneRule
		want []int64
	}{
		{"age", PruneRule{OlderThan: now.Add(-10*24*time.Hour - time.Hour)}, pick(func(i int) bool { return i > 10 })},
		{"tag", PruneRule{Tag: "nightly"}, pick(func(i int) bool { return i%3 == 0 })},
		{"status", PruneRule{Statuses: []string{StatusFailed}}, pick(func(i int) bool { return i%5 == 4 })},
		{"age and tag", PruneRule{OlderThan: now.Add(-10*24*time.Hour - time.Hour), Tag: "nightly"},
			pick(func(i int) bool { return i > 10 && i%3 == 0 })},
		// Each of the four host × workload has runs i ≡ k (mod 4): its
		// newest two are i = k and k+4.
		{"keep 2", PruneRule{Keep: 2}, pick(func(i int) bool { return i >= 8 })},
		// The newest two are kept whatever their age: those older than
		// 5 days go, but not 5, 6 and 7 (the second newest of theirs).
		{"age keep 2", PruneRule{OlderThan: now.Add(-5*24*time.Hour + time.Hour), Keep: 2},
			pick(func(i int) bool { return i >= 8 })},
		{"status keep 1", PruneRule{Statuses: []string{StatusFailed}, Keep: 1},
			pick(func(i int) bool { return i%5 == 4 && i >= 4 })},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := s.PlanPrune(ctx, tc.rule)
			if err != nil {
				t.Fatal(err)
			}
			if got := planIDs(plan.Delete); !slices.Equal(got, tc.want) {
				t.Errorf("delete %v, want %v (kept %+v)", got, tc.want, plan.Kept)
			}
			var sum int64
			for _, r := range plan.Delete {
				if r.Bytes < 10_000 {
					t.Errorf("run %d: %d bytes, want those of two steps of 200 I/Os a direction", r.ID, r.Bytes)
				}
				sum += r.Bytes
			}
			if plan.Bytes != sum {
				t.Errorf("total %d, want the runs' sum %d", plan.Bytes, sum)
			}
			for _, r := range plan.Kept {
				if r.Kept == "" {
					t.Errorf("run %d kept without a reason", r.ID)
				}
			}
		})
	}
	// A plan deletes nothing.
	runs, err := s.ListRuns(ctx, RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != len(ids) {
		t.Errorf("%d runs after planning, want all %d", len(runs), len(ids))
	}
}

func TestPlanPruneRefuses(t *testing.T) {
	s, _ := openTest(t)
	for _, tc := range []struct {
		rule PruneRule
		want string
	}{
		{PruneRule{}, "say what to prune"},
		{PruneRule{Keep: -1}, "keep -1"},
		{PruneRule{Keep: MaxPruneKeep + 1}, "keep 1000001"},
		{PruneRule{OlderThan: time.Now().Add(time.Hour)}, "time to come"},
		{PruneRule{Statuses: []string{"done' OR 1=1 --"}}, "want one of"},
		{PruneRule{Tag: "a\x00b"}, "control characters"},
		{PruneRule{Tag: strings.Repeat("t", MaxLabelLen+1)}, "longer than"},
	} {
		_, err := s.PlanPrune(context.Background(), tc.rule)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.rule, err, tc.want)
		}
	}
	// A tag that looks like SQL is a tag: it matches nothing here.
	plan, err := s.PlanPrune(context.Background(), PruneRule{Tag: "x') OR 1=1 --"})
	if err != nil || len(plan.Delete) != 0 {
		t.Errorf("SQL-ish tag: %v, %v", plan, err)
	}
}

// TestPruneKeepsUnfinished: a queued or running run, a finished run of
// a group with a member still running, a run an agent has not uploaded,
// and one the caller protects all stay, each said why; the rest go with
// their steps, and a group left without runs goes.
func TestPruneKeepsUnfinished(t *testing.T) {
	s, _ := openTest(t)
	ctx := context.Background()
	ids := pruneLab(t, s, 8)
	if err := s.SetRunStatus(ctx, ids[1], StatusRunning, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.SetRunStatus(ctx, ids[2], StatusQueued, ""); err != nil {
		t.Fatal(err)
	}
	running := &FleetRun{Name: "fleet"}
	done := &FleetRun{Name: "over"}
	for _, g := range []*FleetRun{running, done} {
		if err := s.CreateFleetRun(ctx, g); err != nil {
			t.Fatal(err)
		}
	}
	for pos, m := range []struct {
		uid string
		id  int64
	}{{running.UID, ids[1]}, {running.UID, ids[3]}, {done.UID, ids[5]}, {done.UID, ids[6]}} {
		if err := s.AddFleetRunMember(ctx, m.uid, FleetRunMember{RunID: m.id, Position: pos, HostKind: HostAgent, HostName: "a"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddAgentRun(ctx, AgentRun{RunID: ids[4], Dashboard: "http://dash:8080", RemoteID: 9}); err != nil {
		t.Fatal(err)
	}
	rule := PruneRule{OlderThan: time.Now(), Protect: func(id int64) string {
		if id == ids[7] {
			return "leased"
		}
		return ""
	}}
	plan, err := s.PlanPrune(ctx, rule)
	if err != nil {
		t.Fatal(err)
	}
	why := map[int64]string{}
	for _, r := range plan.Kept {
		why[r.ID] = r.Kept
	}
	for id, want := range map[int64]string{ids[1]: "it is running", ids[2]: "it is queued",
		ids[3]: "its group 'fleet'", ids[4]: "not yet uploaded", ids[7]: "leased"} {
		if !strings.Contains(why[id], want) {
			t.Errorf("run %d kept for %q, want %q", id, why[id], want)
		}
	}
	if got, want := planIDs(plan.Delete), []int64{ids[0], ids[5], ids[6]}; !slices.Equal(got, want) {
		slices.Sort(want)
		t.Fatalf("delete %v, want %v", got, want)
	}
	// ids[0] starts running after the plan: the batch keeps it.
	if err := s.SetRunStatus(ctx, ids[0], StatusRunning, ""); err != nil {
		t.Fatal(err)
	}
	res, err := s.Prune(ctx, plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Skipped, []int64{ids[0]}) || len(res.Deleted) != 2 {
		t.Errorf("deleted %v, skipped %v: want run %d skipped", res.Deleted, res.Skipped, ids[0])
	}
	for _, id := range res.Deleted {
		if _, err := s.GetRun(ctx, id); err == nil {
			t.Errorf("run %d still there", id)
		}
	}
	var steps, groups int
	if err := s.read.QueryRow(`SELECT count(*) FROM steps WHERE run_id IN (?, ?)`, ids[5], ids[6]).Scan(&steps); err != nil {
		t.Fatal(err)
	}
	if err := s.read.QueryRow(`SELECT count(*) FROM run_groups WHERE uid = ?`, done.UID).Scan(&groups); err != nil {
		t.Fatal(err)
	}
	if steps != 0 || groups != 0 {
		t.Errorf("%d steps and %d groups of the deleted runs left", steps, groups)
	}
	for _, id := range []int64{ids[0], ids[1], ids[2], ids[3], ids[4], ids[7]} {
		if _, err := s.GetRun(ctx, id); err != nil {
			t.Errorf("kept run %d: %v", id, err)
		}
	}
	if _, err := s.GetFleetRun(ctx, running.UID); err != nil {
		t.Errorf("the running group: %v", err)
	}
}

// TestPruneGivesSpaceBack: a new store is incremental; after a prune its
// file shrinks by about what the runs held. A store made before that
// (auto_vacuum none) keeps its size until Vacuum switches and shrinks it.
func TestPruneGivesSpaceBack(t *testing.T) {
	ctx := context.Background()
	s, path := openTest(t)
	pruneLab(t, s, 30)
	before, err := s.Space(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if before.AutoVacuum != "incremental" {
		t.Fatalf("a new store's auto_vacuum is %s, want incremental", before.AutoVacuum)
	}
	plan, err := s.PlanPrune(ctx, PruneRule{Keep: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prune(ctx, plan, nil); err != nil {
		t.Fatal(err)
	}
	b, after, err := s.GiveBack(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("file %d → %d bytes (%d free pages before the vacuum), the runs' rows %d bytes",
		before.FileBytes, after.FileBytes, b.FreePages, plan.Bytes)
	if b.FreePages == 0 || after.FreePages != 0 || !after.Checkpointed || after.WALBytes != 0 {
		t.Errorf("free pages %d → %d, checkpointed %v, WAL %d bytes", b.FreePages, after.FreePages, after.Checkpointed, after.WALBytes)
	}
	if fi, _ := os.Stat(path); fi.Size() != after.FileBytes {
		t.Errorf("file %d bytes, space says %d", fi.Size(), after.FileBytes)
	}
	if gone := before.FileBytes - after.FileBytes; gone < plan.Bytes/2 {
		t.Errorf("the file shrank by %d bytes, want at least half the runs' %d", gone, plan.Bytes)
	}

	// An older store: auto_vacuum none.
	s2, _ := openTest(t)
	if _, err := s2.write.ExecContext(ctx, "PRAGMA auto_vacuum = NONE"); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.write.ExecContext(ctx, "VACUUM"); err != nil {
		t.Fatal(err)
	}
	pruneLab(t, s2, 30)
	plan, err = s2.PlanPrune(ctx, PruneRule{Keep: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Prune(ctx, plan, nil); err != nil {
		t.Fatal(err)
	}
	b, after, err = s2.GiveBack(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b.AutoVacuum != "none" || after.FreePages != b.FreePages || after.FreePages == 0 {
		t.Errorf("an older store: %s, free pages %d → %d, want none and kept", b.AutoVacuum, b.FreePages, after.FreePages)
	}
	b, after, err = s2.Vacuum(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.AutoVacuum != "incremental" || after.FreePages != 0 || after.FileBytes >= b.FileBytes {
		t.Errorf("vacuum: %s, %d → %d bytes, %d free pages", after.AutoVacuum, b.FileBytes, after.FileBytes, after.FreePages)
	}
}

func TestParsePruneAge(t *testing.T) {
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.Local)
	for _, tc := range []struct {
		in   string
		want time.Time
		err  string
	}{
		{in: "90d", want: now.Add(-90 * 24 * time.Hour)},
		{in: "12h", want: now.Add(-12 * time.Hour)},
		{in: "2w", want: now.Add(-14 * 24 * time.Hour)},
		{in: "0d", want: now},
		{in: "2026-01-31", want: time.Date(2026, 1, 31, 0, 0, 0, 0, time.Local)},
		{in: "2027-01-01", err: "a date to come"},
		{in: "-5d", err: "want a whole number"},
		{in: "1.5d", err: "want a whole number"},
		{in: "90", err: "want a whole number"},
		{in: "90 days", err: "want a whole number"},
		{in: "36600d", err: "a hundred years"},
		{in: "99999999999999999999d", err: "want a whole number"},
		{in: "1d' OR 1=1 --", err: "want a whole number"},
		{in: "", err: "want a whole number"},
	} {
		got, err := ParsePruneAge(tc.in, now)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: %v, want %q", tc.in, err, tc.err)
		case tc.err == "" && (err != nil || !got.Equal(tc.want)):
			t.Errorf("%q: %v, %v, want %v", tc.in, got, err, tc.want)
		}
	}
	if l, err := ParsePruneStatuses("failed, cancelled,failed"); err != nil || !slices.Equal(l, []string{"failed", "cancelled"}) {
		t.Errorf("statuses: %v, %v", l, err)
	}
	if _, err := ParsePruneStatuses("done;DELETE FROM runs"); err == nil {
		t.Error("a status that is not one was taken")
	}
}

// TestPruneWorkload: the workload a prune reads (the runs' workload
// column) is Workload's of the whole plan, sweeps of rw and bs included,
// for runs stored, imported, stored before the column (filled in when
// the store is opened), and whose column is still NULL (read from the
// plan).
func TestPruneWorkload(t *testing.T) {
	ctx := context.Background()
	s, path := openTest(t)
	for _, edit := range []func(r *Run){
		func(r *Run) {},
		func(r *Run) {
			r.Plan.Sweeps = append(r.Plan.Sweeps, sweep.Sweep{Axis: sweep.AxisRW, Values: []string{"randread", "randwrite"}})
		},
		func(r *Run) {
			r.Plan.Sweeps = append(r.Plan.Sweeps, sweep.Sweep{Axis: sweep.AxisBS, Values: []string{"4k", "64k"}})
			j := testJob("w", "write", 1, "psync")
			j.BS = 1 << 20
			r.Plan.Base.Groups = append(r.Plan.Base.Groups, bench.Group{ID: 1, Jobs: []bench.Job{j}})
		},
	} {
		r := testRun()
		r.Status = StatusDone
		edit(r)
		if _, err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	doc, err := os.ReadFile("testdata/randrw-io_uring-qd8.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ImportDocument(ctx, doc, ImportOptions{Hostname: "box7"}); err != nil {
		t.Fatal(err)
	}
	check := func(when string, wantNull int) {
		t.Helper()
		var null int
		if err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE workload IS NULL`).Scan(&null); err != nil || null != wantNull {
			t.Fatalf("%s: %d runs without a workload (%v), want %d", when, null, err, wantNull)
		}
		plan, err := s.PlanPrune(ctx, PruneRule{Statuses: []string{StatusDone}})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, p := range plan.Delete {
			full, err := s.GetRun(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			if want := Workload(*full); p.Workload != want || want == "" {
				t.Errorf("%s: run %d: workload %q, want %q", when, p.ID, p.Workload, want)
			}
			seen[p.Workload] = true
		}
		// The imported fio run's workload is the first stored run's.
		if len(plan.Delete) != 4 || len(seen) != 3 {
			t.Errorf("%s: %d runs, workloads %v; want four runs of three", when, len(plan.Delete), seen)
		}
	}
	check("stored and imported", 0)
	// Runs stored before 0011, as the migration leaves them: read from
	// their plans until the store is opened again, which fills them in.
	if _, err := s.write.ExecContext(ctx, `UPDATE runs SET workload = NULL`); err != nil {
		t.Fatal(err)
	}
	check("stored before 0011", 4)
	s.Close()
	if s, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check("opened again", 0)
}
