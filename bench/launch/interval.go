package launch

import (
	"time"

	"iolab/bench/sweep"
)

// ShortStep is the step length below which the dashboard samples every
// ShortInterval instead of every second: a 1 s step sampled each second
// is one point, no timeline.
const (
	ShortStep     = 5 * time.Second
	ShortInterval = 100 * time.Millisecond
)

// SampleInterval is the sampling interval for a plan's steps: ShortInterval
// when every step is time-based and shorter than ShortStep, else 0 (the
// runner's default, 1 s). The interval is stored with each job's result.
func SampleInterval(steps []sweep.Step) time.Duration {
	if len(steps) == 0 {
		return 0
	}
	for i := range steps {
		if d, ok := StepLength(&steps[i]); !ok || d >= ShortStep {
			return 0
		}
	}
	return ShortInterval
}
