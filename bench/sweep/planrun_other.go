//go:build !linux

package sweep

import (
	"context"
	"errors"
	"fmt"

	"iolab/bench"
)

// Run needs Linux: the engines and the scheduler switches are Linux's.
func Run(ctx context.Context, rn *bench.Runner, plan *Plan, hooks PlanHooks) ([]StepResult, error) {
	return nil, fmt.Errorf("iolab: running a plan needs Linux: %w", errors.ErrUnsupported)
}

// Check needs Linux, as Run does.
func Check(rn *bench.Runner, plan *Plan) error {
	return fmt.Errorf("iolab: checking a plan against its targets needs Linux: %w", errors.ErrUnsupported)
}

// CheckSteps needs Linux, as Run does.
func CheckSteps(rn *bench.Runner, plan *Plan, steps []Step) ([]Step, error) {
	return nil, Check(rn, plan)
}
