package sweep

import (
	"slices"
	"testing"

	"iolab/bench"
	"iolab/bench/system"
)

// TestEnginesAndSchedulers: a run's engines are its engine sweep's, else
// its jobs' (each once); its schedulers its scheduler sweep's, else the
// first target's that names one.
func TestEnginesAndSchedulers(t *testing.T) {
	jobs := []bench.Job{{Name: "a", IOEngine: "libaio"}, {Name: "b", IOEngine: "psync"}, {Name: "c", IOEngine: "libaio"}}
	engines := Sweep{Axis: AxisEngine, Values: []string{"io_uring", "io_uring+sqpoll"}}
	scheds := Sweep{Axis: AxisScheduler, Values: []string{"none", "bfq"}}
	depths := Sweep{Axis: AxisIODepth, Values: []string{"1", "8"}}
	targets := []system.Target{{Path: "/a"}, {Path: "/b", Scheduler: "mq-deadline"}, {Path: "/c", Scheduler: "kyber"}}
	for _, tt := range []struct {
		name                    string
		sweeps                  []Sweep
		targets                 []system.Target
		wantEngines, wantScheds []string
	}{
		{"no sweeps", nil, targets, []string{"libaio", "psync"}, []string{"mq-deadline"}},
		{"no engine or scheduler swept, no targets", []Sweep{depths}, nil, []string{"libaio", "psync"}, nil},
		{"engines swept", []Sweep{depths, engines}, targets, []string{"io_uring", "io_uring+sqpoll"}, []string{"mq-deadline"}},
		{"schedulers swept", []Sweep{scheds}, targets, []string{"libaio", "psync"}, []string{"none", "bfq"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			plan := Plan{Base: bench.Config{Jobs: jobs}, Sweeps: tt.sweeps}
			e, s := plan.EnginesAndSchedulers(tt.targets)
			if !slices.Equal(e, tt.wantEngines) || !slices.Equal(s, tt.wantScheds) {
				t.Errorf("EnginesAndSchedulers = %q, %q; want %q, %q", e, s, tt.wantEngines, tt.wantScheds)
			}
		})
	}
}
