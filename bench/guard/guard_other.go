//go:build !linux

package guard

import "errors"

// Guard is Linux's: elsewhere no target can be opened by identity.
type Guard struct{}

// New is Linux-only.
func New(targets []string, dataDir, whose string) (*Guard, error) { return nil, errors.ErrUnsupported }

// Unrestricted is Linux-only: its guard refuses everything.
func Unrestricted() *Guard { return &Guard{} }
