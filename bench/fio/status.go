package fio

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"iolab/bench"
	"iolab/bench/units"
)

// The bounds of --status-interval. fio takes anything from 1 ms up
// (init.c, case 'L': "status interval too small" below 1000 µs); each
// iolab report copies every running job's latency histograms on the job's
// thread and prints them all, so a report every 100 ms is the most it
// writes, and one a day the least: an interval longer than that would
// print nothing in any run this machine finishes.
const (
	MinStatusInterval = 100 * time.Millisecond
	MaxStatusInterval = 24 * time.Hour
)

// ParseStatusInterval reads --status-interval's value as fio does
// (init.c: check_str_time, a whole number in seconds unless a unit
// follows, kept in whole milliseconds) within iolab's bounds.
func ParseStatusInterval(v string) (time.Duration, error) {
	d, err := units.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("option --status-interval: %w", err)
	}
	d = d.Truncate(time.Millisecond) // fio's status_interval = val / 1000
	switch {
	case d < MinStatusInterval:
		return 0, fmt.Errorf("option --status-interval: %q is too short: iolab prints a report at most every %s (e.g. --status-interval=1 for every second, 500ms)", v, MinStatusInterval)
	case d > MaxStatusInterval:
		return 0, fmt.Errorf("option --status-interval: %q is too long: at most a day, 24h (e.g. --status-interval=10m)", v)
	}
	return d, nil
}

// StatusReports prints fio's --status-interval reports (stat.c
// __show_running_run_stats, run by fio's helper thread every interval):
// a complete report of the run under way in the run's output format,
// each job's figures cumulative since its measured window began
// (bench.Runner.Status), one report per interval; the final report
// follows as usual. JSON is a stream of complete documents, one per
// report, as fio prints it (ParseReports and iolab import read it and keep
// the last); normal output prints the lines before the jobs' once, as fio
// does. fio's interval counts from its start; a plan of several steps
// starts its reports again with each step (Start), so that each covers
// the step running, and prints none between steps.
type StatusReports struct {
	w       io.Writer
	runner  *bench.Runner
	every   time.Duration
	formats []string // OutputFormats, in the order fio prints them
	terse   int

	stop chan struct{} // closed to end the running step's reports
	done chan struct{} // closed when they have ended
	// headed: a normal report has printed the lines fio prints once
	// before the jobs' (WriteNormal); the next go without.
	headed  bool
	printed int
	err     error
}

// NewStatusReports makes the reports of cfg's --status-interval on w, of
// what runner runs, or nil without one: a nil *StatusReports does
// nothing.
func NewStatusReports(w io.Writer, runner *bench.Runner, cfg *bench.Config) *StatusReports {
	if cfg.StatusInterval <= 0 {
		return nil
	}
	return &StatusReports{w: w, runner: runner, every: cfg.StatusInterval, formats: OutputFormats(cfg),
		terse: cmp.Or(cfg.TerseVersion, DefaultTerseVersion)}
}

// wait is how long a report waits for the running jobs to answer
// (bench.Runner.Status): a job asleep on its rate longer than that is
// reported as it last answered.
func (s *StatusReports) wait() time.Duration { return min(s.every/4, 200*time.Millisecond) }

// Start starts the reports of a step about to run with cfg (its groups
// name the jobs' lines), ending those of the step before.
func (s *StatusReports) Start(cfg *bench.Config) {
	if s == nil {
		return
	}
	s.Stop()
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.done)
		tick := time.NewTicker(s.every)
		defer tick.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
			if res := s.runner.Status(s.wait()); res != nil {
				s.write(res, cfg)
			}
		}
	}()
}

// Stop ends the running step's reports, waiting for the one being
// written.
func (s *StatusReports) Stop() {
	if s == nil || s.stop == nil {
		return
	}
	close(s.stop)
	<-s.done
	s.stop, s.done = nil, nil
}

// write prints one report in each of the run's formats, in fio's order,
// as fio's __show_run_stats does; the normal output's first lines once.
func (s *StatusReports) write(res *bench.Result, cfg *bench.Config) {
	var errs []error
	normal := slices.Contains(s.formats, "normal")
	if normal && !s.headed {
		errs = append(errs, WriteNormalHead(s.w, res, cfg))
	}
	part := NormalStats
	if s.headed {
		part = NormalAgain
	}
	for _, f := range s.formats {
		errs = append(errs, WriteFormat(s.w, f, res, cfg, s.terse, part))
	}
	s.headed = s.headed || normal
	s.printed++
	if err := errors.Join(errs...); s.err == nil {
		s.err = err
	}
}

// NormalPart is what WriteFormat writes of the normal output.
type NormalPart int

const (
	// NormalWhole is the whole normal output (WriteNormal).
	NormalWhole NormalPart = iota
	// NormalStats leaves out the lines before the jobs', printed before
	// the other formats (WriteNormalStats).
	NormalStats
	// NormalAgain follows a report that printed them (WriteNormalAgain).
	NormalAgain
)

// WriteFormat writes res in one of the output formats (OutputFormats):
// fio's JSON or JSON+, its terse lines of version terse, or the normal
// output's part.
func WriteFormat(w io.Writer, format string, res *bench.Result, cfg *bench.Config, terse int, part NormalPart) error {
	switch format {
	case "json", "json+":
		rep := NewReport(res, cfg, format == "json+")
		return WriteJSON(w, &rep)
	case "terse":
		return WriteTerse(w, res, cfg, terse)
	}
	switch part {
	case NormalStats:
		return WriteNormalStats(w, res, cfg)
	case NormalAgain:
		return WriteNormalAgain(w, res, cfg)
	}
	return WriteNormal(w, res, cfg)
}

// WriteNormalAgain prints a normal report after the one before it, as
// fio prints each --status-interval report after the first and the final
// one: from a blank line, the statistics (WriteNormalStats) without the
// lines before the jobs', which fio prints once.
func WriteNormalAgain(w io.Writer, res *bench.Result, cfg *bench.Config) error {
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	return WriteNormalStats(w, res, cfg)
}

// Headed says whether a normal report printed the lines fio prints once,
// before the jobs', so that the final report leaves them out
// (WriteNormalAgain). Call it after Stop, as Printed and Err.
func (s *StatusReports) Headed() bool { return s != nil && s.headed }

// Printed is how many reports were printed.
func (s *StatusReports) Printed() int {
	if s == nil {
		return 0
	}
	return s.printed
}

// Err is the first error writing a report, or nil.
func (s *StatusReports) Err() error {
	if s == nil {
		return nil
	}
	return s.err
}
