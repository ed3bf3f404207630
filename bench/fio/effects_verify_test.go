package fio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"iolab/bench"
)

// Effect probes of the verify options (options_verify.go).

// verified runs a sequential 256 KiB write of 4 KiB blocks on a fresh
// file with extra options and returns the job's result and the file.
func verified(t *testing.T, path string, extra ...string) (*bench.JobResult, []byte) {
	t.Helper()
	if path == "" {
		path = scratch(t, 256<<10, 0)
	}
	r := runVerify(t, append([]string{"--name=w", "--filename=" + path, "--size=256k", "--rw=write", "--bs=4k", "--ioengine=psync", "--verify_state_save=0"}, extra...)...)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return r, b
}

// headersAt counts fio's verify header magic at every step bytes of data,
// from at.
func headersAt(data []byte, at, step int) int {
	n := 0
	for off := at; off+2 <= len(data); off += step {
		if binary.LittleEndian.Uint16(data[off:]) == 0xacca {
			n++
		}
	}
	return n
}

func verifyReads(r *bench.JobResult) uint64 {
	if r.Verify == nil {
		return 0
	}
	return r.Verify.Reads.IOs
}

func init() {
	effects["verify"] = func(t *testing.T) {
		r, b := verified(t, "", "--verify=crc32c")
		if headersAt(b, 0, 4096) != 64 || verifyReads(r) != 64 || r.Error != "" {
			t.Errorf("verify=crc32c: %d headers, %d blocks read back, error %q; want 64, 64, none", headersAt(b, 0, 4096), verifyReads(r), r.Error)
		}
		if r, b := verified(t, "", "--verify=0"); headersAt(b, 0, 4096) != 0 || r.Verify != nil {
			t.Errorf("verify=0 wrote %d headers and verified %+v", headersAt(b, 0, 4096), r.Verify)
		}
		refused(t, runErr(t, "--name=w", "--filename=/dev/null", "--verify=crc7"), "crc7")
	}
	effects["do_verify"] = func(t *testing.T) {
		r, b := verified(t, "", "--verify=md5", "--do_verify=0")
		if headersAt(b, 0, 4096) != 64 || verifyReads(r) != 0 {
			t.Errorf("do_verify=0: %d headers written, %d blocks read back; want 64, 0", headersAt(b, 0, 4096), verifyReads(r))
		}
	}
	effects["verify_only"] = func(t *testing.T) {
		// Nothing written: the zeros fail; after a write, they verify.
		path := scratch(t, 256<<10, 0)
		r, _ := verified(t, path, "--verify=md5", "--verify_only")
		if r.Dirs[bench.Write].IOs != 0 || r.Error == "" || !strings.Contains(r.Error, "bad header magic 0") {
			t.Fatalf("verify_only on zeros: %d writes, error %q", r.Dirs[bench.Write].IOs, r.Error)
		}
		verified(t, path, "--verify=md5", "--do_verify=0")
		if r, _ := verified(t, path, "--verify=md5", "--verify_only"); r.Error != "" || verifyReads(r) != 64 || r.Dirs[bench.Write].IOs != 0 {
			t.Errorf("verify_only after the write: error %q, %d read back, %d written", r.Error, verifyReads(r), r.Dirs[bench.Write].IOs)
		}
	}
	effects["verify_pattern"] = func(t *testing.T) {
		_, b := verified(t, "", "--verify=pattern", "--verify_pattern=0x0a0b0c0d")
		if !bytes.Equal(b, bytes.Repeat([]byte{10, 11, 12, 13}, len(b)/4)) {
			t.Error("verify=pattern did not write the pattern alone")
		}
		// Alone: a header, then the pattern.
		_, b = verified(t, "", "--verify_pattern=0x0a0b0c0d")
		if headersAt(b, 0, 4096) != 64 || !bytes.Equal(b[40:4096], bytes.Repeat([]byte{10, 11, 12, 13}, 1024)[40:]) {
			t.Error("verify_pattern alone did not write a header and the pattern")
		}
	}
	effects["verify_interval"] = func(t *testing.T) {
		_, b := verified(t, "", "--verify=crc32c", "--verify_interval=512")
		if n := headersAt(b, 0, 512); n != 512 {
			t.Errorf("verify_interval=512: %d headers every 512 bytes, want 512", n)
		}
	}
	effects["verify_offset"] = func(t *testing.T) {
		_, b := verified(t, "", "--verify=crc32c", "--verify_offset=100")
		if headersAt(b, 100, 4096) != 64 || headersAt(b, 0, 4096) != 0 {
			t.Errorf("verify_offset=100: %d headers at 100, %d at 0", headersAt(b, 100, 4096), headersAt(b, 0, 4096))
		}
	}
	effects["verify_fatal"] = func(t *testing.T) {
		// Two bad intervals in one block: both counted, or the first only.
		path := scratch(t, 256<<10, 0)
		verified(t, path, "--verify=crc32c", "--verify_interval=512", "--do_verify=0")
		corrupt(t, path, 8192+600)
		corrupt(t, path, 8192+2000)
		bad := func(extra ...string) int {
			r, _ := verified(t, path, append([]string{"--verify=crc32c", "--verify_interval=512", "--verify_only"}, extra...)...)
			if r.Verify == nil || r.Verify.Failed == nil {
				t.Fatalf("no failure: %q", r.Error)
			}
			return r.Verify.Failed.BadIntervals
		}
		if a, b := bad(), bad("--verify_fatal=1"); a != 2 || b != 1 {
			t.Errorf("bad intervals found: %d without verify_fatal, %d with; want 2, 1", a, b)
		}
	}
	effects["verify_backlog"] = func(t *testing.T) {
		// Reads interleave with the writes: a pread before the last pwrite.
		f := file(t, 1<<20)
		lines := traced(t, "pread64,pwrite64", "--name=w", "--filename="+f, "--size=256k", "--rw=write", "--bs=4k",
			"--verify=crc32c", "--verify_backlog=16", "--verify_state_save=0")
		firstRead, lastWrite, reads := -1, -1, 0
		for i, l := range lines {
			if strings.Contains(l, "pread64(") && strings.Contains(l, ", 4096, ") {
				reads++
				if firstRead < 0 {
					firstRead = i
				}
			}
			if strings.Contains(l, "pwrite64(") {
				lastWrite = i
			}
		}
		if firstRead < 0 || firstRead > lastWrite || reads != 64 {
			t.Errorf("verify_backlog=16: first read at %d, last write at %d, %d reads; want reads among the writes, 64", firstRead, lastWrite, reads)
		}
		// Without it, every read comes after the last write.
		lines = traced(t, "pread64,pwrite64", "--name=w", "--filename="+f, "--size=256k", "--rw=write", "--bs=4k",
			"--verify=crc32c", "--verify_state_save=0")
		for i, l := range lines {
			if strings.Contains(l, "pread64(") && strings.Contains(l, ", 4096, ") && i < lastWrite && strings.Contains(strings.Join(lines[i:], ""), "pwrite64(") {
				t.Errorf("without verify_backlog a read came before a write: %s", l)
				break
			}
		}
	}
	effects["verify_dump"] = func(t *testing.T) {
		t.Chdir(t.TempDir())
		path := scratch(t, 256<<10, 0)
		verified(t, path, "--verify=md5", "--do_verify=0")
		corrupt(t, path, 4096*5+300)
		r, _ := verified(t, path, "--verify=md5", "--verify_only", "--verify_dump=1")
		if r.Verify == nil || r.Verify.Failed == nil || len(r.Verify.Failed.Dumped) != 2 {
			t.Fatalf("verify_dump: %+v", r.Verify)
		}
		got, err1 := os.ReadFile("target.20480.received")
		want, err2 := os.ReadFile("target.20480.expected")
		if err1 != nil || err2 != nil || len(got) != 4096 || len(want) != 4096 {
			t.Fatalf("dumps: %v %v", err1, err2)
		}
		diff := 0
		for i := range got {
			if got[i] != want[i] {
				diff++
			}
		}
		if diff == 0 || diff > 2 || got[300] == want[300] {
			t.Errorf("the dumps differ in %d bytes; want the changed ones at 300", diff)
		}
		os.Remove("target.20480.received")
		if r, _ := verified(t, path, "--verify=md5", "--verify_only"); r.Verify == nil || r.Verify.Failed == nil || len(r.Verify.Failed.Dumped) != 0 {
			t.Errorf("without verify_dump: %+v", r.Verify)
		}
		if _, err := os.Stat("target.20480.received"); err == nil {
			t.Error("without verify_dump the block was dumped")
		}
	}
	effects["verify_state_save"] = func(t *testing.T) {
		t.Chdir(t.TempDir())
		path := scratch(t, 256<<10, 0)
		runVerify(t, "--name=s", "--filename="+path, "--size=64k", "--rw=write", "--verify=crc32c", "--verify_state_save=0")
		if _, err := os.Stat("local-s-0-verify.state"); err == nil {
			t.Fatal("verify_state_save=0 wrote a state file")
		}
		runVerify(t, "--name=s", "--filename="+path, "--size=64k", "--rw=write", "--verify=crc32c")
		b, err := os.ReadFile("local-s-0-verify.state")
		if err != nil || len(b) != 24+152+16 || binary.LittleEndian.Uint64(b[24+16:]) != 16 {
			t.Fatalf("the state file (%d bytes, %v) does not say 16 writes", len(b), err)
		}
	}
	effects["verify_state_load"] = func(t *testing.T) {
		// The state of a 256 KiB write: verify_only over 512 KiB stops
		// where it ended; without it, the first unwritten block fails.
		t.Chdir(t.TempDir())
		path := scratch(t, 512<<10, 0)
		runVerify(t, "--name=s", "--filename="+path, "--size=256k", "--rw=write", "--verify=crc32c", "--do_verify=0")
		args := []string{"--name=s", "--filename=" + path, "--size=512k", "--rw=write", "--verify=crc32c", "--verify_only"}
		if r := runVerify(t, append(args, "--verify_state_load=1")...); r.Error != "" || verifyReads(r) != 64 || !r.Verify.Stopped {
			t.Errorf("with the state: error %q, %d read back (want 64, stopped)", r.Error, verifyReads(r))
		}
		if r := runVerify(t, args...); !regexp.MustCompile(`offset 262144\b`).MatchString(r.Error) {
			t.Errorf("without the state: %q, want a failure at 262144", r.Error)
		}
	}
	effects["verify_async"] = func(t *testing.T) {
		// The blocks are checked on two threads that are not the job's;
		// a bad block is still found, dumped, and verify_fatal still
		// stops at its first bad interval.
		r, _ := verified(t, "", "--verify=md5", "--verify_async=2")
		if r.Error != "" || r.Verify == nil || len(r.Verify.Threads) != 2 {
			t.Fatalf("verify_async=2: error %q, verify %+v", r.Error, r.Verify)
		}
		var blocks uint64
		for _, th := range r.Verify.Threads {
			if th.TID == r.TID {
				t.Errorf("a verify thread is the job's (%d)", th.TID)
			}
			blocks += th.Blocks
		}
		if blocks != 64 {
			t.Errorf("the verify threads checked %d blocks, want 64", blocks)
		}
		if r, _ := verified(t, "", "--verify=md5"); r.Verify == nil || len(r.Verify.Threads) != 0 {
			t.Errorf("without verify_async: %+v", r.Verify)
		}
		t.Chdir(t.TempDir())
		path := scratch(t, 256<<10, 0)
		verified(t, path, "--verify=crc32c", "--verify_interval=512", "--do_verify=0")
		corrupt(t, path, 8192+600)
		corrupt(t, path, 8192+2000)
		bad := func(extra ...string) *bench.JobResult {
			r, _ := verified(t, path, append([]string{"--verify=crc32c", "--verify_interval=512", "--verify_only", "--verify_async=2"}, extra...)...)
			if r.Verify == nil || r.Verify.Failed == nil || r.Errno != 84 || r.Verify.Failed.Offset != 8192+512 {
				t.Fatalf("the changed block passed, or not there: %q", r.Error)
			}
			return r
		}
		if a, b := bad().Verify.Failed.BadIntervals, bad("--verify_fatal=1").Verify.Failed.BadIntervals; a != 2 || b != 1 {
			t.Errorf("bad intervals found: %d without verify_fatal, %d with; want 2, 1", a, b)
		}
		if d := bad("--verify_dump=1").Verify.Failed.Dumped; len(d) != 2 {
			t.Errorf("verify_dump with verify_async dumped %v", d)
		}
		if _, err := os.Stat("target.8704.received"); err != nil {
			t.Error(err)
		}
	}
	effects["verify_async_cpus"] = func(t *testing.T) {
		// The kernel's affinity of each verify thread, as it ran.
		for _, cpu := range []string{"0", "1"} {
			r, _ := verified(t, "", "--verify=md5", "--verify_async=2", "--verify_async_cpus="+cpu)
			if r.Verify == nil || len(r.Verify.Threads) != 2 {
				t.Fatalf("verify_async_cpus=%s: %+v", cpu, r.Verify)
			}
			for _, th := range r.Verify.Threads {
				if fmt.Sprint(th.CPUs) != "["+cpu+"]" {
					t.Errorf("verify_async_cpus=%s: thread %d ran on %v", cpu, th.TID, th.CPUs)
				}
			}
		}
		if r, _ := verified(t, "", "--verify=md5", "--verify_async=1"); r.Verify == nil || len(r.Verify.Threads) != 1 || r.Verify.Threads[0].CPUs != nil {
			t.Errorf("without verify_async_cpus: %+v", r.Verify)
		}
		refused(t, runErr(t, "--name=w", "--filename=/dev/null", "--verify=md5", "--verify_async_cpus=0"), "verify_async=N")
	}
	effects["experimental_verify"] = func(t *testing.T) {
		// Without the random map, later writes overwrite earlier blocks:
		// the log reads each block once (its last write) and passes; the
		// replay reads every write in turn, and the first overwritten one
		// finds a later write's number, as fio's does.
		path := scratch(t, 256<<10, 0)
		args := []string{"--verify=crc32c", "--rw=randwrite", "--norandommap"}
		if r, _ := verified(t, path, args...); r.Error != "" || verifyReads(r) >= 64 {
			t.Fatalf("logged verify: error %q, %d blocks read back (fewer than 64 writes)", r.Error, verifyReads(r))
		}
		r, _ := verified(t, path, append(args, "--experimental_verify=1")...)
		if !strings.Contains(r.Error, "bad header numberio") {
			t.Errorf("experimental_verify of overwritten blocks: %q, want a bad numberio", r.Error)
		}
		if r, _ := verified(t, "", "--verify=crc32c", "--rw=randwrite", "--experimental_verify=1"); r.Error != "" || verifyReads(r) != 64 {
			t.Errorf("experimental_verify of a randwrite: error %q, %d read back", r.Error, verifyReads(r))
		}
	}
}
