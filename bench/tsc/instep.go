package tsc

import (
	"runtime"
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

// stepReads is how many reads each thread makes in the in-step check:
// fio's CLOCK_ENTRIES_TEST.
const stepReads = 1000

// maxStepThreads bounds the threads the in-step check reads on.
const maxStepThreads = 64

// readInStep reads the counter stepReads times on each of as many threads
// as the process has CPUs and Ps (up to maxStepThreads), every read taking
// the next place in one global order (a compare-and-swap on a shared
// counter after the read, as fio_monotonic_clocktest does), and returns
// the reads in that order, each with the CPU it was taken on (getcpu
// before the read: RDTSCP's TSC_AUX, where Linux keeps the CPU's number,
// is a constant on some VMs). fio pins a thread to each CPU; these
// threads are not pinned — a thread pinned and then left to the runtime
// keeps its one CPU, and the tests that trace a job's affinity would see
// the check's — and the scheduler spreads threads that never sleep over
// the CPUs, so the order crosses CPUs throughout.
func readInStep() []stamp {
	n := min(runtime.NumCPU(), runtime.GOMAXPROCS(0), maxStepThreads)
	var (
		seq         atomic.Uint32
		ready, done sync.WaitGroup
		start       = make(chan struct{})
		reads       = make([][]stamp, n)
	)
	for i := range n {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			out := make([]stamp, 0, stepReads)
			ready.Done()
			<-start
			for range stepReads {
				for {
					s := seq.Load()
					cpu := cpuNow()
					t := readFenced()
					if seq.CompareAndSwap(s, s+1) {
						out = append(out, stamp{seq: s, cpu: cpu, tsc: t})
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
	var order []stamp
	for _, r := range reads {
		order = append(order, r...)
	}
	slices.SortFunc(order, func(a, b stamp) int { return int(a.seq) - int(b.seq) })
	return order
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
