package handlers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"iolab/db"

	"iolab/handlers/report"
)

// seedSteps stores a run of n steps made of imported fio outputs of at
// most 1000 jobs each (each job its own stonewalled group, iodepth 1…32
// in turn, with json+ bins), their steps one after another, and returns
// its id.
func seedSteps(t testing.TB, store *db.Store, n int) int64 {
	t.Helper()
	var run *db.Export
	for first := 0; first < n; first += 1000 {
		doc := fioOutput(t, min(1000, n-first), func(i int, j map[string]any) {
			i += first
			j["groupid"] = i
			j["job_start"] = int64(1_780_000_000_000) + int64(i)*1000
			j["job options"].(map[string]string)["stonewall"] = ""
			for _, d := range []string{"read", "write"} {
				lat := map[string]any{"min": 10, "max": 120, "mean": 60.0, "stddev": 10.0, "N": 100,
					"bins": map[string]int{"10": 20, "50": 30, "100": 40 - i%7, "120": 10 + i%7}}
				j[d].(map[string]any)["clat_ns"] = lat
				j[d].(map[string]any)["lat_ns"] = lat
			}
		})
		e, _, err := db.ParseImport(doc, db.ImportOptions{Name: "many", Hostname: "lab", Kernel: "6.12.0"})
		if err != nil {
			t.Fatal(err)
		}
		if run == nil {
			run = e
			continue
		}
		for _, st := range e.Steps {
			st.Step.Seq += len(run.Steps)
			run.Steps = append(run.Steps, st)
		}
	}
	id, _, err := store.ImportRun(context.Background(), run, db.SourceFio)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// A report of a run of many steps, built from their summaries, is whole:
// every step in its table, its Markdown and its steps CSV.
func TestReportManySteps(t *testing.T) {
	const n = 600
	ts := newTestServer(t, Config{})
	id := seedSteps(t, ts.store, n)
	rep, err := report.Build(context.Background(), ts.store, []int64{id}, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(rep.Runs[0].Steps); got != n {
		t.Fatalf("the report's steps table has %d rows, want %d", got, n)
	}
	dir := t.TempDir()
	if _, err := rep.WriteBundle(context.Background(), dir, report.BundleOptions{Chromium: "no-such-chromium"}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range []int{1, n / 2, n} {
		if !strings.Contains(string(md), fmt.Sprintf("\n| %d | ", seq)) {
			t.Errorf("README.md has no row of step %d", seq)
		}
	}
	csv, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("run-%d-steps.csv", id)))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(csv), "\n"); lines != n+1 {
		t.Errorf("the steps CSV has %d lines, want a header and %d steps", lines, n)
	}
	if len(rep.Charts) == 0 {
		t.Error("no charts")
	}
	for _, c := range rep.Charts {
		if c.Error != "" && !strings.Contains(c.Error, "no ") {
			t.Errorf("chart %s: %s", c.Kind, c.Error)
		}
	}
}

// BenchmarkBuildReport builds the report of a 2,000-step run; live-MB is
// the heap the report holds once built (what a report of any length
// grows by, step by step), alloc what building it allocated.
func BenchmarkBuildReport(b *testing.B) {
	store, err := db.Open(context.Background(), filepath.Join(b.TempDir(), "iolab.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	id := seedSteps(b, store, 2000)
	b.ReportAllocs()
	var rep *report.Report
	for b.Loop() {
		if rep, err = report.Build(context.Background(), store, []int64{id}, report.Options{}); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "live-MB")
	runtime.KeepAlive(rep)
}
