//go:build !linux

package bench

import "errors"

// ResolveTarget is Linux-only.
func (s System) ResolveTarget(path string) (Target, error) { return Target{}, errors.ErrUnsupported }

// CheckWritable is Linux-only.
func (s System) CheckWritable(t Target) error { return errors.ErrUnsupported }

// CheckPoll is Linux-only.
func (s System) CheckPoll(t Target) error { return errors.ErrUnsupported }
