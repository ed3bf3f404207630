package handlers

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
	"iolab/bench/system"
	"iolab/db"
)

// seedEngineRun stores a run of libaio against io_uring at iodepth 1, 5
// repeats each (sweeptest.SubmitJob: libaio's clat 200 ns and lat
// 4.2 µs, io_uring's 3 µs and 3.5 µs).
func seedEngineRun(t testing.TB, store *db.Store) *db.Run {
	t.Helper()
	ctx := context.Background()
	plan := &sweep.Plan{Name: "engines", Repeat: 5, Base: bench.Config{Jobs: []bench.Job{{Name: "r", RW: "randread", BS: 4096, IODepth: 1}}},
		Sweeps: []sweep.Sweep{{Axis: sweep.AxisEngine, Values: []string{"libaio", "io_uring"}}}}
	run := &db.Run{Name: plan.Name, Status: db.StatusRunning, Plan: *plan, Host: system.HostInfo{Hostname: "lab", KernelRelease: "6.12.0"}}
	if _, err := store.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Hour).Truncate(time.Second)
	for _, st := range sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		return sweeptest.Done(sweeptest.SubmitJob("r", s.Value(sweep.AxisEngine), s.Repeat))
	}) {
		st.Start, st.End = start, start.Add(time.Second)
		if err := store.SaveStep(ctx, run.ID, &st); err != nil {
			t.Fatal(err)
		}
	}
	if err := store.SetRunStatus(ctx, run.ID, db.StatusDone, ""); err != nil {
		t.Fatal(err)
	}
	return run
}

// The tables that show latency name its kind and show lat when engines
// are compared (libaio's submission counts: its clat is 15× below
// io_uring's, its lat above it), clat when they are not; lat= switches
// them: the run page's step table and its CSV, the compare page's
// statistical diff and its CSV, the report.
func TestTablesLatKind(t *testing.T) {
	ts := newTestServer(t, Config{})
	id := strconv.FormatInt(seedEngineRun(t, ts.store).ID, 10)
	get := func(path string) string {
		t.Helper()
		rec := ts.do(t, http.MethodGet, path, "")
		if rec.Code != http.StatusOK {
			t.Fatalf("%s: %d %.500s", path, rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	// libaioP50 is libaio's p50 in the steps CSV of kind lat=, in µs.
	libaioP50 := func(lat, col string) float64 {
		t.Helper()
		rows := readCSV(t, get("/runs/"+id+"/steps.csv?lat="+lat))
		i := -1
		for k, h := range rows[0] {
			if h == col {
				i = k
			}
		}
		if i < 0 {
			t.Fatalf("lat=%s: no column %q in %q", lat, col, rows[0])
		}
		for _, r := range rows[1:] {
			if strings.Contains(r[1], "libaio") {
				v, err := strconv.ParseFloat(r[i], 64)
				if err != nil {
					t.Fatal(err)
				}
				return v
			}
		}
		t.Fatalf("no libaio row")
		return 0
	}
	for _, tc := range []struct {
		lat, name, title string
		us               float64 // libaio's p50
	}{
		{"", "lat", "lat (from submission)", 4.2},
		{"total", "lat", "lat (from submission)", 4.2},
		{"clat", "clat", "clat", 0.2},
		{"slat", "slat", "slat", 4},
	} {
		q := ""
		if tc.lat != "" {
			q = "lat=" + tc.lat
		}
		page := get("/runs/" + id + "?" + q)
		for _, want := range []string{"<th>" + tc.name + " p50</th><th>" + tc.name + " p99</th>", "Latencies are " + tc.title,
			`aria-current="true">` + tc.title + "</a>"} {
			if !strings.Contains(page, want) {
				t.Errorf("run page %s: lacks %q", q, want)
			}
		}
		if got := libaioP50(tc.lat, tc.name+" p50 (µs)"); got < 0.9*tc.us || got > 1.1*tc.us {
			t.Errorf("steps.csv %s: libaio's p50 %g µs, want %g", q, got, tc.us)
		}
		cmpPage := get("/compare?run=" + id + "&" + q)
		for _, want := range []string{"<td>" + tc.name + " p50</td>", "Latency figures: " + tc.title} {
			if !strings.Contains(cmpPage, want) {
				t.Errorf("compare page %s: lacks %q", q, want)
			}
		}
		if stats := get("/compare/export.csv?table=stats&run=" + id + "&" + q); !strings.Contains(stats, ","+tc.name+" p99,") {
			t.Errorf("stats CSV %s: no %s p99 rows: %.400s", q, tc.name, stats)
		}
		if rep := get("/report?run=" + id + "&" + q); !strings.Contains(rep, "<th>"+tc.name+" p50</th>") || !strings.Contains(rep, "<td>"+tc.name+" p50</td>") {
			t.Errorf("report %s: the step table or the diff does not show %s", q, tc.name)
		}
	}
	// A run of one engine (schedulers compared): clat.
	fair := strconv.FormatInt(seedFairnessRun(t, ts.store).ID, 10)
	if page := get("/runs/" + fair); !strings.Contains(page, "<th>clat p50</th>") || !strings.Contains(page, "Latencies are clat") {
		t.Errorf("the fairness run's step table is not of clat")
	}
	if page := get("/compare?run=" + fair); !strings.Contains(page, "<td>clat p99</td>") {
		t.Errorf("the fairness run's diff is not of clat")
	}
	if rec := ts.do(t, http.MethodGet, "/runs/"+id+"/steps.csv?lat=p99", ""); rec.Code != http.StatusBadRequest {
		t.Errorf("steps.csv?lat=p99: %d", rec.Code)
	}
}
