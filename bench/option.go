package bench

import (
	"fmt"
	"time"

	"iolab/bench/units"
)

// OptionError is an option iolab cannot take: unknown, known to fio but not
// supported by iolab, given a bad value, or a job that is incomplete. main
// exits with status 2 on it, like on any usage error.
type OptionError struct {
	Option string // as the user wrote it; "" when the problem is a whole job or file
	Value  string
	// Msg says what is wrong and what to write instead, without the
	// file:line prefix that Error adds.
	Msg  string
	File string // job file; "" on the command line and in the web form
	Line int    // 1-based line in File; 0 when the error is about the whole file
	Err  error  // underlying error, e.g. from opening the job file
}

func (e *OptionError) Error() string {
	switch {
	case e.File == "":
		return e.Msg
	case e.Line == 0:
		return e.File + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

func (e *OptionError) Unwrap() error { return e.Err }

// OptionSpec is one fio job option iolab takes: fio's name, how its value
// is written, and what it does to a Job. The fio package lists the general
// options; each engine lists its own (Engine.Options), as fio's engines do.
type OptionSpec struct {
	Name    string   // fio's name: what Job.Options records, as fio's "job options" does
	Aliases []string // fio's aliases (readwrite for rw, ...)
	// Flag options may be given without a value, which means 1: fio's
	// FIO_OPT_STR_SET. fio's bool options (direct, randrepeat,
	// allow_mounted_write) need a value, and so do they here.
	Flag    bool
	Example string // a valid value, for error messages and help
	Unit    string // how the value is read, for help: "size", "time", "int", "bool", …
	Default string // fio's default, as fio would write it; "" when there is none
	Help    string // one line: what the option does
	Set     func(j *Job, value string) error
	// Get reads the option back from a job, written as Set takes it; nil
	// for options that leave nothing to read back.
	Get func(j *Job) string
	// OptionalValue options may go without a value in a job file (fio's
	// write_bw_log and kin); on the command line, as in fio, they take the
	// next argument.
	OptionalValue bool
}

// IntField sets an int field from a whole number in [lo, hi].
func IntField(lo, hi int, field func(*Job) *int) func(*Job, string) error {
	return units.SetInt(lo, hi, field)
}

// SizeField sets a byte count from a size (4k, 1m, …).
func SizeField(field func(*Job) *int64) func(*Job, string) error {
	return units.Setter(units.ParseSize, field)
}

// DurationField sets a time from fio's seconds-unless-a-unit-follows.
func DurationField(field func(*Job) *time.Duration) func(*Job, string) error {
	return units.Setter(units.ParseDuration, field)
}

// BoolField serves both fio's bool options (value required, checked by
// the parser) and its flags (value optional).
func BoolField(field func(*Job) *bool) func(*Job, string) error { return units.SetBool(field) }

// GetBool reads a bool field back as fio writes it: "1" or "0".
func GetBool(field func(*Job) *bool) func(*Job) string { return units.GetBool(field) }
