package fio

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/testdev"
)

// The verify trims (trim_percentage, trim_backlog, trim_backlog_batch,
// trim_verify_zero) side by side with fio 3.33, on loop devices: fio 3.33
// runs them in trimwrite and randtrimwrite jobs only (a write job's first
// verify trim aborts it).

// TestVerifyTrimsMatchFio: size-based verifying trimwrite and
// randtrimwrite jobs issue fio 3.33's writes, trims (the pairs' and the
// verify trims) and verify reads, I/Os and bytes per direction, with
// trim_verify_zero=1 (every block read back, the trimmed ones as zeros)
// and 0 (the trimmed ones not read), with trim_backlog_batch, with
// verify_async (the zeros checked on its threads), and on engines that
// queue (io_uring at iodepth=4, libaio with iodepth_batch=4); both pass. (With
// trim_verify_zero=1 at iodepth>1, fio 3.33 can trim a block whose write
// is still in flight, which then lands: both fail such a job; docs/fio.md.)
func TestVerifyTrimsMatchFio(t *testing.T) {
	fio := lookFio(t)
	dev := testdev.Loop(t, 16<<20)
	for _, tc := range []struct {
		name string
		args []string
		lost uint64 // listed blocks dropped from the verify phase and never trimmed
	}{
		{"trimwrite", []string{"--rw=trimwrite", "--trim_percentage=50", "--trim_backlog=8"}, 0},
		{"trimwrite skip", []string{"--rw=trimwrite", "--trim_percentage=50", "--trim_backlog=8", "--trim_verify_zero=0"}, 0},
		{"randtrimwrite batch", []string{"--rw=randtrimwrite", "--trim_percentage=30", "--trim_backlog=16", "--trim_backlog_batch=2"}, 0},
		{"randtrimwrite batch skip io_uring", []string{"--rw=randtrimwrite", "--trim_percentage=70", "--trim_backlog=5", "--trim_backlog_batch=1",
			"--trim_verify_zero=0", "--ioengine=io_uring", "--iodepth=4"}, 0},
		// Trims while writes wait to be submitted (iodepth_batch): the
		// engine's FIO_Q_BUSY passes the trim through fio's batch count
		// twice, and the last listed block is never trimmed.
		{"trimwrite batch skip iodepth_batch libaio", []string{"--rw=trimwrite", "--trim_percentage=70", "--trim_backlog=4", "--trim_backlog_batch=1",
			"--trim_verify_zero=0", "--ioengine=libaio", "--iodepth=8", "--iodepth_batch=4"}, 1},
		{"trimwrite verify_async", []string{"--rw=trimwrite", "--trim_percentage=40", "--trim_backlog=4", "--verify_async=2"}, 0},
		{"trimwrite no verify trims", []string{"--rw=trimwrite", "--ioengine=libaio", "--iodepth=4"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--name=v", "--filename=" + dev, "--size=512k", "--bs=4k", "--verify=crc32c", "--verify_state_save=0",
				"--ioengine=psync"}, tc.args...)
			imp, err := ParseFio(runFio(t, fio, "", append([]string{"--output-format=json"}, args...)...))
			if err != nil {
				t.Fatal(err)
			}
			theirs := imp.Result.Groups[0].Jobs[0]
			ours := runVerify(t, args...)
			if theirs.Error != "" || ours.Error != "" {
				t.Fatalf("fio: %q, iolab: %q", theirs.Error, ours.Error)
			}
			var got [3]bench.DirResult
			for d, name := range dirNames {
				o, _ := ours.ReportedDir(d)
				got[d] = *o
				if w := theirs.Dirs[d]; w.IOs != o.IOs || w.Bytes != o.Bytes {
					t.Errorf("iolab %s %d I/Os of %d bytes, fio %d of %d", name, o.IOs, o.Bytes, w.IOs, w.Bytes)
				}
			}
			// What the comparison rests on: 128 writes, each after its
			// pair's trim; the verify trims on top; the reads all blocks,
			// or those not trimmed.
			writes, trims, reads := got[bench.Write].IOs, got[bench.Trim].IOs, got[bench.Read].IOs
			extra := trims - writes
			wantReads := writes
			if strings.Contains(tc.name, "skip") {
				wantReads = writes - extra - tc.lost
			}
			if writes != 128 || (extra == 0) != strings.Contains(tc.name, "no verify trims") || reads != wantReads {
				t.Errorf("%d writes, %d trims, %d verify reads; want 128 writes, verify trims, %d reads", writes, trims, reads, wantReads)
			}
			if v := ours.Verify; v.Trimmed != extra || v.TrimmedRead != (extra > 0 && !strings.Contains(tc.name, "skip")) {
				t.Errorf("the verify result has %d blocks trimmed (read back: %v); %d were", v.Trimmed, v.TrimmedRead, extra)
			}
		})
	}
}

// TestVerifyTrimNotZeroFailsLikeFio: on a disk that keeps a trimmed
// block's data (testdev.DiskModel.DiscardKeepsData: the discard succeeds
// and the block reads back what the disk held), filled with 0xa5 before
// each job (both open a trimming job's device without O_DIRECT: a
// trim's discard drops the page cache's dirty copy of the block, which
// then reads back the fill), trim_verify_zero=1 fails
// the job at the first trimmed block it reads back, in fio 3.33 and in
// iolab at the same offset, with errno 84 (EILSEQ), and with
// verify_async too; with
// trim_verify_zero=0 those blocks are not read and both pass.
func TestVerifyTrimNotZeroFailsLikeFio(t *testing.T) {
	fio := lookFio(t)
	dev := testdev.ModelDisk(t, 1<<20, testdev.DiskModel{DiscardKeepsData: true})
	args := []string{"--name=v", "--filename=" + dev, "--size=128k", "--bs=4k", "--rw=trimwrite", "--ioengine=psync", "--verify=crc32c",
		"--verify_state_save=0", "--trim_percentage=50", "--trim_backlog=4"}
	for _, async := range []bool{false, true} {
		a := copyArgs(args)
		if async {
			// The zeros checked on verify_async's threads: both fail, at
			// a trimmed block each (the threads' order decides which).
			a = append(a, "--verify_async=2")
		}
		fill(t, dev, 1<<20)
		out, err, hung := fioRunFor(t, time.Minute, fio, a...)
		for try := 1; hung && async && try < 3; try++ {
			// fio 3.33 has hung here at times (a CI run: 11 minutes, its
			// verify_async threads after the failed block), never iolab:
			// fio is run again rather than the comparison given up.
			t.Logf("fio did not end in a minute (killed); running it again: %.500s", out)
			fill(t, dev, 1<<20)
			out, err, hung = fioRunFor(t, time.Minute, fio, a...)
		}
		if hung {
			t.Fatalf("async %v: fio did not end in a minute, three times:\n%s", async, out)
		}
		m := regexp.MustCompile(`trim: verify failed at file (\S+) offset (\d+), length 4096, block offset 0`).FindStringSubmatch(out)
		if err == nil || m == nil || m[1] != dev || !strings.Contains(out, "err=84") {
			t.Fatalf("async %v: fio should fail a trimmed block: %v\n%s", async, err, out)
		}
		bad, _ := strconv.ParseInt(m[2], 10, 64)
		fill(t, dev, 1<<20)
		r := runVerify(t, a...)
		want := fmt.Sprintf("trim: verify failed at file %s offset %d, length 4096, block offset 0", dev, bad)
		if async {
			want = fmt.Sprintf("trim: verify failed at file %s offset ", dev)
		}
		if r.Errno != 84 || r.Verify == nil || r.Verify.Failed == nil || r.Verify.Failed.Method != "trim" || !strings.Contains(r.Error, want) {
			t.Fatalf("async %v: iolab should fail with %q (errno 84): %q (errno %d)", async, want, r.Error, r.Errno)
		}
		if r.Dirs[bench.Trim].IOs <= r.Dirs[bench.Write].IOs {
			t.Errorf("async %v: %d trims for %d writes: no verify trim was done", async, r.Dirs[bench.Trim].IOs, r.Dirs[bench.Write].IOs)
		}
	}

	skip := append(copyArgs(args), "--trim_verify_zero=0")
	fill(t, dev, 1<<20)
	if out, err := fioRun(t, fio, skip...); err != nil {
		t.Fatalf("fio with trim_verify_zero=0: %v\n%s", err, out)
	}
	fill(t, dev, 1<<20)
	if r := runVerify(t, skip...); r.Error != "" || r.Verify == nil || r.Verify.Reads.IOs == 0 || r.Verify.Reads.IOs >= r.Dirs[bench.Write].IOs {
		t.Fatalf("iolab with trim_verify_zero=0: error %q, verify %+v", r.Error, r.Verify)
	}
}

// fill writes n bytes of 0xa5 over dev and syncs them to it.
func fill(t *testing.T, dev string, n int) {
	t.Helper()
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(bytes.Repeat([]byte{0xa5}, n)); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}
