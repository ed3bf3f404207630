//go:build !linux

package bench

import (
	"errors"
	"time"
)

// The types below mirror sysfs_linux.go field for field, so that results
// recorded on Linux can be loaded, stored and shown anywhere; only the
// readers are Linux-only.

// System names the roots of the /proc, /sys and /dev trees; see
// sysfs_linux.go. Elsewhere every reader returns errors.ErrUnsupported.
type System struct {
	Proc string
	Sys  string
	Dev  string
}

// DiskStat is one line of Linux's /proc/diskstats.
type DiskStat struct {
	ReadIOs      uint64 `json:"read_ios"`
	ReadMerges   uint64 `json:"read_merges"`
	ReadSectors  uint64 `json:"read_sectors"`
	ReadTicks    uint64 `json:"read_ticks"`
	WriteIOs     uint64 `json:"write_ios"`
	WriteMerges  uint64 `json:"write_merges"`
	WriteSectors uint64 `json:"write_sectors"`
	WriteTicks   uint64 `json:"write_ticks"`
	InFlight     uint64 `json:"in_flight"`
	IOTicks      uint64 `json:"io_ticks"`
	TimeInQueue  uint64 `json:"time_in_queue"`
}

// DiskStats is Linux-only.
func (s System) DiskStats() (map[string]DiskStat, error) {
	return nil, errors.ErrUnsupported
}

// DiskUtilization is fio's disk_util and iostat -x's figures over a window.
type DiskUtilization struct {
	Name string `json:"name"`

	ReadIOs      uint64  `json:"read_ios"`
	WriteIOs     uint64  `json:"write_ios"`
	ReadMerges   uint64  `json:"read_merges"`
	WriteMerges  uint64  `json:"write_merges"`
	ReadSectors  uint64  `json:"read_sectors"`
	WriteSectors uint64  `json:"write_sectors"`
	ReadTicks    uint64  `json:"read_ticks"`
	WriteTicks   uint64  `json:"write_ticks"`
	IOTicks      uint64  `json:"io_ticks"`
	InQueue      uint64  `json:"in_queue"`
	Util         float64 `json:"util"`
	ElapsedMs    float64 `json:"elapsed_ms"`

	ReadsPerSec       float64 `json:"r/s"`
	WritesPerSec      float64 `json:"w/s"`
	ReadKBPerSec      float64 `json:"rkB/s"`
	WriteKBPerSec     float64 `json:"wkB/s"`
	ReadMergesPerSec  float64 `json:"rrqm/s"`
	WriteMergesPerSec float64 `json:"wrqm/s"`
	ReadAwait         float64 `json:"r_await"`
	WriteAwait        float64 `json:"w_await"`
	AvgQueueSize      float64 `json:"aqu-sz"`
	IostatUtil        float64 `json:"%util"`
}

// DiskDelta has no samples to compare off Linux: it returns the zero value.
func DiskDelta(before, after DiskStat, elapsed time.Duration) DiskUtilization {
	return DiskUtilization{}
}

// CPUTimes is the "cpu " line of Linux's /proc/stat.
type CPUTimes struct {
	User    uint64 `json:"user"`
	Nice    uint64 `json:"nice"`
	System  uint64 `json:"system"`
	Idle    uint64 `json:"idle"`
	IOWait  uint64 `json:"iowait"`
	IRQ     uint64 `json:"irq"`
	SoftIRQ uint64 `json:"softirq"`
	Steal   uint64 `json:"steal"`
}

// CPUTimes is Linux-only.
func (s System) CPUTimes() (CPUTimes, error) { return CPUTimes{}, errors.ErrUnsupported }

// CPUBreakdown is the share of all CPUs' time over a window, in percent.
type CPUBreakdown struct {
	User    float64 `json:"user"`
	System  float64 `json:"system"`
	IRQ     float64 `json:"irq"`
	SoftIRQ float64 `json:"softirq"`
	IOWait  float64 `json:"iowait"`
	Idle    float64 `json:"idle"`
	Steal   float64 `json:"steal"`
}

// CPUDelta has no samples to compare off Linux: it returns the zero value.
func CPUDelta(a, b CPUTimes) CPUBreakdown { return CPUBreakdown{} }

// ProcCPU is the benchmark process's own resource use.
type ProcCPU struct {
	User           time.Duration `json:"user_ns"`
	System         time.Duration `json:"system_ns"`
	VoluntaryCtx   uint64        `json:"voluntary_ctx"`
	InvoluntaryCtx uint64        `json:"involuntary_ctx"`
	MinorFaults    uint64        `json:"minor_faults"`
	MajorFaults    uint64        `json:"major_faults"`
}

// CtxSwitches is fio's ctx: voluntary plus involuntary switches.
func (p ProcCPU) CtxSwitches() uint64 { return p.VoluntaryCtx + p.InvoluntaryCtx }

// Sub returns p - before.
func (p ProcCPU) Sub(before ProcCPU) ProcCPU {
	return ProcCPU{
		User:           p.User - before.User,
		System:         p.System - before.System,
		VoluntaryCtx:   p.VoluntaryCtx - before.VoluntaryCtx,
		InvoluntaryCtx: p.InvoluntaryCtx - before.InvoluntaryCtx,
		MinorFaults:    p.MinorFaults - before.MinorFaults,
		MajorFaults:    p.MajorFaults - before.MajorFaults,
	}
}

// ProcessCPU is Linux-only.
func ProcessCPU() (ProcCPU, error) { return ProcCPU{}, errors.ErrUnsupported }

// HostInfo describes the machine a run ran on.
type HostInfo struct {
	Hostname      string    `json:"hostname"`
	KernelRelease string    `json:"kernel_release"`
	KernelVersion string    `json:"kernel_version"`
	Arch          string    `json:"arch"`
	CPUModel      string    `json:"cpu_model"`
	CPUCount      int       `json:"cpu_count"`
	MemTotal      int64     `json:"mem_total"`
	Cmdline       string    `json:"cmdline"`
	IOMMU         IOMMUInfo `json:"iommu"`
	Governor      string    `json:"cpu_governor,omitempty"`
}

// IOMMUInfo is the IOMMU state of a Linux host.
type IOMMUInfo struct {
	Mode         string         `json:"mode"`
	CmdlineFlags []string       `json:"cmdline_flags,omitempty"`
	Devices      []string       `json:"devices,omitempty"`
	Groups       int            `json:"groups"`
	GroupTypes   map[string]int `json:"group_types,omitempty"`
}

// Host is Linux-only.
func (s System) Host() (HostInfo, error) { return HostInfo{}, errors.ErrUnsupported }
