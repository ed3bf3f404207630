package bench_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/testdev"
)

// TestStatusWhileRunning: Runner.Status, asked every 100 ms while a run
// of two phases runs, reports every job of the phases begun: each
// snapshot consistent (the clat histogram holds as many I/Os as the
// count), cumulative (counts and runtimes never go down), its window
// after the ramp (a runtime never longer than the time since the run
// began less the ramp), the last no more than the final result, the
// ended phase as it ended, group_reporting's clones merged; and nil
// before and after the run.
func TestStatusWhileRunning(t *testing.T) {
	dir := t.TempDir()
	a, b := testdev.TempFileIn(t, dir, "a", 4<<20), testdev.TempFileIn(t, dir, "b", 4<<20)
	jobfile := `[global]
ioengine=psync
bs=4k
rw=randread
time_based

[a]
filename=` + a + `
ramp_time=300ms
runtime=600ms

[b]
stonewall
filename=` + b + `
numjobs=2
group_reporting
runtime=500ms
`
	cfg, err := fio.ParseJobFile(strings.NewReader(jobfile), "status.fio")
	if err != nil {
		t.Fatal(err)
	}
	rn := &bench.Runner{Interval: 100 * time.Millisecond}
	if rn.Status(0) != nil {
		t.Fatal("Status before the run is not nil")
	}
	const ramp = 300 * time.Millisecond
	type status struct {
		res     *bench.Result
		elapsed time.Duration
	}
	var statuses []status
	start := time.Now()
	done := make(chan struct{})
	var res *bench.Result
	go func() {
		defer close(done)
		res, err = rn.Run(context.Background(), cfg)
	}()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case <-done:
			break wait
		case <-tick.C:
			if s := rn.Status(200 * time.Millisecond); s != nil {
				statuses = append(statuses, status{s, time.Since(start)})
			}
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if rn.Status(0) != nil {
		t.Fatal("Status after the run is not nil")
	}
	if len(statuses) < 6 {
		t.Fatalf("%d statuses over a run of about 1.5 s, want at least 6", len(statuses))
	}
	final := map[string]bench.JobResult{}
	for _, g := range res.Groups {
		for _, j := range g.Jobs {
			final[j.Name] = j
		}
	}
	last := map[string]bench.JobResult{}
	sawB := false
	for k, s := range statuses {
		for gi, g := range s.res.Groups {
			if g.Reporting && len(g.Jobs) != 1 {
				t.Fatalf("status %d: group %d has %d entries with group_reporting", k, gi, len(g.Jobs))
			}
			for _, j := range g.Jobs {
				d := j.Dirs[bench.Read]
				if d.Clat.Stat.N != d.IOs {
					t.Errorf("status %d, job %s: %d I/Os but %d clat samples", k, j.Name, d.IOs, d.Clat.Stat.N)
				}
				if j.Name == "a" && j.Runtime > max(s.elapsed-ramp, 0) {
					t.Errorf("status %d, job a: runtime %v at %v since the run began: the %v ramp counted", k, j.Runtime, s.elapsed, ramp)
				}
				if p, ok := last[j.Name]; ok && (d.IOs < p.Dirs[bench.Read].IOs || j.Runtime < p.Runtime) {
					t.Errorf("status %d, job %s: %d I/Os in %v after %d in %v", k, j.Name, d.IOs, j.Runtime, p.Dirs[bench.Read].IOs, p.Runtime)
				}
				if j.Name == "b" {
					sawB = true
					if j.Jobs != 2 {
						t.Errorf("status %d: b merges %d jobs, want 2", k, j.Jobs)
					}
					if len(s.res.Groups) != 2 || s.res.Groups[0].Jobs[0].Dirs[bench.Read].IOs != final["a"].Dirs[bench.Read].IOs {
						t.Errorf("status %d: b runs, but a is not reported as it ended", k)
					}
				}
				last[j.Name] = j
			}
		}
	}
	if !sawB || last["a"].Dirs[bench.Read].IOs == 0 || last["b"].Dirs[bench.Read].IOs == 0 {
		t.Fatalf("the statuses saw a do %d I/Os and b %d", last["a"].Dirs[bench.Read].IOs, last["b"].Dirs[bench.Read].IOs)
	}
	for name, j := range last {
		if f := final[name]; j.Dirs[bench.Read].IOs > f.Dirs[bench.Read].IOs {
			t.Errorf("job %s: the last status has %d I/Os, the final result %d", name, j.Dirs[bench.Read].IOs, f.Dirs[bench.Read].IOs)
		}
	}
}
