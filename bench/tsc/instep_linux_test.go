package tsc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReadInStep runs the in-step check on this machine: 1000 reads per
// CPU the process may use, one global order without gaps, each CPU's own
// reads rising (one CPU's counter never steps back); and the threads it
// pinned are given their CPUs back.
func TestReadInStep(t *testing.T) {
	if !haveTSC {
		t.Skip("no TSC on this architecture")
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	order, ok := readInStep()
	if !ok {
		t.Fatal("the in-step check could not pin its threads")
	}
	if want := min(set.Count(), maxStepCPUs) * stepReads; len(order) != want {
		t.Fatalf("%d reads, want %d", len(order), want)
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
	if cpusIn(order) != min(set.Count(), maxStepCPUs) {
		t.Errorf("reads on %d CPUs of %d", cpusIn(order), set.Count())
	}
	n, worst := backSteps(order)
	t.Logf("%d reads on %d CPUs: %d steps back, the largest %d ticks", len(order), cpusIn(order), n, worst)
	// Every thread of the process has its CPUs back.
	tasks, _ := filepath.Glob("/proc/self/task/*/status")
	for _, st := range tasks {
		b, err := os.ReadFile(st)
		if err != nil {
			continue // a thread that ended
		}
		for line := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok && strings.TrimSpace(v) != allowedList(set) {
				t.Errorf("%s: a thread left on CPUs %s", st, strings.TrimSpace(v))
			}
		}
	}
}

// allowedList is set as /proc's Cpus_allowed_list writes it, for sets of
// one run of CPUs (what the tests' machines have): "0-1", "3".
func allowedList(set unix.CPUSet) string {
	first, last := -1, -1
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			if first < 0 {
				first = c
			}
			last = c
		}
	}
	if first == last {
		return strconv.Itoa(first)
	}
	return strconv.Itoa(first) + "-" + strconv.Itoa(last)
}
