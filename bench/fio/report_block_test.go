package fio

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"iolab/bench"
	"iolab/bench/hist"
)

// TestBlockReport: a traced direction prints, after its lat line, the
// timed I/Os at lat's p50 and p99 split into parts that add up to that
// lat (fio's percentile, its bucket's midpoint), and puts its parts and
// that split in its iolab key; fio's keys stay as they were.
func TestBlockReport(t *testing.T) {
	var bt bench.BlockTime
	var lat hist.Histogram
	for i := range int64(100) {
		bt.AddTimed(10_000+i, 0, 200_000+1000*i, 3_000)
		lat.Add(uint64(213_000 + 1001*i))
	}
	bt.OneToOne, bt.Split, bt.Unmatched = 100, 2, 1
	var b strings.Builder
	writeBlock(&b, &bt)
	lines := strings.Split(b.String(), "\n")
	if len(lines) != 4 || lines[2] != "    block I/Os : one-to-one=100 of 103, merged=0, split=2 (timed 0), unmatched=1" {
		t.Fatalf("got\n%s", b.String())
	}
	for k, pct := range []float64{50, 99} {
		var l, submit, queue, device, completion float64
		format := "    block (usec): lat p%g=%f: submit=%f, queue=%f, device=%f, completion=%f"
		var p float64
		if n, err := fmt.Sscanf(strings.ReplaceAll(lines[k], ",", " ,"), strings.ReplaceAll(format, ",", " ,"), &p, &l, &submit, &queue, &device, &completion); err != nil || n != 6 || p != pct {
			t.Fatalf("line %q: %v", lines[k], err)
		}
		want := float64(lat.Percentiles([]float64{pct})[0]) / 1000
		if sum := submit + queue + device + completion; l != math.Round(want*100)/100 || queue != 0 || sum < l*0.984 || sum > l*1.016 {
			t.Errorf("%q: want lat %.2f µs, and parts that add up to it within its bucket (they add up to %.2f)", lines[k], want, sum)
		}
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
	if at, ok := x.Read.Block.SplitAtLat["99.000000"]; !ok || at.Lat != lat.Percentiles([]float64{99})[0] || at.IOs == 0 ||
		at.Submit+at.Queue+at.Device+at.Completion < 0.984*float64(at.Lat) {
		t.Errorf("split at lat's p99: %+v (%v)", at, x.Read.Block.SplitAtLat)
	}
	delete(got, "iolab")
	for k, v := range base {
		if string(got[k]) != string(v) {
			t.Errorf("fio's %q changed: %s, was %s", k, got[k], v)
		}
	}
}
