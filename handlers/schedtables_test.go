package handlers

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"
)

// seedSchedRun stores a finished run that sweeps schedulers, each step
// with a reader and a writer job: the fairness seed's shape.
func seedSchedRun(t testing.TB, store *db.Store, name string, schedulers []string) *db.Run {
	t.Helper()
	ctx := context.Background()
	args := []string{"--ioengine=null", "--size=1m", "--bs=4k", "--name=reader", "--rw=randread", "--name=writer", "--rw=randwrite"}
	cfg, err := fio.ParseArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	plan := &sweep.Plan{Name: name, Args: args, Base: *cfg, Repeat: 1,
		Sweeps: []sweep.Sweep{{Axis: sweep.AxisScheduler, Values: schedulers}}}
	steps, err := plan.Steps()
	if err != nil {
		t.Fatal(err)
	}
	run := &db.Run{Name: name, Status: db.StatusRunning, Plan: *plan, Host: system.HostInfo{Hostname: "lab", KernelRelease: "6.12.0"}}
	if _, err := store.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Hour)
	for i, st := range steps {
		var jobs []bench.JobResult
		for k, jn := range []string{"reader", "writer"} {
			job := bench.JobResult{Name: jn, Job: st.Config.Jobs[k], Start: start, Runtime: time.Second, Jobs: 1, Interval: time.Second}
			d := bench.Read
			if k == 1 {
				d = bench.Write
			}
			ios := uint64(1000 * (i + 1) * (k + 1))
			job.Dirs[d].IOs = ios
			job.Dirs[d].Bytes = ios * 4096
			job.Dirs[d].Lat.Add(uint64(100000 * (i + 1)))
			job.Dirs[d].Clat.Add(uint64(100000 * (i + 1)))
			jobs = append(jobs, job)
		}
		res := sweep.StepResult{Step: st, Status: sweep.StepDone, Start: start, End: start.Add(time.Second),
			Result: &bench.Result{Start: start, Groups: []bench.GroupResult{{ID: 0, Jobs: jobs}}}}
		if err := store.SaveStep(ctx, run.ID, &res); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.SetRunStatus(ctx, run.ID, db.StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	return run
}

func TestCompareSchedulerTables(t *testing.T) {
	ts := newTestServer(t, Config{})
	r1 := seedSchedRun(t, ts.store, "sched-a", []string{"none", "mq-deadline"})
	r2 := seedSchedRun(t, ts.store, "sched-b", []string{"bfq", "kyber"})
	id1, id2 := strconv.FormatInt(r1.ID, 10), strconv.FormatInt(r2.ID, 10)
	rec := ts.do(t, http.MethodGet, "/compare?runs="+id1+","+id2, "")
	if rec.Code != http.StatusOK {
		t.Fatalf("compare: %d %s", rec.Code, rec.Body)
	}
	body := rec.Body.String()
	for _, want := range []string{`id="scheduler-tables"`, `class="grid sched-rates" data-run="` + id1 + `"`,
		`class="grid sched-rates" data-run="` + id2 + `"`, `class="grid sched-jobs"`,
		"<td>mq-deadline</td>", "<td>kyber</td>", "<td>reader</td>", "<td>writer</td>",
		"table=schedulers", "table=jobs"} {
		if !strings.Contains(body, want) {
			t.Errorf("the compare page lacks %s", want)
		}
	}
	// Run 1, scheduler none: reader 1000 IOPS, writer 2000, each on its
	// own row; a reader and a writer are never added up.
	if !strings.Contains(body, "<td>none</td><td>reader</td><td>1</td><td>0</td><td>1000</td><td>1000</td><td>1000</td>") ||
		!strings.Contains(body, "<td>none</td><td>writer</td><td>1</td><td>0</td><td>2000</td><td>2000</td><td>2000</td>") {
		t.Error("the rows of scheduler none are not the reader's 1000 IOPS and the writer's 2000")
	}
	if strings.Contains(body, "3000") || strings.Contains(body, "<td>total</td>") {
		t.Error("the compare page adds the reader's IOPS to the writer's")
	}
	if !strings.Contains(body, "<td>none</td><td>writer</td><td>1</td><td>0</td><td>100</td><td>100</td><td>100</td><td>0.000</td><td>false</td><td>7.8</td>") {
		t.Errorf("the writer's mean latency under none is not 100 µs:\n%s", body[strings.Index(body, "sched-jobs"):][:900])
	}

	csv := readCSV(t, ts.do(t, http.MethodGet, "/compare/export.csv?table=jobs&run="+id1+"&run="+id2, "").Body.String())
	if len(csv) != 1+2*2*2 || csv[0][0] != "run" || csv[0][2] != "job" {
		t.Errorf("jobs CSV: %q", csv)
	}
	csv = readCSV(t, ts.do(t, http.MethodGet, "/compare/export.csv?table=schedulers&run="+id1+"&run="+id2, "").Body.String())
	if len(csv) != 1+2*2*2 || csv[1][0] != id1 || csv[1][1] != "none" || csv[1][2] != "reader" || csv[1][5] != "1000" {
		t.Errorf("schedulers CSV: %q", csv)
	}

	// Runs on the same scheduler, not sweeping it: no tables.
	ha, hb := compareHosts()
	p1, p2 := seedHostRun(t, ts.store, "plain-a", ha, 1), seedHostRun(t, ts.store, "plain-b", hb, 1)
	body = ts.do(t, http.MethodGet, "/compare?runs="+strconv.FormatInt(p1.ID, 10)+","+strconv.FormatInt(p2.ID, 10), "").Body.String()
	if strings.Contains(body, "scheduler-tables") {
		t.Error("scheduler tables on runs that neither sweep nor differ by scheduler")
	}
}
