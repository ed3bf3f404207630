//go:build !linux

package bench

import "errors"

// Target mirrors target_linux.go's, so recorded targets load anywhere.
type Target struct {
	Path              string   `json:"path"`
	Resolved          string   `json:"resolved"`
	IsBlock           bool     `json:"is_block"`
	Size              int64    `json:"size"`
	Dev               string   `json:"dev"`
	Disk              string   `json:"disk,omitempty"`
	Partition         string   `json:"partition,omitempty"`
	Filesystem        string   `json:"filesystem,omitempty"`
	Model             string   `json:"model,omitempty"`
	Driver            string   `json:"driver,omitempty"`
	LogicalBlockSize  int      `json:"logical_block_size,omitempty"`
	PhysicalBlockSize int      `json:"physical_block_size,omitempty"`
	Rotational        bool     `json:"rotational"`
	Scheduler         string   `json:"scheduler,omitempty"`
	Schedulers        []string `json:"schedulers,omitempty"`
	NrRequests        int      `json:"nr_requests,omitempty"`
	IOPoll            bool     `json:"io_poll"`
	NUMANode          int      `json:"numa_node"`
	DIOMemAlign       uint32   `json:"dio_mem_align,omitempty"`
	DIOOffsetAlign    uint32   `json:"dio_offset_align,omitempty"`
}

// UnsafeTargetError is CheckWritable's refusal.
type UnsafeTargetError struct {
	Path     string
	Resolved string
	Reason   string
}

func (e *UnsafeTargetError) Error() string {
	name := e.Path
	if e.Resolved != "" && e.Resolved != e.Path {
		name += " (→ " + e.Resolved + ")"
	}
	return name + " " + e.Reason + "; refusing to write (pass --allow_mounted_write=1 to write anyway)"
}

// ResolveTarget is Linux-only.
func (s System) ResolveTarget(path string) (Target, error) { return Target{}, errors.ErrUnsupported }

// CheckWritable is Linux-only; refusing is the safe answer elsewhere.
func (s System) CheckWritable(t Target) error { return errors.ErrUnsupported }

// CheckPoll is Linux-only.
func (s System) CheckPoll(t Target) error { return errors.ErrUnsupported }
