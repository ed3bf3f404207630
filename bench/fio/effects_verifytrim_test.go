package fio

import (
	"testing"

	"iolab/bench"
)

// Effect probes of the verify trims (trim_percentage, trim_backlog,
// trim_backlog_batch, trim_verify_zero; bench/verifytrim_linux.go): a
// verifying trimwrite of 64 blocks of 4 KiB on a fresh file, whose trims
// punch holes (which read back as zeros). The counts are fio 3.33's
// (TestVerifyTrimsMatchFio compares such jobs with fio on a loop device).

// trimVerified runs the trimwrite with extra options and returns its
// trims and the blocks its verify phase read back.
func trimVerified(t *testing.T, extra ...string) (trims, reads uint64) {
	t.Helper()
	r, _ := verified(t, "", append([]string{"--rw=trimwrite", "--verify=crc32c"}, extra...)...)
	if r.Error != "" || r.Dirs[bench.Write].IOs != 64 {
		t.Fatalf("%v: error %q, %d writes", extra, r.Error, r.Dirs[bench.Write].IOs)
	}
	return r.Dirs[bench.Trim].IOs, verifyReads(r)
}

func init() {
	effects["trim_percentage"] = func(t *testing.T) {
		// Without it each block is trimmed once, by its pair; with it a
		// share is trimmed again after its write: all of them at 100%.
		for _, tc := range []struct {
			pct      string
			min, max uint64
		}{{"0", 64, 64}, {"50", 65, 127}, {"100", 128, 128}} {
			if trims, reads := trimVerified(t, "--trim_percentage="+tc.pct, "--trim_backlog=8"); trims < tc.min || trims > tc.max || reads != 64 {
				t.Errorf("trim_percentage=%s: %d trims, %d read back; want %d to %d trims, 64 reads", tc.pct, trims, reads, tc.min, tc.max)
			}
		}
	}
	effects["trim_backlog"] = func(t *testing.T) {
		// trim_percentage alone lists blocks that nothing trims.
		if trims, _ := trimVerified(t, "--trim_percentage=50"); trims != 64 {
			t.Errorf("without trim_backlog: %d trims, want the pairs' 64", trims)
		}
		if trims, _ := trimVerified(t, "--trim_percentage=50", "--trim_backlog=16"); trims != 94 {
			t.Errorf("trim_backlog=16: %d trims, want 94 (fio 3.33's)", trims)
		}
	}
	effects["trim_backlog_batch"] = func(t *testing.T) {
		// Every block listed, none kept for the verify phase: the
		// batches decide how many are trimmed before the job ends.
		for batch, want := range map[string]uint64{"0": 115, "1": 114, "3": 116} {
			trims, reads := trimVerified(t, "--trim_percentage=100", "--trim_backlog=16", "--trim_verify_zero=0", "--trim_backlog_batch="+batch)
			if trims != want || reads != 64-(trims-64) {
				t.Errorf("trim_backlog_batch=%s: %d trims, %d read back; want %d trims (fio 3.33's), the rest read", batch, trims, reads, want)
			}
		}
	}
	effects["trim_verify_zero"] = func(t *testing.T) {
		// 1: the trimmed blocks are read back (as zeros); 0: skipped.
		// (A dropped block leaves io_hist_len, which moves the batches:
		// fio 3.33 trims 30 blocks again with 1, 27 with 0.)
		if trims, reads := trimVerified(t, "--trim_percentage=50", "--trim_backlog=8"); trims != 94 || reads != 64 {
			t.Errorf("trim_verify_zero=1: %d trims, %d read back; want 94, all 64", trims, reads)
		}
		if trims, reads := trimVerified(t, "--trim_percentage=50", "--trim_backlog=8", "--trim_verify_zero=0"); trims != 91 || reads != 64-27 {
			t.Errorf("trim_verify_zero=0: %d trims, %d read back; want 91, the 37 not trimmed again", trims, reads)
		}
	}
}
