package db

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/sweep"
	"iolab/bench/verify"
	"iolab/migrations"
)

func TestMigrationsFromEmptyAndReopen(t *testing.T) {
	ctx := context.Background()
	want, err := loadMigrations(migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	if len(want) == 0 {
		t.Fatal("no migrations embedded")
	}
	s, path := openTest(t)
	if v, err := s.SchemaVersion(ctx); err != nil || v != len(want) {
		t.Fatalf("schema version %d, %v; want %d", v, err, len(want))
	}
	var tables []string
	rows, err := s.read.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	for _, n := range []string{"runs", "samples", "scheduler_restores", "step_results", "steps"} {
		if !slices.Contains(tables, n) {
			t.Errorf("table %s missing; have %v", n, tables)
		}
	}
	var mode string
	if err := s.write.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode %q, %v; want wal", mode, err)
	}
	var fk int
	if err := s.read.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
		t.Errorf("foreign_keys %d, %v; want 1", fk, err)
	}
	id, err := s.CreateRun(ctx, testRun())
	if err != nil {
		t.Fatal(err)
	}
	s.SetRunStatus(ctx, id, StatusDone, "")
	s.Close()

	// Re-applying 0001 would fail on CREATE TABLE; the version stays and
	// the data is there.
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if v, err := s2.SchemaVersion(ctx); err != nil || v != len(want) {
		t.Fatalf("after reopen: schema version %d, %v; want %d", v, err, len(want))
	}
	if _, err := s2.GetRun(ctx, id); err != nil {
		t.Fatalf("after reopen: %v", err)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	ctx := context.Background()
	s, path := openTest(t)
	if _, err := s.write.ExecContext(ctx, "PRAGMA user_version = 999"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s2, err := Open(ctx, path); err == nil {
		s2.Close()
		t.Fatal("opened a database with schema version 999")
	} else if !strings.Contains(err.Error(), "newer") {
		t.Errorf("error %q does not say the schema is newer", err)
	}
}

func TestLoadMigrations(t *testing.T) {
	file := &fstest.MapFile{Data: []byte("SELECT 1;")}
	tests := []struct {
		name    string
		fs      fstest.MapFS
		want    []int
		wantErr string
	}{
		{"ordered", fstest.MapFS{"0002_b.sql": file, "0001_a.sql": file, "README": file}, []int{1, 2}, ""},
		{"gap", fstest.MapFS{"0001_a.sql": file, "0003_c.sql": file}, nil, "version 3, want 2"},
		{"twice", fstest.MapFS{"0001_a.sql": file, "0001_b.sql": file}, nil, "want 2"},
		{"no number", fstest.MapFS{"init.sql": file}, nil, "NNNN_name.sql"},
		{"zero", fstest.MapFS{"0000_a.sql": file}, nil, "NNNN_name.sql"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list, err := loadMigrations(tt.fs)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, m := range list {
				got = append(got, m.version)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("versions %v, want %v", got, tt.want)
			}
		})
	}
}

func TestOpenCreatesDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "c.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), path+"?mode=ro"); err == nil {
		t.Error("opened a path with a query string")
	}
}

func TestDefaultPath(t *testing.T) {
	t.Setenv("HOME", "/home/u")
	tests := []struct{ xdg, want string }{
		{"/data", "/data/iolab/iolab.db"},
		{"", "/home/u/.local/share/iolab/iolab.db"},
		{"relative", "/home/u/.local/share/iolab/iolab.db"}, // the XDG spec says to ignore it
	}
	for _, tt := range tests {
		t.Setenv("XDG_DATA_HOME", tt.xdg)
		if got, err := DefaultPath(); err != nil || got != tt.want {
			t.Errorf("XDG_DATA_HOME=%q: %q, %v; want %q", tt.xdg, got, err, tt.want)
		}
	}
}

func TestRunWithStepsRoundTrips(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	rng := rand.New(rand.NewPCG(1, 2))
	run := testRun()
	id, err := s.CreateRun(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if id == 0 || run.ID != id {
		t.Fatalf("CreateRun returned %d and set ID %d", id, run.ID)
	}
	want := []sweep.StepResult{
		testStep(rng, 0, 5000, 60, false),
		testStep(rng, 1, 3000, 60, true),
		failedStep(2),
		testStep(rng, 3, 2000, 150, false), // more samples than one INSERT batch
	}
	// A job's verification is kept apart from its measured I/O.
	v := &bench.VerifyResult{Method: "crc32c", Reads: bench.DirResult{IOs: 3, Bytes: 12288}, Runtime: 5e6, StateFile: "local-a-0-verify.state",
		Failed: &verify.Error{Job: "a", File: "/dev/x", Method: "crc32c", Offset: 4096, Length: 4096, Expected: "01020304", Received: "05060708", BadIntervals: 1}}
	v.Reads.Clat.Add(1500)
	want[1].Result.Groups[0].Jobs[0].Verify = v
	for _, st := range want {
		if st.Result != nil {
			if n := len(st.Result.Groups[0].Jobs[0].Dirs[0].Clat.Hist.Bins()); n < 100 {
				t.Fatalf("test histogram has only %d buckets", n)
			}
		}
		if err := s.SaveStep(ctx, id, &st); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Steps(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d steps, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("step %d differs:\n got %s\nwant %s", i, describeStep(got[i]), describeStep(want[i]))
		}
		if want[i].Result == nil {
			continue
		}
		for gi, g := range want[i].Result.Groups {
			for ji, j := range g.Jobs {
				for d := range j.Dirs {
					w, g := &j.Dirs[d], &got[i].Result.Groups[gi].Jobs[ji].Dirs[d]
					for _, pair := range [][2]*hist.Lat{{&w.Slat, &g.Slat}, {&w.Clat, &g.Clat}, {&w.Lat, &g.Lat}} {
						wp, gp := pair[0].Hist.Percentiles(hist.DefaultPercentiles()), pair[1].Hist.Percentiles(hist.DefaultPercentiles())
						if !slices.Equal(wp, gp) || pair[0].Stat.Stddev() != pair[1].Stat.Stddev() {
							t.Errorf("step %d group %d job %d dir %d: percentiles %v, want %v", i, gi, ji, d, gp, wp)
						}
					}
				}
			}
		}
	}

	r, err := s.GetRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if r.Steps != len(want) {
		t.Errorf("run has %d steps, want %d", r.Steps, len(want))
	}
	wantRun := *run
	wantRun.Steps = len(want)
	// SaveStep adds the failed step's engine and the schedulers it ran
	// under to what CreateRun took from the plan's sweeps.
	wantRun.Engines = []string{"io_uring", "io_uring+sqpoll", "io_uring+hipri"}
	wantRun.Schedulers = []string{"mq-deadline"}
	if !reflect.DeepEqual(*r, wantRun) {
		t.Errorf("run:\n got %+v\nwant %+v", *r, wantRun)
	}
	if r.Hostname != "lab1" || r.Kernel != "6.12.0-test" || r.Target != "/dev/nvme0n1" || r.Source != SourceLocal {
		t.Errorf("run summary %q %q %q %q", r.Hostname, r.Kernel, r.Target, r.Source)
	}
}

// describeStep describes a step result briefly, for failure messages.
func describeStep(st sweep.StepResult) string {
	var b strings.Builder
	b.WriteString(st.Status + " " + st.Start.String())
	if st.Result != nil {
		for _, g := range st.Result.Groups {
			for _, j := range g.Jobs {
				b.WriteString(" [" + j.Name + " " + j.Start.String() + "]")
			}
		}
	}
	return b.String()
}

func TestSaveStepReplacesSameSeq(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	id, err := s.CreateRun(ctx, testRun())
	if err != nil {
		t.Fatal(err)
	}
	running := sweep.StepResult{Step: sweep.Step{Seq: 0}, Status: "running", Start: at(0)}
	if err := s.SaveStep(ctx, id, &running); err != nil {
		t.Fatal(err)
	}
	done := testStep(rand.New(rand.NewPCG(3, 4)), 0, 500, 5, true)
	if err := s.SaveStep(ctx, id, &done); err != nil {
		t.Fatal(err)
	}
	got, err := s.Steps(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || !reflect.DeepEqual(got[0], done) {
		t.Fatalf("got %d steps (%v), want the done one", len(got), got)
	}
	var n int
	s.read.QueryRowContext(ctx, `SELECT count(*) FROM step_results`).Scan(&n)
	if n != 3 {
		t.Errorf("%d step_results rows, want 3 (the first save's are gone)", n)
	}
}

func TestSetRunStatus(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	r := testRun()
	r.Status = ""
	id, err := s.CreateRun(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := s.GetRun(ctx, id)
	if got.Status != StatusQueued || !got.Started.IsZero() || !got.Finished.IsZero() {
		t.Fatalf("new run: status %s, started %v, finished %v", got.Status, got.Started, got.Finished)
	}
	before := time.Now()
	if err := s.SetRunStatus(ctx, id, StatusRunning, ""); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetRun(ctx, id)
	if got.Status != StatusRunning || got.Started.Before(before) || !got.Finished.IsZero() {
		t.Fatalf("running: status %s, started %v, finished %v", got.Status, got.Started, got.Finished)
	}
	started := got.Started
	if err := s.SetRunStatus(ctx, id, StatusRunning, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.SetRunStatus(ctx, id, StatusFailed, "step 3: device gone"); err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetRun(ctx, id)
	if got.Status != StatusFailed || !got.Started.Equal(started) || got.Finished.Before(started) || got.Error != "step 3: device gone" {
		t.Fatalf("failed: status %s, started %v (was %v), finished %v, error %q", got.Status, got.Started, started, got.Finished, got.Error)
	}
	if err := s.SetRunStatus(ctx, id, "exploded", ""); err == nil {
		t.Error("SetRunStatus took an unknown status")
	}
	bad := testRun()
	bad.Source = "carrier pigeon"
	if _, err := s.CreateRun(ctx, bad); err == nil {
		t.Error("CreateRun took an unknown source")
	}
}

// deadOwner is a process that cannot be running: another boot's.
var deadOwner = owner{Boot: "00000000-dead-beef-0000-000000000000", PID: 1, Start: 1}

func TestOpenMarksRunsOfDeadProcessesInterrupted(t *testing.T) {
	ctx := context.Background()
	s, path := openTest(t)
	rng := rand.New(rand.NewPCG(5, 6))

	// A live process's run (this test's own): another Open must not touch
	// it, as when `iolab runs` opens the database a dashboard is running
	// a sweep in.
	live, err := s.CreateRun(ctx, testRun())
	if err != nil {
		t.Fatal(err)
	}
	s.self = deadOwner
	ids := map[string]int64{}
	for _, status := range []string{StatusRunning, StatusQueued, StatusDone} {
		r := testRun()
		r.Status = status
		if ids[status], err = s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	// The running one finished two steps and was in its third.
	for seq := range 2 {
		st := testStep(rng, seq, 1000, 10, false)
		if err := s.SaveStep(ctx, ids[StatusRunning], &st); err != nil {
			t.Fatal(err)
		}
	}
	third := sweep.StepResult{Step: sweep.Step{Seq: 2}, Status: "running", Start: at(200)}
	if err := s.SaveStep(ctx, ids[StatusRunning], &third); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	want := []int64{ids[StatusRunning], ids[StatusQueued]}
	if got := s2.Interrupted(); !slices.Equal(got, want) {
		t.Errorf("Interrupted() = %v, want %v", got, want)
	}
	for _, tt := range []struct {
		id     int64
		status string
	}{
		{live, StatusRunning},
		{ids[StatusRunning], StatusInterrupted},
		{ids[StatusQueued], StatusInterrupted},
		{ids[StatusDone], StatusDone},
	} {
		r, err := s2.GetRun(ctx, tt.id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != tt.status {
			t.Errorf("run %d: status %s, want %s", tt.id, r.Status, tt.status)
		}
		if tt.status == StatusInterrupted && (r.Finished.IsZero() || r.Error == "") {
			t.Errorf("run %d: interrupted without finish time (%v) or error (%q)", tt.id, r.Finished, r.Error)
		}
	}
	steps, err := s2.Steps(ctx, ids[StatusRunning])
	if err != nil {
		t.Fatal(err)
	}
	var statuses []string
	for _, st := range steps {
		statuses = append(statuses, st.Status)
	}
	if want := []string{"done", "done", "interrupted"}; !slices.Equal(statuses, want) {
		t.Errorf("step statuses %v, want %v", statuses, want)
	}
	if steps[1].Result == nil || steps[1].Result.Groups[0].Jobs[0].Dirs[0].IOs != 1000 {
		t.Errorf("finished step lost its results")
	}
}

func TestListRunsFilters(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	type spec struct {
		host, kernel, target, status string
		engines, scheds, tags        []string
	}
	specs := []spec{
		{"lab1", "6.12", "/dev/nvme0n1", StatusDone, []string{"io_uring", "libaio"}, []string{"none"}, []string{"a"}},
		{"lab1", "6.1", "/dev/nvme0n1", StatusFailed, []string{"io_uring+sqpoll"}, []string{"bfq", "kyber"}, nil},
		{"lab2", "6.12", "/dev/sdb", StatusDone, []string{"psync"}, []string{"mq-deadline"}, []string{"a", "b"}},
		{"lab2", "6.1", "/tmp/f", StatusCancelled, []string{"io_uring"}, nil, []string{"b"}},
	}
	var ids []int64
	for i, sp := range specs {
		r := &Run{Name: "r", Status: sp.status, Created: at(i), Hostname: sp.host, Kernel: sp.kernel,
			Target: sp.target, Engines: sp.engines, Schedulers: sp.scheds, Tags: sp.tags, Host: testHost()}
		id, err := s.CreateRun(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	tests := []struct {
		name   string
		filter RunFilter
		want   []int // indexes into specs, newest first
	}{
		{"all", RunFilter{}, []int{3, 2, 1, 0}},
		{"limit", RunFilter{Limit: 2}, []int{3, 2}},
		{"hostname", RunFilter{Hostname: "lab1"}, []int{1, 0}},
		{"kernel", RunFilter{Kernel: "6.12"}, []int{2, 0}},
		{"target", RunFilter{Target: "/dev/nvme0n1"}, []int{1, 0}},
		{"status", RunFilter{Status: StatusDone}, []int{2, 0}},
		// io_uring's '_' would be a LIKE wildcard: it must match exactly.
		{"engine", RunFilter{Engine: "io_uring"}, []int{3, 0}},
		{"engine variant", RunFilter{Engine: "io_uring+sqpoll"}, []int{1}},
		{"scheduler", RunFilter{Scheduler: "kyber"}, []int{1}},
		{"tag", RunFilter{Tag: "b"}, []int{3, 2}},
		{"combined", RunFilter{Hostname: "lab2", Tag: "a"}, []int{2}},
		{"nothing", RunFilter{Hostname: "lab3"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs, err := s.ListRuns(ctx, tt.filter)
			if err != nil {
				t.Fatal(err)
			}
			var got, want []int64
			for _, r := range runs {
				got = append(got, r.ID)
			}
			for _, i := range tt.want {
				want = append(want, ids[i])
			}
			if !slices.Equal(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
}

func TestNotFound(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	st := testStep(rand.New(rand.NewPCG(1, 1)), 0, 10, 1, false)
	tests := []struct {
		name string
		call func() error
	}{
		{"GetRun", func() error { _, err := s.GetRun(ctx, 42); return err }},
		{"SetRunStatus", func() error { return s.SetRunStatus(ctx, 42, StatusDone, "") }},
		{"DeleteRun", func() error { return s.DeleteRun(ctx, 42) }},
		{"Steps", func() error { _, err := s.Steps(ctx, 42); return err }},
		{"SaveStep", func() error { return s.SaveStep(ctx, 42, &st) }},
		{"Export", func() error { _, err := s.Export(ctx, 42); return err }},
		{"ClearSchedulerRestore", func() error { return s.ClearSchedulerRestore(ctx, 42) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, ErrNotFound) {
				t.Fatalf("err %v, want ErrNotFound", err)
			}
			if !strings.Contains(err.Error(), "42") {
				t.Errorf("error %q does not name the id", err)
			}
		})
	}
}

func TestDeleteRunCascades(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	rng := rand.New(rand.NewPCG(7, 8))
	var ids []int64
	for range 2 {
		id, err := s.CreateRun(ctx, testRun())
		if err != nil {
			t.Fatal(err)
		}
		for seq := range 3 {
			st := testStep(rng, seq, 200, 10, true)
			if err := s.SaveStep(ctx, id, &st); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, id)
	}
	count := func() (n [3]int) {
		for i, table := range []string{"steps", "step_results", "samples"} {
			if err := s.read.QueryRowContext(ctx, `SELECT count(*) FROM `+table).Scan(&n[i]); err != nil {
				t.Fatal(err)
			}
		}
		return n
	}
	// 3 steps × 3 job results (one without samples) × 10 samples, per run.
	if got, want := count(), [3]int{6, 18, 120}; got != want {
		t.Fatalf("before delete: %v rows, want %v", got, want)
	}
	if err := s.DeleteRun(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if got, want := count(), [3]int{3, 9, 60}; got != want {
		t.Fatalf("after delete: %v rows, want %v", got, want)
	}
	if steps, err := s.Steps(ctx, ids[1]); err != nil || len(steps) != 3 {
		t.Fatalf("other run: %d steps, %v", len(steps), err)
	}
}

func TestSchedulerRestores(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	id, err := s.CreateRun(ctx, testRun()) // running, by this live process
	if err != nil {
		t.Fatal(err)
	}
	first, err := s.AddSchedulerRestore(ctx, id, "nvme0n1", "none")
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.AddSchedulerRestore(ctx, id, "loop3", "mq-deadline")
	if err != nil {
		t.Fatal(err)
	}
	list, err := s.SchedulerRestores(ctx)
	if err != nil || len(list) != 0 {
		t.Fatalf("a running run's restores are listed: %v, %v", list, err)
	}
	if err := s.SetRunStatus(ctx, id, StatusInterrupted, ""); err != nil {
		t.Fatal(err)
	}
	list, err = s.SchedulerRestores(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != second || list[1].ID != first {
		t.Fatalf("restores %+v, want ids %d, %d", list, second, first)
	}
	if r := list[1]; r.RunID != id || r.Disk != "nvme0n1" || r.Original != "none" || time.Since(r.Created) > time.Minute {
		t.Errorf("restore %+v", r)
	}
	if err := s.ClearSchedulerRestore(ctx, second); err != nil {
		t.Fatal(err)
	}
	// Deleting the run must not forget the disk still to restore.
	if err := s.DeleteRun(ctx, id); err != nil {
		t.Fatal(err)
	}
	list, err = s.SchedulerRestores(ctx)
	if err != nil || len(list) != 1 || list[0].ID != first {
		t.Fatalf("after clear and delete: %+v, %v; want restore %d", list, err, first)
	}
}

func TestBins(t *testing.T) {
	var h hist.Histogram
	for _, v := range []uint64{0, 1, 127, 128, 129, 1000, 1_000_000, 5_000_000_000, 1 << 40} {
		h.Add(v)
		h.Add(v)
	}
	var scratch []byte
	text := encodeBins(&scratch, &h)
	if !text.Valid {
		t.Fatal("NULL bins for a non-empty histogram")
	}
	var got hist.Histogram
	if err := decodeBins(text.String, &got); err != nil || got != h {
		t.Fatalf("round trip: %v; %s", err, text.String)
	}
	if e := encodeBins(&scratch, &hist.Histogram{}); e.Valid {
		t.Errorf("empty histogram stored as %q, want NULL", e.String)
	}
	tests := []struct {
		text    string
		want    map[uint64]uint64
		wantErr bool
	}{
		{`{"1":2,"1004":3}`, map[uint64]uint64{1: 2, 1004: 3}, false},
		{`{ "1": 2, "1004" : 3 }`, map[uint64]uint64{1: 2, 1004: 3}, false}, // not ours, but JSON
		{`{}`, map[uint64]uint64{}, false},
		{`{"1000":3}`, nil, true}, // not a bucket midpoint (1004 is)
		{`{"1":2,}`, nil, true},
		{`[1,2]`, nil, true},
	}
	for _, tt := range tests {
		var h hist.Histogram
		err := decodeBins(tt.text, &h)
		if tt.wantErr {
			if err == nil {
				t.Errorf("%s: no error", tt.text)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.text, err)
			continue
		}
		if bins := h.Bins(); !reflect.DeepEqual(bins, tt.want) {
			t.Errorf("%s: bins %v, want %v", tt.text, bins, tt.want)
		}
	}
}

func TestSaveStepAddsEnginesAndSchedulers(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	run := testRun()
	run.Plan.Sweeps = nil // nothing to take from the plan
	id, err := s.CreateRun(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := s.GetRun(ctx, id); r.Engines != nil || r.Schedulers != nil {
		t.Fatalf("new run without sweeps: engines %v, schedulers %v", r.Engines, r.Schedulers)
	}
	rng := rand.New(rand.NewPCG(1, 3))
	steps := []struct {
		engine    string // the job's engine
		sqpoll    bool
		active    map[string]string
		wantEng   []string
		wantSched []string
	}{
		{"libaio", false, map[string]string{"sdb": "bfq"}, []string{"libaio"}, []string{"bfq"}},
		{"io_uring", true, map[string]string{"sdb": "bfq", "sdc": "kyber"}, []string{"libaio", "io_uring+sqpoll"}, []string{"bfq", "kyber"}},
		{"libaio", false, nil, []string{"libaio", "io_uring+sqpoll"}, []string{"bfq", "kyber"}},
	}
	for i, tt := range steps {
		st := testStep(rng, i, 100, 2, false)
		st.Step.Axes, st.Step.Scheduler, st.Schedulers = nil, "", tt.active
		job := &st.Result.Groups[0].Jobs[0].Job
		job.IOEngine, job.SQThreadPoll = tt.engine, tt.sqpoll
		if err := s.SaveStep(ctx, id, &st); err != nil {
			t.Fatal(err)
		}
		r, err := s.GetRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.Engines, tt.wantEng) || !slices.Equal(r.Schedulers, tt.wantSched) {
			t.Errorf("after step %d: engines %v, schedulers %v; want %v, %v", i, r.Engines, r.Schedulers, tt.wantEng, tt.wantSched)
		}
	}
	if runs, err := s.ListRuns(ctx, RunFilter{Engine: "io_uring+sqpoll", Scheduler: "kyber"}); err != nil || len(runs) != 1 {
		t.Errorf("filter on what the steps added: %d runs, %v", len(runs), err)
	}
}

// TestRunIDsNeverReused: deleting the newest run does not give its id to
// the next one, across a reopen too.
func TestRunIDsNeverReused(t *testing.T) {
	ctx := context.Background()
	s, path := openTest(t)
	var ids []int64
	for range 3 {
		r := &Run{Name: "r", Status: StatusDone, Host: testHost()}
		id, err := s.CreateRun(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := s.DeleteRun(ctx, ids[2]); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	id, err := s2.CreateRun(ctx, &Run{Name: "next", Status: StatusDone, Host: testHost()})
	if err != nil {
		t.Fatal(err)
	}
	if id <= ids[2] {
		t.Fatalf("new run got id %d after run %d was deleted; ids must not be reused", id, ids[2])
	}
}

// TestOpenRefusesForeignFiles: a file that is not iolab's store is refused
// and left exactly as it was (no WAL switch, no tables added).
func TestOpenRefusesForeignFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	text := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(text, []byte("hello, not a database\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.db")
	odb, err := sql.Open("sqlite", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := odb.Exec("CREATE TABLE contacts (name TEXT)"); err != nil {
		t.Fatal(err)
	}
	odb.Close()
	for _, tc := range []struct{ path, want string }{
		{text, "not a SQLite database"},
		{other, "a SQLite database of something else"},
		{dir, "not a regular file"},
	} {
		before, _ := os.ReadFile(tc.path)
		s, err := Open(ctx, tc.path)
		if err == nil {
			s.Close()
			t.Errorf("%s: opened", tc.path)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.path, err, tc.want)
		}
		if after, _ := os.ReadFile(tc.path); !bytes.Equal(before, after) {
			t.Errorf("%s changed on a refused open", tc.path)
		}
		if _, err := os.Stat(tc.path + "-wal"); err == nil {
			t.Errorf("%s: a WAL file appeared", tc.path)
		}
	}
}
