package bench

import "fmt"

// VerifyTrims reports whether the job trims blocks it has written and
// will verify (fio 3.33's trim.c): its verify phase follows its writes,
// it logs them (log_io_piece, which puts a trim_percentage share on the
// trim list), and trim_backlog says when to trim them (TD_F_TRIM_BACKLOG).
// trim_percentage alone lists blocks that are never trimmed: nothing
// changes. Such a job writes: Modifies holds, and the write guard's
// rules apply to it, its verify trims with the rest.
func (j *Job) VerifyTrims() bool {
	return j.Verify != "" && j.DoVerify && !j.ExperimentalVerify && j.Writes() && j.TrimPercentage > 0 && j.TrimBacklog > 0
}

// checkVerifyTrims refuses what fio 3.33 cannot run with its verify
// trims, and what iolab does not do with them yet, naming the option.
func (j *Job) checkVerifyTrims() error {
	if !j.VerifyTrims() {
		return nil
	}
	switch {
	case !j.Trims():
		return fmt.Errorf("trim_backlog with trim_percentage on rw=%s: fio 3.33 aborts such a job at its first trim (fio_ro_check asserts that a job whose rw does not trim never trims; fio 3.40 allows it, with other batches); use rw=trimwrite or randtrimwrite, where fio 3.33 runs them", j.RW)
	case j.VerifyBacklog > 0:
		return fmt.Errorf("trim_backlog with verify_backlog: iolab does not interleave the two backlogs yet (drop one of them)")
	case j.VerifyOnly:
		return fmt.Errorf("trim_backlog with verify_only: fio's dry run counts trims it does not do; iolab does not (drop trim_backlog)")
	case j.Loops > 1 || (j.IOSize > 0 && j.IOSize != j.Size) || j.NumberIOs > 0 || j.TimeBased:
		return fmt.Errorf("trim_backlog over a job of other than one pass over its size (loops, io_size, number_ios, time_based): iolab verifies once after all passes where fio verifies after each, so their trims differ; not supported yet")
	case j.IOSubmitMode == SubmitOffload:
		return fmt.Errorf("trim_backlog with io_submit_mode=offload: iolab has not compared its verify trims with fio's offloaded ones yet (drop one of them)")
	case j.Random() && j.NoRandomMap:
		return fmt.Errorf("trim_backlog with norandommap: a block written twice leaves fio's trim list as it is overwritten, which iolab does not follow yet (drop norandommap)")
	}
	return nil
}
