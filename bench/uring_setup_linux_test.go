package bench

import (
	"os"
	"strings"
	"testing"

	"iolab/bench/tsc"
)

// TestURingSetupRecorded: an io_uring job records the ring as the kernel
// set it up — the flags it took, a CQ the size of the SQ (fio's CQSIZE
// with cq_entries = iodepth), its registered fd — a libaio job whether its
// waits spin (with the TSC to time them), and a psync job nothing.
func TestURingSetupRecorded(t *testing.T) {
	path := t.TempDir() + "/f"
	if err := os.WriteFile(path, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		engine string
		want   []string
	}{
		// The other flags depend on the kernel's age (bench/engine's newURing falls back).
		{"io_uring", []string{"io_uring ", "CQSIZE", "sq 8, cq 8"}},
		{"libaio", spinSetup()},
		{"psync", nil},
	} {
		j := NewJob()
		j.Name, j.IOEngine, j.RW, j.IODepth, j.Filename, j.Size = "f", tc.engine, "randread", 8, path, 1<<20
		res := runLoop(t, &j)
		for _, w := range tc.want {
			if !strings.Contains(res.EngineSetup, w) {
				t.Errorf("%s: setup %q lacks %q", tc.engine, res.EngineSetup, w)
			}
		}
		// TASKRUN_FLAG came with COOP_TASKRUN (Linux 5.19): the wait
		// spins on the flag it sets.
		if strings.Contains(res.EngineSetup, "COOP_TASKRUN") && !strings.Contains(res.EngineSetup, "TASKRUN_FLAG") {
			t.Errorf("%s: setup %q has COOP_TASKRUN without TASKRUN_FLAG", tc.engine, res.EngineSetup)
		}
		if tc.engine == "io_uring" && tsc.Rate() != 0 && strings.Contains(res.EngineSetup, "TASKRUN_FLAG") && !strings.Contains(res.EngineSetup, "waits spin") {
			t.Errorf("%s: setup %q: with TASKRUN_FLAG and a TSC the waits spin", tc.engine, res.EngineSetup)
		}
		if tc.want == nil && res.EngineSetup != "" {
			t.Errorf("%s: setup %q, want none", tc.engine, res.EngineSetup)
		}
	}
}

// spinSetup is what a libaio job records (bench/engine's spinNote): its waits spin where the TSC
// can time them.
func spinSetup() []string {
	if tsc.Rate() == 0 {
		return nil
	}
	return []string{"libaio; " + "waits spin ≤2µs where trials show it pays" + " (the aio ring)"}
}
