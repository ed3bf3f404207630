package db

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"iolab/bench/sweep"
)

func TestImportDocumentFio(t *testing.T) {
	ctx := context.Background()
	data, err := os.ReadFile("testdata/randrw-io_uring-qd8.json")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := openTest(t)
	o := ImportOptions{Hostname: "box7", Kernel: "6.1.0-test", Labels: []string{"iommu=off", "fw 2"}}
	id, existed, err := s.ImportDocument(ctx, data, o)
	if err != nil || existed {
		t.Fatal(existed, err)
	}
	e, err := s.Export(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	r := e.Run
	if r.Source != SourceFio || r.Name != "qd8" || r.Hostname != "box7" || r.Kernel != "6.1.0-test" || r.Host.KernelRelease != "6.1.0-test" ||
		r.Target != "/dev/loop0" || strings.Join(r.Engines, ",") != "io_uring" || strings.Join(r.Tags, ",") != "iommu=off,fw 2" || r.Status != StatusDone {
		t.Errorf("run %+v", r)
	}
	if r.Plan.Base.Jobs[0].IODepth != 8 || !strings.HasPrefix(r.UID, "fio-") {
		t.Errorf("plan %+v uid %s", r.Plan.Base.Jobs[0], r.UID)
	}
	if len(e.Steps) != 1 || e.Steps[0].Result == nil {
		t.Fatalf("steps %+v", e.Steps)
	}
	j := e.Steps[0].Result.Groups[0].Jobs[0]
	if j.Dirs[0].IOs != 114485 || j.Dirs[0].Clat.Hist.N() != 114485 || len(e.Steps[0].Result.Groups[0].Disks) != 1 {
		t.Errorf("job result %d ios, %d in hist", j.Dirs[0].IOs, j.Dirs[0].Clat.Hist.N())
	}
	// Again: the same run.
	id2, existed, err := s.ImportDocument(ctx, data, o)
	if err != nil || !existed || id2 != id {
		t.Fatalf("second import: %d %v %v", id2, existed, err)
	}
	// Its export imports as the same run too.
	doc, _ := json.Marshal(e)
	if id3, existed, err := s.ImportDocument(ctx, doc, ImportOptions{}); err != nil || !existed || id3 != id {
		t.Fatalf("export of the fio run: %d %v %v", id3, existed, err)
	}
	if runs, _ := s.ListRuns(ctx, RunFilter{}); len(runs) != 1 {
		t.Errorf("%d runs", len(runs))
	}
}

func TestImportDocumentBad(t *testing.T) {
	ctx := context.Background()
	data, err := os.ReadFile("testdata/randrw-io_uring-qd8.json")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := openTest(t)
	for _, tt := range []struct{ name, in, want string }{
		{"empty", " \n", "empty"},
		{"not json", "fio: hello\n", "not JSON"},
		{"truncated", string(data[:len(data)-200]), "unexpected EOF"},
		{"not fio", `{"jobs": [{"jobname": "a"}]}`, "not fio's"},
		{"other format", `{"format": "csv", "version": 1}`, "neither"},
		{"export version", `{"format": "iolab-run", "version": 7, "run": {}}`, "version 7"},
		{"export no created", `{"format": "iolab-run", "version": 1, "run": {"status": "done"}}`, "created_at"},
		{"missing fields", strings.Replace(string(data), `"job_runtime"`, `"runtime_ms"`, 1), `missing "job_runtime"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := s.ImportDocument(ctx, []byte(tt.in), ImportOptions{}); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
		})
	}
	if runs, _ := s.ListRuns(ctx, RunFilter{}); len(runs) != 0 {
		t.Errorf("%d runs stored from bad input", len(runs))
	}
}

// fioImports are real fio 3.33 outputs (see their README).
const fioImports = "../bench/fio/testdata/import/"

// TestImportFioSteps: three stonewalled jobs at iodepth 1, 4 and 16 are
// three steps on the iodepth axis, each with its own job's IOPS — not one
// step holding their sum — and the plan says the time_based and stonewall
// fio did not print.
func TestImportFioSteps(t *testing.T) {
	ctx := context.Background()
	data, err := os.ReadFile(fioImports + "stonewall-qd.jsonplus.json")
	if err != nil {
		t.Fatal(err)
	}
	s, _ := openTest(t)
	id, _, err := s.ImportDocument(ctx, data, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := s.Export(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	p := e.Run.Plan
	if len(p.Sweeps) != 1 || p.Sweeps[0].Axis != sweep.AxisIODepth || strings.Join(p.Sweeps[0].Values, ",") != "1,4,16" || p.Repeat != 1 {
		t.Errorf("sweeps %+v repeat %d", p.Sweeps, p.Repeat)
	}
	if cmd := p.Command(); !strings.Contains(cmd, "--sweep=iodepth=1,4,16") || !strings.Contains(cmd, "--runtime=1 --name=qd1 --iodepth=1 --time_based") {
		t.Errorf("command %s", cmd)
	}
	var inferred []string
	for _, in := range p.Inferred {
		inferred = append(inferred, in.Job+" "+in.Option)
	}
	if strings.Join(inferred, ", ") != "qd1 time_based, qd4 time_based, qd16 time_based, qd4 stonewall, qd16 stonewall" {
		t.Errorf("inferred %q", inferred)
	}
	if jf := p.JobFile(); !strings.Contains(jf, "; not in fio's output, inferred from its results:\n;   time_based on qd1: it ran its whole runtime=1") {
		t.Errorf("job file:\n%s", jf)
	}
	if len(e.Run.Engines) != 1 || e.Run.Engines[0] != "libaio" || e.Run.Target != "/tmp/iolab-fio-target" {
		t.Errorf("engines %v target %q", e.Run.Engines, e.Run.Target)
	}
	wantIOPS := []float64{7547.452547, 11279.72028, 29256.743257} // fio's "iops"
	if len(e.Steps) != 3 {
		t.Fatalf("%d steps, want 3", len(e.Steps))
	}
	for i, st := range e.Steps {
		if st.Step.Seq != i || st.Step.Repeat != 0 || st.Step.Value(sweep.AxisIODepth) != []string{"1", "4", "16"}[i] {
			t.Errorf("step %d: %+v", i, st.Step)
		}
		iops, _ := st.Result.Totals()
		if math.Abs(iops-wantIOPS[i]) > 1e-3 || len(st.Result.Groups) != 1 || len(st.Result.Groups[0].Jobs) != 1 {
			t.Errorf("step %d: %f IOPS in %d groups, want fio's %f", i, iops, len(st.Result.Groups), wantIOPS[i])
		}
		if j := st.Step.Config.Jobs[0]; j.IODepth != []int{1, 4, 16}[i] || !j.TimeBased || j.Stonewall != (i > 0) {
			t.Errorf("step %d job: iodepth %d time_based %v stonewall %v", i, j.IODepth, j.TimeBased, j.Stonewall)
		}
		if i > 0 && !st.Start.After(e.Steps[i-1].Start) {
			t.Errorf("step %d starts at %v, step %d at %v", i, st.Start, i-1, e.Steps[i-1].Start)
		}
		if st.Result.Groups[0].Jobs[0].Dirs[0].Clat.Hist.N() == 0 {
			t.Errorf("step %d: json+ histogram lost", i)
		}
	}
}

// TestParseFioRun: three files of the same two stonewalled jobs are one
// run whose steps repeat three times, in the files' order.
func TestParseFioRun(t *testing.T) {
	ctx := context.Background()
	var names []string
	var docs [][]byte
	for _, f := range []string{"repeats/1.json", "repeats/2.json", "repeats/3.json"} {
		data, err := os.ReadFile(fioImports + f)
		if err != nil {
			t.Fatal(err)
		}
		names, docs = append(names, f), append(docs, data)
	}
	e, err := ParseFioRun(names, docs, ImportOptions{Name: "qd sweep", Hostname: "box7", Labels: []string{"fio"}})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := openTest(t)
	id, existed, err := s.ImportRun(ctx, e, SourceFio)
	if err != nil || existed {
		t.Fatal(existed, err)
	}
	got, err := s.Export(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	r := got.Run
	if r.Name != "qd sweep" || r.Hostname != "box7" || r.Plan.Repeat != 3 || len(r.Plan.Sweeps) != 1 || strings.Join(r.Plan.Sweeps[0].Values, ",") != "1,8" {
		t.Errorf("run %q on %q: repeat %d sweeps %+v", r.Name, r.Hostname, r.Plan.Repeat, r.Plan.Sweeps)
	}
	var steps []string
	for _, st := range got.Steps {
		steps = append(steps, st.Step.String())
	}
	if strings.Join(steps, ", ") != "iodepth=1 #1, iodepth=8 #1, iodepth=1 #2, iodepth=8 #2, iodepth=1 #3, iodepth=8 #3" {
		t.Errorf("steps %q", steps)
	}
	// Each file's qd8 IOPS, as fio printed them.
	for i, want := range []float64{23856.287425, 7592.814371, 28005.988024} {
		if iops, _ := got.Steps[2*i+1].Result.Totals(); math.Abs(iops-want) > 1e-3 {
			t.Errorf("file %d qd8: %f IOPS, fio printed %f", i+1, iops, want)
		}
	}
	if !r.Started.Before(got.Steps[5].Start) || r.Finished.Before(got.Steps[5].End) {
		t.Errorf("run %v–%v, last step %v–%v", r.Started, r.Finished, got.Steps[5].Start, got.Steps[5].End)
	}
	// The same files again are the same run; another order is another.
	again, _ := ParseFioRun(names, docs, ImportOptions{})
	if id2, existed, err := s.ImportRun(ctx, again, SourceFio); err != nil || !existed || id2 != id {
		t.Errorf("again: %d %v %v", id2, existed, err)
	}
	slices.Reverse(docs)
	if other, _ := ParseFioRun(names, docs, ImportOptions{}); other.Run.UID == e.Run.UID {
		t.Errorf("reversed files: the same uid %s", e.Run.UID)
	}
	// An iolab export does not join a run; a bad file is named.
	exp, _ := json.Marshal(got)
	if _, err := ParseFioRun([]string{"a.json", "run.json"}, [][]byte{docs[0], exp}, ImportOptions{}); err == nil || !strings.Contains(err.Error(), "run.json: not fio's JSON output") {
		t.Errorf("export among fio outputs: %v", err)
	}
	if _, err := ParseFioRun([]string{"a.json", "b.json"}, [][]byte{docs[0], []byte("{}")}, ImportOptions{}); err == nil || !strings.HasPrefix(err.Error(), "b.json: import: ") {
		t.Errorf("bad file: %v", err)
	}
}
