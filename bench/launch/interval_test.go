package launch

import (
	"slices"
	"testing"
	"time"
)

func TestSampleInterval(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want time.Duration
	}{
		{[]string{"--runtime=1", "--time_based"}, ShortInterval},
		{[]string{"--runtime=4", "--ramp_time=500ms", "--time_based"}, ShortInterval},
		{[]string{"--runtime=4", "--ramp_time=1", "--time_based"}, 0}, // 5 s with its ramp
		{[]string{"--runtime=60", "--time_based"}, 0},
		{nil, 0}, // ends on its size: its length is not known
	} {
		plan, err := NewPlan(Spec{Args: append([]string{"--name=n", "--ioengine=null", "--size=4m"}, tt.args...)})
		if err != nil {
			t.Fatal(err)
		}
		steps, err := plan.Steps()
		if err != nil {
			t.Fatal(err)
		}
		if got := SampleInterval(steps); got != tt.want {
			t.Errorf("%q: interval %v, want %v", tt.args, got, tt.want)
		}
	}
}

// While a step prepares (a discard before its first I/O) Progress says
// so and does not count the step's time down; then the ramp, then the
// measurement.
func TestProgressPhases(t *testing.T) {
	_, ticks := progressOf(t, 20*time.Millisecond, 150*time.Millisecond, "--ramp_time=200ms", "--runtime=300ms", "--time_based")
	var phases []string
	for _, tk := range ticks {
		if len(phases) == 0 || phases[len(phases)-1] != tk.Phase {
			phases = append(phases, tk.Phase)
		}
		if tk.Phase == PhasePrepare && (tk.Elapsed != 0 || tk.Left != 500*time.Millisecond) {
			t.Errorf("preparing: elapsed %v, left %v; want 0 and the whole step", tk.Elapsed, tk.Left)
		}
	}
	if !slices.Equal(phases, []string{PhasePrepare, PhaseRamp, PhaseMeasure}) {
		t.Errorf("phases %q, want prepare, ramp, measure", phases)
	}
}
