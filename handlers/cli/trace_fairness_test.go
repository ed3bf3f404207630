package cli

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/sweep"
	"iolab/bench/testdev"
	"iolab/db"
)

// TestFairnessPresetTraced is issue 27's experiment: the sched-fairness
// preset on a loop device under mq-deadline and kyber traces the block
// layer by itself (it traces where it can), the run's summary says where
// each job's time went per scheduler, and the stored steps keep the
// reader's and the writer's parts — their queue time among them (the
// writer's 1 MiB writes split on this device, timed over their pieces).
func TestFairnessPresetTraced(t *testing.T) {
	dev := testdev.LoopInMemory(t, 64<<20)
	dbPath := filepath.Join(t.TempDir(), "iolab.db")
	var out, errOut bytes.Buffer
	err := run([]string{"run", "--db", dbPath, "--preset", "sched-fairness", "--filename", dev,
		"--sweep", "scheduler=mq-deadline,kyber", "--repeat", "1", "--runtime=700ms"}, &out, &errOut)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	text := out.String()
	_, split, ok := strings.Cut(text, "Where the time went (--trace-block)")
	if !ok {
		t.Fatalf("the summary has no time split:\n%s", text)
	}
	for _, want := range []string{"mq-deadline  bg-writer", "kyber        bg-writer", "fg-reader"} {
		if !strings.Contains(split, want) {
			t.Errorf("the time split has no %q row:\n%s", want, split)
		}
	}

	store, err := db.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	runs, err := store.ListRuns(context.Background(), db.RunFilter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	steps, err := store.StepsFor(context.Background(), runs[0].ID, db.LoadAll())
	if err != nil || len(steps) != 2 {
		t.Fatalf("%d steps, %v", len(steps), err)
	}
	for _, s := range steps {
		if s.Status != sweep.StepDone || s.Result == nil {
			t.Fatalf("step %s: %s %s", s.Step.String(), s.Status, s.Error)
		}
		sched := s.Step.Value(sweep.AxisScheduler)
		for _, g := range s.Result.Groups {
			if g.Trace == nil || len(g.Trace.Devices) == 0 {
				t.Errorf("%s: group %d has no trace", sched, g.ID)
			}
			for _, j := range g.Jobs {
				d := bench.Read
				if j.Name == "bg-writer" {
					d = bench.Write
				}
				b := j.Dirs[d].Block
				if b == nil || b.OneToOne+b.Merged+b.Split+b.Unmatched != j.Dirs[d].IOs {
					t.Errorf("%s: %s: block-layer time %+v does not count its %d I/Os", sched, j.Name, b, j.Dirs[d].IOs)
					continue
				}
				// The writer's 1 MiB writes are more segments than the loop
				// device's requests take: each is split, and timed over its
				// pieces (docs/trace.md).
				t.Logf("%s %s: %d I/Os, %d one-to-one, %d split (%d timed), %d merged", sched, j.Name, j.Dirs[d].IOs, b.OneToOne, b.Split, b.SplitTimed, b.Merged)
				p := func(l *hist.Lat) uint64 { return l.Percentiles([]float64{50})[0] }
				q99 := b.Queue.Percentiles([]float64{99})[0]
				own := p(&b.Submit) + p(&b.Queue) + p(&b.Device) + p(&b.Completion)
				if q99 == 0 || float64(b.Timed()) < 0.9*float64(j.Dirs[d].IOs) {
					t.Errorf("%s: %s: queue p99 %d ns, %d of %d I/Os timed", sched, j.Name, q99, b.Timed(), j.Dirs[d].IOs)
				}
				// The timed I/Os at lat's median, split: their parts add up
				// to that median within 5 % (within its bucket, 1.6 %, by
				// construction), where the parts' own medians need not.
				at, ok := b.ByLat.SplitAt(50)
				if !ok || at.IOs == 0 || !near(at.Sum(), float64(at.Lat), 0.05) {
					t.Errorf("%s: %s: the median I/Os' parts %+v add up to %.0f ns, not their lat's median %d ns", sched, j.Name, at.Parts, at.Sum(), at.Lat)
				}
				t.Logf("%s %s: queue p99 %d ns; at lat's median (%d ns; all I/Os' %d ns) %.0f + %.0f + %.0f + %.0f = %.0f ns (%d I/Os); the parts' own medians add up to %d ns",
					sched, j.Name, q99, at.Lat, p(&j.Dirs[d].Lat), at.Parts[0], at.Parts[1], at.Parts[2], at.Parts[3], at.Sum(), at.IOs, own)
				// Every timed I/O's parts add up to its lat: so do their
				// means, to the histograms' rounding of each I/O.
				parts := b.Submit.Stat.Mean + b.Queue.Stat.Mean + b.Device.Stat.Mean + b.Completion.Stat.Mean
				if b.Timed() == j.Dirs[d].IOs && !near(parts, j.Dirs[d].Lat.Stat.Mean, 0.001) {
					t.Errorf("%s: %s: the parts' means add up to %.0f ns, lat's mean is %.0f ns", sched, j.Name, parts, j.Dirs[d].Lat.Stat.Mean)
				}
			}
		}
	}
}

func near(a, b, rel float64) bool { return a >= b*(1-rel) && a <= b*(1+rel) }
