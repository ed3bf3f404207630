package sweep

import (
	"strings"
	"testing"
	"time"

	"iolab/bench"
)

// TestStallRule: the bounds of the rule — 1 s plus a tenth of the window
// is allowed, more fails the step with the stall and the window named.
func TestStallRule(t *testing.T) {
	result := func(window, asked time.Duration) *bench.Result {
		return &bench.Result{Groups: []bench.GroupResult{{Jobs: []bench.JobResult{{Runtime: window, Job: bench.Job{Runtime: asked}}}}}}
	}
	tests := []struct {
		name    string
		stalled time.Duration
		result  *bench.Result
		want    string // "" when the step stays clean
	}{
		{"none", 0, result(5*time.Second, 5*time.Second), ""},
		{"within 1 s + 10 %", 1400 * time.Millisecond, result(5*time.Second, 5*time.Second), ""},
		{"above 1 s + 10 %", 1600 * time.Millisecond, result(5*time.Second, 5*time.Second), "stopped or starved for 1.6 s"},
		{"the issue's 28 s stop", 28 * time.Second, result(30*time.Second, 5*time.Second),
			"stopped or starved for 28.0 s during the step (its measured window lasted 30.0 s against a runtime of 5s); its figures are not kept"},
		{"no result: the wall time is the window", 2 * time.Second, nil, "stopped or starved for 2.0 s during the step; its"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := stallError(tt.stalled, 5*time.Second, tt.result)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("clean step failed: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}

// TestWatchStallsQuiet: a heartbeat over a quiet 300 ms sees no stall.
func TestWatchStallsQuiet(t *testing.T) {
	stop := watchStalls()
	time.Sleep(300 * time.Millisecond)
	if s := stop(); s > StallAllowed {
		t.Fatalf("stalled %s over a quiet 300 ms", s)
	}
}
