//go:build !linux

package system

import "errors"

// ErrNoScheduler is matched by the error of a device without an I/O
// scheduler (see sched_linux.go).
var ErrNoScheduler = errors.New("the device has no I/O scheduler")

// SchedulerSwitch records a disk whose scheduler a run changed and the one
// it had before.
type SchedulerSwitch struct {
	Disk     string `json:"disk"`
	Original string `json:"original"`
}

// Schedulers is Linux-only.
func (s FS) Schedulers(disk string) (active string, available []string, err error) {
	return "", nil, errors.ErrUnsupported
}

// CheckScheduler is Linux-only.
func (s FS) CheckScheduler(disk, name string) error { return errors.ErrUnsupported }

// SetScheduler is Linux-only.
func (s FS) SetScheduler(disk, name string) error { return errors.ErrUnsupported }

// SwitchScheduler is Linux-only.
func (s FS) SwitchScheduler(disk, name string) (restore func() error, original string, err error) {
	return nil, "", errors.ErrUnsupported
}

// RestoreScheduler is Linux-only.
func (s FS) RestoreScheduler(sw SchedulerSwitch) error { return errors.ErrUnsupported }

// SchedulerDisk is Linux-only.
func (s FS) SchedulerDisk(t Target, allowDisk bool) (string, error) {
	return "", errors.ErrUnsupported
}

// Discard is Linux-only.
func Discard(path string) error { return errors.ErrUnsupported }

// ErrSchedulerNotOffered is CheckScheduler's error for a scheduler the
// device does not list.
var ErrSchedulerNotOffered = errors.New("scheduler not offered")

// CheckDiscard is Linux's.
func (s FS) CheckDiscard(t Target) error { return errors.ErrUnsupported }

// DropCaches is Linux-only.
func (s FS) DropCaches() error { return errors.ErrUnsupported }
