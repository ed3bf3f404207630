package cli

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"iolab/bench/stats"
	"iolab/bench/summary"
	"iolab/bench/testdev"
)

// TestCompareModelDisks runs one reader (psync, 4 KiB at random, 5
// repeats) on model disks whose service time the test sets
// (testdev.ModelDisk): run 1 on a disk taking 300 µs a request, run 2 on
// one taking 10 ms. Each run sweeps bs over 4k and 4096, the same size
// written two ways, so each repeat visits both in turn: a machine whose
// load drifts over a run (the rest of the test suite, other tenants)
// drifts under both alike, which makes them exchangeable as the diff's
// test assumes. Two runs one after the other are not: at a load of 30 on
// two cores, a repeat on the fast disk can take longer than the slow
// disk's. The diff marks run 2's longer median latency as significant,
// holding over the table, and worse; it finds no difference that holds
// between 4k and 4096. A load burst can still land on the repeats of one
// side: the runs are tried up to three times.
func TestCompareModelDisks(t *testing.T) {
	needRoot(t)
	fast := testdev.ModelDisk(t, 16<<20, testdev.DiskModel{Latency: 300 * time.Microsecond})
	slow := testdev.ModelDisk(t, 16<<20, testdev.DiskModel{Latency: 10 * time.Millisecond})
	for attempt := 1; ; attempt++ {
		problems := compareModelDisks(t, fast, slow)
		if len(problems) == 0 {
			return
		}
		if attempt == 3 {
			t.Fatal(strings.Join(problems, "\n"))
		}
		t.Logf("tried again:\n%s", strings.Join(problems, "\n"))
	}
}

// compareModelDisks does the two runs and says what the diffs got wrong.
func compareModelDisks(t *testing.T, fast, slow string) []string {
	dbPath := filepath.Join(t.TempDir(), "iolab.db")
	runOn := func(dev string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		err := run([]string{"run", "--db", dbPath, "--name=reader", "--ioengine=psync", "--direct=1", "--rw=randread",
			"--sweep", "bs=4k,4096", "--filename=" + dev, "--runtime=400ms", "--time_based", "--repeat=5"}, &stdout, &stderr)
		if err != nil {
			t.Fatalf("run on %s: %v\n%s", dev, err, stderr.String())
		}
	}
	runOn(fast)
	runOn(slow)
	store := openTestStore(t, dbPath)
	var problems []string
	write := func(d *summary.Diff) {
		var out strings.Builder
		if err := summary.WriteDiff(&out, d); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s", out.String())
	}
	same, err := compareRuns(context.Background(), store, []int64{1}, "bs", "4k", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(same) != 1 {
		t.Fatalf("%d diffs against bs=4k, want 1", len(same))
	}
	write(same[0])
	if _, holding := same[0].Significant(); holding > 0 {
		problems = append(problems, fmt.Sprintf("bs=4096 differs from bs=4k on the fast disk in %d rows that hold over the table", holding))
	}
	diffs, err := compareRuns(context.Background(), store, []int64{1, 2}, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	d := diffs[0]
	write(d)
	// The median latency is what a loaded machine leaves most alone (its
	// stalls make IOPS and p99 noisy, and the diff says so); a machine
	// running the whole test suite adds milliseconds to every I/O, hence a
	// slow disk much slower than that. Each bs is a row of its own.
	for _, r := range diffRows(t, d, "clat p50") {
		if r.Cmp.Verdict != stats.Significant || !r.Holds || r.Better() || r.Cmp.Lo < 0.3 {
			problems = append(problems, fmt.Sprintf("clat p50 on the slow disk: %s, holds %v, better %v, change %+.0f %% (interval %+.0f … %+.0f %%); the disk takes 33× as long",
				r.Verdict(), r.Holds, r.Better(), 100*r.Cmp.Rel, 100*r.Cmp.Lo, 100*r.Cmp.Hi))
		}
	}
	for _, r := range diffRows(t, d, "IOPS") {
		if r.Cmp.Rel > 0 {
			problems = append(problems, fmt.Sprintf("IOPS on the slow disk: %+.0f %%", 100*r.Cmp.Rel))
		}
	}
	return problems
}

// diffRows are d's rows of metric, one per point; there is at least one.
func diffRows(t *testing.T, d *summary.Diff, metric string) []*summary.DiffRow {
	t.Helper()
	var out []*summary.DiffRow
	for i := range d.Rows {
		if d.Rows[i].Metric.Name == metric {
			out = append(out, &d.Rows[i])
		}
	}
	if len(out) == 0 {
		t.Fatalf("no row %s", metric)
	}
	return out
}
