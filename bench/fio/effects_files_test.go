package fio

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"iolab/bench"
)

// ioCall is one pread64/pwrite64 of a trace: descriptor, length, offset.
type ioCall struct {
	fd       int
	n, off   int64
	write    bool
	returned int64
}

// ioCalls are the job's reads and writes in a trace (strace's pread64 and
// pwrite64 lines), leaving out the dynamic loader's and Go runtime's own
// reads, which are not at offsets on the job's descriptors (>= 3) with
// lengths of whole 512-byte sectors.
func ioCalls(lines []string) []ioCall {
	re := regexp.MustCompile(`p(read|write)64\((\d+), .*, (\d+), (\d+)\) += (-?\d+)`)
	var out []ioCall
	for _, l := range lines {
		m := re.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		fd, _ := strconv.Atoi(m[2])
		n, _ := strconv.ParseInt(m[3], 10, 64)
		off, _ := strconv.ParseInt(m[4], 10, 64)
		ret, _ := strconv.ParseInt(m[5], 10, 64)
		if fd < 3 || n%512 != 0 {
			continue
		}
		out = append(out, ioCall{fd: fd, n: n, off: off, write: m[1] == "write", returned: ret})
	}
	return out
}

func callOffsets(calls []ioCall) []int64 {
	out := make([]int64, len(calls))
	for i, c := range calls {
		out[i] = c.off
	}
	return out
}

func callSizes(calls []ioCall) map[int64]int {
	out := map[int64]int{}
	for _, c := range calls {
		out[c.n]++
	}
	return out
}

// fdSwitches counts how often consecutive I/Os go to different files.
func fdSwitches(calls []ioCall) int {
	n := 0
	for i := 1; i < len(calls); i++ {
		if calls[i].fd != calls[i-1].fd {
			n++
		}
	}
	return n
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func init() {
	dirJob := func(t *testing.T, extra ...string) (string, []string) {
		dir := t.TempDir()
		return dir, append([]string{"--directory=" + dir, "--ioengine=psync", "--name=e"}, extra...)
	}
	effects["directory"] = func(t *testing.T) {
		dir, args := dirJob(t, "--size=64k", "--rw=write")
		run(t, args...)
		if fi, err := os.Stat(filepath.Join(dir, "e.0.0")); err != nil || fi.Size() != 64<<10 {
			t.Errorf("directory: no 64 KiB e.0.0 in it: %v", err)
		}
	}
	effects["nrfiles"] = func(t *testing.T) {
		dir, args := dirJob(t, "--size=96k", "--rw=write", "--nrfiles=3")
		r := run(t, args...)
		for i := range 3 {
			if !exists(filepath.Join(dir, "e.0."+strconv.Itoa(i))) {
				t.Errorf("nrfiles=3: no e.0.%d", i)
			}
		}
		if b := job(r).Dirs[bench.Write].Bytes; b != 96<<10 {
			t.Errorf("nrfiles=3, size=96k: wrote %d bytes", b)
		}
	}
	effects["filename_format"] = func(t *testing.T) {
		dir, args := dirJob(t, "--size=64k", "--rw=write", "--filename_format=data.$filenum-$JOBNAME")
		run(t, args...)
		if !exists(filepath.Join(dir, "data.0-e")) {
			t.Error("filename_format=data.$filenum-$JOBNAME: no data.0-e")
		}
	}
	effects["filesize"] = func(t *testing.T) {
		dir, args := dirJob(t, "--nrfiles=2", "--filesize=48k", "--rw=read")
		r := run(t, args...)
		for i := range 2 {
			if fi, err := os.Stat(filepath.Join(dir, "e.0."+strconv.Itoa(i))); err != nil || fi.Size() != 48<<10 {
				t.Errorf("filesize=48k: e.0.%d is not 48 KiB (%v)", i, err)
			}
		}
		if b := job(r).Dirs[bench.Read].Bytes; b != 96<<10 {
			t.Errorf("two files of 48k: read %d bytes", b)
		}
	}
	effects["file_service_type"] = func(t *testing.T) {
		two := func(t *testing.T, extra ...string) []ioCall {
			a, b := file(t, 32<<10), file(t, 32<<10)
			return ioCalls(traced(t, "pread64", append([]string{"--name=e", "--ioengine=psync", "--filename=" + a + ":" + b, "--size=64k"}, extra...)...))
		}
		if c := two(t); len(c) != 16 || fdSwitches(c) != 15 {
			t.Errorf("roundrobin (the default): %d reads, %d switches; want 16 alternating", len(c), fdSwitches(c))
		}
		if c := two(t, "--file_service_type=sequential"); fdSwitches(c) != 1 {
			t.Errorf("sequential: %d switches between the files, want 1", fdSwitches(c))
		}
		if c := two(t, "--file_service_type=roundrobin:4"); fdSwitches(c) != 3 {
			t.Errorf("roundrobin:4: %d switches, want 3", fdSwitches(c))
		}
	}
	effects["allow_file_create"] = func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "data")
		args := []string{"--name=e", "--ioengine=psync", "--filename=" + path, "--size=64k", "--allow_file_create=0"}
		// A missing file fails the job, in fio as in iolab, and stays
		// missing; with create_on_open too.
		out, err := exec.Command(lookFio(t), args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "file creation disallowed by allow_file_create=0") {
			t.Errorf("fio ran with a missing file and allow_file_create=0: %v\n%s", err, out)
		}
		refused(t, runErr(t, args...), "allow_file_create=0 forbids creating it")
		refused(t, runErr(t, append(args, "--rw=write", "--create_on_open=1")...), "allow_file_create=0 forbids creating it")
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Fatalf("allow_file_create=0 made %s: %v", path, err)
		}
		// Too short to cover: refused, and left as it was (fio unlinks it
		// first).
		if err := os.WriteFile(path, make([]byte, 4096), 0o644); err != nil {
			t.Fatal(err)
		}
		refused(t, runErr(t, args...), "forbids laying it out anew")
		if fi, err := os.Stat(path); err != nil || fi.Size() != 4096 {
			t.Errorf("allow_file_create=0 changed the short file: %v, %v", fi, err)
		}
		// A file that is there runs; and by default one is made.
		os.Truncate(path, 64<<10)
		if r := run(t, args...); ios(r) != 16 {
			t.Errorf("allow_file_create=0 on a file that is there: %d I/Os, want 16", ios(r))
		}
		os.Remove(path)
		if r := run(t, args[:len(args)-1]...); ios(r) != 16 {
			t.Errorf("allow_file_create=1: %d I/Os, want 16", ios(r))
		}
		if _, err := os.Stat(path); err != nil {
			t.Errorf("allow_file_create=1 did not make the file: %v", err)
		}
	}
	effects["create_on_open"] = func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "new")
		args := []string{"--name=e", "--ioengine=psync", "--filename=" + path, "--size=64k", "--rw=write"}
		created := regexp.QuoteMeta(path) + `", [^)]*O_CREAT`
		if n := count(traced(t, "openat", append(args, "--create_on_open=1")...), created); n != 1 {
			t.Errorf("create_on_open=1: the job's open made the file %d times, want once", n)
		}
		os.Remove(path)
		if n := count(traced(t, "openat", args...), created); n != 0 {
			t.Errorf("without create_on_open the file is laid out beside its place; the job opened it with O_CREAT %d times", n)
		}
	}
	effects["unlink"] = func(t *testing.T) {
		dir, args := dirJob(t, "--size=64k", "--rw=write")
		run(t, append(args, "--unlink=1")...)
		if exists(filepath.Join(dir, "e.0.0")) {
			t.Error("unlink=1: the file is still there")
		}
		run(t, args...)
		if !exists(filepath.Join(dir, "e.0.0")) {
			t.Error("without unlink the file is gone")
		}
	}
	effects["fallocate"] = func(t *testing.T) {
		alloc := func(mode string) []string {
			dir := t.TempDir()
			return traced(t, "fallocate,ftruncate", "--name=e", "--ioengine=psync", "--directory="+dir, "--size=64k", "--rw=write", "--fallocate="+mode)
		}
		for mode, want := range map[string]string{
			"native": `fallocate\(\d+, 0, 0, 65536\)`, "posix": `fallocate\(\d+, 0, 0, 65536\)`,
			"keep": `fallocate\(\d+, FALLOC_FL_KEEP_SIZE, 0, 65536\)`, "truncate": `ftruncate\(\d+, 65536\)`,
		} {
			if lines := alloc(mode); count(lines, want) != 1 {
				t.Errorf("fallocate=%s: want one %s:\n%s", mode, want, strings.Join(lines, "\n"))
			}
		}
		if lines := alloc("none"); count(lines, `fallocate\(|ftruncate\(`) != 0 {
			t.Errorf("fallocate=none allocated:\n%s", strings.Join(lines, "\n"))
		}
	}
	effects["invalidate"] = func(t *testing.T) {
		args := []string{"--name=e", "--ioengine=psync", "--filename=" + file(t, 1<<20), "--size=64k"}
		if n := count(traced(t, "fadvise64", args...), `POSIX_FADV_DONTNEED`); n != 1 {
			t.Errorf("invalidate=1 (the default): %d fadvise DONTNEED, want 1", n)
		}
		if n := count(traced(t, "fadvise64", append(args, "--invalidate=0")...), `fadvise64`); n != 0 {
			t.Errorf("invalidate=0: %d fadvise calls", n)
		}
	}
	seqSizes := func(t *testing.T, extra ...string) map[int64]int {
		return callSizes(ioCalls(traced(t, "pread64", append([]string{"--name=e", "--ioengine=psync", "--filename=" + file(t, 4<<20), "--size=2m"}, extra...)...)))
	}
	effects["bsrange"] = func(t *testing.T) {
		sizes := seqSizes(t, "--bsrange=4k-16k")
		for n := range sizes {
			if n%4096 != 0 || n < 4096 || n > 16384 {
				t.Errorf("bsrange=4k-16k: a read of %d bytes", n)
			}
		}
		if len(sizes) < 3 {
			t.Errorf("bsrange=4k-16k: sizes %v", sizes)
		}
	}
	effects["bssplit"] = func(t *testing.T) {
		sizes := seqSizes(t, "--bssplit=4k/25:64k/75")
		small, large := sizes[4096], sizes[65536]
		if small+large == 0 || len(sizes) != 2 {
			t.Fatalf("bssplit=4k/25:64k/75: sizes %v", sizes)
		}
		if share := float64(small) / float64(small+large); share < 0.15 || share > 0.35 {
			t.Errorf("bssplit=4k/25:64k/75: %.2f of reads are 4k, want about 0.25 (%v)", share, sizes)
		}
	}
	randOffs := func(t *testing.T, extra ...string) []int64 {
		return callOffsets(ioCalls(traced(t, "pread64", append([]string{"--name=e", "--ioengine=psync", "--filename=" + file(t, 1<<20), "--rw=randread", "--size=256k"}, extra...)...)))
	}
	effects["ba"] = func(t *testing.T) {
		unaligned := 0
		for _, o := range randOffs(t, "--ba=1k") {
			if o%1024 != 0 {
				t.Fatalf("ba=1k: offset %d", o)
			}
			if o%4096 != 0 {
				unaligned++
			}
		}
		if unaligned == 0 {
			t.Error("ba=1k: every offset is 4k-aligned")
		}
		for _, o := range randOffs(t) {
			if o%4096 != 0 {
				t.Fatalf("without ba: offset %d", o)
			}
		}
	}
	effects["number_ios"] = func(t *testing.T) {
		if n := ios(run(t, "--name=e", "--ioengine=psync", "--filename="+file(t, 1<<20), "--number_ios=5")); n != 5 {
			t.Errorf("number_ios=5: %d I/Os", n)
		}
	}
	effects["loops"] = func(t *testing.T) {
		if b := job(run(t, "--name=e", "--ioengine=psync", "--filename="+file(t, 1<<20), "--size=64k", "--loops=3")).Dirs[bench.Read].Bytes; b != 3*64<<10 {
			t.Errorf("loops=3 over 64k: %d bytes", b)
		}
	}
	effects["offset_increment"] = func(t *testing.T) {
		// Clone 1 writes 512k further on: what the file holds says where
		// each clone wrote (the clones' traced calls interleave).
		f := file(t, 1<<20)
		run(t, "--name=e", "--ioengine=psync", "--filename="+f, "--rw=write", "--size=8k", "--numjobs=2", "--offset_increment=512k")
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		written := func(from, to int) bool { return !slices.Equal(data[from:to], make([]byte, to-from)) }
		if !written(0, 8<<10) || !written(512<<10, 520<<10) || written(8<<10, 512<<10) || written(520<<10, 1<<20) {
			t.Error("offset_increment=512k, numjobs=2: the clones did not write at 0 and 512k alone")
		}
	}
	effects["rw_sequencer"] = func(t *testing.T) {
		same := func(offs []int64) int {
			n := 0
			for i := 1; i < len(offs); i++ {
				if offs[i] == offs[i-1] {
					n++
				}
			}
			return n
		}
		if o := randOffs(t, "--rw=randread:4", "--rw_sequencer=identical"); same(o) < len(o)/2 {
			t.Errorf("rw_sequencer=identical: %d of %d offsets repeat the last", same(o), len(o))
		}
		if o := randOffs(t, "--rw=randread:4"); same(o) != 0 {
			t.Errorf("rw_sequencer=sequential: %d offsets repeat the last", same(o))
		}
	}
	zoned := func(option, value string, want []int64) effect {
		return func(t *testing.T) {
			args := map[string]string{"zonemode": "strided", "zonesize": "8k", "zonerange": "64k", "zoneskip": "0"}
			args[option] = value
			cmd := []string{"--name=e", "--ioengine=psync", "--filename=" + file(t, 1<<20), "--size=24k"}
			for _, k := range []string{"zonemode", "zonesize", "zonerange", "zoneskip"} {
				cmd = append(cmd, "--"+k+"="+args[k])
			}
			if got := callOffsets(ioCalls(traced(t, "pread64", cmd...))); !slices.Equal(got, want) {
				t.Errorf("%s=%s: offsets %v, want %v", option, value, got, want)
			}
		}
	}
	k := int64(1024)
	effects["zonemode"] = func(t *testing.T) {
		zoned("zonemode", "strided", []int64{0, 4 * k, 64 * k, 68 * k, 128 * k, 132 * k})(t)
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 1<<20), "--zonemode=none", "--zonesize=8k"), "zonemode=none and zonesize")
	}
	effects["zonesize"] = zoned("zonesize", "4k", []int64{0, 64 * k, 128 * k, 192 * k, 256 * k, 320 * k})
	effects["zonerange"] = zoned("zonerange", "128k", []int64{0, 4 * k, 128 * k, 132 * k, 256 * k, 260 * k})
	effects["zoneskip"] = zoned("zoneskip", "64k", []int64{0, 4 * k, 128 * k, 132 * k, 256 * k, 260 * k})
}
