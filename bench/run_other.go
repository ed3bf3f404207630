//go:build !linux

package bench

import (
	"context"
	"errors"
	"fmt"
)

// Run needs Linux: the engines are Linux system calls.
func (rn *Runner) Run(ctx context.Context, cfg *Config) (*Result, error) {
	return nil, fmt.Errorf("iolab run: the engines need Linux: %w", errors.ErrUnsupported)
}
