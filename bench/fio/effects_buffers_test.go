package fio

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"iolab/bench/testdev"
)

// The buffer and sync options' probes: what a write job leaves on the
// device, read back, and the system calls it makes.

// scratch makes a file of size bytes filled with b, so that a write of
// zeros shows.
func scratch(t *testing.T, size int, b byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(path, bytes.Repeat([]byte{b}, size), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// written runs a sequential 1 MiB write job of 4 KiB blocks with extra
// options and returns what the file holds afterwards.
func written(t *testing.T, extra ...string) []byte {
	t.Helper()
	path := scratch(t, 1<<20, 0xa5)
	r := run(t, append([]string{"--name=w", "--filename=" + path, "--rw=write", "--bs=4k", "--ioengine=psync"}, extra...)...)
	if e := job(r).Error; e != "" {
		t.Fatal(e)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// distinct is the share of the data's n-byte blocks that are unlike every
// other.
func distinct(data []byte, n int) float64 {
	seen := map[string]bool{}
	for off := 0; off+n <= len(data); off += n {
		seen[string(data[off:off+n])] = true
	}
	return float64(len(seen)) / float64(len(data)/n)
}

func zeroShare(data []byte) float64 {
	return float64(bytes.Count(data, []byte{0})) / float64(len(data))
}

// compressed is the size flate shrinks data to, as a share of its size.
func compressed(t *testing.T, data []byte) float64 {
	var b bytes.Buffer
	w, _ := flate.NewWriter(&b, flate.BestSpeed)
	w.Write(data)
	w.Close()
	return float64(b.Len()) / float64(len(data))
}

// stamped is the share of 512-byte sectors that start with their own
// offset: iolab's scramble stamp.
func stamped(data []byte) float64 {
	n := 0
	for off := 0; off < len(data); off += 512 {
		if binary.LittleEndian.Uint64(data[off:]) == uint64(off) {
			n++
		}
	}
	return float64(n) / float64(len(data)/512)
}

func near(got, want, tol float64) bool { return got >= want-tol && got <= want+tol }

func init() {
	effects["buffered"] = func(t *testing.T) {
		f := file(t, 1<<20)
		direct := func(extra ...string) bool {
			lines := traced(t, "openat", append([]string{"--name=e", "--filename=" + f, "--size=64k"}, extra...)...)
			return count(lines, regexp.QuoteMeta(f)+`".*O_DIRECT`) > 0
		}
		if !direct("--buffered=0") || direct("--buffered=1") || direct("--direct=1", "--buffered=1") {
			t.Error("buffered=0 must open with O_DIRECT, buffered=1 without (and override direct=1 before it)")
		}
	}
	effects["zero_buffers"] = func(t *testing.T) {
		if b := written(t, "--zero_buffers"); !bytes.Equal(b, make([]byte, len(b))) {
			t.Errorf("zero_buffers: %.2f of the bytes written are zero, want all", zeroShare(b))
		}
		if b := written(t, "--zero_buffers", "--scramble_buffers=1"); zeroShare(b) < 0.9 || stamped(b) != 1 {
			t.Errorf("zero_buffers with scramble_buffers=1: zeros with every sector stamped, got %.2f zero, %.2f stamped", zeroShare(b), stamped(b))
		}
	}
	effects["scramble_buffers"] = func(t *testing.T) {
		// fio's default: every sector unlike every other. Without, the
		// one buffer a psync job has is written unchanged every time.
		if b := written(t); distinct(b, 512) != 1 || stamped(b) != 1 {
			t.Errorf("by default: %.2f of the sectors distinct, %.2f stamped; want all", distinct(b, 512), stamped(b))
		}
		if b := written(t, "--scramble_buffers=0"); distinct(b, 4096) != 1.0/256 {
			t.Errorf("scramble_buffers=0: %.4f of the blocks distinct, want one block written 256 times", distinct(b, 4096))
		}
	}
	effects["refill_buffers"] = func(t *testing.T) {
		b := written(t, "--scramble_buffers=0", "--refill_buffers")
		if distinct(b, 4096) != 1 || stamped(b) > 0.01 || compressed(t, b) < 0.99 {
			t.Errorf("refill_buffers: %.2f of the blocks distinct, %.2f stamped, compresses to %.2f; want fresh random data in each",
				distinct(b, 4096), stamped(b), compressed(t, b))
		}
	}
	effects["buffer_compress_percentage"] = func(t *testing.T) {
		b := written(t, "--buffer_compress_percentage=50")
		if z := zeroShare(b); !near(z, 0.5, 0.01) {
			t.Errorf("buffer_compress_percentage=50: %.3f of the bytes zero, want 0.5", z)
		}
		// Each 512-byte chunk: 256 random bytes, then 256 zeros.
		for off := 0; off < len(b); off += 512 {
			if !bytes.Equal(b[off+256:off+512], make([]byte, 256)) || bytes.Count(b[off:off+256], []byte{0}) > 8 {
				t.Fatalf("the chunk at %d is not 256 random bytes then 256 zeros", off)
			}
		}
		if c := compressed(t, b); !near(c, 0.5, 0.05) {
			t.Errorf("buffer_compress_percentage=50 compresses to %.2f", c)
		}
	}
	effects["buffer_compress_chunk"] = func(t *testing.T) {
		b := written(t, "--buffer_compress_percentage=25", "--buffer_compress_chunk=4k")
		for off := 0; off < len(b); off += 4096 {
			if !bytes.Equal(b[off+3072:off+4096], make([]byte, 1024)) || bytes.Count(b[off:off+3072], []byte{0}) > 40 {
				t.Fatalf("buffer_compress_chunk=4k: the block at %d is not 3 KiB random then 1 KiB zeros", off)
			}
		}
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--rw=write", "--buffer_compress_chunk=4k"), "buffer_compress_percentage")
	}
	effects["buffer_pattern"] = func(t *testing.T) {
		b := written(t, "--buffer_pattern=0xdeadbeef")
		if !bytes.Equal(b, bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, len(b)/4)) {
			t.Errorf("buffer_pattern=0xdeadbeef wrote %x…", b[:16])
		}
		b = written(t, `--buffer_pattern="io"0x0a`)
		if !bytes.Equal(b[:4096], bytes.Repeat([]byte("io\n"), 1366)[:4096]) {
			t.Errorf(`buffer_pattern="io"0x0a: each block should repeat "io\n" from its start, got %q…`, b[:12])
		}
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--buffer_pattern=%o"), "verify_pattern")
	}
	effects["dedupe_percentage"] = func(t *testing.T) {
		// Half the blocks repeat an earlier one: about half are distinct.
		if d := distinct(written(t, "--dedupe_percentage=50"), 4096); !near(d, 0.5, 0.1) {
			t.Errorf("dedupe_percentage=50: %.2f of the blocks distinct, want about 0.5", d)
		}
		if d := distinct(written(t, "--dedupe_percentage=100"), 4096); d != 1.0/256 {
			t.Errorf("dedupe_percentage=100: %.4f of the blocks distinct, want one", d)
		}
	}
	// A working set of 1 MiB × N% in 4 KiB blocks: every repeated block
	// is one of the job's first writes (the working set's blocks), while
	// repeat mode repeats blocks all along the file.
	workingSet := func(t *testing.T, extra ...string) (repeated, beyond int) {
		b := written(t, append([]string{"--size=1m", "--dedupe_percentage=50"}, extra...)...)
		firstAt, n := map[string]int{}, map[string]int{}
		for off := 0; off < len(b); off += 4096 {
			blk := string(b[off : off+4096])
			if _, ok := firstAt[blk]; !ok {
				firstAt[blk] = off / 4096
			}
			n[blk]++
		}
		for blk, c := range n {
			if c > 1 {
				repeated++
				if firstAt[blk] > 64 {
					beyond++ // first written past the first quarter
				}
			}
		}
		return repeated, beyond
	}
	effects["dedupe_mode"] = func(t *testing.T) {
		// (The job's first block fills its buffer as it starts, unwritten:
		// a repeat of it may first show anywhere.)
		if r, beyond := workingSet(t, "--dedupe_mode=working_set", "--dedupe_working_set_percentage=10"); r > 25 || r < 10 || beyond > 1 {
			t.Errorf("working_set of 25 blocks: %d blocks repeated, %d of them first written past block 64", r, beyond)
		}
		if r, beyond := workingSet(t, "--dedupe_mode=repeat"); r < 40 || beyond < 20 {
			t.Errorf("repeat: %d blocks repeated, %d first written past block 64; want them all along the file", r, beyond)
		}
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--rw=write", "--dedupe_mode=working_set"), "dedupe_percentage")
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--rw=write", "--dedupe_percentage=50", "--dedupe_mode=working_set"), "size")
	}
	effects["dedupe_working_set_percentage"] = func(t *testing.T) {
		small, _ := workingSet(t, "--dedupe_mode=working_set", "--dedupe_working_set_percentage=2")
		large, _ := workingSet(t, "--dedupe_mode=working_set", "--dedupe_working_set_percentage=40")
		if small > 5 || large <= 25 {
			t.Errorf("working sets of 5 and 102 blocks: %d and %d blocks repeated", small, large)
		}
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--rw=write", "--size=1m", "--dedupe_percentage=50",
			"--dedupe_mode=working_set", "--dedupe_working_set_percentage=60"), "cannot add up to more than 100")
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--rw=write", "--dedupe_percentage=50", "--dedupe_working_set_percentage=20"), "dedupe_mode=working_set")
	}
	effects["dedupe_global"] = func(t *testing.T) {
		// Two jobs, each its own file: with dedupe_global, blocks of one
		// repeat in the other.
		shared := func(extra ...string) int {
			a, b := scratch(t, 1<<20, 0xa5), scratch(t, 1<<20, 0xa5)
			args := append([]string{"--rw=write", "--bs=4k", "--size=1m", "--ioengine=psync", "--dedupe_percentage=50",
				"--dedupe_mode=working_set", "--dedupe_working_set_percentage=50"}, extra...)
			run(t, append(args, "--name=a", "--filename="+a, "--name=b", "--filename="+b)...)
			da, _ := os.ReadFile(a)
			db, _ := os.ReadFile(b)
			inA := map[string]bool{}
			for off := 0; off < len(da); off += 4096 {
				inA[string(da[off:off+4096])] = true
			}
			n := 0
			for off := 0; off < len(db); off += 4096 {
				if inA[string(db[off:off+4096])] {
					n++
				}
			}
			return n
		}
		if apart, together := shared(), shared("--dedupe_global=1"); apart != 0 || together < 40 {
			t.Errorf("blocks of b found in a: %d without dedupe_global, %d with it", apart, together)
		}
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--rw=write", "--dedupe_percentage=50", "--dedupe_global=1"), "dedupe_mode=working_set")
	}

	// A 64 KiB write of 16 blocks: fio syncs after writes 4, 8 and 12 —
	// not after the last, where the job ends.
	syncs := func(t *testing.T, extra ...string) []string {
		return traced(t, "fsync,fdatasync", append([]string{"--name=e", "--filename=" + file(t, 1<<20), "--rw=write", "--size=64k", "--ioengine=psync"}, extra...)...)
	}
	effects["fsync"] = func(t *testing.T) {
		if n := count(syncs(t, "--fsync=4"), `\sfsync\(`); n != 3 {
			t.Errorf("fsync=4 over 16 writes: %d fsyncs, want 3", n)
		}
	}
	effects["fdatasync"] = func(t *testing.T) {
		if n := count(syncs(t, "--fdatasync=4"), `fdatasync\(`); n != 3 {
			t.Errorf("fdatasync=4 over 16 writes: %d fdatasyncs, want 3", n)
		}
	}
	effects["end_fsync"] = func(t *testing.T) {
		if n := count(syncs(t, "--end_fsync=1"), `\sfsync\(`); n != 1 {
			t.Errorf("end_fsync=1: %d fsyncs, want 1", n)
		}
		// Not counted among the job's syncs, as in fio.
		if s := job(run(t, "--name=e", "--filename="+file(t, 1<<20), "--rw=write", "--size=64k", "--end_fsync=1")).Sync; s.IOs() != 0 {
			t.Errorf("end_fsync counted %d syncs", s.IOs())
		}
	}
	effects["fsync_on_close"] = func(t *testing.T) {
		if n := count(syncs(t, "--fsync_on_close=1"), `\sfsync\(`); n != 1 {
			t.Errorf("fsync_on_close=1: %d fsyncs, want 1", n)
		}
	}
	effects["sync"] = func(t *testing.T) {
		f := file(t, 1<<20)
		for v, flag := range map[string]string{"1": "O_SYNC", "sync": "O_SYNC", "dsync": "O_DSYNC"} {
			lines := traced(t, "openat", "--name=e", "--filename="+f, "--rw=write", "--size=64k", "--sync="+v)
			if count(lines, regexp.QuoteMeta(f)+`".*`+flag) == 0 {
				t.Errorf("sync=%s did not open with %s:\n%s", v, flag, strings.Join(lines, "\n"))
			}
		}
		if lines := traced(t, "openat", "--name=e", "--filename="+f, "--rw=write", "--size=64k", "--sync=none"); count(lines, regexp.QuoteMeta(f)+`".*SYNC`) > 0 {
			t.Error("sync=none opened with a sync flag")
		}
	}
	pvsync2 := func(t *testing.T, extra ...string) []string {
		return traced(t, "preadv2", append([]string{"--name=e", "--filename=" + file(t, 1<<20), "--ioengine=pvsync2", "--rw=randread", "--size=1m"}, extra...)...)
	}
	effects["hipri_percentage"] = func(t *testing.T) {
		// Polling is per I/O, drawn: about half of 256 reads.
		if n := count(pvsync2(t, "--hipri", "--hipri_percentage=50"), `RWF_HIPRI`); n < 100 || n > 156 {
			t.Errorf("hipri_percentage=50: %d of 256 reads with RWF_HIPRI", n)
		}
		if n := count(pvsync2(t, "--hipri"), `RWF_HIPRI`); n != 256 {
			t.Errorf("hipri (hipri_percentage=100): %d of 256 reads with RWF_HIPRI", n)
		}
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--ioengine=pvsync2", "--hipri_percentage=50"), "without hipri")
	}
	effects["nowait"] = func(t *testing.T) {
		// Data in the page cache (read just now, and not invalidated when
		// the job opens the file): every read goes through.
		warm := file(t, 1<<20)
		os.ReadFile(warm)
		lines := traced(t, "preadv2", "--name=e", "--filename="+warm, "--ioengine=pvsync2", "--rw=randread", "--invalidate=0", "--nowait=1")
		if n := count(lines, `RWF_NOWAIT\) = 4096`); n != 256 {
			t.Errorf("nowait=1: %d of 256 reads with RWF_NOWAIT", n)
		}
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--ioengine=psync", "--nowait=1"), "pvsync2")
	}
}

// The JSON sync block counts what fio's does.
func TestSyncReport(t *testing.T) {
	r := run(t, "--name=e", "--filename="+file(t, 1<<20), "--rw=write", "--size=64k", "--fsync=4", "--ioengine=psync")
	rep := syncReport(job(r), false)
	if rep.TotalIOs != 3 || rep.Lat.N != 3 || len(rep.Lat.Percentile) == 0 {
		t.Errorf("sync block: total_ios %d, lat_ns N %d, %d percentiles; want 3, 3 and fio's list", rep.TotalIOs, rep.Lat.N, len(rep.Lat.Percentile))
	}
	var b strings.Builder
	writeSyncNormal(&b, job(r))
	if !regexp.MustCompile(`(?s)^  fsync/fdatasync/sync_file_range:\n    sync \([mun]sec\): min=\d+, max=\d+, avg=.*\n    sync percentiles \([mun]sec\):\n     \|  1\.00th=\[`).MatchString(b.String()) {
		t.Errorf("normal output:\n%s", b.String())
	}
	// fdatasyncs are timed with the fsyncs but, as in fio 3.33, not in
	// total_ios.
	r = run(t, "--name=e", "--filename="+file(t, 1<<20), "--rw=write", "--size=64k", "--fdatasync=4", "--ioengine=psync")
	if rep := syncReport(job(r), false); rep.TotalIOs != 0 || rep.Lat.N != 3 {
		t.Errorf("fdatasync=4: total_ios %d, lat_ns N %d; want 0 and 3", rep.TotalIOs, rep.Lat.N)
	}
	back, err := importSync(&rep)
	if err != nil || back.Fsyncs != 3 || back.Lat.Stat.N != 3 {
		t.Errorf("imported back: %+v, %v", back, err)
	}
}

// TestBuffersOnDevice: on a block device, through io_uring with O_DIRECT
// and fsyncs in the ring, what the device holds afterwards is what the
// options say.
func TestBuffersOnDevice(t *testing.T) {
	testdev.NeedLoopTools(t)
	for _, tc := range []struct {
		opts  []string
		check func(data []byte) string
	}{
		{[]string{"--zero_buffers"}, func(d []byte) string {
			if !bytes.Equal(d, make([]byte, len(d))) {
				return "not all zeros"
			}
			return ""
		}},
		{[]string{"--buffer_pattern=0x0102"}, func(d []byte) string {
			if !bytes.Equal(d, bytes.Repeat([]byte{1, 2}, len(d)/2)) {
				return "not the pattern"
			}
			return ""
		}},
		{[]string{"--buffer_compress_percentage=75"}, func(d []byte) string {
			if z := zeroShare(d); !near(z, 0.75, 0.01) {
				return fmt.Sprintf("%.3f zeros", z)
			}
			return ""
		}},
		{[]string{"--dedupe_percentage=75"}, func(d []byte) string {
			if s := distinct(d, 4096); !near(s, 0.25, 0.07) {
				return fmt.Sprintf("%.3f of the blocks distinct", s)
			}
			return ""
		}},
		{nil, func(d []byte) string {
			if distinct(d, 512) != 1 || stamped(d) != 1 {
				return "sectors not all distinct and stamped"
			}
			return ""
		}},
	} {
		t.Run(strings.Join(tc.opts, ","), func(t *testing.T) {
			dev := testdev.Loop(t, 2<<20)
			r := run(t, append([]string{"--name=w", "--filename=" + dev, "--rw=randwrite", "--bs=4k", "--direct=1",
				"--ioengine=io_uring", "--iodepth=4", "--fsync=16", "--end_fsync=1"}, tc.opts...)...)
			if s := job(r).Sync; job(r).Error != "" || s.Fsyncs == 0 {
				t.Fatalf("error %q, %d fsyncs", job(r).Error, s.Fsyncs)
			}
			data, err := os.ReadFile(dev)
			if err != nil {
				t.Fatal(err)
			}
			if msg := tc.check(data); msg != "" {
				t.Errorf("%s read back: %s", dev, msg)
			}
		})
	}
}
