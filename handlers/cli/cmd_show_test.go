package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"iolab/bench/golden"
	"iolab/bench/system"
)

// TestShowStoredRuns: iolab show of stored runs (testdata/show/*.json,
// imported) is pinned to testdata/show/NAME.txt (go test -run TestShow
// -update rewrites them), fits showWidth columns, says the schedulers the
// steps ran under, and writes its numbers for people.
func TestShowStoredRuns(t *testing.T) {
	for _, tt := range []struct {
		name string
		want []string
	}{
		{"sweep", []string{
			"target /dev/loop1: disk loop1 (loop), 256MiB, schedulers none, mq-deadline (offered: none mq-deadline kyber bfq)",
			"percentiles of job w: randread 4k\n",
			"\nstep  iodepth  scheduler    ioengine  rep   IOPS         BW  clat p50   clat p99\n",
			"\n  12        1  mq-deadline  io_uring    2      -          -         -          -   failed\n",
			"\nstep 12 failed: io_uring_setup: cannot allocate memory (ENOMEM)\n",
			"and iostat -x of loop1\n",
			"IOPS by iodepth × scheduler × ioengine, median (min–max) of 2 repeats",
		}},
		{"fairness", []string{
			"schedulers none, mq-deadline, bfq, kyber (offered:",
			"percentiles of each job\n",
			"  bg-writer write 1m iodepth 16  ",
			"  fg-reader randread 4k iodepth 1  ",
			"Per job: mean latency",
		}},
		{"qos", []string{
			"plan: iolab run --sweep=rate_iops=max,10%,20%,30%,40%,50%,60%,70%,80%,150% '--slo=p99<5ms'",
			"\nLatency vs achieved IOPS — qos, a point per rate_iops\n",
			"\n60%        1.24k  1.22k<         from intended start  ",
			"\n<   rate not held: more than 1 % short of the rate asked;",
			"\nmax        -      2.07k          clat  ",
			"\nKnee at p99<5ms: 829 IOPS (rate_iops=40%, p99 506µs, from intended start)\n",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dbPath := filepath.Join(t.TempDir(), "show.db")
			if code, _, stderr := runOut(t, "import", "--db", dbPath, filepath.Join("testdata", "show", tt.name+".json")); code != 0 {
				t.Fatal(stderr)
			}
			out := showInUTC(t, dbPath, "1")
			golden.Check(t, *update, filepath.Join("testdata", "show", tt.name+".txt"), []byte(out))
			for i, line := range strings.Split(out, "\n") {
				if n := utf8.RuneCountInString(line); n > showWidth {
					t.Errorf("line %d is %d columns wide:\n%s", i+1, n, line)
				}
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("show lacks %q", w)
				}
			}
			// Go's durations (3.784704ms), whole IOPS (29314) and empty
			// parentheses are for machines, not people.
			for _, bad := range []*regexp.Regexp{
				regexp.MustCompile(`\d\.\d{4,}[mµn]?s`), regexp.MustCompile(`\s\d{5,}\s`), regexp.MustCompile(`\(\s|\s\)|\(\)`),
			} {
				if m := bad.FindString(out); m != "" {
					t.Errorf("show prints %q", m)
				}
			}
		})
	}
}

// showInUTC is iolab show's output run as a child process in UTC, so
// that the times it prints are the same wherever the test runs.
func showInUTC(t *testing.T, dbPath, id string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "show", "--db", dbPath, id)
	cmd.Env = append(os.Environ(), "IOLAB_TEST_MAIN=1", "TZ=UTC")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("iolab show: %v\n%s", err, out)
	}
	return string(out)
}

// TestTargetText: a target's disk, driver and model, size and schedulers
// are said as far as they are known, and "unknown" where not.
func TestTargetText(t *testing.T) {
	for _, tt := range []struct {
		name   string
		target system.Target
		want   string
	}{
		{"nothing known", system.Target{Path: "/dev/sdx", IsBlock: true},
			"target /dev/sdx: disk unknown, size unknown"},
		{"no model", system.Target{Path: "/dev/loop3", IsBlock: true, Disk: "loop3", Driver: "loop", Size: 1 << 30, Scheduler: "none"},
			"target /dev/loop3: disk loop3 (loop), 1.00GiB, scheduler none, io_poll off"},
		{"driver and model", system.Target{Path: "/dev/nvme0n1p2", IsBlock: true, Disk: "nvme0n1", Partition: "nvme0n1p2", Driver: "nvme",
			Model: "Samsung SSD 980 PRO 2TB ", Size: 512 << 30, Scheduler: "none", Schedulers: []string{"none", "mq-deadline"}, IOPoll: true},
			"target /dev/nvme0n1p2: partition nvme0n1p2 of disk nvme0n1 (nvme, Samsung SSD 980 PRO 2TB), 512GiB, scheduler none (offered: none mq-deadline), io_poll on"},
		{"no scheduler recorded", system.Target{Path: "/dev/vdb", IsBlock: true, Disk: "vdb", Driver: "virtio_blk", Size: 10 << 30},
			"target /dev/vdb: disk vdb (virtio_blk), 10.0GiB, scheduler unknown, io_poll off"},
		{"zram: no scheduler file", system.Target{Path: "/dev/zram0", IsBlock: true, Disk: "zram0", Size: 1 << 30, LogicalBlockSize: 4096, PhysicalBlockSize: 4096},
			"target /dev/zram0: disk zram0, 1.00GiB, scheduler none (zram has no I/O scheduler), io_poll off"},
		{"dm: a bare none", system.Target{Path: "/dev/dm-0", IsBlock: true, Disk: "dm-0", Size: 1 << 30, LogicalBlockSize: 512,
			Scheduler: "none", Schedulers: []string{"none"}},
			"target /dev/dm-0: disk dm-0, 1.00GiB, scheduler none (dm has no I/O scheduler), io_poll off"},
		{"file on tmpfs", system.Target{Path: "/tmp/f", Filesystem: "tmpfs", Size: 1 << 20},
			"target /tmp/f: file on tmpfs, 1.00MiB"},
		{"file on a disk", system.Target{Path: "/data/f", Filesystem: "ext4", Disk: "vda", Size: 1 << 20, Scheduler: "mq-deadline"},
			"target /data/f: file on ext4, disk vda, 1.00MiB, scheduler mq-deadline, io_poll off"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := targetText(&tt.target, nil); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
