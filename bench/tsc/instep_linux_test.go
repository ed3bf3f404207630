package tsc

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestReadInStep runs the in-step check on this machine: 1000 reads per
// thread, one global order without gaps, every read on a CPU the process
// may use, each CPU's own reads rising (one CPU's counter never steps
// back), and — the test process may use them all — more than one CPU
// read where there are several.
func TestReadInStep(t *testing.T) {
	if !haveTSC {
		t.Skip("no TSC on this architecture")
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	for try := range 3 {
		order := readInStep()
		if len(order)%stepReads != 0 || len(order) == 0 {
			t.Fatalf("%d reads, not a whole number of threads' %d", len(order), stepReads)
		}
		last := map[int32]uint64{}
		for i, s := range order {
			if s.seq != uint32(i) {
				t.Fatalf("read %d has place %d in the order", i, s.seq)
			}
			if !set.IsSet(int(s.cpu)) {
				t.Fatalf("read on CPU %d, outside the process's CPUs", s.cpu)
			}
			if prev, seen := last[s.cpu]; seen && s.tsc < prev {
				t.Fatalf("CPU %d's counter stepped back from %d to %d", s.cpu, prev, s.tsc)
			}
			last[s.cpu] = s.tsc
		}
		n, worst := backSteps(order)
		t.Logf("%d reads on %d CPUs: %d steps back, the largest %d ticks", len(order), cpusIn(order), n, worst)
		if cpusIn(order) > 1 || set.Count() == 1 {
			return
		}
		t.Logf("try %d: every read on one CPU", try+1)
	}
	t.Errorf("three tries of the in-step check read on one CPU of %d", set.Count())
}
