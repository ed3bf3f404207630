package db

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
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
