package bench

import (
	"fmt"
	"slices"

	"golang.org/x/sys/unix"

	"iolab/bench/verify"
)

// The job loop's I/O errors, as fio 3.33 handles them (io_u.c
// io_completed and __io_u_log_error, backend.c break_on_this_error,
// td_error.c):
//
//   - an error's class is verify for EILSEQ (a block that did not
//     verify), else its I/O's direction's (a sync's is write);
//   - the job goes on after it when continue_on_error names the class and
//     the class's ignore_error list holds it (EIO and EILSEQ unless
//     ignore_error says otherwise): it is counted (fio's total_err_count,
//     and first_error), the I/O counts among the job's I/Os as fio's
//     total_io_u does, not its bytes, and a write that failed is not read
//     back by verify (fio's unlog_io_piece);
//   - any other error ends the job. A sync engine counts it first if
//     continue_on_error names its class (break_on_this_error counts a
//     fatal error); an async one does not (io_completed returns before
//     counting it);
//   - error_dump reports each error the job goes on after as it happens,
//     in fio's words ("io_u error on file …"); the one that ends the job
//     is its error, as without error_dump.
//
// Nothing here allocates for an error the job goes on after, unless
// error_dump reports it or it is the first one whose words fio keeps.

// goesOn is fio's td_non_fatal_error: whether the job goes on after
// errno, of class (a bit number of ContinueOnError).
func (o *ErrorOptions) goesOn(class int, errno unix.Errno) bool {
	if o.ContinueOnError&(1<<class) == 0 {
		return false
	}
	if o.IgnoreError[class] == nil {
		return errno == unix.EIO || errno == unix.EILSEQ // fio's __NON_FATAL_ERR
	}
	return slices.Contains(o.IgnoreError[class], int(errno))
}

// errorClass is fio's td_error_type, as a bit number of ContinueOnError.
func errorClass(d uint8, errno unix.Errno) int {
	switch {
	case errno == unix.EILSEQ:
		return 2 // ErrorVerify
	case d == Read:
		return 0 // ErrorRead
	}
	return 1 // ErrorWrite
}

// ioFailed handles slot s's I/O in direction d, which failed with errno:
// it counts the error where fio would (the I/O among the job's I/Os
// whatever comes of it), and reports whether the job goes on. dr is the result the failed I/O counts in (the direction's in the
// measured window, or the verify reads'); nil outside the window.
func (l *loop) ioFailed(s int32, d uint8, errno unix.Errno, dr *DirResult) bool {
	j, res := l.j, l.res
	class := errorClass(d, errno)
	goesOn := j.goesOn(class, errno)
	// The device had the request, and its counters show it: for the
	// check that nobody else used the disk, it is the job's.
	if d <= Write {
		res.Moved[d] += uint64(l.lenOf[s])
	}
	if goesOn && d == Write && l.vfy != nil {
		l.vfy.unlogWrite(l, s)
	}
	if dr != nil {
		dr.IOs++ // fio's total_io_u counts what was issued, failed or not
	}
	// fio's verror, the words its normal output shows for a job that went
	// on after its errors: those of the first error td_verror saw before
	// one was counted, which a sync engine's sees (its fio_io_end), and an
	// async one's only when error_dump reports it.
	if goesOn && res.TotalErr == 0 && (l.info.Sync || j.ErrorDump) {
		res.FirstErrorMsg = ioError(j, l.r.target, d, l.offOf[s], l.lenOf[s], errno).Error()
	}
	if goesOn || (l.info.Sync && j.ContinueOnError&(1<<class) != 0) {
		res.TotalErr++
		if res.TotalErr == 1 {
			res.FirstError = int(errno)
		}
	}
	if goesOn && j.ErrorDump && l.r.notice != nil {
		l.r.notice(fmt.Sprintf("%s: io_u error on file %s: %s: %s offset=%d, buflen=%d",
			j.Name, l.r.files[l.fileOf[s]].path, Strerror(int(errno)), dirName(d), l.offOf[s], l.lenOf[s]))
	}
	return goesOn
}

// verifyFailed handles a block that did not verify (EILSEQ): counted, and
// the job goes on, under continue_on_error=verify (or all); with
// verify_fatal a block whose checksum or pattern is wrong then ends the
// job all the same, without an error (fio's verify_io_u marks it
// terminated). Like fio, which reports every verify
// failure, it says so as the job goes on; one that ends the job is its
// error.
func (l *loop) verifyFailed(e *verify.Error) bool {
	if !l.j.goesOn(errorClass(Read, unix.EILSEQ), unix.EILSEQ) {
		return false
	}
	if l.r.notice != nil {
		l.r.notice(e.Error())
	}
	res := l.res
	res.TotalErr++
	if res.TotalErr == 1 {
		res.FirstError = int(unix.EILSEQ)
	}
	// fio's verify_io_u returns at a bad header before its verify_fatal
	// check: only a bad checksum or pattern ends the job.
	if l.j.VerifyFatal && e.Method != "header" {
		l.ended = true
	}
	return true
}

func dirName(d uint8) string {
	switch d {
	case Write:
		return "write"
	case Trim:
		return "trim"
	}
	return "read"
}
