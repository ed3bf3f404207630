// Package dbtest stores runs for the tests of db's users: the command
// line's and the dashboard's tests of the same store (their prunes) seed
// it through one helper. Tests only: nothing else imports it.
package dbtest

import (
	"context"
	"slices"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/sweep"
	"iolab/db"
)

// Host is the host every run Store stores ran on.
const Host = "lab-7"

// Run is a run Store stores: finished (db.StatusDone) unless Status
// says otherwise, created now unless Created is set, with Steps steps
// done, each a second of 1000 reads.
type Run struct {
	Name    string
	Status  string
	Created time.Time
	Tags    []string
	Steps   int
}

// Store stores runs in store, in order, all of Host and of one workload
// (fio's randread of 4k blocks on /tmp/f), and returns their ids.
func Store(t testing.TB, store *db.Store, runs ...Run) []int64 {
	t.Helper()
	ctx := context.Background()
	args := []string{"--name=j", "--filename=/tmp/f", "--rw=randread", "--bs=4k"}
	cfg, err := fio.ParseArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, r := range runs {
		plan := sweep.Plan{Name: "j", Args: args, Base: *cfg, Repeat: max(r.Steps, 1)}
		steps, err := plan.Steps()
		if err != nil {
			t.Fatal(err)
		}
		run := &db.Run{Name: r.Name, Status: r.Status, Created: r.Created, Tags: r.Tags, Plan: plan}
		if run.Status == "" {
			run.Status = db.StatusDone
		}
		run.Hostname = Host
		id, err := store.CreateRun(ctx, run)
		if err != nil {
			t.Fatalf("run %s: %v", r.Name, err)
		}
		for _, st := range steps[:r.Steps] {
			res := doneStep(st)
			if err := store.SaveStep(ctx, id, &res); err != nil {
				t.Fatalf("run %s: %v", r.Name, err)
			}
		}
		ids = append(ids, id)
	}
	return ids
}

// doneStep is step st done: a second of 1000 reads of 4 KiB.
func doneStep(st sweep.Step) sweep.StepResult {
	start := time.Now().Add(-time.Hour)
	job := bench.JobResult{Name: "j", Job: st.Config.Jobs[0], Start: start, Runtime: time.Second, Jobs: 1, Interval: time.Second}
	const ios = 1000
	job.Dirs[bench.Read].IOs = ios
	job.Dirs[bench.Read].Bytes = ios * 4096
	for k := range uint64(ios) {
		job.Dirs[bench.Read].Clat.Add(10000 + k*10)
	}
	return sweep.StepResult{Step: st, Status: sweep.StepDone, Start: start, End: start.Add(time.Second),
		Result: &bench.Result{Start: start, Groups: []bench.GroupResult{{Jobs: []bench.JobResult{job}}}}}
}

// IDs are the ids of the runs in store, in order.
func IDs(t testing.TB, store *db.Store) []int64 {
	t.Helper()
	runs, err := store.ListRuns(context.Background(), db.RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	slices.Sort(ids)
	return ids
}
