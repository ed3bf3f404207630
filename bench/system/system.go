package system

import (
	"strings"
	"time"
)

// The types of the machine, disk and target readers, on every platform, so
// results recorded on Linux load, store and show anywhere; the readers
// themselves are in sysfs_linux.go and target_linux.go.

// FS names the roots of the /proc, /sys and /dev trees that the
// environment readers use. The zero value reads the live machine; tests point
// the roots at fixtures under testdata/.
type FS struct {
	Proc string // default "/proc"
	Sys  string // default "/sys"
	Dev  string // default "/dev"
}

// DiskStat is one line of /proc/diskstats: cumulative counters since boot.
// Times are in milliseconds. Field meanings are those of the kernel's
// Documentation/admin-guide/iostats.rst (and ABI/testing/procfs-diskstats).
type DiskStat struct {
	ReadIOs      uint64 `json:"read_ios"`      // field 1: reads completed
	ReadMerges   uint64 `json:"read_merges"`   // field 2: reads merged
	ReadSectors  uint64 `json:"read_sectors"`  // field 3: 512-byte sectors read
	ReadTicks    uint64 `json:"read_ticks"`    // field 4: ms spent reading
	WriteIOs     uint64 `json:"write_ios"`     // field 5: writes completed
	WriteMerges  uint64 `json:"write_merges"`  // field 6: writes merged
	WriteSectors uint64 `json:"write_sectors"` // field 7: 512-byte sectors written
	WriteTicks   uint64 `json:"write_ticks"`   // field 8: ms spent writing
	InFlight     uint64 `json:"in_flight"`     // field 9: I/Os in progress (a gauge, not a counter)
	IOTicks      uint64 `json:"io_ticks"`      // field 10: ms the device had I/O in flight
	TimeInQueue  uint64 `json:"time_in_queue"` // field 11: weighted ms, Σ in-flight × time
}

// DiskUtilization is what a device did over a measured window: fio's
// disk_util entry (deltas, diskutil.c) and iostat -x's per-second figures
// (sysstat iostat.c write_ext_stat and common.c compute_ext_disk_stats).
type DiskUtilization struct {
	Name string `json:"name"` // left to the caller: DiskDelta does not know it

	// fio disk_util: counter deltas over the window; ticks in ms.
	ReadIOs      uint64  `json:"read_ios"`
	WriteIOs     uint64  `json:"write_ios"`
	ReadMerges   uint64  `json:"read_merges"`
	WriteMerges  uint64  `json:"write_merges"`
	ReadSectors  uint64  `json:"read_sectors"`
	WriteSectors uint64  `json:"write_sectors"`
	ReadTicks    uint64  `json:"read_ticks"`
	WriteTicks   uint64  `json:"write_ticks"`
	IOTicks      uint64  `json:"io_ticks"`
	InQueue      uint64  `json:"in_queue"` // time_in_queue delta
	Util         float64 `json:"util"`     // 100 × io_ticks / elapsed, capped at 100 as fio does
	ElapsedMs    float64 `json:"elapsed_ms"`

	// iostat -x.
	ReadsPerSec       float64 `json:"r/s"`
	WritesPerSec      float64 `json:"w/s"`
	ReadKBPerSec      float64 `json:"rkB/s"`
	WriteKBPerSec     float64 `json:"wkB/s"`
	ReadMergesPerSec  float64 `json:"rrqm/s"`
	WriteMergesPerSec float64 `json:"wrqm/s"`
	ReadAwait         float64 `json:"r_await"` // ms per read
	WriteAwait        float64 `json:"w_await"` // ms per write
	AvgQueueSize      float64 `json:"aqu-sz"`
	// IostatUtil is iostat's %util: the same ratio as Util but not capped,
	// so it can read a little over 100 when the window is measured short.
	IostatUtil float64 `json:"%util"`

	// JobBytes are the bytes iolab's own jobs moved on the disk over the
	// same window; 0 when they could not be counted (a job without
	// O_DIRECT, or a run from before they were).
	JobBytes uint64 `json:"job_bytes,omitempty"`
}

// DisturbedShare is the share above which a disk's foreign bytes mark a
// step disturbed: 2 % more than the jobs moved.
const DisturbedShare = 0.02

// Foreign is what the disk moved beyond iolab's jobs over the window, in
// bytes and as a share of the jobs' bytes; ok is false when the jobs'
// bytes are unknown.
func (d DiskUtilization) Foreign() (bytes uint64, share float64, ok bool) {
	if d.JobBytes == 0 {
		return 0, 0, false
	}
	dev := (d.ReadSectors + d.WriteSectors) * 512
	if dev <= d.JobBytes {
		return 0, 0, true
	}
	bytes = dev - d.JobBytes
	return bytes, float64(bytes) / float64(d.JobBytes), true
}

// DiskDelta turns two DiskStats samples taken elapsed apart into fio's and
// iostat's figures. iostat's S_VALUE(m,n,p) is (n-m)/p per second, so with
// elapsed in seconds (elapsedMs in ms):
//
//	r/s     = Δread_ios / s                 rkB/s  = Δread_sectors / 2 / s
//	rrqm/s  = Δread_merges / s              r_await = Δread_ticks / Δread_ios
//	aqu-sz  = Δtime_in_queue / elapsedMs    %util  = 100 × Δio_ticks / elapsedMs
//
// and the same for writes. Sectors are always 512 bytes (iostats.rst).
func DiskDelta(before, after DiskStat, elapsed time.Duration) DiskUtilization {
	d := DiskUtilization{
		ReadIOs:      counterDelta(before.ReadIOs, after.ReadIOs),
		WriteIOs:     counterDelta(before.WriteIOs, after.WriteIOs),
		ReadMerges:   counterDelta(before.ReadMerges, after.ReadMerges),
		WriteMerges:  counterDelta(before.WriteMerges, after.WriteMerges),
		ReadSectors:  counterDelta(before.ReadSectors, after.ReadSectors),
		WriteSectors: counterDelta(before.WriteSectors, after.WriteSectors),
		ReadTicks:    counterDelta(before.ReadTicks, after.ReadTicks),
		WriteTicks:   counterDelta(before.WriteTicks, after.WriteTicks),
		IOTicks:      counterDelta(before.IOTicks, after.IOTicks),
		InQueue:      counterDelta(before.TimeInQueue, after.TimeInQueue),
	}
	if d.ReadIOs > 0 {
		d.ReadAwait = float64(d.ReadTicks) / float64(d.ReadIOs)
	}
	if d.WriteIOs > 0 {
		d.WriteAwait = float64(d.WriteTicks) / float64(d.WriteIOs)
	}
	if elapsed <= 0 {
		return d
	}
	ms := float64(elapsed) / float64(time.Millisecond)
	sec := ms / 1000
	d.ElapsedMs = ms
	d.ReadsPerSec = float64(d.ReadIOs) / sec
	d.WritesPerSec = float64(d.WriteIOs) / sec
	d.ReadKBPerSec = float64(d.ReadSectors) / 2 / sec
	d.WriteKBPerSec = float64(d.WriteSectors) / 2 / sec
	d.ReadMergesPerSec = float64(d.ReadMerges) / sec
	d.WriteMergesPerSec = float64(d.WriteMerges) / sec
	d.AvgQueueSize = float64(d.InQueue) / ms
	d.IostatUtil = 100 * float64(d.IOTicks) / ms
	d.Util = min(d.IostatUtil, 100)
	return d
}

// counterDelta is after-before for a kernel counter. The tick fields are
// printed as 32-bit unsigned ints (block/genhd.c diskstats_show) and wrap
// after ~49.7 days of busy time; a value that went down from below 2^32 is
// taken as such a wrap, anything else that went down as a reset (device
// removed and re-added) — the rule sysstat's iostat applies to sectors.
func counterDelta(before, after uint64) uint64 {
	switch {
	case after >= before:
		return after - before
	case before <= 0xffffffff:
		return (after - before) & 0xffffffff
	default:
		return 0
	}
}

// CPUTimes is the aggregate "cpu " line of /proc/stat, in USER_HZ ticks
// (Documentation/filesystems/proc.rst, "1.8 Miscellaneous kernel statistics").
// Guest time is already included in User and Nice, so it is not read.
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

// CPUBreakdown is the share of all CPUs' time over a window, in percent, in
// top's columns. IOWait is idle time with I/O outstanding, not work: a thread
// blocked in io_uring_enter shows up there.
type CPUBreakdown struct {
	User    float64 `json:"user"`    // us, including nice (ni)
	System  float64 `json:"system"`  // sy
	IRQ     float64 `json:"irq"`     // hi
	SoftIRQ float64 `json:"softirq"` // si
	IOWait  float64 `json:"iowait"`  // wa
	Idle    float64 `json:"idle"`    // id
	Steal   float64 `json:"steal"`   // st
}

// CPUDelta gives the breakdown between samples a (earlier) and b (later).
// The total is the sum of the eight fields, as iostat's avg-cpu and top use.
func CPUDelta(a, b CPUTimes) CPUBreakdown {
	user := counterDelta(a.User, b.User) + counterDelta(a.Nice, b.Nice)
	sys := counterDelta(a.System, b.System)
	irq := counterDelta(a.IRQ, b.IRQ)
	soft := counterDelta(a.SoftIRQ, b.SoftIRQ)
	wait := counterDelta(a.IOWait, b.IOWait)
	idle := counterDelta(a.Idle, b.Idle)
	steal := counterDelta(a.Steal, b.Steal)
	total := float64(user + sys + irq + soft + wait + idle + steal)
	if total == 0 {
		return CPUBreakdown{}
	}
	pct := func(x uint64) float64 { return 100 * float64(x) / total }
	return CPUBreakdown{User: pct(user), System: pct(sys), IRQ: pct(irq),
		SoftIRQ: pct(soft), IOWait: pct(wait), Idle: pct(idle), Steal: pct(steal)}
}

// ProcCPU is the benchmark process's own resource use (all its threads), from
// getrusage(RUSAGE_SELF): what fio reports as usr_cpu, sys_cpu, ctx, majf and
// minf, and pidstat as %usr, %system, cswch/s, nvcswch/s, minflt/s, majflt/s.
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

// Sub returns p - before, the use over the window between two samples.
func (p ProcCPU) Sub(before ProcCPU) ProcCPU {
	return ProcCPU{
		User:           p.User - before.User,
		System:         p.System - before.System,
		VoluntaryCtx:   counterDelta(before.VoluntaryCtx, p.VoluntaryCtx),
		InvoluntaryCtx: counterDelta(before.InvoluntaryCtx, p.InvoluntaryCtx),
		MinorFaults:    counterDelta(before.MinorFaults, p.MinorFaults),
		MajorFaults:    counterDelta(before.MajorFaults, p.MajorFaults),
	}
}

// HostInfo describes the machine a run ran on: what must match, or at least be
// shown, when runs from different hosts or kernels are compared. A run
// imported from fio's output knows little of it: what was not recorded is
// zero here, left out of the JSON, and reads Unknown through the methods
// in host.go, never as a zero.
type HostInfo struct {
	Hostname      string    `json:"hostname"`
	KernelRelease string    `json:"kernel_release"`           // uname -r
	KernelVersion string    `json:"kernel_version,omitempty"` // uname -v
	Arch          string    `json:"arch,omitempty"`           // uname -m
	CPUModel      string    `json:"cpu_model,omitempty"`
	CPUCount      int       `json:"cpu_count,omitempty"`
	MemTotal      int64     `json:"mem_total,omitempty"` // bytes
	Cmdline       string    `json:"cmdline,omitempty"`
	IOMMU         IOMMUInfo `json:"iommu,omitzero"`
	Governor      string    `json:"cpu_governor,omitempty"` // cpu0's scaling_governor, if cpufreq is there
	// Clock is the timer iolab's job loops read by default: "tsc" (the
	// CPU's counter, where fio would read it: see bench/tsc) or
	// "clock_gettime" (the monotonic clock through the vDSO); see
	// bench.ClockSource. A job's clocksource option may choose another:
	// its JobResult.Clock says.
	Clock string `json:"clock,omitempty"`
}

// IOMMUInfo is what can be told about the IOMMU without privileges. It
// matters because DMA remapping costs per-I/O time: IOPS differ by tens of
// percent between translated and passthrough/off.
type IOMMUInfo struct {
	// Mode is "off" (no IOMMU groups: no IOMMU, or disabled), "passthrough"
	// (groups whose default domain is identity, e.g. iommu=pt), "translated"
	// (DMA or DMA-FQ domains) or "on" when groups exist but their type is
	// unreadable.
	Mode string `json:"mode"`
	// CmdlineFlags are the IOMMU options on the kernel command line, as given.
	CmdlineFlags []string `json:"cmdline_flags,omitempty"`
	// Devices are the entries of /sys/class/iommu (dmar0, ivhd0, …).
	Devices []string `json:"devices,omitempty"`
	// Groups is the number of /sys/kernel/iommu_groups entries.
	Groups int `json:"groups"`
	// GroupTypes counts groups by default domain type (iommu_groups/N/type).
	GroupTypes map[string]int `json:"group_types,omitempty"`
}

// NoScheduler says, for a disk with no I/O scheduler to choose, what it
// has and why: "none (zram has no I/O scheduler)" for a bio-based device
// (a queue directory read, its block sizes there, but no scheduler file:
// zram, dm, md) or one whose scheduler file offers a bare "none"; "" for
// a disk with a choice, a target without a disk, and a disk whose queue
// was not read (an import, an older run: its scheduler is unknown).
func (t Target) NoScheduler() string {
	bare := len(t.Schedulers) == 1 && t.Schedulers[0] == "none"
	missing := t.Scheduler == "" && len(t.Schedulers) == 0 && t.LogicalBlockSize > 0
	if t.Disk == "" || !bare && !missing {
		return ""
	}
	kind := t.Driver
	if kind == "" {
		kind = strings.TrimRight(t.Disk, "0123456789")
		kind = strings.TrimSuffix(kind, "-") // dm-0: dm
	}
	if kind == "" {
		kind = t.Disk
	}
	return "none (" + kind + " has no I/O scheduler)"
}

// Target is a job's file or block device, resolved, with what the
// environment capture records about the device behind it.
type Target struct {
	Path     string `json:"path"`     // as the job names it
	Resolved string `json:"resolved"` // absolute, symlinks followed
	IsBlock  bool   `json:"is_block"`
	Size     int64  `json:"size"` // bytes: the device (or partition), or the file
	// Dev is the "major:minor" of the block device, or for a file of the
	// filesystem holding it (0:N for tmpfs, overlay, btrfs…).
	Dev string `json:"dev"`
	// Disk is the whole disk as /proc/diskstats and /sys/block name it
	// ("loop0", "zram0", "vda", "nvme0n1", "dm-0"); "" for a file on a
	// filesystem without a block device (tmpfs, overlay).
	Disk      string `json:"disk,omitempty"`
	Partition string `json:"partition,omitempty"` // "sda1" when the target (or the file's filesystem) is on a partition
	// Filesystem is the type of the filesystem holding a regular file.
	Filesystem string `json:"filesystem,omitempty"`
	Model      string `json:"model,omitempty"`
	Firmware   string `json:"firmware,omitempty"` // the device's firmware revision (NVMe firmware_rev, SCSI/ATA rev)
	// Serial is the device's serial number (an NVMe controller's serial)
	// and WWID its world-wide identifier (an NVMe namespace's eui./nguid,
	// a SCSI/ATA disk's naa./t10. name), where sysfs gives them: a PTS
	// report names the device it qualified by them.
	Serial            string   `json:"serial,omitempty"`
	WWID              string   `json:"wwid,omitempty"`
	Driver            string   `json:"driver,omitempty"`
	LogicalBlockSize  int      `json:"logical_block_size,omitempty"`
	PhysicalBlockSize int      `json:"physical_block_size,omitempty"`
	Rotational        bool     `json:"rotational"`
	Scheduler         string   `json:"scheduler,omitempty"`  // active one; "" for bio-based devices (zram, dm)
	Schedulers        []string `json:"schedulers,omitempty"` // available ones
	NrRequests        int      `json:"nr_requests,omitempty"`
	IOPoll            bool     `json:"io_poll"`
	NUMANode          int      `json:"numa_node"` // -1: none or unknown
	// Inode is a regular file's inode number (with Dev, its identity), so
	// that the file opened for I/O can be checked to be the one resolved
	// and checked; 0 for block devices and files not there yet.
	Inode uint64 `json:"inode,omitempty"`
	// DIOMemAlign and DIOOffsetAlign are statx's O_DIRECT alignment for
	// buffers and for offsets/lengths; 0 when the kernel does not report it.
	DIOMemAlign    uint32 `json:"dio_mem_align,omitempty"`
	DIOOffsetAlign uint32 `json:"dio_offset_align,omitempty"`
}

// UnsafeTargetError is CheckWritable's refusal.
type UnsafeTargetError struct {
	Path     string // as the job names it
	Resolved string // after symlinks, when different
	Reason   string // "is mounted on /mnt/x", "carries an ext4 filesystem signature", …
}

func (e *UnsafeTargetError) Error() string {
	name := e.Path
	if e.Resolved != "" && e.Resolved != e.Path {
		name += " (→ " + e.Resolved + ")"
	}
	return name + " " + e.Reason + "; refusing to write (pass --allow_mounted_write=1 to write anyway)"
}
