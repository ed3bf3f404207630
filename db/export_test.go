package db

import (
	"bytes"
	"context"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"iolab/bench"
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
	steps := []bench.StepResult{testStep(rng, 0, 2000, 20, true), failedStep(1), testStep(rng, 2, 2000, 20, false)}
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
	newID, err := s.Import(ctx, &read, SourceImport)
	if err != nil {
		t.Fatal(err)
	}
	if newID == id {
		t.Fatal("import reused the run's id")
	}
	again, err := s.Export(ctx, newID)
	if err != nil {
		t.Fatal(err)
	}
	if again.Run.Source != SourceImport || again.Run.Status != StatusDone {
		t.Errorf("imported run: source %s status %s", again.Run.Source, again.Run.Status)
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
		return &Export{Format: ExportFormat, Version: ExportVersion, Run: *testRun(),
			Steps: []bench.StepResult{failedStep(0)}}
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
		{"source", func(e *Export) {}, "email", "source"},
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
