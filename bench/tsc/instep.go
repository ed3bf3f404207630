package tsc

import (
	"slices"
	"sync"
	"sync/atomic"
)

// stamp is one read of the in-step check: the CPU it ran on, its place in
// the global order of reads, and the counter.
type stamp struct {
	seq uint32
	cpu int32
	tsc uint64
}

// stepReads is how many reads each CPU makes in the in-step check: fio's
// CLOCK_ENTRIES_TEST.
const stepReads = 1000

// maxStepCPUs bounds the CPUs the in-step check reads on.
const maxStepCPUs = 64

// readInStep reads the counter stepReads times on each CPU the process
// may run on (up to maxStepCPUs), one thread pinned to each (pinCPU), every
// read taking the next place in one global order (a compare-and-swap on a
// shared counter after the read, as fio_monotonic_clocktest does), and
// returns the reads in that order. Unpinned threads would not do: two
// threads that never sleep may share one CPU for milliseconds, and the
// order would not cross CPUs. ok is false when the threads could not be
// pinned.
func readInStep() (order []stamp, ok bool) {
	cpus := allowedCPUs(maxStepCPUs)
	if len(cpus) == 0 {
		return nil, false
	}
	var (
		seq         atomic.Uint32
		failed      atomic.Bool
		ready, done sync.WaitGroup
		start       = make(chan struct{})
		reads       = make([][]stamp, len(cpus))
	)
	for i, c := range cpus {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			unpin, err := pinCPU(c)
			ready.Done()
			if err != nil {
				failed.Store(true)
				return
			}
			defer unpin()
			<-start
			if failed.Load() {
				return
			}
			out := make([]stamp, 0, stepReads)
			for range stepReads {
				for {
					s := seq.Load()
					t := readFenced()
					if seq.CompareAndSwap(s, s+1) {
						out = append(out, stamp{seq: s, cpu: int32(c), tsc: t})
						break
					}
				}
			}
			reads[i] = out
		}()
	}
	ready.Wait()
	close(start)
	done.Wait()
	if failed.Load() {
		return nil, false
	}
	for _, r := range reads {
		order = append(order, r...)
	}
	slices.SortFunc(order, func(a, b stamp) int { return int(a.seq) - int(b.seq) })
	return order, true
}

// backSteps takes the in-step check's reads in their global order (by
// seq) and returns how many read less than the read before them and the
// largest such step back, in ticks. With every CPU's counter in step the
// order of the reads is the order of the counters, and both are 0.
func backSteps(order []stamp) (n int, worst uint64) {
	for i := 1; i < len(order); i++ {
		if prev, cur := order[i-1].tsc, order[i].tsc; cur < prev {
			n++
			worst = max(worst, prev-cur)
		}
	}
	return n, worst
}

// cpusIn is how many CPUs the reads were taken on.
func cpusIn(order []stamp) int {
	seen := map[int32]bool{}
	for _, s := range order {
		seen[s.cpu] = true
	}
	return len(seen)
}
