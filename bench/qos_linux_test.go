package bench

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"iolab/bench/engine"
	"iolab/bench/testdev"
)

// stallingEngine is a real engine whose commit stalls every every-th
// time for stall: a device that stops answering now and then. Only the
// device is made slow; the loop and its accounting are the real ones.
// With inQueue, the stall is in queue instead, which the loop calls as it
// prepares an I/O, before it submits: the generator running late (a
// thread the CPU scheduler ran late), not the device. That stall spins
// rather than sleeps, so that it ends when the test meant it to: a
// sleep's overshoot would move its end onto the next I/O's due time now
// and then (see TestIntendedLatency).
type stallingEngine struct {
	engine.IO
	every, n int
	stall    time.Duration
	inQueue  bool
}

func (e *stallingEngine) Commit() (int, error) {
	if !e.inQueue {
		e.tick()
	}
	return e.IO.Commit()
}

func (e *stallingEngine) Queue(slot int, op ioOp, file int, off int64, n uint32) {
	if e.inQueue {
		e.tick()
	}
	e.IO.Queue(slot, op, file, off, n)
}

func (e *stallingEngine) tick() {
	e.n++
	if e.every == 0 || e.n%e.every != 0 {
		return
	}
	if !e.inQueue {
		time.Sleep(e.stall)
		return
	}
	for t0 := time.Now(); time.Since(t0) < e.stall; {
	}
}

// runStalling runs j on its engine, stalled every every-th commit.
func runStalling(t *testing.T, j *Job, every int, stall time.Duration) JobResult {
	t.Helper()
	return runLoopWith(t, j, 250*time.Millisecond, func(e engine.IO) engine.IO {
		return &stallingEngine{IO: e, every: every, stall: stall}
	})
}

// TestIntendedLatency: the latency from the intended start is never below
// fio's lat, equals it when the device never stalls, and shows the stalls
// that fio's lat hides (coordinated omission): after a 20 ms stall at 2000
// IOPS, the next ~40 I/Os go out late, back to back, and complete at once.
// A generator that runs late on its own (here: busy as it prepares an
// I/O, as a loaded machine's scheduler would stall it) is not the device:
// its I/Os go out late too, and their latency from the intended start is
// still fio's lat. A thread preempted inside an engine call is held there
// as a stalled device would hold it, so a loaded machine can make the two
// differ now and then: a run that does is tried again, twice at most.
func TestIntendedLatency(t *testing.T) {
	testdev.Renice(t, -20)
	pcts := []float64{50, 90, 99, 99.9}
	// run runs the job once, failing t on what must always hold; miss says
	// what a loaded machine may have caused.
	run := func(t *testing.T, every int, stall time.Duration, inQueue bool) (co, lat []uint64, miss string) {
		j := nullJob(1 << 20)
		j.Runtime, j.TimeBased = time.Second, true
		j.RateIOPS = [2]int64{2000, 2000}
		res := runLoopWith(t, &j, 250*time.Millisecond, func(e engine.IO) engine.IO {
			return &stallingEngine{IO: e, every: every, stall: stall, inQueue: inQueue}
		})
		dr := &res.Dirs[Read]
		if dr.Intended.Stat.N != dr.Lat.Stat.N || dr.IOs < 1900 {
			t.Fatalf("%d I/Os, %d intended latencies, %d lat", dr.IOs, dr.Intended.Stat.N, dr.Lat.Stat.N)
		}
		co, lat = dr.Intended.Percentiles(pcts), dr.Lat.Percentiles(pcts)
		for i := range pcts {
			if co[i] < lat[i] {
				t.Errorf("p%v: from intended start %d ns < lat %d ns", pcts[i], co[i], lat[i])
			}
		}
		if dr.Intended.Stat.Max < dr.Lat.Stat.Max || dr.Intended.Stat.Mean < dr.Lat.Stat.Mean {
			t.Errorf("from intended start max %d mean %.0f < lat's %d, %.0f", dr.Intended.Stat.Max, dr.Intended.Stat.Mean, dr.Lat.Stat.Max, dr.Lat.Stat.Mean)
		}
		t.Logf("p50/p90/p99/p99.9 from intended start %v, lat %v", co, lat)
		if (every == 0 || inQueue) && (!slices.Equal(co, lat) || dr.Intended.Stat.Mean != dr.Lat.Stat.Mean) {
			miss = fmt.Sprintf("not equal without device stalls: from intended start %v mean %.1f ns, lat %v mean %.1f ns", co, dr.Intended.Stat.Mean, lat, dr.Lat.Stat.Mean)
		}
		return co, lat, miss
	}
	again := func(t *testing.T, f func() string) {
		for try := 1; ; try++ {
			msg := f()
			if msg == "" {
				return
			}
			if try == 3 {
				t.Fatal(msg)
			}
			t.Log(msg + "; again")
		}
	}
	t.Run("never stalls", func(t *testing.T) {
		again(t, func() string {
			_, _, miss := run(t, 0, 0, false)
			return miss
		})
	})
	t.Run("generator late", func(t *testing.T) {
		// 6 stalls of 3.25 ms: the 6 I/Os after each go out late, back to
		// back, and are done 250 µs before the next one is due.
		again(t, func() string {
			_, lat, miss := run(t, 300, 3250*time.Microsecond, true)
			if lat[3] < uint64(time.Millisecond) {
				t.Errorf("lat p99.9 %v: the generator's stalls did not happen", time.Duration(lat[3]))
			}
			return miss
		})
	})
	t.Run("stalls", func(t *testing.T) {
		// 3 stalls of 20 ms: ~120 I/Os of 2000 wait 0–20 ms behind their
		// intended start; fio's lat sees only the 3 stalled ones.
		co, lat, _ := run(t, 500, 20*time.Millisecond, false)
		if co[2] < uint64(5*time.Millisecond) {
			t.Errorf("p99 from intended start %v: the stalls are hidden", time.Duration(co[2]))
		}
		if lat[2] > uint64(time.Millisecond) {
			t.Errorf("lat p99 %v: want it below 1ms (only 3 I/Os stalled)", time.Duration(lat[2]))
		}
	})
}

// TestIntervalLatency: each interval carries its own p50/p99/max, and
// the interval with a stall shows it (with the next, when the I/Os it
// held up complete there) while the others do not. A loaded machine
// stalls the job on its own now and then: a miss is tried again, twice at
// most.
func TestIntervalLatency(t *testing.T) {
	for try := 1; ; try++ {
		msg := intervalLatencyRun(t)
		if msg == "" {
			return
		}
		if try == 3 {
			t.Fatal(msg)
		}
		t.Log(msg + "; again")
	}
}

func intervalLatencyRun(t *testing.T) string {
	j := nullJob(1 << 20)
	j.Runtime, j.TimeBased = time.Second, true
	j.RateIOPS = [2]int64{2000, 2000}
	// One stall, at the 1200th I/O: in the third interval of 250 ms.
	res := runStalling(t, &j, 1200, 30*time.Millisecond)
	if len(res.Samples) < 3 {
		t.Fatalf("%d samples", len(res.Samples))
	}
	var n uint64
	var stalled []int
	for i, s := range res.Samples {
		if s.Lat == nil {
			t.Fatalf("sample %d has no latency", i)
		}
		n += s.Lat.N
		if s.Lat.P50 > s.Lat.P99 || s.Lat.P99 > s.Lat.Max+s.Lat.Max/64 {
			t.Errorf("sample %d: p50 %d, p99 %d, max %d out of order", i, s.Lat.P50, s.Lat.P99, s.Lat.Max)
		}
		if s.Lat.Max >= uint64(25*time.Millisecond) {
			stalled = append(stalled, i)
		}
	}
	if n > res.Dirs[Read].IOs || n < res.Dirs[Read].IOs*9/10 {
		t.Errorf("intervals hold %d I/Os of %d", n, res.Dirs[Read].IOs)
	}
	// Merging two jobs' intervals adds their I/Os.
	m := MergeJobs([]JobResult{res, res})
	if m.Samples[0].Lat == nil || m.Samples[0].Lat.N != 2*res.Samples[0].Lat.N {
		t.Errorf("merged interval: %+v, want twice %d I/Os", m.Samples[0].Lat, res.Samples[0].Lat.N)
	}
	switch {
	case len(stalled) == 0:
		return fmt.Sprintf("no interval shows the 30ms stall: %+v", res.Samples)
	case len(stalled) > 2 || len(stalled) == 2 && stalled[1] != stalled[0]+1:
		return fmt.Sprintf("intervals %v show a stall of 25ms or more: one stall, in one interval or two adjacent", stalled)
	}
	return ""
}
