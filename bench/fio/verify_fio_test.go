package fio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/system"
	"iolab/bench/testdev"
	"iolab/bench/verify"
)

// Data verification side by side with fio 3.33: each verifies what the
// other wrote, with every verify= method iolab takes (the same header and
// checksums, byte for byte), and a block changed on the device between
// the write and the verify is found, named and fails the job, on every
// engine.

// verifyKinds are the verify= methods with what else each needs, and
// where in a 4 KiB block a change is seen.
var verifyKinds = []struct {
	args []string
	at   int64 // offset of the change in its block
}{
	{[]string{"--verify=crc32c"}, 1000}, {[]string{"--verify=crc32c-intel"}, 1000}, {[]string{"--verify=md5"}, 1000},
	{[]string{"--verify=sha1"}, 1000}, {[]string{"--verify=sha256"}, 1000}, {[]string{"--verify=xxhash"}, 1000},
	// fio 3.33's sha512 compares only bytes 256-296 and the block's tail.
	{[]string{"--verify=sha512"}, 260},
	// meta checks the header alone: change its offset field.
	{[]string{"--verify=meta"}, 17},
	{[]string{"--verify=pattern", "--verify_pattern=0xdeadbeef"}, 1000},
	{[]string{"--verify_pattern=\"abc\"0x01"}, 1000}, // the header, then the pattern (fio's VERIFY_PATTERN)
	{[]string{"--verify=md5", "--verify_interval=512"}, 1000},
	{[]string{"--verify=crc32c", "--verify_offset=100"}, 1000},
}

// corrupt writes two changed bytes at off in path (a file or a block
// device), past its page cache.
func corrupt(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, 2)
	if _, err := f.ReadAt(b, off); err != nil {
		t.Fatal(err)
	}
	b[0], b[1] = ^b[0], b[1]^0x5a
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

// fioVerifyFails runs fio's job and returns its standard error and exit
// status, which a failed verify makes non-zero.
func fioRun(t *testing.T, fio string, args ...string) (string, error) {
	t.Helper()
	out, err, hung := fioRunFor(t, 2*time.Minute, fio, args...)
	if hung {
		err = fmt.Errorf("fio did not end in 2 minutes (killed): %w", err)
	}
	return out, err
}

// fioRunFor is fioRun, fio killed when it runs longer than limit (hung):
// the process started and the job processes it forked, which fio puts in
// sessions of their own (setsid, backend.c), so that killing fio leaves
// them running, orphaned, holding the test's device (a CI run: a job
// process of a killed fio 3.33 waited on its verify_async threads for
// eight minutes, and the test's device could not be detached).
func fioRunFor(t *testing.T, limit time.Duration, fio string, args ...string) (out string, err error, hung bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, fio, args...)
	cmd.Dir = t.TempDir() // fio's verify state files go there
	cmd.WaitDelay = 5 * time.Second
	b, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		killSame(t, append([]string{fio}, args...))
	}
	return string(b), err, ctx.Err() != nil
}

// killSame kills every process whose command line is argv (a killed
// fio's job processes, which it forked with its own) and waits, up to
// ten seconds, for them to be gone.
func killSame(t *testing.T, argv []string) {
	t.Helper()
	want := strings.Join(argv, "\x00") + "\x00"
	for range 100 {
		dirs, _ := os.ReadDir("/proc")
		left := 0
		for _, d := range dirs {
			pid, err := strconv.Atoi(d.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			cmdline, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
			if err != nil || string(cmdline) != want {
				continue
			}
			left++
			t.Logf("killing fio's job process %d, left running by the killed fio", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if left == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Errorf("fio's job processes (%s) still running ten seconds after SIGKILL", argv[0])
}

// runVerify runs an iolab job and returns its only result and the error
// the job failed with ("" when it passed).
func runVerify(t *testing.T, args ...string) *bench.JobResult {
	t.Helper()
	_, res, err := runArgs(args)
	if err != nil && res == nil {
		t.Fatal(err)
	}
	return job(res)
}

// TestVerifyWithFio: fio verifies iolab's writes and iolab fio's, for
// every method; then one changed block makes both fail at its offset, and
// for the checksums both name the same expected and received sums.
func TestVerifyWithFio(t *testing.T) {
	fio := lookFio(t)
	const size = 256 << 10 // verify_state_save=0 everywhere: nothing is written in the working directory
	for _, k := range verifyKinds {
		kind := k.args
		t.Run(strings.Join(kind, " "), func(t *testing.T) {
			t.Parallel()
			path := scratch(t, size, 0)
			base := []string{"--name=v", "--filename=" + path, "--size=256k", "--bs=4k", "--verify_state_save=0"}
			// iolab writes, fio checks.
			r := runVerify(t, append(append(copyArgs(base), "--rw=randwrite", "--ioengine=io_uring", "--iodepth=4", "--do_verify=0"), kind...)...)
			if r.Error != "" {
				t.Fatalf("iolab write: %s", r.Error)
			}
			if out, err := fioRun(t, fio, append(append(copyArgs(base), "--rw=read"), kind...)...); err != nil {
				t.Fatalf("fio does not verify iolab's data: %v\n%s", err, out)
			}
			// fio writes, iolab checks.
			if out, err := fioRun(t, fio, append(append(copyArgs(base), "--rw=randwrite", "--do_verify=0"), kind...)...); err != nil {
				t.Fatalf("fio write: %v\n%s", err, out)
			}
			r = runVerify(t, append(append(copyArgs(base), "--rw=read"), kind...)...)
			if r.Error != "" || r.Dirs[bench.Read].Bytes != size {
				t.Fatalf("iolab does not verify fio's data: read %d bytes, error %q", r.Dirs[bench.Read].Bytes, r.Error)
			}
			// One changed block: both find it there. (fio 3.33 prints the
			// failure but lets the job pass when a later interval of the
			// same block verifies; iolab fails the job.)
			bad := 17*4096 + k.at
			corrupt(t, path, bad)
			out, err := fioRun(t, fio, append(append(copyArgs(base), "--rw=read"), kind...)...)
			if err == nil && !strings.Contains(out, "verify failed") {
				t.Fatalf("fio passed a changed block:\n%s", out)
			}
			r = runVerify(t, append(append(copyArgs(base), "--rw=read"), kind...)...)
			if r.Error == "" {
				t.Fatal("iolab passed a changed block")
			}
			at := fmt.Sprintf("offset %d", 17*4096)
			if strings.Contains(strings.Join(kind, " "), "interval=512") {
				at = fmt.Sprintf("offset %d", bad-bad%512)
			}
			if !strings.Contains(out, at) || !strings.Contains(r.Error, at) {
				t.Errorf("the changed block is at %s:\nfio:   %s\niolab: %s", at, firstLine(out, "verify"), r.Error)
			}
			if m := regexp.MustCompile(`Expected CRC: ([0-9a-f]+)\s+Received CRC: ([0-9a-f]+)`).FindStringSubmatch(out); m != nil {
				if want := fmt.Sprintf("expected checksum %s, received %s", m[1], m[2]); !strings.Contains(r.Error, want) {
					t.Errorf("fio says %s\niolab: %s", want, r.Error)
				}
			}
		})
	}
}

func copyArgs(s []string) []string { return append([]string(nil), s...) }

func firstLine(out, sub string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// TestVerifyFindsCorruptBlock writes a loop device with verify on each
// engine, changes one block on the device between the write and the
// verify, and checks that the verify fails the run naming the block's
// offset and the expected and received checksums; the same without the
// change passes.
func TestVerifyFindsCorruptBlock(t *testing.T) {
	dev := testdev.Loop(t, 8<<20)
	t.Chdir(t.TempDir())
	for _, engine := range []string{"io_uring", "libaio", "psync"} {
		t.Run(engine, func(t *testing.T) {
			args := []string{"--name=v", "--filename=" + dev, "--size=4m", "--rw=randwrite", "--bs=4k", "--direct=1",
				"--ioengine=" + engine, "--iodepth=8", "--verify=crc32c", "--verify_state_save=0"}
			r := runVerify(t, args...) // write, then verify: clean
			if r.Error != "" || r.Verify == nil || r.Verify.Reads.Bytes != 4<<20 || r.Verify.Failed != nil {
				t.Fatalf("a clean write-then-verify: error %q, verify %+v", r.Error, r.Verify)
			}
			if r.Dirs[bench.Read].IOs != 0 || r.Dirs[bench.Write].Bytes != 4<<20 {
				t.Errorf("the verify reads are counted in the measured I/O: %+v", r.Dirs)
			}
			// The device did the verify reads too: they are the job's
			// bytes, not another process's (the step's "disturbed" check).
			if r.Moved[bench.Read] != 4<<20 || r.Moved[bench.Write] != 4<<20 {
				t.Errorf("moved %v bytes, want the 4 MiB written and the 4 MiB read back", r.Moved)
			}
			r = runVerify(t, append(args, "--do_verify=0")...)
			if r.Error != "" || (r.Verify != nil && r.Verify.Reads.IOs > 0) {
				t.Fatalf("do_verify=0 wrote with error %q and verified %+v", r.Error, r.Verify)
			}
			corrupt(t, dev, 1<<20+4096*3+100)
			r = runVerify(t, append(args, "--verify_only")...)
			var ve *verify.Error
			if r.Verify != nil {
				ve = r.Verify.Failed
			}
			if ve == nil || r.Error == "" {
				t.Fatalf("the changed block passed: error %q", r.Error)
			}
			if ve.Offset != 1<<20+4096*3 || ve.File != dev || ve.Method != "crc32c" || ve.Expected == ve.Received || len(ve.Expected) != 8 {
				t.Errorf("the failure does not name the block: %+v", ve)
			}
			if r.Errno != 84 { // fio's err=84, EILSEQ
				t.Errorf("the job failed with errno %d, want fio's 84 (EILSEQ)", r.Errno)
			}
			for _, want := range []string{"crc32c: verify failed", fmt.Sprintf("offset %d", 1<<20+4096*3), "expected checksum " + ve.Expected, "received " + ve.Received} {
				if !strings.Contains(r.Error, want) {
					t.Errorf("the job's error %q does not say %q", r.Error, want)
				}
			}
		})
	}
}

// TestVerifyStateAfterStop stops a verifying sequential writer halfway;
// its state file reads with Debian's fio-verify-state, and with it
// verify_only checks exactly what was written — in iolab and in fio —
// while without it the first unwritten block fails.
func TestVerifyStateAfterStop(t *testing.T) {
	fio := lookFio(t)
	tool, err := exec.LookPath("fio-verify-state")
	if err != nil {
		t.Fatal("fio-verify-state is not installed (Debian's fio package has it)")
	}
	dir := t.TempDir()
	t.Chdir(dir)
	path := scratch(t, 8<<20, 0)
	args := []string{"--name=w", "--filename=" + path, "--size=8m", "--rw=write", "--bs=4k", "--verify=crc32c"}
	cfg, err := ParseArgs(append(copyArgs(args), "--rate=2m"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	res, _ := (&bench.Runner{Sys: system.FS{}, Interval: 100 * time.Millisecond}).Run(ctx, cfg)
	if res == nil || len(res.Groups) == 0 {
		t.Fatal("no result from the stopped run")
	}
	r := job(res)
	if r.Verify == nil || r.Verify.StateFile != "local-w-0-verify.state" {
		t.Fatalf("no state file: %+v", r.Verify)
	}
	written := r.Dirs[bench.Write].IOs
	if written == 0 || written >= 2048 {
		t.Fatalf("the stop came after %d writes: not halfway", written)
	}
	out, err := exec.Command(tool, filepath.Join(dir, r.Verify.StateFile)).CombinedOutput()
	if err != nil {
		t.Fatalf("fio-verify-state: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "Name:\t\tw") || !regexp.MustCompile(`Number IOs:\s+\d+`).Match(out) {
		t.Fatalf("fio-verify-state does not read the state:\n%s", out)
	}
	n := regexp.MustCompile(`Number IOs:\s+(\d+)`).FindSubmatch(out)[1]
	last := regexp.MustCompile(`\(file= 0\) (\d+)`).FindSubmatch(out)
	if last == nil || fmt.Sprint((mustAtoi(t, string(n))-1)*4096) != string(last[1]) {
		t.Errorf("the state's last completion is not its last write:\n%s", out)
	}

	// iolab: with the state, the written part verifies; without, the
	// first unwritten block fails.
	v := runVerify(t, append(copyArgs(args), "--verify_only", "--verify_state_load=1")...)
	if v.Error != "" || v.Verify == nil || !v.Verify.Stopped || v.Verify.Reads.IOs != uint64(mustAtoi(t, string(n))) {
		t.Fatalf("verify_only with the state: error %q, verify %+v, state says %s writes", v.Error, v.Verify, n)
	}
	v = runVerify(t, append(copyArgs(args), "--verify_only")...)
	if v.Error == "" || !strings.Contains(v.Error, fmt.Sprintf("offset %d", mustAtoi(t, string(n))*4096)) {
		t.Fatalf("verify_only without the state should fail at the first unwritten block: %q", v.Error)
	}
	// fio, reading iolab's state file and data (it writes its own state
	// at the end of a verify_only job, so it runs on a copy).
	fdir := t.TempDir()
	if b, err := os.ReadFile(filepath.Join(dir, r.Verify.StateFile)); err != nil || os.WriteFile(filepath.Join(fdir, r.Verify.StateFile), b, 0o644) != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(fio, append(copyArgs(args), "--verify_only=1", "--verify_state_load=1", "--output-format=json")...)
	cmd.Dir = fdir
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), fmt.Sprintf(`"io_bytes" : %d`, mustAtoi(t, string(n))*4096)) {
		t.Fatalf("fio does not verify iolab's data up to iolab's state: %v\n%.3000s", err, out)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestVerifyRefused: fio's methods iolab does not have are refused by
// name, and so are combinations that cannot verify.
func TestVerifyRefused(t *testing.T) {
	for _, args := range [][]string{
		{"--verify=crc64"}, {"--verify=sha3-256"}, {"--verify_backlog_batch=2"},
		{"--verify=md5", "--verify_async_cpus=0"}, {"--verify_async=2"}, {"--experimental_verify=1"}, {"--verify=md5", "--verify_async=2", "--do_verify=0"}, {"--verify=md5", "--experimental_verify=1", "--rw=read"}, {"--verify=md5", "--experimental_verify=1", "--loops=2"}, {"--verify=md5", "--experimental_verify=1", "--size=1m", "--io_size=2m"},
		{"--verify=md5", "--experimental_verify=1", "--verify_backlog=8"}, {"--verify=md5", "--experimental_verify=1", "--rw=randwrite", "--randrepeat=0"},
		{"--verify=pattern"}, {"--verify=sha512", "--bs=256"},
		{"--verify=md5", "--time_based", "--runtime=1"}, {"--verify=md5", "--rw=randrw"},
		{"--verify=md5", "--ioengine=null", "--size=1m"},
	} {
		_, err := ParseArgs(append([]string{"--name=v", "--filename=/dev/null", "--rw=write"}, args...))
		oe, ok := errors.AsType[*bench.OptionError](err)
		if !ok {
			t.Errorf("%v: %v, want an option error", args, err)
			continue
		}
		t.Logf("%v: %v", args, oe)
	}
}

// TestVerifyJSONMatchesFio runs fio's basic-verify example
// (testdata/jobs/examples/basic-verify.fio: 4 MiB on a loop device) with
// fio 3.33 and with iolab, json+, and compares the documents as
// TestJSONMatchesFio does: the verify reads are the job's reads, with
// their own runtime, in the same structure as fio's.
func TestVerifyJSONMatchesFio(t *testing.T) {
	fio := lookFio(t)
	dev := testdev.Loop(t, 8<<20)
	t.Setenv("IOLAB_DEV", dev)
	path, err := filepath.Abs(filepath.Join("testdata", "jobs", "examples", "basic-verify.fio"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir()) // the verify state files land there
	fioOut := runFio(t, fio, t.TempDir(), "--output-format=json+", path)
	cfg, res, err := runExample(path)
	if err != nil {
		t.Fatalf("iolab: %v", err)
	}
	ours := writtenJSON(t, NewReport(res, cfg, true))
	(&jsonComparison{t: t}).compare("", decodeOrdered(t, fioOut), decodeOrdered(t, ours))
	// What the example is about, in both: 4 MiB written, then read back.
	for _, doc := range []struct {
		who string
		out []byte
	}{{"fio", fioOut}, {"iolab", ours}} {
		reps, err := ParseReports(bytes.NewReader(doc.out))
		if err != nil {
			t.Fatal(err)
		}
		j := reps[len(reps)-1].Jobs[0]
		if j.Error != 0 || j.Write.IOBytes != 4<<20 || j.Read.IOBytes != 4<<20 {
			t.Errorf("%s: error %d, wrote %d bytes, read back %d; want 4 MiB each", doc.who, j.Error, j.Write.IOBytes, j.Read.IOBytes)
		}
	}
	if t.Failed() {
		t.Logf("fio:\n%s\niolab:\n%s", fioOut, ours)
	}
}
