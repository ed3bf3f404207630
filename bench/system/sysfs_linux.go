package system

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

func (s FS) procPath(elem ...string) string { return rootJoin(s.Proc, "/proc", elem) }
func (s FS) sysPath(elem ...string) string  { return rootJoin(s.Sys, "/sys", elem) }

func rootJoin(root, def string, elem []string) string {
	if root == "" {
		root = def
	}
	return filepath.Join(append([]string{root}, elem...)...)
}

// devPath maps an absolute path under /dev, as the kernel prints it in
// mountinfo or /proc/swaps, into s.Dev; other paths are left alone.
func (s FS) devPath(p string) string {
	if s.Dev == "" || s.Dev == "/dev" {
		return p
	}
	if rest, ok := strings.CutPrefix(p, "/dev/"); ok {
		return filepath.Join(s.Dev, rest)
	}
	return p
}

// DiskStats reads /proc/diskstats, keyed by device name (vda, loop0, sda1, …).
func (s FS) DiskStats() (map[string]DiskStat, error) {
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

// CPUTimes reads the all-CPU line of /proc/stat.
func (s FS) CPUTimes() (CPUTimes, error) {
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

// Host gathers HostInfo. Hostname and kernel come from /proc/sys/kernel (what
// uname reports; os.Hostname reads the same file), falling back to uname when
// the proc root lacks them.
func (s FS) Host() (HostInfo, error) {
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

func (s FS) iommu(cmdline string) (IOMMUInfo, error) {
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
