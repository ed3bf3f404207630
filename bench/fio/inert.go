package fio

import (
	"errors"
	"fmt"

	"iolab/bench"
	"iolab/bench/units"
)

// inertOption is a name fio 3.33 takes in any job and then does nothing
// with. Job files carry them — fio's own examples/steadystate.fio and
// waitfor.fio set threads=1, a tiobench profile option, where thread was
// meant — and fio runs them, so iolab runs them too: the value is checked
// as fio checks it, nothing changes, and a note says so (fio prints
// nothing for a profile option, "Option X is deprecated" for the others).
type inertOption struct {
	name string
	unit string // what fio parses the value as: int (with fio's k, m, … suffixes), text, time, flag, or any (a value, unread)
	why  string // what fio does with it
}

// inertOptions: the options of fio's built-in profiles (profiles/
// tiobench.c and act.c; add_profile_options makes them options of every
// job, read only with profile=NAME, which iolab refuses) and fio's
// FIO_OPT_SOFT_DEPRECATED options (options.c). tiobench's "size" is
// fio's own size and is not here.
var inertOptions = []inertOption{
	{"block", "int", "an option of fio's tiobench profile, read only with profile=tiobench"},
	{"numruns", "int", "an option of fio's tiobench profile, read only with profile=tiobench"},
	{"dir", "text", "an option of fio's tiobench profile, read only with profile=tiobench"},
	{"threads", "int", "an option of fio's tiobench profile, read only with profile=tiobench (thread, without the s, runs jobs as threads)"},
	{"device-names", "text", "an option of fio's act profile, read only with profile=act"},
	{"load", "int", "an option of fio's act profile, read only with profile=act"},
	{"test-duration", "time", "an option of fio's act profile, read only with profile=act"},
	{"threads-per-queue", "int", "an option of fio's act profile, read only with profile=act"},
	{"read-req-num-512-blocks", "int", "an option of fio's act profile, read only with profile=act"},
	{"large-block-op-kbytes", "int", "an option of fio's act profile, read only with profile=act"},
	{"prep", "flag", "an option of fio's act profile, read only with profile=act"},
	{"verifysort", "any", "deprecated in fio, which ignores it"},
	{"verifysort_nr", "any", "deprecated in fio, which ignores it"},
	{"flow_watermark", "any", "deprecated in fio, which ignores it"},
}

// deprecatedOptions are fio's FIO_OPT_DEPRECATED options: fio refuses a
// job that sets one ("Option X is deprecated", and the job fails), and so
// does iolab.
var deprecatedOptions = map[string]string{
	"percentage_sequential": "use percentage_random",
	"rwmixcycle":            "fio has no replacement",
}

func lookupInert(name string) (inertOption, bool) {
	for _, o := range inertOptions {
		if o.name == name {
			return o, true
		}
	}
	return inertOption{}, false
}

// inertNote checks an inert option's value as fio would and returns the
// note that says it changes nothing.
func inertNote(o inertOption, value string) (string, error) {
	var err error
	switch o.unit {
	case "int":
		_, err = units.ParseSize(value)
	case "time":
		_, err = units.ParseDuration(value)
	case "flag":
		if value != "" {
			_, err = units.ParseFlag(value)
		}
	case "any":
		if value == "" {
			err = errors.New("needs a value, as fio's deprecated options do")
		}
	}
	if err != nil {
		return "", &bench.OptionError{Option: o.name, Value: value, Msg: fmt.Sprintf("option %s: %q: %v", o.name, value, err), Err: err}
	}
	return fmt.Sprintf("%s: %s; it changes nothing, in fio as in iolab", o.name, o.why), nil
}

// deprecatedError is the refusal of a deprecated option, or nil.
func deprecatedError(name, value string) error {
	alt, ok := deprecatedOptions[name]
	if !ok {
		return nil
	}
	return &bench.OptionError{Option: name, Value: value, Msg: fmt.Sprintf("option %q is deprecated: fio refuses a job that sets it too (%s)", name, alt)}
}
