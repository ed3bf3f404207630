package bench

import (
	"io"
	"log/slog"
	"time"
)

// Runner runs a Config's groups of jobs and measures them.
type Runner struct {
	Sys System
	// Interval is the per-interval sampling period (default 1 s).
	Interval time.Duration
	Log      *slog.Logger
}

func (rn *Runner) log() *slog.Logger {
	if rn.Log != nil {
		return rn.Log
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}
