package system

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// sysFixture is a whole machine's /proc, /sys and /dev under testdata/sys.
func sysFixture(name string) FS {
	root := filepath.Join("testdata", "sys", name)
	return FS{
		Proc: filepath.Join(root, "proc"),
		Sys:  filepath.Join(root, "sys"),
		Dev:  filepath.Join(root, "dev"),
	}
}

func TestDiskStatsFixture(t *testing.T) {
	stats, err := sysFixture("server").DiskStats()
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != 14 {
		t.Errorf("got %d devices, want 14", len(stats))
	}
	want := map[string]DiskStat{
		"sda": {ReadIOs: 120000, ReadMerges: 3000, ReadSectors: 9600000, ReadTicks: 450000,
			WriteIOs: 80000, WriteMerges: 16000, WriteSectors: 6400000, WriteTicks: 900000,
			InFlight: 2, IOTicks: 600000, TimeInQueue: 1350000},
		"nvme0n1": {ReadIOs: 5000000, ReadSectors: 40000000, ReadTicks: 1200000,
			WriteIOs: 2000000, WriteSectors: 16000000, WriteTicks: 700000,
			InFlight: 31, IOTicks: 900000, TimeInQueue: 1900000},
		"sdc1": {ReadIOs: 880, ReadSectors: 7040, ReadTicks: 98, WriteIOs: 880,
			WriteSectors: 7040, WriteTicks: 98, IOTicks: 190, TimeInQueue: 196},
	}
	for name, w := range want {
		if got := stats[name]; got != w {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, w)
		}
	}
}

// The three layouts of iostats.rst: 14 columns before 4.18, 18 with
// discards, 20 with flushes (5.5+). Only the first 11 stat fields count.
func TestParseDiskStatsLayouts(t *testing.T) {
	want := DiskStat{ReadIOs: 1, ReadMerges: 2, ReadSectors: 3, ReadTicks: 4, WriteIOs: 5,
		WriteMerges: 6, WriteSectors: 7, WriteTicks: 8, InFlight: 9, IOTicks: 10, TimeInQueue: 11}
	for _, tc := range []struct{ name, line string }{
		{"14", "   8       0 sda 1 2 3 4 5 6 7 8 9 10 11"},
		{"18", "   8       0 sda 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15"},
		{"20", "   8       0 sda 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stats, err := parseDiskStats(strings.NewReader(tc.line + "\n"))
			if err != nil {
				t.Fatal(err)
			}
			if got := stats["sda"]; got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
	for _, bad := range []string{
		"   8       0 sda 1 2 3 4 5 6 7 8 9 10",   // 13 columns
		"   8       0 sda 1 2 3 4 5 6 7 8 9 10 x", // not a number
	} {
		if _, err := parseDiskStats(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestDiskDelta(t *testing.T) {
	before := DiskStat{ReadIOs: 1000, ReadMerges: 10, ReadSectors: 80000, ReadTicks: 2000,
		WriteIOs: 500, WriteMerges: 50, WriteSectors: 40000, WriteTicks: 3000,
		IOTicks: 4000, TimeInQueue: 5000}
	after := DiskStat{ReadIOs: 21000, ReadMerges: 210, ReadSectors: 400000, ReadTicks: 12000,
		WriteIOs: 10500, WriteMerges: 2050, WriteSectors: 200000, WriteTicks: 23000,
		InFlight: 3, IOTicks: 5500, TimeInQueue: 35000}
	got := DiskDelta(before, after, 2*time.Second)
	// By hand, over 2 s: 20000 reads (10000 r/s) of 320000 sectors
	// (160000 KiB, 80000 rkB/s) taking 10000 ms (0.5 ms r_await), 200
	// merges (100 rrqm/s); 10000 writes (5000 w/s) of 160000 sectors
	// (40000 wkB/s), 20000 ms (2 ms w_await), 2000 merges (1000 wrqm/s);
	// busy 1500 of 2000 ms (75 %util); 30000 ms in queue (aqu-sz 15).
	want := DiskUtilization{
		ReadIOs: 20000, WriteIOs: 10000, ReadMerges: 200, WriteMerges: 2000,
		ReadSectors: 320000, WriteSectors: 160000, ReadTicks: 10000, WriteTicks: 20000,
		IOTicks: 1500, InQueue: 30000, Util: 75, ElapsedMs: 2000,
		ReadsPerSec: 10000, WritesPerSec: 5000, ReadKBPerSec: 80000, WriteKBPerSec: 40000,
		ReadMergesPerSec: 100, WriteMergesPerSec: 1000, ReadAwait: 0.5, WriteAwait: 2,
		AvgQueueSize: 15, IostatUtil: 75,
	}
	if got != want {
		t.Errorf("\n got %+v\nwant %+v", got, want)
	}

	t.Run("util capped like fio, not like iostat", func(t *testing.T) {
		d := DiskDelta(DiskStat{IOTicks: 100}, DiskStat{IOTicks: 1110}, time.Second)
		if d.Util != 100 || math.Abs(d.IostatUtil-101) > 1e-9 {
			t.Errorf("util %v, %%util %v; want 100 and 101", d.Util, d.IostatUtil)
		}
	})
	t.Run("32-bit tick wrap", func(t *testing.T) {
		d := DiskDelta(DiskStat{ReadIOs: 1, ReadTicks: 4294967000}, DiskStat{ReadIOs: 2, ReadTicks: 200}, time.Second)
		if d.ReadTicks != 496 || d.ReadAwait != 496 {
			t.Errorf("read ticks %d, r_await %v; want 496", d.ReadTicks, d.ReadAwait)
		}
	})
	t.Run("reset counts as nothing", func(t *testing.T) {
		d := DiskDelta(DiskStat{ReadSectors: 1 << 40}, DiskStat{ReadSectors: 8}, time.Second)
		if d.ReadSectors != 0 {
			t.Errorf("read sectors %d after a reset, want 0", d.ReadSectors)
		}
	})
	t.Run("no elapsed time", func(t *testing.T) {
		d := DiskDelta(before, after, 0)
		if d.ReadsPerSec != 0 || d.Util != 0 || d.ReadIOs != 20000 || d.ReadAwait != 0.5 {
			t.Errorf("got %+v", d)
		}
	})
}

func TestCPUTimesFixture(t *testing.T) {
	got, err := sysFixture("server").CPUTimes()
	if err != nil {
		t.Fatal(err)
	}
	want := CPUTimes{User: 10000, Nice: 500, System: 3000, Idle: 80000, IOWait: 2000, IRQ: 100, SoftIRQ: 400}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := parseProcStat(strings.NewReader("cpu0 1 2 3 4\nintr 5\n")); err == nil {
		t.Error("no aggregate cpu line: no error")
	}
}

func TestCPUDelta(t *testing.T) {
	a := CPUTimes{User: 10000, Nice: 500, System: 3000, Idle: 80000, IOWait: 2000, IRQ: 100, SoftIRQ: 400, Steal: 50}
	b := CPUTimes{User: 10600, Nice: 600, System: 3200, Idle: 88400, IOWait: 2500, IRQ: 120, SoftIRQ: 480, Steal: 150}
	// Deltas: us 600+100, sy 200, hi 20, si 80, wa 500, id 8400, st 100 = 10000.
	got := CPUDelta(a, b)
	want := CPUBreakdown{User: 7, System: 2, IRQ: 0.2, SoftIRQ: 0.8, IOWait: 5, Idle: 84, Steal: 1}
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range g.NumField() {
		if math.Abs(g.Field(i).Float()-w.Field(i).Float()) > 1e-9 {
			t.Errorf("%s = %v, want %v", g.Type().Field(i).Name, g.Field(i).Float(), w.Field(i).Float())
		}
	}
	if z := CPUDelta(a, a); z != (CPUBreakdown{}) {
		t.Errorf("no time passed: %+v, want zero", z)
	}
}

func TestHostFixture(t *testing.T) {
	got, err := sysFixture("server").Host()
	if err != nil {
		t.Fatal(err)
	}
	got.Arch = "" // from uname: the machine running the test
	want := HostInfo{
		Hostname:      "db-bench-01",
		KernelRelease: "6.8.0-45-generic",
		KernelVersion: "#45-Ubuntu SMP PREEMPT_DYNAMIC Fri Aug 30 12:02:04 UTC 2024",
		CPUModel:      "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz",
		CPUCount:      4,
		MemTotal:      263846420 * 1024,
		Cmdline:       "BOOT_IMAGE=/vmlinuz-6.8.0-45-generic root=/dev/mapper/vg0-root ro intel_iommu=on iommu=pt quiet splash",
		IOMMU: IOMMUInfo{
			Mode:         "passthrough",
			CmdlineFlags: []string{"intel_iommu=on", "iommu=pt"},
			Devices:      []string{"dmar0", "dmar1"},
			Groups:       3,
			GroupTypes:   map[string]int{"identity": 3},
		},
		Governor: "performance",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("\n got %+v\nwant %+v", got, want)
	}
}

func TestHostIOMMUModes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		types  []string // one group per entry; "" for a group without a type file
		cmd    string
		want   string
		nflags int
	}{
		{"no iommu", nil, "root=/dev/vda quiet", "off", 0},
		{"disabled", nil, "intel_iommu=off", "off", 1},
		{"translated", []string{"DMA-FQ", "DMA-FQ", "identity"}, "amd_iommu=on iommu.strict=0", "translated", 2},
		{"passthrough", []string{"identity"}, "iommu.passthrough=1 -- iommu=off", "passthrough", 1},
		{"old kernel", []string{""}, "", "on", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for i, typ := range tc.types {
				dir := filepath.Join(root, "kernel", "iommu_groups", string(rune('0'+i)))
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if typ != "" {
					if err := os.WriteFile(filepath.Join(dir, "type"), []byte(typ+"\n"), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			got, err := FS{Sys: root}.iommu(tc.cmd)
			if err != nil {
				t.Fatal(err)
			}
			if got.Mode != tc.want || len(got.CmdlineFlags) != tc.nflags || got.Groups != len(tc.types) {
				t.Errorf("got %+v, want mode %s, %d flags, %d groups", got, tc.want, tc.nflags, len(tc.types))
			}
		})
	}
}

func TestParseCPUInfoArm64(t *testing.T) {
	// arm64 has no "model name"; take what there is rather than nothing.
	in := "processor\t: 0\nBogoMIPS\t: 50.00\nCPU part\t: 0xd0c\n\nprocessor\t: 1\nBogoMIPS\t: 50.00\n\nHardware\t: Ampere Altra\n"
	model, n := parseCPUInfo([]byte(in))
	if model != "Ampere Altra" || n != 2 {
		t.Errorf("got %q, %d", model, n)
	}
}

func TestProcessCPU(t *testing.T) {
	before, err := ProcessCPU()
	if err != nil {
		t.Fatal(err)
	}
	// Burn CPU until getrusage sees it (its resolution is the scheduler tick).
	deadline := time.Now().Add(2 * time.Second)
	var after ProcCPU
	for x := uint64(1); time.Now().Before(deadline); {
		for range 1 << 20 {
			x = x*6364136223846793005 + 1442695040888963407
		}
		runtime.KeepAlive(x)
		if after, err = ProcessCPU(); err != nil {
			t.Fatal(err)
		}
		if after.User > before.User {
			break
		}
	}
	d := after.Sub(before)
	if d.User <= 0 {
		t.Errorf("user time did not grow over a busy loop: %+v", d)
	}
	if d.System < 0 || d.CtxSwitches() != d.VoluntaryCtx+d.InvoluntaryCtx {
		t.Errorf("bad delta %+v", d)
	}
	if after.MinorFaults == 0 {
		t.Errorf("a Go process with no minor faults: %+v", after)
	}
}

// The live machine: whatever it is, these must hold.
func TestLiveDiskStatsCPUHost(t *testing.T) {
	var s FS
	stats, err := s.DiskStats()
	if err != nil {
		t.Fatal(err)
	}
	disks, err := readDirNames("/sys/block")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range disks {
		if _, ok := stats[d]; !ok {
			t.Errorf("/sys/block/%s is not in /proc/diskstats", d)
		}
	}

	a, err := s.CPUTimes()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	b, err := s.CPUTimes()
	if err != nil {
		t.Fatal(err)
	}
	if a.User+a.System+a.Idle == 0 {
		t.Errorf("no CPU time since boot: %+v", a)
	}
	if br := CPUDelta(a, b); br != (CPUBreakdown{}) {
		sum := br.User + br.System + br.IRQ + br.SoftIRQ + br.IOWait + br.Idle + br.Steal
		if math.Abs(sum-100) > 1e-6 {
			t.Errorf("breakdown sums to %v: %+v", sum, br)
		}
	}

	h, err := s.Host()
	if err != nil {
		t.Fatal(err)
	}
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		t.Fatal(err)
	}
	release := string(bytes.TrimRight(uts.Release[:], "\x00"))
	hostname, _ := os.Hostname()
	if h.KernelRelease != release || h.Hostname != hostname {
		t.Errorf("host %q kernel %q, uname says %q %q", h.Hostname, h.KernelRelease, hostname, release)
	}
	if h.CPUCount < 1 || h.MemTotal <= 0 || h.Cmdline == "" || h.IOMMU.Mode == "" || h.Arch == "" {
		t.Errorf("incomplete host info: %+v", h)
	}
	if h.CPUCount != runtime.NumCPU() {
		// NumCPU is the affinity mask, which can be smaller, never larger.
		if runtime.NumCPU() > h.CPUCount {
			t.Errorf("cpuinfo lists %d processors, runtime sees %d", h.CPUCount, runtime.NumCPU())
		}
	}
}
