package fioserver

import (
	"errors"
	"fmt"
)

// The kinds of a host's error; errors.Is(err, ErrUnreachable) tells them
// apart in what Run returns.
var (
	// ErrNotAllowed: the host's address is not on the allow-list (or is
	// no address).
	ErrNotAllowed = errors.New("not allowed")
	// ErrTarget: a job would use a target the host does not allow, or an
	// option that reaches beyond its targets (see checkJobFile).
	ErrTarget = errors.New("target refused")
	// ErrUnreachable: no fio server answered at the address.
	ErrUnreachable = errors.New("no answer")
	// ErrVersion: the server speaks another version of fio's protocol.
	ErrVersion = errors.New("another fio version")
	// ErrRefused: the server's fio refused the jobs.
	ErrRefused = errors.New("jobs refused")
	// ErrFailed: the jobs ran and failed, or fio's client failed.
	ErrFailed = errors.New("failed")
)

// HostError is what went wrong on one host.
type HostError struct {
	Host string // Host.Name, or its address when it has none
	Addr string // the address fio was (or would have been) given
	Kind error  // one of the Err… kinds, or the context's error when cancelled
	Msg  string // what fio or iolab said
	Err  error  // the underlying error, if any
}

func (e *HostError) Error() string {
	where := e.Host
	if e.Addr != "" && e.Addr != e.Host {
		where += " (" + e.Addr + ")"
	}
	s := fmt.Sprintf("fio host %s: %v", where, e.Kind)
	if e.Msg != "" {
		s += ": " + e.Msg
	}
	if e.Err != nil && e.Err != e.Kind {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap gives errors.Is and errors.As the kind and the underlying error.
func (e *HostError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

func hostError(h Host, addr string, kind error, msg string, err error) *HostError {
	return &HostError{Host: h.label(), Addr: addr, Kind: kind, Msg: msg, Err: err}
}
