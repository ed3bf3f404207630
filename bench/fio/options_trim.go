package fio

import (
	"iolab/bench"
)

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
	case (j.Verify != "" || j.DoVerify && j.VerifyOnly) && !j.Writes():
		// fio 3.33 takes it and checks nothing: a job that only trims
		// logs no write to read back.
		return fail("verify", "rw=%s with verify: a job that only trims writes nothing to check (fio 3.33 verifies nothing in it); drop verify, or use rw=trimwrite or randtrimwrite", j.RW)
	case j.Verify != "" && j.VerifyBacklog > 0:
		return refuse("verify_backlog", "verify as it trims")
	case j.Verify != "" && j.VerifyOnly:
		return refuse("verify_only", "dry-run a trimming job")
	case j.Verify != "" && j.ExperimentalVerify:
		return refuse("experimental_verify", "replay trims")
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
