package system

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"iolab/bench/testdev"

	"golang.org/x/sys/unix"
)

func TestTargetBlockNodeFixture(t *testing.T) {
	s := sysFixture("server")
	for _, tc := range []struct{ dev, disk, part string }{
		{"8:0", "sda", ""},
		{"8:2", "sda", "sda2"},
		{"259:0", "nvme0n1", ""},
		{"254:0", "dm-0", ""},
	} {
		n, err := s.blockNode(tc.dev)
		if err != nil {
			t.Fatal(err)
		}
		if n.disk != tc.disk || n.part != tc.part {
			t.Errorf("%s: got %s/%s, want %s/%s", tc.dev, n.disk, n.part, tc.disk, tc.part)
		}
	}
	if _, err := s.blockNode("0:22"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("tmpfs's 0:22: got %v, want ErrNotExist", err)
	}
}

func TestDiskAttrsFixture(t *testing.T) {
	s := sysFixture("server")
	for _, want := range []Target{
		{Disk: "sda", Model: "ST4000NM0035-1V4", Firmware: "SN04", WWID: "t10.ATA ST4000NM0035-1V4 ZC18ABCD", Driver: "sd", LogicalBlockSize: 512, PhysicalBlockSize: 4096,
			Rotational: true, Scheduler: "mq-deadline", Schedulers: []string{"mq-deadline", "kyber", "bfq", "none"},
			NrRequests: 64, NUMANode: -1},
		{Disk: "nvme0n1", Model: "INTEL SSDPE21D480GA", Firmware: "E2010325", Serial: "PHMB742000A1480DGN", WWID: "eui.5cd2e42a81a11234", Driver: "nvme", LogicalBlockSize: 512, PhysicalBlockSize: 512,
			Scheduler: "none", Schedulers: []string{"none", "mq-deadline", "kyber", "bfq"},
			NrRequests: 1023, IOPoll: true, NUMANode: 1},
		{Disk: "loop0", Driver: "loop", LogicalBlockSize: 512, PhysicalBlockSize: 512,
			Scheduler: "none", Schedulers: []string{"none", "mq-deadline", "kyber", "bfq"}, NrRequests: 128, NUMANode: -1},
		{Disk: "zram0", Driver: "zram", LogicalBlockSize: 4096, PhysicalBlockSize: 4096, NUMANode: -1},
		// virtio-blk as on this project's VMs: no NUMA node, no poll queues.
		{Disk: "vda", Driver: "virtio_blk", LogicalBlockSize: 512, PhysicalBlockSize: 4096, Rotational: true,
			Scheduler: "mq-deadline", Schedulers: []string{"none", "mq-deadline", "kyber", "bfq"}, NrRequests: 256, NUMANode: -1},
		{Disk: "dm-0", Driver: "device-mapper", LogicalBlockSize: 512, PhysicalBlockSize: 4096, Rotational: true,
			Scheduler: "none", Schedulers: []string{"none"}, NrRequests: 128, NUMANode: -1},
		{Disk: "md127", Driver: "md", LogicalBlockSize: 512, PhysicalBlockSize: 4096, Rotational: true,
			Scheduler: "none", Schedulers: []string{"none"}, NrRequests: 128, NUMANode: -1},
	} {
		got := Target{Disk: want.Disk, NUMANode: -1}
		s.diskAttrs(&got)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", want.Disk, got, want)
		}
	}
}

func TestFileDiskFixture(t *testing.T) {
	s := sysFixture("server")
	for _, tc := range []struct{ dev, fs, disk, part string }{
		{"8:1", "ext4", "sda", "sda1"}, // /boot on a partition
		{"254:0", "ext4", "dm-0", ""},  // / on LVM
		{"0:45", "btrfs", "sdd", ""},   // anonymous st_dev: found through the mount source
		{"9:127", "xfs", "md127", ""},  // md array
		{"0:22", "tmpfs", "", ""},      // no disk at all
		{"0:46", "overlay", "", ""},    // nor here
		{"0:99", "", "", ""},           // unknown: no error, just nothing
		{"259:0", "", "nvme0n1", ""},   // not mounted here, still found
	} {
		tg := Target{Dev: tc.dev}
		if err := s.fileDisk(&tg); err != nil {
			t.Fatalf("%s: %v", tc.dev, err)
		}
		if tg.Filesystem != tc.fs || tg.Disk != tc.disk || tg.Partition != tc.part {
			t.Errorf("%s: got fs %q disk %q part %q, want %q %q %q", tc.dev, tg.Filesystem, tg.Disk, tg.Partition, tc.fs, tc.disk, tc.part)
		}
	}
}

func TestParseMountInfo(t *testing.T) {
	ms, err := sysFixture("server").mounts()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 6 {
		t.Fatalf("%d mounts, want 6", len(ms))
	}
	want := mountEntry{dev: "9:127", mountPoint: "/srv/my raid", fstype: "xfs", source: "/dev/md127"}
	if ms[5] != want {
		t.Errorf("got %+v, want %+v (\\040 unescaped)", ms[5], want)
	}
	if _, err := parseMountInfo(strings.NewReader("22 1 8:1 / /boot rw shared:1 ext4 /dev/sda1 rw\n")); err == nil {
		t.Error("line without the \" - \" separator: no error")
	}
	if got := unescapeOctal(`a\040b\134c\011`); got != "a b\\c\t" {
		t.Errorf("unescape: %q", got)
	}
	if got := unescapeOctal(`trailing\04`); got != `trailing\04` {
		t.Errorf("short escape: %q", got)
	}
}

func TestSwapsFixture(t *testing.T) {
	swaps, err := sysFixture("server").swaps()
	if err != nil {
		t.Fatal(err)
	}
	// dm-1 resolves through the fixture's /dev and /sys/class/block; sda3
	// has no node there and is matched by name; /swapfile is a file.
	want := []swapEntry{{path: "/dev/dm-1", dev: "254:1"}, {path: "/dev/sda3"}}
	if !reflect.DeepEqual(swaps, want) {
		t.Errorf("got %+v, want %+v", swaps, want)
	}
}

// writeImage writes a device image for the signature check to read.
func writeImage(t *testing.T, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "image")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheckWritableFixture(t *testing.T) {
	s := sysFixture("server")
	blank := writeImage(t, make([]byte, 1<<20))
	ext4 := extSuperblock(0x4, 0x2|0x40, 0x1)
	for _, tc := range []struct {
		name string
		t    Target
		want string // "" for no refusal
	}{
		{"mounted partition", Target{Path: "/dev/sda1", Disk: "sda", Partition: "sda1", Dev: "8:1"},
			"/dev/sda1 is mounted on /boot; refusing to write (pass --allow_mounted_write=1 to write anyway)"},
		{"disk with a mounted partition, by id", Target{Path: "/dev/disk/by-id/wwn-0x5000c500a1b2c3d4", Resolved: "/dev/sda", Disk: "sda", Dev: "8:0"},
			"/dev/disk/by-id/wwn-0x5000c500a1b2c3d4 (→ /dev/sda) has partition sda1 mounted on /boot; refusing to write (pass --allow_mounted_write=1 to write anyway)"},
		{"mounted LV by mapper name", Target{Path: "/dev/mapper/vg0-root", Resolved: "/dev/dm-0", Disk: "dm-0", Dev: "254:0"},
			"/dev/mapper/vg0-root (→ /dev/dm-0) is mounted on /; refusing"},
		{"LVM physical volume", Target{Path: "/dev/sda2", Disk: "sda", Partition: "sda2", Dev: "8:2"},
			"/dev/sda2 is held by dm-0 (LVM vg0-root); refusing"},
		{"raid member partition", Target{Path: "/dev/sdc", Disk: "sdc", Dev: "8:32"},
			"/dev/sdc has partition sdc1 held by md127 (md RAID); refusing"},
		{"mounted md array with a space", Target{Path: "/dev/md127", Disk: "md127", Dev: "9:127"},
			"/dev/md127 is mounted on /srv/my raid; refusing"},
		{"swap LV", Target{Path: "/dev/mapper/vg0-swap", Resolved: "/dev/dm-1", Disk: "dm-1", Dev: "254:1"},
			"/dev/mapper/vg0-swap (→ /dev/dm-1) is active swap; refusing"},
		{"swap partition", Target{Path: "/dev/sda3", Disk: "sda", Partition: "sda3", Dev: "8:3"},
			"/dev/sda3 is active swap; refusing"},
		{"btrfs member", Target{Path: "/dev/sdd", Disk: "sdd", Dev: "8:48"},
			"/dev/sdd is mounted on /data; refusing"},
		{"blank disk", Target{Path: "/dev/sdb", Resolved: blank, Disk: "sdb", Dev: "8:16", Size: 1 << 20}, ""},
		{"disk with ext4", Target{Path: "/dev/sdb", Resolved: writeImage(t, ext4), Disk: "sdb", Dev: "8:16", Size: int64(len(ext4))},
			" carries an ext4 filesystem signature; refusing to write (pass --allow_mounted_write=1 to write anyway)"},
		{"regular file", Target{Path: "/data/fio.0", Disk: "sdd", Dev: "0:45"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.t.IsBlock = tc.t.Path != "/data/fio.0"
			if tc.t.Resolved == "" {
				tc.t.Resolved = tc.t.Path
			}
			err := s.CheckWritable(tc.t)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var unsafe *UnsafeTargetError
			if !errors.As(err, &unsafe) {
				t.Fatalf("got %v, want an *UnsafeTargetError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got  %q\nwant %q", err, tc.want)
			}
		})
	}
}

func TestCheckPollFixture(t *testing.T) {
	s := sysFixture("server")
	if err := s.CheckPoll(Target{Path: "/dev/nvme0n1", Disk: "nvme0n1"}); err != nil {
		t.Errorf("nvme with poll queues: %v", err)
	}
	err := s.CheckPoll(Target{Path: "/dev/loop0", Disk: "loop0"})
	want := "hipri (IOPOLL) needs poll queues, but " + filepath.Join(s.Sys, "block/loop0/queue/io_poll") +
		" is 0: loop0 (driver loop) has none; for NVMe load the driver with nvme.poll_queues=N" +
		" (e.g. modprobe nvme poll_queues=4, or nvme.poll_queues=4 on the kernel command line)," +
		" for virtio-blk virtio_blk.poll_queues=N; or drop hipri"
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	err = s.CheckPoll(Target{Path: "/dev/shm/f", Filesystem: "tmpfs"})
	if err == nil || !strings.Contains(err.Error(), "/dev/shm/f is on tmpfs, which has no block device") {
		t.Errorf("tmpfs file: %v", err)
	}
}

// extSuperblock is a minimal ext superblock with the given feature flags.
func extSuperblock(compat, incompat, roCompat uint32) []byte {
	b := make([]byte, 1<<20)
	sb := b[1024:]
	le := binary.LittleEndian
	le.PutUint32(sb[0x18:], 2) // 4 KiB blocks
	b[1024+0x38], b[1024+0x39] = 0x53, 0xef
	le.PutUint32(sb[0x4c:], 1) // dynamic revision
	le.PutUint32(sb[0x5c:], compat)
	le.PutUint32(sb[0x60:], incompat)
	le.PutUint32(sb[0x64:], roCompat)
	return b
}

func bytesAt(size int, at map[int]string) []byte {
	b := make([]byte, size)
	for off, s := range at {
		copy(b[off:], s)
	}
	return b
}

func TestDetectSignature(t *testing.T) {
	le32 := func(v uint32) string { var b [4]byte; binary.LittleEndian.PutUint32(b[:], v); return string(b[:]) }
	mbr := func(bootFlag, typ byte) []byte {
		b := make([]byte, sigHeadSize)
		e := b[446:]
		e[0], e[4] = bootFlag, typ
		binary.LittleEndian.PutUint32(e[8:], 2048)
		binary.LittleEndian.PutUint32(e[12:], 204800)
		b[510], b[511] = 0x55, 0xaa
		return b
	}
	random := make([]byte, sigHeadSize)
	r := rand.NewChaCha8([32]byte{1})
	_, _ = r.Read(random)

	for _, tc := range []struct {
		name string
		head []byte
		want string // blkid TYPE, "" for none
	}{
		{"zeros", make([]byte, sigHeadSize), ""},
		{"random data", random, ""},
		{"short device", []byte("XFS"), ""},
		{"ext2", extSuperblock(0, 0x2, 0x1|0x2), "ext2"},
		{"ext3", extSuperblock(0x4, 0x2, 0x1|0x2), "ext3"},
		{"ext4 extents", extSuperblock(0x4, 0x2|0x40, 0x1), "ext4"},
		{"ext4 metadata_csum", extSuperblock(0x4, 0x2, 0x400), "ext4"},
		{"ext journal device", extSuperblock(0, 0x8, 0), "jbd"},
		{"ext magic in garbage", func() []byte {
			b := extSuperblock(0, 0, 0)
			binary.LittleEndian.PutUint32(b[1024+0x4c:], 0x7fff1234)
			return b
		}(), ""},
		{"xfs", bytesAt(sigHeadSize, map[int]string{0: "XFSB"}), "xfs"},
		{"btrfs", bytesAt(sigHeadSize, map[int]string{0x10040: "_BHRfS_M"}), "btrfs"},
		{"swap 4k", bytesAt(sigHeadSize, map[int]string{4096 - 10: "SWAPSPACE2"}), "swap"},
		{"swap 64k pages", bytesAt(sigHeadSize, map[int]string{65536 - 10: "SWAPSPACE2"}), "swap"},
		{"old swap", bytesAt(sigHeadSize, map[int]string{4096 - 10: "SWAP-SPACE"}), "swap"},
		{"hibernation", bytesAt(sigHeadSize, map[int]string{4096 - 10: "S1SUSPEND"}), "swsuspend"},
		{"gpt", func() []byte { b := mbr(0, 0xee); copy(b[512:], "EFI PART"); return b }(), "gpt"},
		{"gpt 4Kn", bytesAt(sigHeadSize, map[int]string{4096: "EFI PART"}), "gpt"},
		{"dos", mbr(0x80, 0x83), "dos"},
		{"0x55AA without entries", mbr(0, 0), ""},
		{"0x55AA with a bad boot flag", mbr(0x12, 0x83), ""},
		{"lvm2 sector 1", bytesAt(sigHeadSize, map[int]string{512: "LABELONE", 512 + 24: "LVM2 001"}), "LVM2_member"},
		{"LABELONE alone", bytesAt(sigHeadSize, map[int]string{512: "LABELONE"}), ""},
		{"md 1.1", bytesAt(sigHeadSize, map[int]string{0: le32(mdSuperMagic) + le32(1)}), "linux_raid_member"},
		{"md 1.2", bytesAt(sigHeadSize, map[int]string{4096: le32(mdSuperMagic) + le32(1)}), "linux_raid_member"},
		{"md magic, wrong version", bytesAt(sigHeadSize, map[int]string{4096: le32(mdSuperMagic) + le32(7)}), ""},
		{"fat32", bytesAt(sigHeadSize, map[int]string{0: "\xeb\x58\x90mkfs.fat", 82: "FAT32   ", 510: "\x55\xaa"}), "vfat"},
		{"fat16", bytesAt(sigHeadSize, map[int]string{0: "\xeb\x3c\x90mkfs.fat", 54: "FAT16   ", 510: "\x55\xaa"}), "vfat"},
		{"ntfs", bytesAt(sigHeadSize, map[int]string{3: "NTFS    ", 510: "\x55\xaa"}), "ntfs"},
		{"exfat", bytesAt(sigHeadSize, map[int]string{3: "EXFAT   ", 510: "\x55\xaa"}), "exfat"},
		{"iso9660", bytesAt(sigHeadSize, map[int]string{0x8001: "CD001"}), "iso9660"},
		{"luks", bytesAt(sigHeadSize, map[int]string{0: "LUKS\xba\xbe\x00\x02"}), "crypto_LUKS"},
		{"f2fs", bytesAt(sigHeadSize, map[int]string{1024: "\x10\x20\xf5\xf2"}), "f2fs"},
		{"bcache", bytesAt(sigHeadSize, map[int]string{4096 + 24: "\xc6\x85\x73\xf6\x4e\x1a\x45\xca\x82\x65\xf5\x7f\x48\xba\x6d\x81"}), "bcache"},
		{"squashfs", bytesAt(sigHeadSize, map[int]string{0: "hsqs"}), "squashfs"},
		{"reiserfs", bytesAt(sigHeadSize, map[int]string{0x10034: "ReIsEr2Fs"}), "reiserfs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sig, ok := detectSignature(tc.head)
			if ok != (tc.want != "") || sig.name != tc.want {
				t.Errorf("got %q (found %v), want %q", sig.name, ok, tc.want)
			}
			if ok && !strings.Contains(sig.desc, " ") {
				t.Errorf("description %q", sig.desc)
			}
		})
	}
}

func TestDetectTailSignature(t *testing.T) {
	const size = 100<<20 + 12345 // not a multiple of 64 KiB
	put := func(off int64, v []byte) []byte {
		tailOff := int64(size - sigTailSize)
		tail := make([]byte, sigTailSize)
		copy(tail[off-tailOff:], v)
		return tail
	}
	le := func(vs ...uint32) []byte {
		b := make([]byte, 4*len(vs))
		for i, v := range vs {
			binary.LittleEndian.PutUint32(b[4*i:], v)
		}
		return b
	}
	be := binary.BigEndian.AppendUint32(nil, mdSuperMagic)
	for _, tc := range []struct {
		name string
		tail []byte
		want string
	}{
		{"nothing", make([]byte, sigTailSize), ""},
		{"md 0.90", put((size&^0xffff)-0x10000, le(mdSuperMagic, 0, 90)), "version 0.90"},
		{"md 0.90 big-endian", put((size&^0xffff)-0x10000, be), "version 0.90"},
		{"md 1.0", put((size&^0xfff)-0x2000, le(mdSuperMagic, 1)), "version 1.0"},
		{"md 1.0 magic a sector off", put((size&^0xfff)-0x2000+512, le(mdSuperMagic, 1)), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sig, ok := detectTailSignature(tc.tail, size-sigTailSize, size)
			if ok != (tc.want != "") || !strings.Contains(sig.desc, tc.want) {
				t.Errorf("got %+v (found %v), want %q", sig, ok, tc.want)
			}
		})
	}
}

// Real images made by the real tools, checked against blkid when present.
func TestDetectSignatureMkfs(t *testing.T) {
	for _, tc := range []struct {
		want string
		cmd  []string
	}{
		{"ext2", []string{"mkfs.ext2", "-q", "-F"}},
		{"ext3", []string{"mkfs.ext3", "-q", "-F"}},
		{"ext4", []string{"mkfs.ext4", "-q", "-F"}},
		{"swap", []string{"mkswap", "-q"}},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if _, err := exec.LookPath(tc.cmd[0]); err != nil {
				t.Skipf("%s not installed", tc.cmd[0])
			}
			p := filepath.Join(t.TempDir(), "img")
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(p, 16<<20); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(tc.cmd[0], append(tc.cmd[1:], p)...).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", tc.cmd, err, out)
			}
			sig, ok, err := readSignature(p, "", 16<<20)
			if err != nil || !ok || sig.name != tc.want {
				t.Fatalf("got %+v %v %v, want %s", sig, ok, err, tc.want)
			}
			if _, err := exec.LookPath("blkid"); err == nil {
				out, err := exec.Command("blkid", "-p", "-o", "value", "-s", "TYPE", p).Output()
				if err != nil {
					t.Fatalf("blkid: %v", err)
				}
				if got := strings.TrimSpace(string(out)); got != tc.want {
					t.Errorf("blkid says %q, we say %q", got, tc.want)
				}
			}
		})
	}
}

func TestUnsafeTargetErrorMessage(t *testing.T) {
	e := &UnsafeTargetError{Path: "/dev/loop3", Resolved: "/dev/loop3", Reason: "is mounted on /mnt/x"}
	if got, want := e.Error(), "/dev/loop3 is mounted on /mnt/x; refusing to write (pass --allow_mounted_write=1 to write anyway)"; got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// Live: regular files on the machine's own filesystems; nothing is written
// outside t.TempDir().
func TestResolveTargetFileLive(t *testing.T) {
	var s FS
	dir := t.TempDir()
	p := filepath.Join(dir, "data")
	if err := os.WriteFile(p, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	tg, err := s.ResolveTarget(p)
	if err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	if tg.IsBlock || tg.Size != 1<<20 || tg.Dev != devNumString(st.Dev) || tg.Filesystem == "" {
		t.Errorf("got %+v", tg)
	}
	if _, err := os.Stat(filepath.Join("/sys/dev/block", tg.Dev)); err == nil {
		if tg.Disk == "" || tg.LogicalBlockSize == 0 {
			t.Errorf("%s has a sysfs node but no disk found: %+v", tg.Dev, tg)
		}
		if _, err := os.Stat(filepath.Join("/sys/block", tg.Disk)); err != nil {
			t.Errorf("disk %q: %v", tg.Disk, err)
		}
		if (tg.Filesystem == "ext4" || tg.Filesystem == "xfs") && tg.DIOOffsetAlign == 0 {
			t.Errorf("no statx DIO alignment on %s: %+v", tg.Filesystem, tg)
		}
	}
	if err := s.CheckWritable(tg); err != nil {
		t.Errorf("regular file refused: %v", err)
	}

	// A file the job will create is described from its directory.
	nt, err := s.ResolveTarget(filepath.Join(dir, "later"))
	if err != nil {
		t.Fatal(err)
	}
	if nt.Disk != tg.Disk || nt.Size != 0 || nt.Resolved != filepath.Join(tg.Resolved[:len(tg.Resolved)-len("data")], "later") {
		t.Errorf("new file: %+v", nt)
	}

	// procfs: a regular file with no block device behind it.
	pt, err := s.ResolveTarget("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if pt.Disk != "" || pt.Filesystem != "proc" {
		t.Errorf("procfs file: %+v", pt)
	}
	if err := s.CheckPoll(pt); err == nil || !strings.Contains(err.Error(), "is on proc, which has no block device") {
		t.Errorf("CheckPoll on procfs: %v", err)
	}
	if _, err := s.ResolveTarget("/proc/self"); err == nil {
		t.Error("a directory resolved as a target")
	}
	if _, err := s.ResolveTarget(filepath.Join(dir, "no", "such")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing directory: %v", err)
	}
	mounts, err := s.mounts()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mounts {
		if m.mountPoint == "/dev" && m.fstype == "devtmpfs" {
			if _, err := s.ResolveTarget("/dev/iolab-no-such-device"); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("missing device under /dev: %v", err)
			}
		}
	}
}

func TestLoopTargetLive(t *testing.T) {
	testdev.NeedLoopTools(t, "mkfs.ext4", "mount", "umount")
	var s FS
	dev := testdev.AttachLoop(t, 64<<20, nil, false)
	name := filepath.Base(dev)

	tg, err := s.ResolveTarget(dev)
	if err != nil {
		t.Fatal(err)
	}
	if !tg.IsBlock || tg.Disk != name || tg.Partition != "" || tg.Size != 64<<20 ||
		tg.Driver != "loop" || tg.LogicalBlockSize < 512 || tg.Resolved != dev || tg.Dev == "" {
		t.Errorf("got %+v", tg)
	}
	if tg.Scheduler == "" || len(tg.Schedulers) == 0 || tg.NrRequests == 0 {
		t.Errorf("loop is blk-mq, yet no scheduler: %+v", tg)
	}

	link := filepath.Join(t.TempDir(), "by-name")
	if err := os.Symlink(dev, link); err != nil {
		t.Fatal(err)
	}
	lt, err := s.ResolveTarget(link)
	if err != nil {
		t.Fatal(err)
	}
	if lt.Path != link || lt.Resolved != dev || lt.Disk != name || lt.Dev != tg.Dev {
		t.Errorf("through a symlink: %+v", lt)
	}

	if err := s.CheckWritable(tg); err != nil {
		t.Fatalf("blank loop device refused: %v", err)
	}
	err = s.CheckPoll(tg)
	if err == nil || !strings.Contains(err.Error(), "/sys/block/"+name+"/queue/io_poll is 0: "+name+" (driver loop) has none") {
		t.Errorf("CheckPoll: %v", err)
	}

	testdev.Run(t, "mkfs.ext4", "-q", dev)
	err = s.CheckWritable(tg)
	var unsafe *UnsafeTargetError
	if !errors.As(err, &unsafe) || !strings.Contains(err.Error(), dev+" carries an ext4 filesystem signature") {
		t.Errorf("after mkfs.ext4: %v", err)
	}

	dir := testdev.MountTemp(t, dev)
	if err := s.CheckWritable(lt); err == nil || !strings.Contains(err.Error(), link+" (→ "+dev+") is mounted on "+dir+"; refusing") {
		t.Errorf("mounted, through a symlink: %v", err)
	}
}

func TestLoopPartitionTargetLive(t *testing.T) {
	testdev.NeedLoopTools(t, "mkfs.ext4", "mount", "umount")
	var s FS
	// An MBR with one Linux partition from sector 2048 to the end of 32 MiB.
	mbr := make([]byte, 512)
	e := mbr[446:]
	e[4] = 0x83
	binary.LittleEndian.PutUint32(e[8:], 2048)
	binary.LittleEndian.PutUint32(e[12:], 32<<20/512-2048)
	mbr[510], mbr[511] = 0x55, 0xaa
	dev := testdev.AttachLoop(t, 32<<20, mbr, true)
	part := dev + "p1"
	if _, err := os.Stat(filepath.Join("/sys/block", filepath.Base(dev), filepath.Base(part))); err != nil {
		// A kernel without CONFIG_MSDOS_PARTITION does not scan the table:
		// have partx parse it and add the partition with BLKPG.
		if _, err := exec.LookPath("partx"); err != nil {
			t.Skip("the kernel does not parse MBRs and partx is not installed")
		}
		testdev.Run(t, "partx", "-a", dev)
		t.Cleanup(func() {
			if out, err := exec.Command("partx", "-d", dev).CombinedOutput(); err != nil {
				t.Errorf("partx -d %s: %v\n%s", dev, err, out)
			}
		})
	}
	for i := 0; ; i++ { // devtmpfs creates the node as the partition is added
		if _, err := os.Stat(part); err == nil {
			break
		} else if i == 50 {
			t.Fatalf("partition node: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}

	pt, err := s.ResolveTarget(part)
	if err != nil {
		t.Fatal(err)
	}
	if pt.Disk != filepath.Base(dev) || pt.Partition != filepath.Base(part) || pt.Size != 32<<20-2048*512 || pt.Driver != "loop" {
		t.Errorf("partition: %+v", pt)
	}
	dt, err := s.ResolveTarget(dev)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CheckWritable(dt); err == nil || !strings.Contains(err.Error(), "carries a DOS/MBR partition table") {
		t.Errorf("partitioned disk: %v", err)
	}
	if err := s.CheckWritable(pt); err != nil {
		t.Errorf("blank partition refused: %v", err)
	}

	testdev.Run(t, "mkfs.ext4", "-q", part)
	dir := testdev.MountTemp(t, part)
	if err := s.CheckWritable(dt); err == nil || !strings.Contains(err.Error(), dev+" has partition "+filepath.Base(part)+" mounted on "+dir+"; refusing") {
		t.Errorf("disk with a mounted partition: %v", err)
	}
}

func TestLoopSwapLive(t *testing.T) {
	testdev.NeedLoopTools(t, "mkswap", "swapon", "swapoff")
	var s FS
	dev := testdev.AttachLoop(t, 16<<20, nil, false)
	testdev.Run(t, "mkswap", "-q", dev)
	tg, err := s.ResolveTarget(dev)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CheckWritable(tg); err == nil || !strings.Contains(err.Error(), "carries a swap signature") {
		t.Errorf("inactive swap: %v", err)
	}
	testdev.Run(t, "swapon", dev)
	t.Cleanup(func() {
		if out, err := exec.Command("swapoff", dev).CombinedOutput(); err != nil {
			t.Errorf("swapoff %s: %v\n%s", dev, err, out)
		}
	})
	if err := s.CheckWritable(tg); err == nil || !strings.Contains(err.Error(), dev+" is active swap") {
		t.Errorf("active swap: %v", err)
	}
}

// A disk with no scheduler to choose says what it has and why, read from
// sysfs as a run records it: zram without a scheduler file, dm and md
// with a bare "none"; the others, and a disk never read, say nothing.
func TestNoSchedulerFixture(t *testing.T) {
	s := sysFixture("server")
	for disk, want := range map[string]string{
		"sda": "", "nvme0n1": "", "loop0": "", "vda": "",
		"zram0": "none (zram has no I/O scheduler)",
		"dm-0":  "none (device-mapper has no I/O scheduler)",
		"md127": "none (md has no I/O scheduler)",
	} {
		got := Target{Disk: disk, NUMANode: -1}
		s.diskAttrs(&got)
		if n := got.NoScheduler(); n != want {
			t.Errorf("%s: NoScheduler %q, want %q", disk, n, want)
		}
	}
	if n := (Target{Disk: "zram0"}).NoScheduler(); n != "" {
		t.Errorf("a disk never read: %q, want none said", n)
	}
	if n := (Target{Disk: "zram1", LogicalBlockSize: 4096}).NoScheduler(); n != "none (zram has no I/O scheduler)" {
		t.Errorf("no driver recorded: %q", n)
	}
}
