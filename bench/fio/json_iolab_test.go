package fio

import (
	"encoding/json"
	"strings"
	"testing"

	"iolab/bench"
)

// TestIOLabKey: a paced job's intended-start latency is under "iolab",
// and fio's own fields are unchanged by it; an unpaced job has no "iolab".
func TestIOLabKey(t *testing.T) {
	r := bench.JobResult{Name: "j", Job: bench.NewJob(), Jobs: 1}
	r.Dirs[bench.Read].IOs = 3
	for _, v := range []uint64{1000, 2000, 3000} {
		r.Dirs[bench.Read].Clat.Add(v)
		r.Dirs[bench.Read].Lat.Add(v)
	}
	plain, err := json.Marshal(jobReport(&r, false, &groupStats{}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(plain), `"iolab"`) {
		t.Errorf("unpaced job has an iolab key: %s", plain)
	}
	for _, v := range []uint64{5000, 6000, 9000} {
		r.Dirs[bench.Read].Intended.Add(v)
	}
	paced, err := json.Marshal(jobReport(&r, false, &groupStats{}))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(paced, &got); err != nil {
		t.Fatal(err)
	}
	var x IOLabReport
	if err := json.Unmarshal(got["iolab"], &x); err != nil || x.Read == nil || x.Write != nil || x.Read.IntendedLat == nil || x.Read.IntendedLat.Max != 9000 {
		t.Fatalf("iolab key %s: %+v %v", got["iolab"], x, err)
	}
	delete(got, "iolab")
	var base map[string]json.RawMessage
	json.Unmarshal(plain, &base)
	for k, v := range base {
		if string(got[k]) != string(v) {
			t.Errorf("fio's %q changed: %s, was %s", k, got[k], v)
		}
	}
	if len(got) != len(base) {
		t.Errorf("%d keys besides iolab, want %d", len(got), len(base))
	}
}
