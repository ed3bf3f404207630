package bench

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"iolab/bench/system"
	"iolab/bench/testdev"
)

// nullJob is a size-based job of n I/Os on the null engine.
func nullJob(n int64) Job {
	j := NewJob()
	j.Name, j.IOEngine, j.RW = "null", "null", "randread"
	j.Size = n * j.BS
	return j
}

// TestClockReadsPerIO keeps the loop's clock reads where the design puts
// them: a sync engine reads the clock as it picks an I/O and as it
// completes; a rate adds one as each engine call begins, so that the
// latency from intended starts knows when the device held the job
// (lat_intended.go); gtod_reduce leaves the pick's read only.
func TestClockReadsPerIO(t *testing.T) {
	const n = 20000
	for _, tc := range []struct {
		name string
		set  func(j *Job)
		per  float64
	}{
		{"defaults", func(j *Job) {}, 2},
		{"a rate it never waits for", func(j *Job) { j.RateIOPS = [2]int64{1 << 31, 1 << 31} }, 3},
		{"a minimum rate", func(j *Job) { j.RateIOPSMin = [2]int64{1, 1} }, 2},
		{"gtod_reduce", func(j *Job) { j.DisableLat, j.DisableClat, j.DisableSlat, j.DisableBW = true, true, true, true }, 1},
		{"disable_lat only", func(j *Job) { j.DisableLat = true }, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := nullJob(n)
			tc.set(&j)
			res := runLoop(t, &j)
			if got := float64(res.ClockReads) / n; got > tc.per+0.01 {
				t.Errorf("%.3f clock reads per I/O, want at most %v", got, tc.per)
			}
		})
	}
}

// BenchmarkJobLoopNullPaced is BenchmarkJobLoopNull with a rate the loop
// never has to wait for: pacing allocates nothing per I/O either.
func BenchmarkJobLoopNullPaced(b *testing.B) {
	j := nullJob(int64(max(b.N, 1)))
	j.RateIOPS = [2]int64{1 << 31, 1 << 31}
	j.Thinktime, j.ThinktimeBlocks = time.Nanosecond, 1<<30
	b.ReportAllocs()
	b.ResetTimer()
	res := runLoop(b, &j)
	b.StopTimer()
	b.ReportMetric(res.IOPS(Read), "IOPS")
}

func TestPacedLoopAllocatesNothing(t *testing.T) {
	r := testing.Benchmark(BenchmarkJobLoopNullPaced)
	if a := r.AllocsPerOp(); a != 0 {
		t.Errorf("%d allocations per I/O with pacing", a)
	}
}

func TestBytesTime(t *testing.T) {
	for _, tc := range []struct {
		bytes, bps uint64
		want       int64
	}{
		{4096, 4096, int64(time.Second)},
		{4096, 4096 * 1000, int64(time.Millisecond)},
		{1, 3, 333333333},
		{1 << 62, 1 << 30, (1 << 32) * int64(time.Second)},
		{(1 << 40) + 1, 1<<40 + 7, 999999999},
	} {
		if got := bytesTime(tc.bytes, tc.bps); got != tc.want {
			t.Errorf("bytesTime(%d, %d) = %d, want %d", tc.bytes, tc.bps, got, tc.want)
		}
	}
}

// testPacer is a pacer on a loop with nothing in flight, for its
// arithmetic.
func testPacer(j *Job) *pacer {
	l := &loop{j: j, r: &jobRun{j: j}, clk: newJobClock()}
	return newPacer(l, j, new(atomic.Bool), 4)
}

// TestRateSchedule checks fio's usec_for_io: linear spaces I/Os by their
// bytes at the rate; poisson draws exponential gaps around fio's integer
// mean.
func TestRateSchedule(t *testing.T) {
	j := nullJob(1)
	j.RateIOPS = [2]int64{1000, 0}
	p := testPacer(&j)
	for k := range 5 {
		p.queued(0, opRead, 4096, 0)
		if want := int64(k+1) * int64(time.Millisecond); p.next[Read] != want {
			t.Fatalf("linear: I/O %d next due at %d, want %d", k+1, p.next[Read], want)
		}
	}
	p.queued(1, opWrite, 4096, 0)
	if p.next[Write] != 0 {
		t.Errorf("an unrated direction is due at %d", p.next[Write])
	}

	j.RateIOPS = [2]int64{3000, 0} // fio's mean gap: 1000000/3000 = 333 µs
	j.RateProcess = RatePoisson
	p = testPacer(&j)
	const n = 20000
	var gaps []float64
	last := p.next[Read]
	for range n {
		p.queued(0, opRead, 4096, 0)
		gaps = append(gaps, float64(p.next[Read]-last))
		last = p.next[Read]
	}
	var sum, sumsq float64
	for _, g := range gaps {
		sum += g
		sumsq += g * g
	}
	mean := sum / n
	cv := math.Sqrt(sumsq/n-mean*mean) / mean
	if math.Abs(mean-333e3)/333e3 > 0.03 || math.Abs(cv-1) > 0.05 {
		t.Errorf("poisson gaps: mean %.0f ns (want 333000), coefficient of variation %.3f (exponential: 1)", mean, cv)
	}
}

// TestRateDirection checks fio's rate_ddir: a due direction goes; one
// that is ahead gives way to the other when that is due.
func TestRateDirection(t *testing.T) {
	j := nullJob(1)
	j.RW, j.RWMixRead = "randrw", 50
	j.RateIOPS = [2]int64{100, 100}
	p := testPacer(&j)
	p.l.tick = 5
	p.next = [2]int64{10, 0}
	if op, ok := p.rateDir(opRead); op != opWrite || !ok {
		t.Errorf("read ahead, write due: got %v %v, want a write", op, ok)
	}
	p.next = [2]int64{0, 10}
	if op, ok := p.rateDir(opRead); op != opRead || !ok {
		t.Errorf("read due: got %v %v", op, ok)
	}
	// Both ahead: wait for the earlier one, the write.
	p.l.tick = p.l.now()
	p.next = [2]int64{p.l.tick + int64(3*time.Millisecond), p.l.tick + int64(2*time.Millisecond)}
	t0 := time.Now()
	if op, ok := p.rateDir(opRead); op != opWrite || !ok {
		t.Errorf("both ahead: got %v %v, want the write, due first", op, ok)
	}
	if d := time.Since(t0); d < time.Millisecond {
		t.Errorf("both ahead: waited %v only", d)
	}
	// Past the runtime: the job ends.
	j.Runtime = time.Millisecond
	p = testPacer(&j)
	p.l.tick = int64(2 * time.Millisecond)
	p.next = [2]int64{int64(time.Second), int64(time.Second)}
	if _, ok := p.rateDir(opRead); ok || !p.expired {
		t.Error("a wait past the runtime did not end the job")
	}
}

// TestThinkBlocks checks which I/Os are followed by think time: every
// thinktime_blocks completions, or issues with thinktime_blocks_type=issue.
func TestThinkBlocks(t *testing.T) {
	for _, tc := range []struct {
		typ  string
		want []int
	}{
		// An I/O is issued each step, the first two stay in flight: the
		// count of completions lags by two.
		// A think time drains them, and it counts what was completed
		// before the drain, as fio does.
		{"complete", []int{5, 8}},
		{"issue", []int{3, 6, 9}},
	} {
		j := nullJob(1)
		j.Thinktime, j.ThinktimeBlocks, j.ThinktimeBlocksType = time.Nanosecond, 3, tc.typ
		p := testPacer(&j)
		var thought []int
		for k := 1; k <= 10; k++ {
			p.issues++
			p.l.checkedOut = min(p.l.checkedOut+1, 2)
			if b, due := p.thinkDue(); due {
				thought = append(thought, k)
				p.lastThink, p.l.checkedOut = b, 0
			}
		}
		if !slices.Equal(thought, tc.want) {
			t.Errorf("thinktime_blocks_type=%s: think time after I/Os %v, want %v", tc.typ, thought, tc.want)
		}
	}
}

func TestStartDelayRange(t *testing.T) {
	j := NewJob()
	j.StartDelay = time.Second
	if d := startDelay(&j, 3); d != time.Second {
		t.Errorf("a single start delay: %v", d)
	}
	j.StartDelayHigh = 2 * time.Second
	seen := map[time.Duration]bool{}
	for thread := range 50 {
		d := startDelay(&j, thread)
		if d < time.Second || d > 2*time.Second {
			t.Fatalf("job %d: %v outside 1s-2s", thread, d)
		}
		if d != startDelay(&j, thread) {
			t.Fatal("with randrepeat a job's delay changed between runs")
		}
		seen[d] = true
	}
	if len(seen) < 45 {
		t.Errorf("50 jobs drew %d distinct delays", len(seen))
	}
}

func TestJobCPUs(t *testing.T) {
	j := NewJob()
	j.CPUsAllowed = []int{2, 5, 7}
	if got := jobCPUs(&j, 4); !slices.Equal(got, []int{2, 5, 7}) {
		t.Errorf("shared: %v", got)
	}
	j.CPUsAllowedPolicy = "split"
	var got [][]int
	for thread := range 4 {
		got = append(got, jobCPUs(&j, thread))
	}
	if want := [][]int{{2}, {5}, {7}, {2}}; !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("split: %v, want %v", got, want)
	}
}

// TestRateIOPSHoldsOnLoopDevice is the issue's acceptance test: rate_iops
// holds its rate within 1 % on a loop device, at a rate well below what
// the device does, over a 5 s run. 1 % of it is 50 ms: a loaded machine can stall the
// job's thread that long near the end, so a miss is tried again, twice at
// most; a rate that is off misses every time.
func TestRateIOPSHoldsOnLoopDevice(t *testing.T) {
	dev := testdev.Loop(t, 64<<20)
	for _, engine := range []string{"libaio", "psync"} {
		t.Run(engine, func(t *testing.T) {
			j := NewJob()
			j.Name, j.Filename, j.RW, j.IOEngine, j.IODepth, j.Direct = "rated", dev, "randread", engine, 4, true
			j.Runtime, j.TimeBased = 5*time.Second, true // the issue's "within 1 % over a 5 s run"
			j.RateIOPS = [2]int64{500, 500}
			for try := 1; ; try++ {
				res, err := (&Runner{Sys: system.FS{}}).Run(context.Background(), &Config{Groups: Expand([]Job{j})})
				if err != nil {
					t.Fatal(err)
				}
				r := &res.Groups[0].Jobs[0]
				got := r.IOPS(Read)
				if math.Abs(got-500)/500 <= 0.01 {
					return
				}
				msg := fmt.Sprintf("rate_iops=500: %.1f IOPS (%d I/Os in %v)", got, r.Dirs[Read].IOs, r.Runtime)
				if try == 3 {
					t.Fatal(msg)
				}
				t.Log(msg + "; again")
			}
		})
	}
}
