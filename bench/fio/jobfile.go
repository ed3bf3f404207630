package fio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"iolab/bench"
	"iolab/bench/units"
)

// ParseJobFile parses a fio job file (__parse_jobs_ini in fio's init.c), an
// INI file:
//
//   - a [global] section (fio takes any section whose name starts with
//     "global") sets defaults for the jobs after it; several may appear,
//     each applying from there on;
//   - every other [section] is a job named after it;
//   - ';' and '#' start a comment, on a line of its own or after an option
//     or a section header: fio (strip_blank_end in parse.c) cuts every line
//     at the first of them, so "filename=data ; or /dev/sda" is "data", and
//     neither character can appear in a value;
//   - "option=value", blanks around '=' ignored, or a bare option for
//     options that need no value (time_based, stonewall, ...);
//   - ${VAR} in an option is replaced by the environment variable VAR. fio
//     puts "" for an unset variable; iolab refuses it.
//
// fio's include directive, $keywords and (expressions) are not supported.
// name names the file in errors, which are *OptionError with File and Line.
func ParseJobFile(r io.Reader, name string) (*bench.Config, error) {
	p := newJobParser(name)
	if err := p.parseFile(r, name); err != nil {
		return nil, err
	}
	if len(p.jobs) == 0 {
		return nil, &bench.OptionError{File: name, Msg: "no jobs: add a [job] section"}
	}
	return &bench.Config{Jobs: p.jobs, Groups: bench.Expand(p.jobs), OutputFormat: "normal", GlobalOptions: p.globals, Notes: p.notes}, nil
}

// Limits on what a job file or command line may hold: fio's own limit on
// jobs (REAL_MAX_JOBS, --max-jobs' default), and a size far above any
// real job file.
const (
	MaxJobs         = 4096
	MaxJobFileBytes = 1 << 20
)

func tooLarge(file string) error {
	return &bench.OptionError{File: file, Msg: fmt.Sprintf("the job file is larger than %s; iolab reads job files up to that size", units.Bytes(MaxJobFileBytes))}
}

// jobParser holds what fio keeps while it parses a command line and job
// files: the defaults that global options build up (fio's def_thread), the
// job being built and the jobs done.
type jobParser struct {
	defaults bench.Job
	globals  []bench.Option // the options that built defaults, in order: Config.GlobalOptions
	jobs     []bench.Job

	cur      *bench.Job // the job being built; nil in a global section
	curFile  string
	curLine  int      // where cur starts, for errors about the whole job
	wallNext bool     // the next job waits for those before it
	notes    []string // inert options met (inert.go): Config.Notes
}

func newJobParser(file string) *jobParser {
	return &jobParser{defaults: bench.NewJob(), curFile: file}
}

// restart is what fio does between job files (parse_options in fio's
// init.c): the defaults, with their list of global options, go back to
// fio's own, and the next file's jobs wait for the ones before.
func (p *jobParser) restart() {
	p.defaults = bench.NewJob()
	p.globals = nil
	p.wallNext = true
}

// startSection finishes the current job and starts a new one called name,
// or a global section when name starts with "global" (fio compares only
// those six letters, on the command line and in job files).
func (p *jobParser) startSection(name string, line int) error {
	if err := p.finishJob(); err != nil {
		return err
	}
	if name == "" {
		return p.errorAt(line, &bench.OptionError{Option: "name", Msg: "a job needs a name (e.g. --name=randread or [randread])"})
	}
	if strings.HasPrefix(name, "global") {
		return nil
	}
	if len(p.jobs) >= MaxJobs {
		return p.errorAt(line, &bench.OptionError{Option: "name", Msg: fmt.Sprintf("more than %d jobs; iolab takes at most %d (fio's --max-jobs default)", MaxJobs, MaxJobs)})
	}
	j := p.defaults.Clone()
	j.Name = name
	j.Options = nil
	if p.curFile == "" {
		// fio lists a command-line job's name among its options; a
		// section's name is not an option.
		j.Options = []bench.Option{{Name: "name", Value: name}}
	}
	if p.wallNext {
		j.Stonewall = true
		p.wallNext = false
	}
	p.cur, p.curLine = &j, line
	return nil
}

// apply sets an option on the current job, or on the defaults in a global
// section.
func (p *jobParser) apply(name, value string, line int) error {
	if o, ok := lookupInert(name); ok {
		note, err := inertNote(o, value)
		if err != nil {
			return p.errorAt(line, err)
		}
		if p.curFile != "" {
			note = fmt.Sprintf("%s:%d: %s", p.curFile, line, note)
		}
		p.notes = append(p.notes, note)
		return nil
	}
	target := p.cur
	if target == nil {
		target = &p.defaults
	}
	if err := ApplyOption(target, name, value); err != nil {
		return p.errorAt(line, err)
	}
	if target == &p.defaults {
		p.globals = append(p.globals, target.Options[len(target.Options)-1])
	}
	return nil
}

// finishJob checks the current job as a whole and adds it to the jobs.
func (p *jobParser) finishJob() error {
	if p.cur == nil {
		return nil
	}
	j := p.cur
	p.cur = nil
	if p.curFile != "" {
		sortOptions(j.Options) // options_prio.go
	}
	if err := FinishJob(j); err != nil {
		return p.errorAt(p.curLine, err)
	}
	if err := checkJobOrder(j, p.jobs); err != nil {
		return p.errorAt(p.curLine, err)
	}
	p.jobs = append(p.jobs, *j)
	return nil
}

// errorAt puts the current file and line on an *OptionError.
func (p *jobParser) errorAt(line int, err error) error {
	if oe, ok := errors.AsType[*bench.OptionError](err); ok && p.curFile != "" {
		oe.File, oe.Line = p.curFile, line
	}
	return err
}

// parseFile reads one job file into p.
func (p *jobParser) parseFile(r io.Reader, file string) error {
	p.curFile = file
	defer func() { p.curFile = "" }()
	inSection := false
	lr := &io.LimitedReader{R: r, N: MaxJobFileBytes + 1}
	sc := bufio.NewScanner(lr)
	sc.Buffer(nil, 1<<20)
	line := 0
	for sc.Scan() {
		line++
		if lr.N <= 0 {
			return tooLarge(file)
		}
		text := sc.Text()
		if i := strings.IndexAny(text, ";#"); i >= 0 {
			text = text[:i]
		}
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		if text[0] == '[' {
			if !strings.HasSuffix(text, "]") {
				return &bench.OptionError{File: file, Line: line, Msg: fmt.Sprintf("section header %s has no closing ] (write e.g. [randread])", text)}
			}
			if err := p.startSection(text[1:len(text)-1], line); err != nil {
				return err
			}
			inSection = true
			continue
		}
		if !inSection {
			return &bench.OptionError{File: file, Line: line, Msg: fmt.Sprintf("%s is outside any section (put it under [global] or a [job])", text)}
		}
		if text == "include" || strings.HasPrefix(text, "include ") {
			return &bench.OptionError{File: file, Line: line, Msg: "iolab does not support include; copy the included options here"}
		}
		expanded, err := expandEnv(text)
		if err != nil {
			return &bench.OptionError{File: file, Line: line, Msg: err.Error()}
		}
		name, value, _ := strings.Cut(expanded, "=")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if err := p.apply(name, value, line); err != nil {
			return err
		}
	}
	if lr.N <= 0 {
		return tooLarge(file)
	}
	if err := sc.Err(); err != nil {
		msg := "cannot read job file"
		if errors.Is(err, bufio.ErrTooLong) {
			msg = "a line is longer than 1 MiB"
		}
		return &bench.OptionError{File: file, Line: line + 1, Msg: msg, Err: err}
	}
	return p.finishJob()
}

// expandEnv replaces each ${VAR} in s with the environment variable VAR,
// as fio's option_dup_subs does; a "${" without a closing "}" stays as it
// is. Unlike fio, which substitutes "", it refuses an unset variable: a
// filename=/dev/${DISK} with DISK unset should stop the run, not change it.
func expandEnv(s string) (string, error) {
	var b strings.Builder
	for {
		start := strings.Index(s, "${")
		if start < 0 {
			break
		}
		end := strings.IndexByte(s[start:], '}')
		if end < 0 {
			break
		}
		name := s[start+2 : start+end]
		val, ok := os.LookupEnv(name)
		if !ok || name == "" {
			return "", fmt.Errorf("environment variable ${%s} is not set (export it, or write the value)", name)
		}
		b.WriteString(s[:start])
		b.WriteString(val)
		s = s[start+end+1:]
	}
	b.WriteString(s)
	return b.String(), nil
}
