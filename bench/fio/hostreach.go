package fio

import (
	"bufio"
	"fmt"
	"slices"
	"strings"

	"iolab/bench"
)

// Reach is what an option makes fio do on the machine that runs the job
// beyond I/O on the files the job names: what a fio server host (whose
// fio runs whatever job file it is sent, as its user, usually root) would
// do for a dashboard. iolab's own engines open only the job's target
// through its write guard; fio does not.
type Reach uint8

// The kinds of reach, in the order a refusal names them.
const (
	// ReachNone: the option does nothing outside the job's own files.
	ReachNone Reach = iota
	// ReachNamesTarget: the option names the job's file or device; a
	// fio server host takes only its allowed entries, written as listed.
	ReachNamesTarget
	// ReachDerivesPath: fio makes up a file name from it (jobname.N.M,
	// DIR/NAME, filename_format) and creates the file there.
	ReachDerivesPath
	// ReachOpensFile: fio opens (reads or writes) a file other than the
	// job's: logs, state files, dumps, patterns read from a file.
	ReachOpensFile
	// ReachRunsProgram: fio runs a program or loads a library.
	ReachRunsProgram
	// ReachWritesSysfs: fio writes kernel settings (/sys, cgroups).
	ReachWritesSysfs
	// ReachLiftsGuard: the option turns off a check fio itself makes on
	// the host, the only one that runs there.
	ReachLiftsGuard
)

func (r Reach) String() string {
	switch r {
	case ReachNone:
		return "touches nothing else"
	case ReachNamesTarget:
		return "names the job's target"
	case ReachDerivesPath:
		return "makes up a file name"
	case ReachOpensFile:
		return "opens another file on the host"
	case ReachRunsProgram:
		return "runs a program on the host"
	case ReachWritesSysfs:
		return "writes kernel settings on the host"
	case ReachLiftsGuard:
		return "turns off fio's own check on the host"
	}
	return fmt.Sprintf("reach %d", uint8(r))
}

// reachRow is one option's decision: what it reaches, for which values
// (when; nil: any value), and why, in fio's terms. fioDefault, when set,
// is the value fio takes when the job does not give the option, and
// matters only when the option named by with is given (other than 0,
// none or empty): fio's verify_state_save is 1 unless told otherwise, and
// a verifying job writes its state file.
type reachRow struct {
	name       string
	reach      Reach
	when       func(value string) bool
	why        string
	fioDefault string
	with       string
	// fioOnly: an option iolab does not take (its parser refuses it); it
	// is here so that a job file that holds it anyway is refused naming
	// what it would do.
	fioOnly bool
}

func notZero(v string) bool { return v != "0" }

func notOne(v string) bool { return v != "1" }

func quotesFile(v string) bool { return strings.Contains(v, "'") }

func notIolabEngine(v string) bool {
	_, ok := bench.LookupEngine(v)
	return !ok
}

// reachTable decides every option that reaches beyond the job's own
// files; an option iolab takes that is not here does not (see
// TestReachTableReviewed, which lists the ones read for it). fio's
// options.c and HOWTO are the source of each row.
var reachTable = []reachRow{
	{name: "filename", reach: ReachNamesTarget, why: "the job's file or device"},

	{name: "directory", reach: ReachDerivesPath, why: "fio joins it with the file's name (and shares several among numjobs clones), so the file it opens is not one the host lists: give the whole path in filename"},
	{name: "filename_format", reach: ReachDerivesPath, why: "fio names the job's files from it"},
	{name: "nrfiles", reach: ReachDerivesPath, when: notOne, why: "fio makes up the names of a job's other files (jobname.N.M in the server's directory)"},
	{name: "opendir", reach: ReachDerivesPath, fioOnly: true, why: "fio takes every file under the directory"},
	{name: "unique_filename", reach: ReachDerivesPath, fioOnly: true, why: "fio prefixes made-up file names with the client's address"},

	{name: "write_bw_log", reach: ReachOpensFile, why: "fio writes log files, with or without a path (the job's name in the server's or the client's directory)"},
	{name: "write_iops_log", reach: ReachOpensFile, why: "fio writes log files, with or without a path (the job's name in the server's or the client's directory)"},
	{name: "write_lat_log", reach: ReachOpensFile, why: "fio writes log files, with or without a path (the job's name in the server's or the client's directory)"},
	{name: "write_hist_log", reach: ReachOpensFile, why: "fio writes log files, with or without a path (the job's name in the server's or the client's directory)"},
	{name: "per_job_logs", reach: ReachOpensFile, why: "names fio's log files, which a fio server host does not write"},
	{name: "verify_dump", reach: ReachOpensFile, when: notZero, why: "fio writes a bad block to FILE.OFFSET.received and .expected beside the target"},
	{name: "verify_state_save", reach: ReachOpensFile, when: notZero, fioDefault: "1", with: "verify",
		why: "fio writes local-NAME-N-verify.state in the server's directory (fio's default for a verifying job: set verify_state_save=0)"},
	{name: "verify_state_load", reach: ReachOpensFile, when: notZero, why: "fio reads a verify state file from the server's directory"},
	{name: "buffer_pattern", reach: ReachOpensFile, when: quotesFile, why: "a quoted 'name' is a file fio reads the pattern from"},
	{name: "verify_pattern", reach: ReachOpensFile, when: quotesFile, why: "a quoted 'name' is a file fio reads the pattern from"},
	{name: "read_iolog", reach: ReachOpensFile, fioOnly: true, why: "fio reads an I/O log and replays it, on the devices it names"},
	{name: "write_iolog", reach: ReachOpensFile, fioOnly: true, why: "fio writes an I/O log"},
	{name: "replay_redirect", reach: ReachOpensFile, fioOnly: true, why: "fio replays a log onto this device"},
	{name: "iolog", reach: ReachOpensFile, fioOnly: true, why: "fio's old name of read_iolog"},
	{name: "lockfile", reach: ReachOpensFile, fioOnly: true, why: "fio locks the job's files, and its 'exclusive' modes wait on other jobs"},
	{name: "trigger_file", reach: ReachOpensFile, fioOnly: true, why: "fio watches a file on the host"},
	{name: "profile", reach: ReachDerivesPath, fioOnly: true, why: "fio's tiobench and act profiles make up their own files"},

	{name: "exec_prerun", reach: ReachRunsProgram, fioOnly: true, why: "fio runs a shell command before the job"},
	{name: "exec_postrun", reach: ReachRunsProgram, fioOnly: true, why: "fio runs a shell command after the job"},
	{name: "trigger", reach: ReachRunsProgram, fioOnly: true, why: "fio runs a command when triggered"},
	{name: "trigger_remote", reach: ReachRunsProgram, fioOnly: true, why: "fio runs a command when triggered"},
	{name: "trigger_timeout", reach: ReachRunsProgram, fioOnly: true, why: "fio runs the trigger's command after this time"},
	{name: "ioengine", reach: ReachRunsProgram, when: notIolabEngine, why: "fio's exec engine runs a program, external:PATH loads a library; iolab sends only its own engines (" + strings.Join(bench.EngineNames(), ", ") + ")"},

	{name: "allow_mounted_write", reach: ReachLiftsGuard, when: notZero, why: "fio refuses to write a device that is mounted on the host unless this is set"},

	{name: "ioscheduler", reach: ReachWritesSysfs, why: "fio writes the disk's queue/scheduler in /sys"},
	{name: "cgroup", reach: ReachWritesSysfs, fioOnly: true, why: "fio makes a cgroup and moves the job into it"},
	{name: "cgroup_weight", reach: ReachWritesSysfs, fioOnly: true, why: "fio writes a cgroup's weight"},
	{name: "cgroup_nodelete", reach: ReachWritesSysfs, fioOnly: true, why: "fio leaves its cgroup behind"},
}

// OptionReach is what option name (fio's name or an alias) with value
// reaches on the machine that runs the job, and why; known is false for
// a name neither iolab nor this table knows (fio may take it: what it
// does cannot be told).
func OptionReach(name, value string) (r Reach, why string, known bool) {
	canon := name
	if o, ok := LookupOption(name); ok {
		canon, known = o.Name, true
	} else if _, ok := lookupInert(name); ok {
		known = true
	}
	for _, row := range reachTable {
		if row.name != canon {
			continue
		}
		if row.when != nil && !row.when(value) {
			return ReachNone, "", true
		}
		return row.reach, row.why, true
	}
	return ReachNone, "", known
}

// ReachDefaults are the options whose fio default reaches beyond the
// job's files once another option is given (fio's verify_state_save is 1
// for a verifying job): each as the option and value fio takes when a
// job that sets with (to anything but 0, none or empty) leaves it out.
func ReachDefaults() []struct{ With, Name, Value string } {
	var out []struct{ With, Name, Value string }
	for _, row := range reachTable {
		if row.fioDefault != "" {
			out = append(out, struct{ With, Name, Value string }{row.with, row.name, row.fioDefault})
		}
	}
	return out
}

// JobFileSection is one section of a job file as fio reads it: its name
// ("global" for [global]) and its option lines, name and value as
// written.
type JobFileSection struct {
	Name    string
	Options []bench.Option
}

// ReadJobFileSections reads text as fio's parse_jobs_ini (init.c) does,
// without interpreting any option: a line that is empty or whose first
// non-blank is ';' or '#' is a comment, "[name]" starts a section, any
// other line is an option, "name=value" or "name". An option before the
// first section is an error, as in fio.
func ReadJobFileSections(text string) ([]JobFileSection, error) {
	var out []JobFileSection
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == ';' || line[0] == '#' {
			continue
		}
		if line[0] == '[' {
			name, ok := strings.CutSuffix(line[1:], "]")
			if !ok {
				return nil, fmt.Errorf("job file line %d: %q: a section's name must end with ]", n, line)
			}
			if strings.HasPrefix(name, "global") {
				name = "global" // fio's rule: any section starting so
			}
			out = append(out, JobFileSection{Name: name})
			continue
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("job file line %d: option %q outside of a [] job section", n, line)
		}
		name, value, _ := strings.Cut(line, "=")
		s := &out[len(out)-1]
		s.Options = append(s.Options, bench.Option{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)})
	}
	return out, sc.Err()
}

// EffectiveOptions are the options fio applies to job section i of
// sections: every [global] section before it, then its own; a later
// option of a name replaces an earlier one (aliases are taken as their
// option).
func EffectiveOptions(sections []JobFileSection, i int) []bench.Option {
	var out []bench.Option
	add := func(o bench.Option) {
		name := o.Name
		if spec, ok := LookupOption(o.Name); ok {
			name = spec.Name
		}
		if k := slices.IndexFunc(out, func(p bench.Option) bool { return p.Name == name }); k >= 0 {
			out = slices.Delete(out, k, k+1)
		}
		out = append(out, bench.Option{Name: name, Value: o.Value})
	}
	for _, s := range sections[:i] {
		if s.Name == "global" {
			for _, o := range s.Options {
				add(o)
			}
		}
	}
	for _, o := range sections[i].Options {
		add(o)
	}
	return out
}
