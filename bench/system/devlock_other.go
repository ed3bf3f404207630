//go:build !linux

package system

import "errors"

// ErrDeviceBusy is TryLockDevice's error when another process holds the
// device's lock.
var ErrDeviceBusy = errors.New("in use by another iolab run")

// DeviceLock is an exclusive lock on one device across processes.
type DeviceLock struct{ Key string }

// LockDir is where device locks live.
func LockDir() string { return "" }

// TryLockDevice is Linux's.
func TryLockDevice(dir, key, holder string) (*DeviceLock, error) { return nil, errors.ErrUnsupported }

// Unlock releases the lock.
func (l *DeviceLock) Unlock() error { return nil }
