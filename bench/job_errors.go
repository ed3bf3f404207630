package bench

import (
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// ErrorOptions are fio's options for I/O errors (options.c, the
// FIO_OPT_G_ERR group; td_error.c): the errors a job goes on after, and
// whether each is reported as it happens.
type ErrorOptions struct {
	// ContinueOnError are the classes of error (ErrorRead, ErrorWrite,
	// ErrorVerify, or ErrorAny) a job may go on after: fio's
	// continue_on_error, which ignore_error adds to.
	ContinueOnError int `json:"continue_on_error,omitempty"`
	// IgnoreError are, per class (read, write, verify), the errnos the job
	// goes on after; nil: fio's EIO and EILSEQ. Any other error of the
	// class ends the job, as does any error of a class ContinueOnError
	// leaves out.
	IgnoreError [ErrorClasses][]int `json:"ignore_error,omitzero"`
	// ErrorDump reports each error as it happens, those the job goes on
	// after too; those that end it are reported anyway.
	ErrorDump bool `json:"error_dump,omitempty"`
}

// The classes of error, fio's ERROR_TYPE_* (td_error.h): bits of
// ContinueOnError, and (by bit number) the lists of IgnoreError.
const (
	ErrorRead   = 1 << iota // an I/O error on a read
	ErrorWrite              // on a write (or a sync)
	ErrorVerify             // a block that did not verify (EILSEQ)
	// ErrorAny is continue_on_error=all: fio's ERROR_TYPE_ANY, every bit.
	ErrorAny = 0xffff

	ErrorClasses = 3 // fio's ERROR_TYPE_CNT
)

func (o ErrorOptions) clone() ErrorOptions {
	for i := range o.IgnoreError {
		o.IgnoreError[i] = slices.Clone(o.IgnoreError[i])
	}
	return o
}

// Strerror is glibc's strerror(errno), the words fio prints for an
// error ("first_error=5/<Input/output error>"): Go's own words for it
// with a capital, which are glibc's, and "Success" for 0.
func Strerror(errno int) string {
	switch errno {
	case 0:
		return "Success"
	case 133: // EHWPOISON, which Go's table leaves out
		return "Memory page has hardware error"
	}
	s := syscall.Errno(errno).Error()
	if strings.HasPrefix(s, "errno ") {
		return "Unknown error " + strconv.Itoa(errno)
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
