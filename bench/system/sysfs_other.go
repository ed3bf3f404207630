//go:build !linux

package system

import "errors"

// DiskStats is Linux-only.
func (s FS) DiskStats() (map[string]DiskStat, error) { return nil, errors.ErrUnsupported }

// CPUTimes is Linux-only.
func (s FS) CPUTimes() (CPUTimes, error) { return CPUTimes{}, errors.ErrUnsupported }

// ProcessCPU is Linux-only.
func ProcessCPU() (ProcCPU, error) { return ProcCPU{}, errors.ErrUnsupported }

// Host is Linux-only.
func (s FS) Host() (HostInfo, error) { return HostInfo{}, errors.ErrUnsupported }

// NUMANodes is Linux-only.
func (s FS) NUMANodes() ([]NUMANode, error) { return nil, errors.ErrUnsupported }
