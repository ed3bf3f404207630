package fio

import (
	"fmt"
	"strconv"
	"strings"

	"iolab/bench"
)

// errorOptions are fio's options for I/O errors (options.c, the
// FIO_OPT_G_ERR group): the errors a job goes on after, and whether each
// is reported. The job loop follows them (bench/loop_errors_linux.go).
var errorOptions = []bench.OptionSpec{
	{Name: "continue_on_error", Example: "io", Unit: "mode", Default: "none",
		Help: "go on after I/O errors of these kinds: none, read, write, io, verify, all (0, 1); only those ignore_error lists (default EIO, EILSEQ), each counted in total_err",
		Set: func(j *bench.Job, v string) error {
			for _, c := range errorClassNames {
				if c.name == v {
					// fio's FIO_OPT_STR: the value replaces what
					// ignore_error added before it.
					j.ContinueOnError = c.bits
					return nil
				}
			}
			return fmt.Errorf("%q is not one of none, read, write, io, verify, all, 0, 1", v)
		}},
	{Name: "ignore_error", Example: ",ENOSPC", Unit: "list",
		Help: "the errors continue_on_error goes on after, per kind (read,write,verify; errno names or numbers, colon-separated): a kind's list replaces EIO, EILSEQ and turns it on",
		Set:  setIgnoreError},
	boolOption("error_dump", nil, "0", "report every I/O error as it happens, those the job goes on after too", func(j *bench.Job) *bool { return &j.ErrorDump }),
}

// errorClassNames are continue_on_error's values (fio's posval list).
var errorClassNames = []struct {
	name string
	bits int
}{
	{"none", 0},
	{"read", bench.ErrorRead},
	{"write", bench.ErrorWrite},
	{"io", bench.ErrorRead | bench.ErrorWrite},
	{"verify", bench.ErrorVerify},
	{"all", bench.ErrorAny},
	{"0", 0},
	{"1", bench.ErrorAny},
}

// fioErrnoNames are the errno names fio's str2error knows, in errno
// order: EPERM is 1, ERANGE 34. Other errors are given by number.
var fioErrnoNames = strings.Fields(`EPERM ENOENT ESRCH EINTR EIO ENXIO E2BIG ENOEXEC EBADF ECHILD
EAGAIN ENOMEM EACCES EFAULT ENOTBLK EBUSY EEXIST EXDEV ENODEV ENOTDIR EISDIR EINVAL ENFILE
EMFILE ENOTTY ETXTBSY EFBIG ENOSPC ESPIPE EROFS EMLINK EPIPE EDOM ERANGE`)

// setIgnoreError is fio's str_ignore_error_cb: a list per kind of error,
// read, write and verify, separated by commas; each a colon-separated
// list of errno names (those fio knows) or numbers. A kind's list
// replaces fio's default for it (EIO, EILSEQ) and turns continue_on_error
// on for that kind; an empty one leaves the kind as it was.
func setIgnoreError(j *bench.Job, v string) error {
	kinds := strings.Split(strings.TrimSpace(v), ",")
	if len(kinds) > bench.ErrorClasses {
		return fmt.Errorf("%q has %d lists; fio takes one each for read, write and verify errors", v, len(kinds))
	}
	lists := j.IgnoreError
	coe := j.ContinueOnError
	for k, kind := range kinds {
		var errs []int
		for item := range strings.SplitSeq(kind, ":") {
			if item == "" {
				break // fio's strsep loop stops at an empty name
			}
			n, err := parseErrno(item)
			if err != nil {
				return err
			}
			errs = append(errs, n)
		}
		if len(errs) > 0 {
			lists[k] = errs
			coe |= 1 << k
		}
	}
	j.IgnoreError, j.ContinueOnError = lists, coe
	return nil
}

// parseErrno reads one of ignore_error's errors: a name fio knows, or a
// number (a minus sign is dropped, as fio drops it).
func parseErrno(s string) (int, error) {
	if strings.HasPrefix(s, "E") {
		for i, name := range fioErrnoNames {
			if name == s {
				return i + 1, nil
			}
		}
		return 0, fmt.Errorf("%q is not an errno name fio knows (%s … %s); give its number", s, fioErrnoNames[0], fioErrnoNames[len(fioErrnoNames)-1])
	}
	n, err := strconv.Atoi(strings.TrimPrefix(s, "-"))
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not an errno (a name such as EIO, or a number such as 5)", s)
	}
	return n, nil
}
