package fio

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Side by side with fio 3.33: the same options write data a device cannot
// tell apart (as deduplicating and compressing devices see it), make the
// same system calls per I/O on each sync engine, and sync as often.

// strace runs prog under strace with env added and returns the traced
// calls on path (strace -y names each descriptor's file; "" keeps every
// call), one line each.
func strace(t *testing.T, calls, path string, env []string, prog string, args ...string) []string {
	t.Helper()
	if _, err := exec.LookPath("strace"); err != nil {
		t.Fatal("strace is not installed (the test command installs it)")
	}
	out := filepath.Join(t.TempDir(), "trace")
	cmd := exec.Command("strace", append([]string{"-f", "-qq", "-y", "-e", "trace=" + calls, "-e", "signal=none", "-o", out, prog}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%.2000s", prog, args, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" && (path == "" || strings.Contains(l, "<"+path+">")) {
			lines = append(lines, l)
		}
	}
	return lines
}

// sideBySide runs the same job with fio and with iolab under strace; each
// gets its own copy of a scratch file.
func sideBySide(t *testing.T, calls string, size int, args ...string) (fio, iolab []string) {
	t.Helper()
	fioBin := lookFio(t)
	a, b := scratch(t, size, 0xa5), scratch(t, size, 0xa5)
	fio = strace(t, calls, a, nil, fioBin, append([]string{"--thread", "--name=t", "--filename=" + a}, args...)...)
	iolab = strace(t, calls, b, []string{"IOLAB_EFFECT_JOB=1"}, os.Args[0], append([]string{"--name=t", "--filename=" + b}, args...)...)
	return fio, iolab
}

// callCounts counts a trace's lines per system call.
func callCounts(lines []string) map[string]int {
	re := regexp.MustCompile(`^\d+\s+(\w+)\(`)
	out := map[string]int{}
	for _, l := range lines {
		if m := re.FindStringSubmatch(l); m != nil {
			out[m[1]]++
		}
	}
	return out
}

// TestSyncEnginesMatchFio: per I/O, each sync engine makes the system
// calls fio's makes, sequential and with fsync=N; the sync engine seeks
// only when the offset moves away from the file position.
func TestSyncEnginesMatchFio(t *testing.T) {
	const calls = "read,write,lseek,readv,writev,preadv,pwritev,preadv2,pwritev2,pread64,pwrite64,fsync,fdatasync"
	for _, engine := range []string{"psync", "sync", "vsync", "pvsync", "pvsync2"} {
		for _, rw := range []string{"read", "write"} {
			t.Run(engine+"/"+rw, func(t *testing.T) {
				fio, iolab := sideBySide(t, calls, 1<<20, "--ioengine="+engine, "--rw="+rw, "--bs=4k", "--size=512k", "--fsync=8", "--fdatasync=5")
				want, got := callCounts(fio), callCounts(iolab)
				if fmt.Sprint(want) != fmt.Sprint(got) {
					t.Errorf("system calls on the file: fio %v, iolab %v", want, got)
				}
			})
		}
	}
	t.Run("sync/randwrite", func(t *testing.T) {
		// The offsets differ from fio's (another random sequence), so the
		// seeks do too; the rule does not: a seek exactly where the file
		// position is not.
		_, iolab := sideBySide(t, calls, 1<<20, "--ioengine=sync", "--rw=randwrite", "--bs=4k", "--size=1m")
		seekRe := regexp.MustCompile(`lseek\(\d+<[^>]*>, (\d+), SEEK_SET\)`)
		var pos int64
		seeks, writes := 0, 0
		for _, l := range iolab {
			if m := seekRe.FindStringSubmatch(l); m != nil {
				var off int64
				fmt.Sscan(m[1], &off)
				if off == pos {
					t.Fatalf("a seek to %d, where the file already is", off)
				}
				pos, seeks = off, seeks+1
			} else if strings.Contains(l, "write(") {
				pos, writes = pos+4096, writes+1
			}
		}
		if writes != 256 || seeks < 200 {
			t.Errorf("%d writes, %d seeks", writes, seeks)
		}
	})
}

// TestFsyncCountsMatchFio: fsync=N, fdatasync=N, end_fsync and
// fsync_on_close sync as often as fio does on a size-bound job, wherever
// the count does not hang on completion order (io_uring past depth 1 issues
// syncs until one completes, and fio's own count varies run to run).
func TestFsyncCountsMatchFio(t *testing.T) {
	for _, tc := range []struct {
		engine string
		depth  int
		opts   []string
	}{
		{"psync", 1, []string{"--fsync=4"}},
		{"psync", 1, []string{"--fsync=3", "--end_fsync=1"}},
		{"psync", 1, []string{"--fsync=4", "--end_fsync=1"}},
		{"psync", 1, []string{"--fdatasync=5", "--fsync_on_close=1"}},
		{"sync", 1, []string{"--fsync=2", "--fdatasync=3"}},
		{"pvsync2", 1, []string{"--fdatasync=7", "--end_fsync=1", "--fsync_on_close=1"}},
		{"libaio", 1, []string{"--fsync=4", "--end_fsync=1"}},
		{"libaio", 8, []string{"--fsync=3", "--end_fsync=1"}},
		{"libaio", 16, []string{"--fsync=1"}},
		{"libaio", 8, []string{"--fdatasync=2", "--iodepth_batch=4"}},
	} {
		name := fmt.Sprintf("%s/iodepth=%d/%s", tc.engine, tc.depth, strings.Join(tc.opts, ","))
		t.Run(name, func(t *testing.T) {
			fio, iolab := sideBySide(t, "fsync,fdatasync", 1<<20, append([]string{"--ioengine=" + tc.engine, fmt.Sprintf("--iodepth=%d", tc.depth),
				"--rw=randwrite", "--bs=4k", "--size=256k"}, tc.opts...)...)
			if want, got := callCounts(fio), callCounts(iolab); fmt.Sprint(want) != fmt.Sprint(got) {
				t.Errorf("fio %v, iolab %v", want, got)
			}
		})
	}
	// io_uring syncs through the ring: compare fio's JSON accounts.
	t.Run("io_uring/iodepth=1", func(t *testing.T) {
		args := []string{"--ioengine=io_uring", "--rw=write", "--bs=4k", "--size=256k", "--fsync=3", "--end_fsync=1", "--output-format=json"}
		a, b := scratch(t, 1<<20, 0), scratch(t, 1<<20, 0)
		out, err := exec.Command(lookFio(t), append([]string{"--thread", "--name=t", "--filename=" + a}, args...)...).Output()
		if err != nil {
			t.Fatal(err)
		}
		var rep Report
		if err := json.Unmarshal(out, &rep); err != nil {
			t.Fatal(err)
		}
		want := rep.Jobs[0].Sync
		got := syncReport(job(run(t, append([]string{"--name=t", "--filename=" + b}, args...)...)), false)
		if got.TotalIOs != want.TotalIOs || got.Lat.N != want.Lat.N {
			t.Errorf("sync total_ios, N: fio %d, %d; iolab %d, %d", want.TotalIOs, want.Lat.N, got.TotalIOs, got.Lat.N)
		}
	})
}

// TestBuffersMatchFio writes the same 1 MiB with fio and iolab for each
// buffer option and compares what a device could notice: how many 512-byte
// sectors and 4 KiB blocks are distinct (deduplication), how much of it is
// zeros, and how well each 4 KiB page compresses on its own (what zram
// does).
func TestBuffersMatchFio(t *testing.T) {
	fioBin := lookFio(t)
	for _, opts := range [][]string{
		{"--bs=4k"}, // nothing but the defaults
		{"--scramble_buffers=0"},
		{"--zero_buffers"},
		{"--zero_buffers", "--scramble_buffers=1"},
		{"--refill_buffers"},
		{"--refill_buffers", "--scramble_buffers=0"},
		{"--buffer_compress_percentage=50"},
		{"--buffer_compress_percentage=70", "--buffer_compress_chunk=4k"},
		{"--buffer_compress_percentage=0"},
		{"--buffer_compress_percentage=100"},
		{"--dedupe_percentage=50"},
		{"--dedupe_percentage=30", "--buffer_compress_percentage=50"},
		{"--buffer_pattern=0xdeadbeef"},
		{`--buffer_pattern="iolab"`, "--buffer_compress_percentage=50"},
		{"--iodepth=4", "--ioengine=libaio", "--scramble_buffers=0"},
	} {
		t.Run(strings.Join(opts, ","), func(t *testing.T) {
			args := append([]string{"--rw=write", "--bs=4k", "--ioengine=psync"}, opts...)
			a, b := scratch(t, 1<<20, 0xa5), scratch(t, 1<<20, 0xa5)
			if out, err := exec.Command(fioBin, append([]string{"--thread", "--name=w", "--filename=" + a}, args...)...).CombinedOutput(); err != nil {
				t.Fatalf("fio: %v\n%s", err, out)
			}
			run(t, append([]string{"--name=w", "--filename=" + b}, args...)...)
			want, got := dataTraits(t, a), dataTraits(t, b)
			for i, name := range []string{"distinct sectors", "distinct blocks", "zeros", "compressed per page"} {
				if math.Abs(want[i]-got[i]) > 0.1 {
					t.Errorf("%s: fio %.3f, iolab %.3f", name, want[i], got[i])
				}
			}
			t.Logf("fio %.3f, iolab %.3f", want, got)
		})
	}
}

// dataTraits: distinct 512-byte sectors, distinct 4 KiB blocks, the share
// of zero bytes, and the size each 4 KiB block compresses to (shares).
func dataTraits(t *testing.T, path string) [4]float64 {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var packed int
	for off := 0; off < len(data); off += 4096 {
		var b bytes.Buffer
		w, _ := flate.NewWriter(&b, flate.BestSpeed)
		w.Write(data[off : off+4096])
		w.Close()
		packed += min(b.Len(), 4096)
	}
	return [4]float64{distinct(data, 512), distinct(data, 4096), zeroShare(data), float64(packed) / float64(len(data))}
}

// TestLibaioSyncsMatchFio: libaio's syncs are fio's — an fsync(2) by the
// job thread once nothing waits to be submitted — down to the order of
// every io_submit, io_getevents and fsync, batches split where fio's ring
// of iocbs wraps.
func TestLibaioSyncsMatchFio(t *testing.T) {
	aio := regexp.MustCompile(`^\d+\s+(io_submit|io_getevents)\([^,]+, (\d+)(?:, (\d+))?`)
	sync := regexp.MustCompile(`^\d+\s+(fsync|fdatasync)\(`)
	seq := func(lines []string) []string {
		var out []string
		for _, l := range lines {
			if m := aio.FindStringSubmatch(l); m != nil {
				out = append(out, strings.TrimSpace(m[1]+" "+m[2]+" "+m[3]))
			} else if m := sync.FindStringSubmatch(l); m != nil {
				out = append(out, m[1])
			}
		}
		return out
	}
	for _, opts := range [][]string{
		{"--iodepth=4", "--iodepth_batch=4", "--fsync=3"},
		{"--iodepth=8", "--iodepth_batch=0", "--iodepth_batch_complete_min=3", "--fdatasync=7"},
	} {
		t.Run(strings.Join(opts, ","), func(t *testing.T) {
			// io_submit and io_getevents name the aio context, not the file:
			// trace every call, keep those of the job.
			fioBin := lookFio(t)
			a, b := scratch(t, 1<<20, 0), scratch(t, 1<<20, 0)
			args := append([]string{"--ioengine=libaio", "--rw=randwrite", "--bs=4k", "--size=256k"}, opts...)
			fio := strace(t, "io_submit,io_getevents,fsync,fdatasync", "", nil, fioBin, append([]string{"--thread", "--name=t", "--filename=" + a}, args...)...)
			iolab := strace(t, "io_submit,io_getevents,fsync,fdatasync", "", []string{"IOLAB_EFFECT_JOB=1"}, os.Args[0], append([]string{"--name=t", "--filename=" + b}, args...)...)
			want, got := seq(fio), seq(iolab)
			if len(want) < 40 {
				t.Fatalf("fio's trace holds %d calls", len(want))
			}
			if strings.Join(want, "\n") != strings.Join(got, "\n") {
				t.Errorf("fio:\n%s\niolab:\n%s", strings.Join(want, "\n"), strings.Join(got, "\n"))
			}
		})
	}
}
