package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"iolab/bench/fio"
	"iolab/bench/sweep"
	"iolab/db"
)

// fioOutput is fio's JSON output (the fields an import reads, as fio
// 3.36 prints them) of n jobs in one reporting group; edit changes job
// i's report before it is written.
func fioOutput(t testing.TB, n int, edit func(i int, job map[string]any)) []byte {
	t.Helper()
	lat := map[string]any{"min": 1000, "max": 9000, "mean": 2000.0, "stddev": 10.0, "N": 100}
	dir := func() map[string]any {
		return map[string]any{"io_bytes": 409600, "runtime": 1000, "total_ios": 100, "short_ios": 0,
			"slat_ns": lat, "clat_ns": lat, "lat_ns": lat, "iops": 100.0, "bw": 400}
	}
	jobs := make([]map[string]any, n)
	for i := range jobs {
		name := fmt.Sprintf("job%d", i)
		jobs[i] = map[string]any{"jobname": name, "groupid": 0, "error": 0, "elapsed": 1,
			"job options": map[string]string{"name": name, "rw": "randread", "bs": "4k", "iodepth": fmt.Sprint(1 + i%32)},
			"read":        dir(), "write": dir(), "job_runtime": 1000, "usr_cpu": 1.0, "sys_cpu": 1.0, "ctx": 10, "majf": 0, "minf": 0}
		if edit != nil {
			edit(i, jobs[i])
		}
	}
	b, err := json.Marshal(map[string]any{"fio version": "fio-3.36", "timestamp": 1_780_000_000,
		"timestamp_ms": int64(1_780_000_000_000), "time": "Thu Jun  1 00:00:00 2026", "jobs": jobs})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// exportSteps is an iolab export of n steps, each a failed step without
// results: the smallest a step can be, so that a document of many fits
// under the body limit.
func exportSteps(t testing.TB, n int) []byte {
	t.Helper()
	return exportDoc(t.(*testing.T), func(e *db.Export) {
		e.Run.Status = db.StatusFailed
		// A plan of n repeats: a run holds at most its plan's steps.
		e.Run.Plan.Repeat = n
		e.Steps = make([]sweep.StepResult, n)
		for i := range e.Steps {
			e.Steps[i] = sweep.StepResult{Step: sweep.Step{Seq: i, Repeat: i}, Status: sweep.StepFailed, Error: "x",
				Start: time.Unix(1_780_000_000, 0), End: time.Unix(1_780_000_001, 0)}
		}
	})
}

// Imports at their limits are stored whole; one more job, step or
// character is refused before anything is stored, with the limit named.
func TestImportLimits(t *testing.T) {
	ts := newTestServer(t, Config{})
	ctx := context.Background()
	post := func(t *testing.T, body []byte) (int, string) {
		t.Helper()
		rec := ts.do(t, "POST", "/api/import", string(body))
		return rec.Code, rec.Body.String()
	}
	t.Run("fio output of MaxImportJobs jobs", func(t *testing.T) {
		code, body := post(t, fioOutput(t, fio.MaxImportJobs, nil))
		if code != http.StatusCreated {
			t.Fatalf("%d %s", code, body)
		}
		var imp importedRun
		if err := json.Unmarshal([]byte(body), &imp); err != nil {
			t.Fatal(err)
		}
		steps, err := ts.store.Steps(ctx, imp.ID)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, st := range steps {
			for _, g := range st.Result.Groups {
				n += len(g.Jobs)
			}
		}
		if n != fio.MaxImportJobs {
			t.Errorf("%d jobs stored, want %d", n, fio.MaxImportJobs)
		}
	})
	t.Run("export of MaxImportSteps steps", func(t *testing.T) {
		code, body := post(t, exportSteps(t, db.MaxImportSteps))
		if code != http.StatusCreated {
			t.Fatalf("%d %.500s", code, body)
		}
		var imp importedRun
		if err := json.Unmarshal([]byte(body), &imp); err != nil {
			t.Fatal(err)
		}
		steps, err := ts.store.Steps(ctx, imp.ID)
		if err != nil || len(steps) != db.MaxImportSteps {
			t.Errorf("%d steps stored, want %d (%v)", len(steps), db.MaxImportSteps, err)
		}
	})
	t.Run("fio outputs of more jobs in all", func(t *testing.T) {
		var form bytes.Buffer
		mw := multipart.NewWriter(&form)
		for i := range 2 {
			fw, err := mw.CreateFormFile("file", fmt.Sprintf("part%d.json", i))
			if err != nil {
				t.Fatal(err)
			}
			fw.Write(fioOutput(t, fio.MaxImportJobs/2+1, func(k int, j map[string]any) { j["jobname"] = fmt.Sprintf("p%d-%d", i, k) }))
		}
		mw.Close()
		rec := ts.do(t, "POST", "/api/import", form.String(), "Content-Type", mw.FormDataContentType())
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), fmt.Sprintf("more than %d jobs", fio.MaxImportJobs)) {
			t.Fatalf("%d %.500s", rec.Code, rec.Body)
		}
	})
	for _, tc := range []struct {
		name, want string
		doc        []byte
	}{
		{"fio output of one job more", fmt.Sprintf("more than %d jobs", fio.MaxImportJobs), fioOutput(t, fio.MaxImportJobs+1, nil)},
		{"fio output of 10,000 jobs", fmt.Sprintf("more than %d jobs", fio.MaxImportJobs), fioOutput(t, 10000, nil)},
		{"a fio job's description over its bound", fmt.Sprintf("at most %d", fio.MaxDescriptionLen),
			fioOutput(t, 2, func(i int, j map[string]any) {
				j["job options"].(map[string]string)["description"] = strings.Repeat("d", fio.MaxDescriptionLen+1)
			})},
		{"a fio job's option over its bound", fmt.Sprintf("at most %d", fio.MaxOptionValueLen),
			fioOutput(t, 1, func(i int, j map[string]any) {
				j["job options"].(map[string]string)["filename"] = "/" + strings.Repeat("f", fio.MaxOptionValueLen)
			})},
		{"a fio job name over its bound", fmt.Sprintf("name is %d bytes, at most %d", db.MaxJobNameLen+1, db.MaxJobNameLen),
			fioOutput(t, 1, func(i int, j map[string]any) { j["jobname"] = strings.Repeat("n", db.MaxJobNameLen+1) })},
		{"json+ bins beyond fio's buckets", "histogram bins",
			fioOutput(t, 1, func(i int, j map[string]any) {
				bins := map[string]int{}
				for k := range 3000 {
					bins[fmt.Sprint(k)] = 0
				}
				j["read"].(map[string]any)["clat_ns"] = map[string]any{"min": 1000, "max": 9000, "mean": 2000.0, "stddev": 10.0, "N": 0, "bins": bins}
			})},
		{"export of one step more", fmt.Sprintf("more than %d steps", db.MaxImportSteps), exportSteps(t, db.MaxImportSteps+1)},
		{"export with a long description", fmt.Sprintf("at most %d", fio.MaxDescriptionLen), exportDoc(t, func(e *db.Export) {
			cfg, err := fio.ParseArgs([]string{"--name=d", "--filename=/dev/loop7", "--rw=randread"})
			if err != nil {
				t.Fatal(err)
			}
			cfg.Jobs[0].Description = strings.Repeat("d", 1<<20)
			e.Run.Plan = sweep.Plan{Name: "d", Base: *cfg}
		})},
		{"export with a step error of 100 KiB", fmt.Sprintf("at most %d", db.MaxErrorLen), exportDoc(t, func(e *db.Export) {
			e.Run.Status = db.StatusFailed
			e.Steps = []sweep.StepResult{{Step: sweep.Step{Seq: 1}, Status: sweep.StepFailed, Error: strings.Repeat("e", 100<<10)}}
		})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, err := ts.store.ListRuns(ctx, db.RunFilter{})
			if err != nil {
				t.Fatal(err)
			}
			code, body := post(t, tc.doc)
			if code != http.StatusBadRequest || !strings.Contains(body, tc.want) {
				t.Fatalf("%d %.500s; want 400 with %q", code, body, tc.want)
			}
			after, err := ts.store.ListRuns(ctx, db.RunFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(after) != len(before) {
				t.Errorf("%d runs before, %d after: the refused import stored a run", len(before), len(after))
			}
		})
	}
}

// BenchmarkImportLimits posts fio's output at the job limit (stored) and
// far over it (refused) through the real handler: B/op is what one
// import allocates, the figure the limits keep down (a 10,000-job
// document was 3.9 GB of RSS before it was counted first).
func BenchmarkImportLimits(b *testing.B) {
	ts := newTestServer(b, Config{})
	for _, bc := range []struct {
		name string
		doc  []byte
		code int
	}{
		{"1024 jobs", fioOutput(b, fio.MaxImportJobs, nil), http.StatusCreated},
		{"10000 jobs refused", fioOutput(b, 10000, nil), http.StatusBadRequest},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				// Another uid each time, so that each import stores a run.
				doc := bytes.Replace(bc.doc, []byte(`"fio-3.36"`), fmt.Appendf(nil, `"fio-3.36-%d"`, i), 1)
				if rec := ts.do(b, "POST", "/api/import", string(doc)); rec.Code != bc.code {
					b.Fatalf("%d %.300s", rec.Code, rec.Body)
				}
			}
		})
	}
}
