package handlers

import (
	"testing"

	"iolab/bench/launch"
)

// TestProgressText: a group's member line says its step and its latest
// figures, the clat p99 so far once its event carries one (the jobs'
// --status-interval snapshots), as the run page's live line does.
func TestProgressText(t *testing.T) {
	step := &launch.Event{Type: launch.EventStep, Data: launch.StepEvent{Step: 2, Total: 4, Label: "iodepth=4"}}
	for _, tc := range []struct {
		progress launch.ProgressEvent
		want     string
	}{
		{launch.ProgressEvent{Phase: "ramp", IOPS: 12300, Summed: true}, "step 2/4 iodepth=4 · ramp: 12.3k IOPS"},
		{launch.ProgressEvent{Phase: "measure", IOPS: 12300, Summed: true, ClatP99: 212.5}, "step 2/4 iodepth=4 · measure: 12.3k IOPS · clat p99 212µs so far"},
	} {
		ev := &launch.Event{Type: launch.EventProgress, Data: tc.progress}
		if got := progressText(step, ev); got != tc.want {
			t.Errorf("progressText = %q, want %q", got, tc.want)
		}
	}
}
