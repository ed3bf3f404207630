package db

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"iolab/bench/sweep"
)

func TestExportImportRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	rng := rand.New(rand.NewPCG(11, 12))
	run := testRun()
	id, err := s.CreateRun(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	steps := []sweep.StepResult{testStep(rng, 0, 2000, 20, true), failedStep(1), testStep(rng, 2, 2000, 20, false)}
	for i := range steps {
		if err := s.SaveStep(ctx, id, &steps[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetRunStatus(ctx, id, StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	exp, err := s.Export(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if exp.Format != ExportFormat || exp.Version != ExportVersion || exp.Run.ID != id || !reflect.DeepEqual(exp.Steps, steps) {
		t.Fatalf("export: format %q version %d run %d, steps equal %v", exp.Format, exp.Version, exp.Run.ID, reflect.DeepEqual(exp.Steps, steps))
	}

	// Through a file, as `iolab export` and `iolab import` move it.
	doc, err := json.Marshal(exp)
	if err != nil {
		t.Fatal(err)
	}
	var read Export
	if err := json.Unmarshal(doc, &read); err != nil {
		t.Fatal(err)
	}
	if len(exp.Run.UID) != 32 {
		t.Fatalf("run uid %q, want 32 hex digits", exp.Run.UID)
	}
	// Into another store, as on another machine; a run there first makes
	// the ids differ.
	other, _ := openTest(t)
	if _, err := other.CreateRun(ctx, testRun()); err != nil {
		t.Fatal(err)
	}
	newID, existed, err := other.ImportRun(ctx, &read, SourceImport)
	if err != nil || existed {
		t.Fatal(existed, err)
	}
	if newID == id {
		t.Fatal("import reused the run's id")
	}
	// The same run again, twice: one copy.
	for _, st := range []*Store{other, s} {
		dupID, existed, err := st.ImportRun(ctx, &read, SourcePush)
		if err != nil || !existed {
			t.Fatalf("second import: existed %v, %v", existed, err)
		}
		if want := map[*Store]int64{other: newID, s: id}[st]; dupID != want {
			t.Errorf("second import: id %d, want the existing %d", dupID, want)
		}
	}
	if runs, err := other.ListRuns(ctx, RunFilter{}); err != nil || len(runs) != 2 {
		t.Errorf("%d runs after importing one run twice, %v", len(runs), err)
	}
	s = other
	again, err := s.Export(ctx, newID)
	if err != nil {
		t.Fatal(err)
	}
	if again.Run.Source != SourceImport || again.Run.Status != StatusDone {
		t.Errorf("imported run: source %s status %s", again.Run.Source, again.Run.Status)
	}
	if again.Run.UID != exp.Run.UID {
		t.Errorf("uid %q, want %q", again.Run.UID, exp.Run.UID)
	}
	again.Run.ID, again.Run.Source = exp.Run.ID, exp.Run.Source
	doc2, err := json.Marshal(again)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(doc, doc2) {
		t.Errorf("export → import → export differs:\n%s\n%s", firstDiff(doc, doc2), "")
	}
	if !reflect.DeepEqual(again.Steps, steps) {
		t.Error("imported steps differ from the saved ones")
	}
}

// firstDiff shows where two documents part.
func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-80)
	return "…" + string(a[lo:min(len(a), i+80)]) + "\n…" + string(b[lo:min(len(b), i+80)])
}

func TestImportRejects(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	good := func() *Export {
		r := *testRun()
		r.Status = StatusDone
		return &Export{Format: ExportFormat, Version: ExportVersion, Run: r,
			Steps: []sweep.StepResult{failedStep(0)}}
	}
	tests := []struct {
		name   string
		edit   func(*Export)
		source string
		want   string
	}{
		{"format", func(e *Export) { e.Format = "fio" }, SourceImport, "format"},
		{"version", func(e *Export) { e.Version = 99 }, SourceImport, "version 99"},
		{"status", func(e *Export) { e.Run.Status = "weird" }, SourceImport, "status"},
		{"still running", func(e *Export) { e.Run.Status = StatusRunning }, SourceImport, "must have ended"},
		{"queued", func(e *Export) { e.Run.Status = StatusQueued }, SourceImport, "must have ended"},
		{"long name", func(e *Export) { e.Run.Name = strings.Repeat("n", 10000) }, SourceImport, "longer than 200"},
		{"escape in name", func(e *Export) { e.Run.Name = "a\x1b[2Jb" }, SourceImport, "control characters"},
		{"NUL in name", func(e *Export) { e.Run.Name = "a\x00b" }, SourceImport, "control characters"},
		{"bidi override in name", func(e *Export) { e.Run.Name = "a\u202eb" }, SourceImport, "control characters"},
		{"500 labels", func(e *Export) {
			for i := range 500 {
				e.Run.Tags = append(e.Run.Tags, fmt.Sprint("l", i))
			}
		}, SourceImport, "at most 50"},
		{"control in label", func(e *Export) { e.Run.Tags = []string{"a\x07"} }, SourceImport, "control characters"},
		{"huge hostname", func(e *Export) { e.Run.Hostname = strings.Repeat("h", 1<<20) }, SourceImport, "hostname is longer than 255"},
		{"huge host's hostname", func(e *Export) { e.Run.Host.Hostname = strings.Repeat("h", 256) }, SourceImport, "longer than 255"},
		{"control in kernel", func(e *Export) { e.Run.Kernel = "6.1\x1b]0;x\x07" }, SourceImport, "control characters"},
		{"control in target", func(e *Export) { e.Run.Target = "/dev/\x00" }, SourceImport, "control characters"},
		{"too many engines", func(e *Export) { e.Run.Engines = make([]string, 65) }, SourceImport, "at most 64"},
		{"source", func(e *Export) {}, "email", "source"},
		{"bad uid", func(e *Export) { e.Run.UID = "x'; DROP TABLE runs" }, SourceImport, "uid"},
		{"duplicate seq", func(e *Export) { e.Steps = append(e.Steps, failedStep(0)) }, SourceImport, "seq 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := good()
			tt.edit(e)
			if _, err := s.Import(ctx, e, tt.source); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want one containing %q", err, tt.want)
			}
		})
	}
	// Nothing half-imported.
	if runs, err := s.ListRuns(ctx, RunFilter{}); err != nil || len(runs) != 0 {
		t.Errorf("%d runs after failed imports, %v", len(runs), err)
	}
	if _, err := s.Import(ctx, good(), SourcePush); err != nil {
		t.Fatal(err)
	}
}

// TestExportImportFieldByField compares the imported run with the
// exported one field by field (not only as JSON).
func TestExportImportFieldByField(t *testing.T) {
	ctx := context.Background()
	s, _ := openTest(t)
	rng := rand.New(rand.NewPCG(3, 4))
	run := testRun()
	id, err := s.CreateRun(ctx, run)
	if err != nil {
		t.Fatal(err)
	}
	steps := []sweep.StepResult{testStep(rng, 0, 500, 5, true), testStep(rng, 1, 500, 5, false)}
	for i := range steps {
		if err := s.SaveStep(ctx, id, &steps[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SetRunStatus(ctx, id, StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	exp, err := s.Export(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := json.Marshal(exp)
	if err != nil {
		t.Fatal(err)
	}
	var read Export
	if err := json.Unmarshal(doc, &read); err != nil {
		t.Fatal(err)
	}
	other, _ := openTest(t)
	newID, err := other.Import(ctx, &read, SourceImport)
	if err != nil {
		t.Fatal(err)
	}
	got, err := other.Export(ctx, newID)
	if err != nil {
		t.Fatal(err)
	}
	want := exp.Run
	want.ID, want.Source = newID, SourceImport
	gv, wv := reflect.ValueOf(got.Run), reflect.ValueOf(want)
	for i := range gv.NumField() {
		name := gv.Type().Field(i).Name
		if !reflect.DeepEqual(gv.Field(i).Interface(), wv.Field(i).Interface()) {
			t.Errorf("run.%s: %v, want %v", name, gv.Field(i).Interface(), wv.Field(i).Interface())
		}
	}
	if len(got.Steps) != len(steps) {
		t.Fatalf("%d steps, want %d", len(got.Steps), len(steps))
	}
	for i := range steps {
		gs, ws := reflect.ValueOf(got.Steps[i]), reflect.ValueOf(steps[i])
		for f := range gs.NumField() {
			if !reflect.DeepEqual(gs.Field(f).Interface(), ws.Field(f).Interface()) {
				t.Errorf("step %d: %s differs", i, gs.Type().Field(f).Name)
			}
		}
	}
}

// TestRunUIDBackfill opens a database from before 0002: its runs get uids.
func TestRunUIDBackfill(t *testing.T) {
	ctx := context.Background()
	s, path := openTest(t)
	for range 2 {
		if _, err := s.CreateRun(ctx, testRun()); err != nil {
			t.Fatal(err)
		}
	}
	// Back to the schema of 0001: undo 0012 (step preps), 0011 (the runs list's), 0010 (sample trims), 0009 (step stamps), 0007 (qos), 0006 (run versions), 0005, 0004, 0003, then 0002.
	for _, q := range []string{"ALTER TABLE steps DROP COLUMN prep", "DROP TRIGGER run_facets_insert", "DROP TRIGGER run_facets_update", "DROP TABLE run_facets",
		"DROP INDEX runs_name", "DROP INDEX runs_source", "DROP INDEX runs_workload", "ALTER TABLE runs DROP COLUMN workload",
		"ALTER TABLE runs DROP COLUMN planned_lo", "ALTER TABLE runs DROP COLUMN planned_hi", "ALTER TABLE samples DROP COLUMN trim_ios", "ALTER TABLE samples DROP COLUMN trim_bytes", "DROP TRIGGER steps_stamp_insert", "DROP TRIGGER steps_stamp_update", "DROP TABLE step_stamp",
		"ALTER TABLE steps DROP COLUMN stamp", "ALTER TABLE step_results DROP COLUMN qos", "ALTER TABLE samples DROP COLUMN lat_n",
		"ALTER TABLE samples DROP COLUMN lat_p50", "ALTER TABLE samples DROP COLUMN lat_p99", "ALTER TABLE samples DROP COLUMN lat_max",
		"DROP TRIGGER runs_version_step_insert", "DROP TRIGGER runs_version_step_update",
		"DROP TRIGGER runs_version_step_delete", "DROP TRIGGER runs_version_self", "DROP TRIGGER runs_version_group_insert",
		"DROP TRIGGER runs_version_group_update", "DROP TRIGGER runs_version_group_delete", "ALTER TABLE runs DROP COLUMN version",
		"DROP TABLE agent_runs", "DROP TABLE group_runs", "DROP TABLE run_groups", "DROP TABLE hosts",
		"ALTER TABLE step_results DROP COLUMN fio", "DROP TRIGGER runs_id_last", "DROP TABLE run_ids", "DROP INDEX runs_uid", "ALTER TABLE runs DROP COLUMN uid", "PRAGMA user_version = 1"} {
		if _, err := s.write.ExecContext(ctx, q); err != nil {
			t.Fatal(q, err)
		}
	}
	s.Close()
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	runs, err := s2.ListRuns(ctx, RunFilter{})
	if err != nil || len(runs) != 2 {
		t.Fatal(len(runs), err)
	}
	if len(runs[0].UID) != 32 || len(runs[1].UID) != 32 || runs[0].UID == runs[1].UID {
		t.Errorf("uids %q %q", runs[0].UID, runs[1].UID)
	}
	if id, err := s2.RunByUID(ctx, runs[1].UID); err != nil || id != runs[1].ID {
		t.Errorf("RunByUID: %d %v", id, err)
	}
}
