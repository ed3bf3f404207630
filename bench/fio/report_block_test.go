package fio

import (
	"encoding/json"
	"strings"
	"testing"

	"iolab/bench"
)

// TestBlockReport: a traced direction prints its parts after its lat line
// and puts them in its iolab key; fio's keys stay as they were.
func TestBlockReport(t *testing.T) {
	var bt bench.BlockTime
	for i := range uint64(100) {
		bt.Submit.Add(10_000 + i)
		bt.Queue.Add(0)
		bt.Device.Add(200_000 + 1000*i)
		bt.Completion.Add(3_000)
	}
	bt.OneToOne, bt.Split, bt.Unmatched = 100, 2, 1
	var b strings.Builder
	writeBlock(&b, &bt)
	// The values are fio's histogram's (its buckets' midpoints), as the
	// clat percentiles print them.
	want := "    block (usec): p50 submit=10.05, queue=0.00, device=248.83, completion=2.99\n" +
		"    block (usec): p99 submit=10.05, queue=0.00, device=296.96, completion=2.99\n" +
		"    block I/Os : one-to-one=100 of 103, merged=0, split=2 (timed 0), unmatched=1\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}

	b.Reset()
	writeBlockTrace(&b, &bench.BlockTrace{Devices: []string{"7:1", "7:0"}, Foreign: 12, Missed: 1})
	if got := b.String(); got != "  BLOCK: traced 7:1,7:0; foreign bios=12, dropped=0, missed=1\n" {
		t.Errorf("trace line %q", got)
	}

	r := bench.JobResult{Name: "r", Job: bench.Job{PercentileList: []float64{50, 99}}}
	r.Dirs[bench.Read].IOs = 103
	plain, err := json.Marshal(jobReport(&r, false, &groupStats{}))
	if err != nil {
		t.Fatal(err)
	}
	r.Dirs[bench.Read].Block = &bt
	traced, err := json.Marshal(jobReport(&r, false, &groupStats{}))
	if err != nil {
		t.Fatal(err)
	}
	var got, base map[string]json.RawMessage
	json.Unmarshal(traced, &got)
	json.Unmarshal(plain, &base)
	var x IOLabReport
	if err := json.Unmarshal(got["iolab"], &x); err != nil || x.Read == nil || x.Read.Block == nil || x.Read.IntendedLat != nil || x.Write != nil {
		t.Fatalf("iolab key %s: %v", got["iolab"], err)
	}
	if blk := x.Read.Block; blk.OneToOne != 100 || blk.Split != 2 || blk.Device.N != 100 || blk.Device.Max != 299_000 {
		t.Errorf("block %+v", blk)
	}
	delete(got, "iolab")
	for k, v := range base {
		if string(got[k]) != string(v) {
			t.Errorf("fio's %q changed: %s, was %s", k, got[k], v)
		}
	}
}
