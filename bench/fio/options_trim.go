package fio

import (
	"fmt"
	"slices"

	"iolab/bench"
)

// verifyTrimOptions are fio's trims of blocks a write job has written and
// will verify (trim.c, io_u.c check_get_trim): iolab does not do them
// yet, and refuses them saying so.
var verifyTrimOptions = []string{"trim_percentage", "trim_backlog", "trim_backlog_batch", "trim_verify_zero"}

// verifyTrimError is the refusal of one of verifyTrimOptions; nil for
// another option.
func verifyTrimError(name string) error {
	if !slices.Contains(verifyTrimOptions, name) {
		return nil
	}
	return fmt.Errorf("option %q: fio's trims of a verifying write job's blocks (trim_percentage, trim_backlog, trim_backlog_batch, trim_verify_zero) are not supported by iolab yet; rw=trim, randtrim, trimwrite and randtrimwrite are (remove it, or run this job with fio)", name)
}

// finishTrims refuses what iolab does not yet do with a job that trims
// (rw=trim, randtrim, trimwrite, randtrimwrite), naming the option, rather
// than run it with that option doing nothing to its trims.
func finishTrims(j *bench.Job, fail func(option, format string, args ...any) error) error {
	if !j.Trims() {
		return nil
	}
	refuse := func(option, what string) error {
		return fail(option, "rw=%s with %s: iolab does not %s yet (drop %s, or trim in a job of its own)", j.RW, option, what, option)
	}
	if e := j.Engine(); e != nil && e.Has(bench.NoTrim) {
		return fail("ioengine", "rw=%s: ioengine=%s does not trim (fio 3.33's hands the trim to writev, which fails with EFAULT); use psync, sync, pvsync, pvsync2, io_uring or libaio", j.RW, e.Name)
	}
	switch {
	case j.Verify != "" || j.DoVerify && j.VerifyOnly:
		return refuse("verify", "verify a trimming job")
	case j.Rated():
		return refuse("rate", "pace trims")
	case j.WriteBWLog:
		return refuse("write_bw_log", "log trims")
	case j.WriteIOPSLog:
		return refuse("write_iops_log", "log trims")
	case j.WriteLatLog:
		return refuse("write_lat_log", "log trims")
	case j.WriteHistLog:
		return refuse("write_hist_log", "log trims")
	case j.UsesCmdprio():
		return refuse("cmdprio_percentage", "give trims a priority of their own")
	}
	return nil
}
