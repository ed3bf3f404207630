package fio

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"iolab/bench"
	"iolab/bench/joblog"
)

// verify_async and experimental_verify side by side with fio 3.33: the
// same blocks read back (the offsets of the reads in each one's
// write_lat_log, log_offset=1), the same outcome on a good file and on
// one changed between the write and the verify.

// verifiedBlocks is the offsets of the reads (ddir 0) in a clat log
// written with log_offset=1, in the order they completed.
func verifiedBlocks(t *testing.T, log string, b []byte) []int64 {
	t.Helper()
	var offs []int64
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(line, ", ")
		if len(f) < 5 || f[2] != "0" {
			continue
		}
		off, err := strconv.ParseInt(f[4], 10, 64)
		if err != nil {
			t.Fatalf("%s: %q: %v", log, line, err)
		}
		offs = append(offs, off)
	}
	return offs
}

// fioVerify runs fio with args in a directory of its own, with a clat log
// of offsets; it returns fio's output, its exit error and the offsets of
// its reads.
func fioVerify(t *testing.T, fio string, args ...string) (string, error, []int64) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(fio, append(copyArgs(args), "--write_lat_log=v", "--log_offset=1")...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	log := filepath.Join(dir, "v_clat.1.log")
	b, rerr := os.ReadFile(log)
	if rerr != nil {
		t.Fatalf("%v\n%s", rerr, out)
	}
	return string(out), err, verifiedBlocks(t, log, b)
}

// iolabVerify runs iolab's job with the same clat log and returns its
// result and the offsets of its reads.
func iolabVerify(t *testing.T, args ...string) (*bench.JobResult, []int64) {
	t.Helper()
	r := runVerify(t, append(copyArgs(args), "--write_lat_log=v", "--log_offset=1")...)
	for _, l := range r.Logs {
		if l.Kind == joblog.Clat && !l.Truncated {
			return r, verifiedBlocks(t, l.File, l.Data)
		}
	}
	t.Fatalf("the job kept no whole clat log (error %q)", r.Error)
	return nil, nil
}

func sorted(s []int64) []int64 { s = slices.Clone(s); slices.Sort(s); return s }

// changeBlock writes the job's blocks with fio (do_verify=0) and changes
// one on the file: the 17th 4 KiB block, at byte 1000 of it.
func changeBlock(t *testing.T, fio, path string, args []string) int64 {
	t.Helper()
	if out, err := fioRun(t, fio, append(copyArgs(args), "--do_verify=0")...); err != nil {
		t.Fatalf("fio write: %v\n%s", err, out)
	}
	corrupt(t, path, 17*4096+1000)
	return 17 * 4096
}

// TestVerifyAsyncWithFio: with verify_async=2 iolab and fio read back the
// same blocks and pass on a good file; iolab's checks ran on two threads
// that are not the job's, one block each per read. A block changed
// between the write and the verify fails both jobs there (fio's
// func=async_verify, err=84), in a write job's verify_only and in a read
// job.
func TestVerifyAsyncWithFio(t *testing.T) {
	fio := lookFio(t)
	for _, engine := range [][]string{{"--ioengine=io_uring", "--iodepth=8"}, {"--ioengine=psync"}, {"--ioengine=libaio", "--iodepth=4", "--direct=1"}} {
		t.Run(engine[0], func(t *testing.T) {
			path := scratch(t, 1<<20, 0)
			args := append([]string{"--name=v", "--filename=" + path, "--size=1m", "--bs=4k", "--rw=randwrite", "--verify=sha256",
				"--verify_state_save=0", "--verify_async=2"}, engine...)
			out, err, theirs := fioVerify(t, fio, args...)
			if err != nil {
				t.Fatalf("fio: %v\n%s", err, out)
			}
			r, ours := iolabVerify(t, args...)
			if r.Error != "" || len(ours) != 256 || !slices.Equal(sorted(ours), sorted(theirs)) {
				t.Fatalf("iolab verified %d blocks (error %q), fio %d; not the same blocks", len(ours), r.Error, len(theirs))
			}
			checkThreads(t, r, 2)

			// Without verify_async the job's thread checks: no threads.
			if r := runVerify(t, slices.DeleteFunc(copyArgs(args), func(a string) bool { return a == "--verify_async=2" })...); r.Error != "" || r.Verify == nil || len(r.Verify.Threads) != 0 {
				t.Fatalf("without verify_async: error %q, verify %+v", r.Error, r.Verify)
			}

			bad := changeBlock(t, fio, path, args)
			for _, job := range [][]string{{"--verify_only"}, {"--rw=read"}} {
				a := append(copyArgs(args), job...)
				out, err, _ := fioVerify(t, fio, a...)
				if err == nil || !strings.Contains(out, "func=async_verify") || !strings.Contains(out, fmt.Sprintf("offset %d", bad)) {
					t.Fatalf("%v: fio should fail in its verify thread at offset %d: %v\n%s", job, bad, err, out)
				}
				r, _ := iolabVerify(t, a...)
				if r.Verify == nil || r.Verify.Failed == nil || r.Verify.Failed.Offset != bad || r.Errno != 84 || !strings.Contains(r.Error, "sha256: verify failed") {
					t.Fatalf("%v: iolab should fail at offset %d with errno 84: error %q (errno %d)", job, bad, r.Error, r.Errno)
				}
				if len(r.Verify.Threads) != 2 {
					t.Errorf("%v: %d verify threads, want 2", job, len(r.Verify.Threads))
				}
			}
		})
	}
}

// checkThreads: n threads checked every block read back, none of them the
// job's thread, and they spent CPU time on it.
func checkThreads(t *testing.T, r *bench.JobResult, n int) {
	t.Helper()
	ts := r.Verify.Threads
	if len(ts) != n {
		t.Fatalf("%d verify threads, want %d: %+v", len(ts), n, ts)
	}
	var blocks uint64
	var cpu int64
	for _, th := range ts {
		if th.TID == 0 || th.TID == r.TID {
			t.Errorf("a check ran on thread %d, the job's is %d", th.TID, r.TID)
		}
		blocks += th.Blocks
		cpu += int64(th.CPU)
	}
	if ts[0].TID == ts[1%n].TID && n > 1 {
		t.Errorf("the verify threads share thread %d", ts[0].TID)
	}
	if blocks != r.Verify.Reads.IOs || cpu <= 0 {
		t.Errorf("the threads checked %d blocks in %v of CPU; %d were read back", blocks, cpu, r.Verify.Reads.IOs)
	}
}

// TestExperimentalVerifyWithFio: experimental_verify reads back the same
// blocks as fio, in the same order (iodepth=1: the order of the writes
// replayed), and passes on a good file; a random writer without the
// random map, whose later writes overwrite earlier ones, fails in both at
// the same block with the same bad numberio; a block changed between the
// write and a verify_only fails both there.
func TestExperimentalVerifyWithFio(t *testing.T) {
	fio := lookFio(t)
	for _, tc := range []struct {
		name string
		args []string
		fail string // what both say, "" for a pass
	}{
		{"write", []string{"--rw=write"}, ""},
		{"randwrite", []string{"--rw=randwrite"}, ""},
		{"randwrite bsrange", []string{"--rw=randwrite", "--bsrange=4k-16k", "--verify_interval=4k"}, ""},
		{"randwrite async", []string{"--rw=randwrite", "--verify_async=2"}, ""},
		{"randwrite norandommap", []string{"--rw=randwrite", "--norandommap"}, "verify: bad header numberio"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := scratch(t, 512<<10, 0)
			args := append([]string{"--name=v", "--filename=" + path, "--size=256k", "--bs=4k", "--verify=crc32c",
				"--verify_state_save=0", "--experimental_verify=1", "--ioengine=psync"}, tc.args...)
			out, ferr, theirs := fioVerify(t, fio, args...)
			r, ours := iolabVerify(t, args...)
			if tc.fail == "" {
				if ferr != nil || r.Error != "" {
					t.Fatalf("fio: %v, iolab: %q\n%s", ferr, r.Error, out)
				}
			} else {
				line := firstLine(out, tc.fail)
				if ferr == nil || line == "" || !strings.Contains(r.Error, line) {
					t.Fatalf("both should fail with %q:\nfio:   %s\niolab: %s", tc.fail, line, r.Error)
				}
			}
			if len(ours) == 0 || !slices.Equal(ours, theirs) {
				t.Fatalf("iolab read back %d blocks, fio %d, not the same in the same order:\niolab %v\nfio   %v", len(ours), len(theirs), ours, theirs)
			}
			if strings.Contains(tc.name, "async") {
				checkThreads(t, r, 2)
			}
		})
	}
	t.Run("changed block", func(t *testing.T) {
		path := scratch(t, 512<<10, 0)
		args := []string{"--name=v", "--filename=" + path, "--size=256k", "--bs=4k", "--verify=md5", "--rw=randwrite",
			"--verify_state_save=0", "--experimental_verify=1", "--iodepth=4"}
		bad := changeBlock(t, fio, path, args)
		a := append(copyArgs(args), "--verify_only")
		out, err, _ := fioVerify(t, fio, a...)
		if err == nil || !strings.Contains(out, fmt.Sprintf("md5: verify failed at file %s offset %d", path, bad)) {
			t.Fatalf("fio should fail at offset %d: %v\n%s", bad, err, out)
		}
		r, _ := iolabVerify(t, a...)
		if r.Verify == nil || r.Verify.Failed == nil || r.Verify.Failed.Offset != bad || r.Errno != 84 {
			t.Fatalf("iolab should fail at offset %d with errno 84: %q", bad, r.Error)
		}
	})
}
