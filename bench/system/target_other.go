//go:build !linux

package system

import "errors"

// ResolveTarget is Linux-only.
func (s FS) ResolveTarget(path string) (Target, error) { return Target{}, errors.ErrUnsupported }

// CheckWritable is Linux-only.
func (s FS) CheckWritable(t Target) error { return errors.ErrUnsupported }

// CheckPoll is Linux-only.
func (s FS) CheckPoll(t Target) error { return errors.ErrUnsupported }
