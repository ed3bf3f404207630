package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// System names the roots of the /proc, /sys and /dev trees that the
// environment readers use. The zero value reads the live machine; tests point
// the roots at fixtures under testdata/.
type System struct {
	Proc string // default "/proc"
	Sys  string // default "/sys"
	Dev  string // default "/dev"
}

func (s System) procPath(elem ...string) string { return rootJoin(s.Proc, "/proc", elem) }
func (s System) sysPath(elem ...string) string  { return rootJoin(s.Sys, "/sys", elem) }

func rootJoin(root, def string, elem []string) string {
	if root == "" {
		root = def
	}
	return filepath.Join(append([]string{root}, elem...)...)
}

// devPath maps an absolute path under /dev, as the kernel prints it in
// mountinfo or /proc/swaps, into s.Dev; other paths are left alone.
func (s System) devPath(p string) string {
	if s.Dev == "" || s.Dev == "/dev" {
		return p
	}
	if rest, ok := strings.CutPrefix(p, "/dev/"); ok {
		return filepath.Join(s.Dev, rest)
	}
	return p
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

// DiskStats reads /proc/diskstats, keyed by device name (vda, loop0, sda1, …).
func (s System) DiskStats() (map[string]DiskStat, error) {
	f, err := os.Open(s.procPath("diskstats"))
	if err != nil {
		return nil, fmt.Errorf("diskstats: %w", err)
	}
	defer f.Close()
	stats, err := parseDiskStats(f)
	if err != nil {
		return nil, fmt.Errorf("diskstats: %w", err)
	}
	return stats, nil
}

// parseDiskStats parses the format of iostats.rst: "major minor name" and
// then 11 fields (kernels before 4.18, 14 columns), 15 fields (4.18+ adds
// discards: 18 columns) or 17 fields (5.5+ adds flushes: 20 columns). Only
// the first 11 are kept; discards and flushes are not part of iostat -x's
// r/w figures nor of fio's disk_util.
func parseDiskStats(r io.Reader) (map[string]DiskStat, error) {
	stats := make(map[string]DiskStat)
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) < 14 {
			return nil, fmt.Errorf("line %d: %d columns, want 14, 18 or 20", n, len(f))
		}
		var v [11]uint64
		for i := range v {
			x, err := strconv.ParseUint(f[3+i], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d (%s): field %d: %w", n, f[2], i+1, err)
			}
			v[i] = x
		}
		stats[f[2]] = DiskStat{
			ReadIOs: v[0], ReadMerges: v[1], ReadSectors: v[2], ReadTicks: v[3],
			WriteIOs: v[4], WriteMerges: v[5], WriteSectors: v[6], WriteTicks: v[7],
			InFlight: v[8], IOTicks: v[9], TimeInQueue: v[10],
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return stats, nil
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

// CPUTimes reads the all-CPU line of /proc/stat.
func (s System) CPUTimes() (CPUTimes, error) {
	f, err := os.Open(s.procPath("stat"))
	if err != nil {
		return CPUTimes{}, fmt.Errorf("cpu times: %w", err)
	}
	defer f.Close()
	t, err := parseProcStat(f)
	if err != nil {
		return CPUTimes{}, fmt.Errorf("cpu times: %s: %w", f.Name(), err)
	}
	return t, nil
}

func parseProcStat(r io.Reader) (CPUTimes, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || f[0] != "cpu" {
			continue
		}
		// user nice system idle are always there; iowait, irq and softirq
		// came in 2.6, steal in 2.6.11.
		if len(f) < 5 {
			return CPUTimes{}, fmt.Errorf("cpu line has %d fields", len(f)-1)
		}
		var v [8]uint64
		for i := 0; i < len(v) && i+1 < len(f); i++ {
			x, err := strconv.ParseUint(f[i+1], 10, 64)
			if err != nil {
				return CPUTimes{}, fmt.Errorf("cpu field %d: %w", i+1, err)
			}
			v[i] = x
		}
		return CPUTimes{User: v[0], Nice: v[1], System: v[2], Idle: v[3],
			IOWait: v[4], IRQ: v[5], SoftIRQ: v[6], Steal: v[7]}, nil
	}
	if err := sc.Err(); err != nil {
		return CPUTimes{}, err
	}
	return CPUTimes{}, errors.New(`no "cpu" line`)
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

// ProcessCPU samples the current process's resource use.
func ProcessCPU() (ProcCPU, error) {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return ProcCPU{}, fmt.Errorf("getrusage: %w", err)
	}
	return ProcCPU{
		User:           time.Duration(ru.Utime.Nano()),
		System:         time.Duration(ru.Stime.Nano()),
		VoluntaryCtx:   uint64(ru.Nvcsw),
		InvoluntaryCtx: uint64(ru.Nivcsw),
		MinorFaults:    uint64(ru.Minflt),
		MajorFaults:    uint64(ru.Majflt),
	}, nil
}

// HostInfo describes the machine a run ran on: what must match, or at least be
// shown, when runs from different hosts or kernels are compared.
type HostInfo struct {
	Hostname      string    `json:"hostname"`
	KernelRelease string    `json:"kernel_release"` // uname -r
	KernelVersion string    `json:"kernel_version"` // uname -v
	Arch          string    `json:"arch"`           // uname -m
	CPUModel      string    `json:"cpu_model"`
	CPUCount      int       `json:"cpu_count"`
	MemTotal      int64     `json:"mem_total"` // bytes
	Cmdline       string    `json:"cmdline"`
	IOMMU         IOMMUInfo `json:"iommu"`
	Governor      string    `json:"cpu_governor,omitempty"` // cpu0's scaling_governor, if cpufreq is there
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

// Host gathers HostInfo. Hostname and kernel come from /proc/sys/kernel (what
// uname reports; os.Hostname reads the same file), falling back to uname when
// the proc root lacks them.
func (s System) Host() (HostInfo, error) {
	var h HostInfo
	var uts unix.Utsname
	unameErr := unix.Uname(&uts)
	uname := func(b []byte) string { return string(bytes.TrimRight(b, "\x00")) }
	if unameErr == nil {
		h.Arch = uname(uts.Machine[:])
	}
	for _, f := range []struct {
		dst  *string
		name string
		uts  []byte
	}{
		{&h.Hostname, "hostname", uts.Nodename[:]},
		{&h.KernelRelease, "osrelease", uts.Release[:]},
		{&h.KernelVersion, "version", uts.Version[:]},
	} {
		v, err := readTrimmed(s.procPath("sys", "kernel", f.name))
		if err != nil {
			if unameErr != nil {
				return HostInfo{}, fmt.Errorf("host: %w (uname: %v)", err, unameErr)
			}
			v = uname(f.uts)
		}
		*f.dst = v
	}

	cpu, err := os.ReadFile(s.procPath("cpuinfo"))
	if err != nil {
		return HostInfo{}, fmt.Errorf("host: %w", err)
	}
	h.CPUModel, h.CPUCount = parseCPUInfo(cpu)

	mem, err := os.ReadFile(s.procPath("meminfo"))
	if err != nil {
		return HostInfo{}, fmt.Errorf("host: %w", err)
	}
	if h.MemTotal, err = parseMemTotal(mem); err != nil {
		return HostInfo{}, fmt.Errorf("host: %s: %w", s.procPath("meminfo"), err)
	}

	if h.Cmdline, err = readTrimmed(s.procPath("cmdline")); err != nil {
		return HostInfo{}, fmt.Errorf("host: %w", err)
	}
	if h.IOMMU, err = s.iommu(h.Cmdline); err != nil {
		return HostInfo{}, fmt.Errorf("host: %w", err)
	}
	gov, err := readTrimmed(s.sysPath("devices", "system", "cpu", "cpu0", "cpufreq", "scaling_governor"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return HostInfo{}, fmt.Errorf("host: %w", err)
	}
	h.Governor = gov
	return h, nil
}

// parseCPUInfo returns the first model line and the number of processors.
// x86 says "model name"; arm64 has no model line but "CPU part" ids, some
// arm32 "Processor" or "Hardware", ppc64 "cpu".
func parseCPUInfo(b []byte) (model string, n int) {
	rank := map[string]int{"model name": 4, "Processor": 3, "Hardware": 2, "cpu": 1}
	best := 0
	for line := range strings.Lines(string(b)) {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if k == "processor" {
			n++
		}
		if r := rank[k]; r > best && v != "" {
			model, best = v, r
		}
	}
	return model, n
}

func parseMemTotal(b []byte) (int64, error) {
	for line := range strings.Lines(string(b)) {
		rest, ok := strings.CutPrefix(line, "MemTotal:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			break
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("MemTotal: %w", err)
		}
		return kb * 1024, nil
	}
	return 0, errors.New("no MemTotal line")
}

func (s System) iommu(cmdline string) (IOMMUInfo, error) {
	var info IOMMUInfo
	for _, f := range strings.Fields(cmdline) {
		if f == "--" {
			break // the rest goes to init
		}
		for _, p := range []string{"iommu=", "iommu.", "intel_iommu=", "amd_iommu=", "amd_iommu_intr="} {
			if strings.HasPrefix(f, p) {
				info.CmdlineFlags = append(info.CmdlineFlags, f)
				break
			}
		}
	}
	devs, err := readDirNames(s.sysPath("class", "iommu"))
	if err != nil {
		return info, err
	}
	info.Devices = devs
	groups, err := readDirNames(s.sysPath("kernel", "iommu_groups"))
	if err != nil {
		return info, err
	}
	info.Groups = len(groups)
	for _, g := range groups {
		t, err := readTrimmed(s.sysPath("kernel", "iommu_groups", g, "type"))
		if err != nil {
			continue // before 5.11 there is no type file
		}
		if info.GroupTypes == nil {
			info.GroupTypes = make(map[string]int)
		}
		info.GroupTypes[t]++
	}
	switch {
	case info.Groups == 0:
		info.Mode = "off"
	case len(info.GroupTypes) == 0:
		info.Mode = "on"
	case info.GroupTypes["identity"] == info.Groups:
		info.Mode = "passthrough"
	default:
		info.Mode = "translated"
	}
	return info, nil
}

// readTrimmed reads a small proc or sysfs file without its surrounding space.
func readTrimmed(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// readDirNames lists a directory's entries (sorted, as os.ReadDir returns
// them); a missing directory is empty (sysfs leaves out whole classes when their driver is absent).
func readDirNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names, nil
}
