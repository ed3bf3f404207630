package bench_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/testdev"
)

// TestTrimsRefusedLikeWrites: a job that trims is held to the write
// guard's rules as a write job is — on a loop device whose ext4 is mounted
// (by name and through a symlink) and on the machine's system disk, every
// trimming mode is refused before any I/O, naming the mount point, as
// randwrite is. The system disk is only ever prepared (Runner.Prepare
// does no I/O), never run.
func TestTrimsRefusedLikeWrites(t *testing.T) {
	testdev.NeedLoopTools(t, "mkfs.ext4", "mount", "umount")
	dev := testdev.AttachLoop(t, 64<<20, nil, false)
	testdev.Run(t, "mkfs.ext4", "-q", dev)
	dir := testdev.MountTemp(t, dev)
	link := filepath.Join(t.TempDir(), "by-id-link")
	if err := os.Symlink(dev, link); err != nil {
		t.Fatal(err)
	}
	before := testdev.Fingerprint(t, dev)
	modes := []string{"randwrite", "trim", "randtrim", "trimwrite", "randtrimwrite"}
	for _, target := range []string{dev, link} {
		for _, rw := range modes {
			cfg, err := fio.ParseArgs([]string{"--name=w", "--filename=" + target, "--rw=" + rw, "--ioengine=libaio", "--size=1m"})
			if err != nil {
				t.Fatal(err)
			}
			_, err = (&bench.Runner{}).Run(context.Background(), cfg)
			if err == nil || !strings.Contains(err.Error(), "mounted on "+dir) || !strings.Contains(err.Error(), "allow_mounted_write") {
				t.Errorf("rw=%s on %s: want a refusal naming %s, got %v", rw, target, dir, err)
			}
		}
	}
	if testdev.Fingerprint(t, dev) != before {
		t.Error("the mounted device changed")
	}

	// The system disk: what / is mounted from (/dev/vda here).
	disk := rootDevice(t)
	for _, rw := range modes {
		cfg, err := fio.ParseArgs([]string{"--name=w", "--filename=" + disk, "--rw=" + rw, "--ioengine=psync", "--size=4k"})
		if err != nil {
			t.Fatal(err)
		}
		// Where the disk can be opened, the write guard refuses it as
		// mounted on /; where it cannot (this machine's sandbox), the
		// check refuses it before that.
		_, err = (&bench.Runner{}).Prepare(cfg)
		if err == nil || !strings.Contains(err.Error(), disk) {
			t.Errorf("rw=%s on the system disk %s: %v; want it refused", rw, disk, err)
		}
	}
}

// rootDevice is the block device / is mounted from; the test is skipped
// where / is not on one.
func rootDevice(t *testing.T) string {
	mounts, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(mounts), "\n") {
		f := strings.Fields(line)
		if len(f) > 1 && f[1] == "/" && strings.HasPrefix(f[0], "/dev/") {
			return f[0]
		}
	}
	t.Skip("/ is not mounted from a block device")
	return ""
}

// TestTrimPunchesFile: on a regular file, a trim deallocates its range
// (iolab's discard of a file; fio 3.33's BLKDISCARD fails there): after
// rw=trim over the first half, on each engine, that half reads back as
// zeros and holds no blocks, the second half keeps its bytes, and the
// file keeps its size.
func TestTrimPunchesFile(t *testing.T) {
	for _, engine := range []string{"io_uring", "libaio", "psync"} {
		path := filepath.Join(t.TempDir(), "f")
		data := bytes.Repeat([]byte("iolab trims "), (2<<20)/12+1)[:2<<20]
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		cfg, err := fio.ParseArgs([]string{"--name=t", "--filename=" + path, "--rw=trim", "--bs=64k", "--size=1m", "--ioengine=" + engine, "--iodepth=4"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := (&bench.Runner{}).Run(context.Background(), cfg)
		if err != nil {
			t.Fatalf("%s: %v", engine, err)
		}
		if d := res.Groups[0].Jobs[0].Dirs[bench.Trim]; d.IOs != 16 || d.Bytes != 1<<20 {
			t.Errorf("%s: %d trims of %d bytes, want 16 of 1 MiB", engine, d.IOs, d.Bytes)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(data) || !bytes.Equal(got[:1<<20], make([]byte, 1<<20)) || !bytes.Equal(got[1<<20:], data[1<<20:]) {
			t.Errorf("%s: the file after its first half was trimmed is not zeros then its bytes", engine)
		}
		var st unix.Stat_t
		if err := unix.Stat(path, &st); err != nil {
			t.Fatal(err)
		}
		if st.Blocks*512 > 1<<20+64<<10 {
			t.Errorf("%s: %d bytes allocated after the trims, want about 1 MiB", engine, st.Blocks*512)
		}
	}
}
