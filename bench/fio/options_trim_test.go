package fio

import (
	"slices"
	"strings"
	"testing"
)

// TestTrimsRefuseWhatTheyCannot: a trimming job with an option iolab does
// not apply to trims yet is refused naming it, never run with the option
// doing nothing; the same option on a write job is taken.
func TestTrimsRefuseWhatTheyCannot(t *testing.T) {
	for _, tc := range []struct {
		opt, name string
	}{
		{"--rate_iops=100", "rate"},
		{"--write_lat_log=x", "write_lat_log"},
		{"--write_bw_log=x", "write_bw_log"},
		{"--cmdprio_percentage=50", "cmdprio_percentage"},
	} {
		for _, rw := range []string{"trim", "randtrimwrite"} {
			args := []string{"--name=t", "--filename=/dev/loop0", "--ioengine=libaio", "--size=1m", "--rw=" + rw, tc.opt}
			_, err := ParseArgs(args)
			if err == nil || !strings.Contains(err.Error(), "rw="+rw+" with "+tc.name+": iolab does not") {
				t.Errorf("%v: %v; want the option refused by name", args, err)
			}
			args[4] = "--rw=randwrite"
			if _, err := ParseArgs(args); err != nil {
				t.Errorf("%v: %v", args, err)
			}
		}
	}
}

// TestVsyncRefusesTrims: fio 3.33's vsync cannot trim (EFAULT from its
// writev); iolab refuses the job naming the engines that can, and vsync
// still reads and writes.
func TestVsyncRefusesTrims(t *testing.T) {
	_, err := ParseArgs([]string{"--name=t", "--filename=/dev/loop0", "--size=1m", "--ioengine=vsync", "--rw=randtrim"})
	if err == nil || !strings.Contains(err.Error(), "ioengine=vsync does not trim") {
		t.Errorf("vsync trims: %v; want them refused", err)
	}
	if _, err := ParseArgs([]string{"--name=t", "--filename=/dev/loop0", "--size=1m", "--ioengine=vsync", "--rw=randwrite"}); err != nil {
		t.Error(err)
	}
}

// TestVerifyTrimsTakeWhatFioRuns: a verifying trimwrite or randtrimwrite
// job takes trim_percentage, trim_backlog, trim_backlog_batch and
// trim_verify_zero; a write job with them is refused (fio 3.33 aborts it
// at its first trim), as are verify on a job that only trims and what
// iolab does not do beside the verify trims yet, each by name; without
// trim_backlog, trim_percentage lists blocks fio never trims, on any
// write job.
func TestVerifyTrimsTakeWhatFioRuns(t *testing.T) {
	base := []string{"--name=t", "--filename=/dev/loop0", "--ioengine=libaio", "--size=1m", "--verify=crc32c"}
	trims := []string{"--trim_percentage=50", "--trim_backlog=8", "--trim_backlog_batch=2", "--trim_verify_zero=0"}
	for _, tc := range []struct {
		args []string
		err  string // "": taken
	}{
		{[]string{"--rw=trimwrite"}, ""},
		{append([]string{"--rw=randtrimwrite"}, trims...), ""},
		{append([]string{"--rw=trimwrite"}, trims...), ""},
		{[]string{"--rw=write", "--trim_percentage=50"}, ""},
		{append([]string{"--rw=write"}, trims...), "fio 3.33 aborts such a job at its first trim"},
		{append([]string{"--rw=randwrite"}, trims...), "fio 3.33 aborts such a job at its first trim"},
		{[]string{"--rw=trim"}, "rw=trim with verify: a job that only trims writes nothing to check"},
		{[]string{"--rw=trimwrite", "--verify_backlog=16"}, "rw=trimwrite with verify_backlog"},
		{[]string{"--rw=trimwrite", "--experimental_verify=1"}, "rw=trimwrite with experimental_verify"},
		{append([]string{"--rw=trimwrite", "--loops=2"}, trims...), "trim_backlog over a job of other than one pass"},
		{append([]string{"--rw=randtrimwrite", "--norandommap"}, trims...), "trim_backlog with norandommap"},
		{append([]string{"--rw=trimwrite", "--io_submit_mode=offload"}, trims...), "trim_backlog with io_submit_mode=offload"},
	} {
		args := append(slices.Clone(base), tc.args...)
		cfg, err := ParseArgs(args)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%v: %v; want %q", tc.args, err, tc.err)
		case tc.err == "" && len(tc.args) > 1 && tc.args[1] == "--trim_percentage=50" && len(tc.args) > 2:
			j := cfg.Jobs[0]
			// Modifies: the write guard's rules hold the job, its verify
			// trims with its other writes and trims.
			if j.TrimPercentage != 50 || j.TrimBacklog != 8 || j.TrimBacklogBatch != 2 || !j.TrimSkipZero || !j.VerifyTrims() || !j.Modifies() {
				t.Errorf("%v: job %+v", tc.args, j.VerifyOptions)
			}
		}
	}
}
