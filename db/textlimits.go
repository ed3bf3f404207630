package db

import (
	"fmt"
	"reflect"
	"strings"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/sweep"
)

// Bounds on the text a plan and its steps carry, whatever brought them
// (a launch, an agent's upload, an import). A run's page and API answer
// repeat a job's text in the plan, in each step's config and in each
// result (eleven times for one job's description: its field and its
// option, in the config's jobs and in its group's), so the bound on each
// string is what keeps an answer near the size of what was stored.
const (
	MaxJobNameLen     = fio.MaxJobNameLen
	MaxDescriptionLen = fio.MaxDescriptionLen
	MaxOptionValueLen = fio.MaxOptionValueLen
	MaxOptionNameLen  = 64  // fio's longest option name is 30
	MaxOptions        = 512 // options of one job: fio has about 400
	// MaxJobBytes bounds all of one job's text and lists together (its
	// options, and the fields they set: a pattern, a path, a CPU list).
	MaxJobBytes = 64 << 10
	MaxArgs     = 8192  // a plan's command line, options and sweeps
	MaxArgLen   = 16384 // one of them: an option, or a sweep's values
	MaxErrorLen = 65536 // a run's or step's error
	MaxNotes    = 1024  // a plan's notes and inferred options
	MaxNoteLen  = 4096
	// MaxImportSteps is --max-steps' default: no plan iolab runs has more.
	MaxImportSteps = 10000
	// MaxStepJobs bounds the jobs of one step's result: each holds about
	// 100 KiB of histograms in memory. fio takes up to 4096 job threads,
	// iolab runs at most 1024 at once (serve's --max-jobs default).
	MaxStepJobs = 1024
	// MaxJobSamples bounds one job's per-interval samples: 29 hours at
	// 100 ms (a preconditioning run stops at 6).
	MaxJobSamples = 1 << 20
)

// checkPlanText checks the text of a plan: its jobs, options, command
// line and notes within their bounds.
func checkPlanText(p *sweep.Plan) error {
	if err := checkConfigText("plan", &p.Base); err != nil {
		return err
	}
	if len(p.Args) > MaxArgs {
		return fmt.Errorf("the plan's command line has %d arguments: at most %d", len(p.Args), MaxArgs)
	}
	for _, a := range p.Args {
		if len(a) > MaxArgLen {
			return fmt.Errorf("a plan's argument of %d bytes: at most %d (an option's value is at most %d)", len(a), MaxArgLen, MaxOptionValueLen)
		}
	}
	if n := len(p.Notes) + len(p.Inferred); n > MaxNotes {
		return fmt.Errorf("the plan has %d notes and inferred options: at most %d", n, MaxNotes)
	}
	if len(p.Skipped) > MaxImportSteps {
		return fmt.Errorf("the plan skips %d steps: at most %d", len(p.Skipped), MaxImportSteps)
	}
	for _, n := range p.Notes {
		if len(n) > MaxNoteLen {
			return fmt.Errorf("a plan's note of %d bytes: at most %d", len(n), MaxNoteLen)
		}
	}
	return nil
}

// checkConfigText checks the jobs of a config (its jobs, its groups'
// jobs and its global options).
func checkConfigText(where string, c *bench.Config) error {
	n := len(c.Jobs)
	for _, g := range c.Groups {
		n += len(g.Jobs)
	}
	if n > 2*fio.MaxJobs {
		return fmt.Errorf("the %s has %d jobs: at most %d", where, n, fio.MaxJobs)
	}
	if err := checkOptions(where+"'s global options", c.GlobalOptions); err != nil {
		return err
	}
	for i := range c.Jobs {
		if err := checkJobText(where, &c.Jobs[i]); err != nil {
			return err
		}
	}
	for _, g := range c.Groups {
		for i := range g.Jobs {
			if err := checkJobText(where, &g.Jobs[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkJobText checks one job's name, description, target and options.
func checkJobText(where string, j *bench.Job) error {
	if err := checkText(where+"'s job name", j.Name, MaxJobNameLen); err != nil {
		return err
	}
	what := fmt.Sprintf("%s's job %.40q", where, j.Name)
	if len(j.Description) > MaxDescriptionLen {
		return fmt.Errorf("the description of %s is %d bytes: at most %d", what, len(j.Description), MaxDescriptionLen)
	}
	if len(j.Filename) > MaxOptionValueLen {
		return fmt.Errorf("the filename of %s is %d bytes: at most %d", what, len(j.Filename), MaxOptionValueLen)
	}
	if err := checkOptions(what, j.Options); err != nil {
		return err
	}
	if n := valueBytes(reflect.ValueOf(j).Elem(), MaxJobBytes); n > MaxJobBytes {
		return fmt.Errorf("%s holds more than %d bytes of options and lists: at most %d", what, MaxJobBytes, MaxJobBytes)
	}
	return nil
}

// valueBytes is about how many bytes v's strings and lists hold (each
// string its length, each list element its size), counted until past
// limit.
func valueBytes(v reflect.Value, limit int) int {
	switch v.Kind() {
	case reflect.String:
		return v.Len()
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return 0
		}
		return valueBytes(v.Elem(), limit)
	case reflect.Struct:
		n := 0
		for i := 0; i < v.NumField() && n <= limit; i++ {
			n += valueBytes(v.Field(i), limit-n)
		}
		return n
	case reflect.Slice, reflect.Array, reflect.Map:
		if v.Kind() == reflect.Map {
			n := v.Len() * 16
			for it := v.MapRange(); it.Next() && n <= limit; {
				n += valueBytes(it.Key(), limit-n) + valueBytes(it.Value(), limit-n)
			}
			return n
		}
		n := 0
		if v.Kind() == reflect.Slice {
			n = v.Len() * int(v.Type().Elem().Size())
		}
		switch v.Type().Elem().Kind() {
		case reflect.String, reflect.Struct, reflect.Slice, reflect.Pointer, reflect.Map, reflect.Interface:
			for i := 0; i < v.Len() && n <= limit; i++ {
				n += valueBytes(v.Index(i), limit-n)
			}
		}
		return n
	}
	return 0
}

// checkOptions checks a list of options: how many, and each name's and
// value's length (description= has its own bound).
func checkOptions(what string, opts []bench.Option) error {
	if len(opts) > MaxOptions {
		return fmt.Errorf("%s has %d options: at most %d", what, len(opts), MaxOptions)
	}
	for _, o := range opts {
		max := fio.MaxValueLen(o.Name)
		switch {
		case len(o.Name) > MaxOptionNameLen:
			return fmt.Errorf("%s has an option name of %d bytes: at most %d", what, len(o.Name), MaxOptionNameLen)
		case len(o.Value) > max:
			return fmt.Errorf("option %s of %s is %d bytes: at most %d", o.Name, what, len(o.Value), max)
		case strings.ContainsAny(o.Name+o.Value, "\n\r\x00"):
			return fmt.Errorf("option %.64s of %s holds a line break or NUL (it would be another line of the job file)", o.Name, what)
		}
	}
	return nil
}

// CheckStepText checks what a step from elsewhere (an import, an agent's
// upload) brings besides numbers: its error, its config's and results'
// jobs, how many jobs and samples. A step this process ran is stored as
// it is: refusing it would lose a measurement.
func CheckStepText(res *sweep.StepResult) error {
	where := fmt.Sprintf("step %d", res.Step.Seq)
	if len(res.Error) > MaxErrorLen {
		return fmt.Errorf("the error of %s is %d bytes: at most %d", where, len(res.Error), MaxErrorLen)
	}
	if err := checkConfigText(where, &res.Step.Config); err != nil {
		return err
	}
	r := res.Result
	if r == nil {
		return nil
	}
	n := 0
	for _, g := range r.Groups {
		n += len(g.Jobs)
		if n > MaxStepJobs {
			return fmt.Errorf("%s has more than %d job results: at most %d", where, MaxStepJobs, MaxStepJobs)
		}
		for i := range g.Jobs {
			jr := &g.Jobs[i]
			if err := checkText(where+"'s job name", jr.Name, MaxJobNameLen); err != nil {
				return err
			}
			if len(jr.Error) > MaxErrorLen {
				return fmt.Errorf("the error of %s's job %.40q is %d bytes: at most %d", where, jr.Name, len(jr.Error), MaxErrorLen)
			}
			if len(jr.Samples) > MaxJobSamples {
				return fmt.Errorf("%s's job %.40q has %d samples: at most %d", where, jr.Name, len(jr.Samples), MaxJobSamples)
			}
			if err := checkJobText(where, &jr.Job); err != nil {
				return err
			}
		}
	}
	return nil
}
