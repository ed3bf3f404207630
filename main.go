// Command iolab is a Linux block-I/O lab: it runs fio-style benchmarks with
// its own in-process io_uring, libaio, psync and null engines.
//
//	iolab run [fio options…] [jobfile…]     run jobs, print fio-style results
//	iolab calibrate [--rounds N] [--output-format=json] [fio options…]
//	                                        run fio and iolab side by side
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/bench/units"
)

const usage = `usage:
  iolab [serve] [--listen 127.0.0.1:8080] [--db PATH] [--token T] [--allow-target PATH]… [--data-dir DIR]
      The dashboard: launch runs, watch them live, charts, compare, CSV, JSON API.
  iolab run [run flags] [fio options…] [jobfile…]
      Run fio jobs with iolab's own engines (io_uring, libaio, psync, null).
      Options use fio's names and units, e.g.
        iolab run --name=t --filename=/dev/zram0 --rw=randread --bs=4k \
                  --iodepth=32 --ioengine=io_uring --direct=1 --runtime=5 --time_based
      --output-format=normal|json|json+  --output=FILE
      Run flags:
        --sweep AXIS=v1,v2,…   repeatable; axes iodepth, ioengine, scheduler, numjobs, bs, rw,
                               or any other fio option iolab takes (--sweep rate_iops=1000,2000);
                               v1;v2 when a value holds a comma (--sweep cpus_allowed=0,1;2,3);
                               ranges like iodepth=1..256 (powers of two); engine variants
                               io_uring, io_uring+hipri, io_uring+sqpoll, io_uring+sqpoll+hipri,
                               io_uring+fixedbufs, libaio, psync
        --repeat N             run every step N times
        --preset NAME          start from a preset (see iolab presets); needs --filename
        --discard              BLKDISCARD block targets before each step
        --drop-caches          sync and drop the page cache before each step
        --allow-disk-scheduler let a scheduler sweep switch the disk under a file target
        --skip-impossible      leave out (and record) the steps the targets cannot run, instead
                               of refusing the plan (hipri without poll queues, a missing scheduler…)
        --db PATH              the run store (default $XDG_DATA_HOME/iolab/iolab.db)
        --no-save              do not store the run
        --tag TAG              tag the stored run (repeatable)
        --push URL             send the finished run to the dashboard at URL
        --push-token T         the dashboard's token for --push (default $IOLAB_TOKEN)
  iolab runs [--db PATH]               stored runs, newest first
  iolab show [--db PATH] ID            a run's environment, steps and summary
  iolab export [--db PATH] ID          a run as a self-contained JSON document
  iolab import [--db PATH] [--host H] [--kernel K] [--label L]… [--name N | --as-run NAME] FILE|DIR…
                                       store iolab exports or fio JSON (json, json+) as runs (a
                                       directory: its *.json files); --as-run makes fio's outputs
                                       one run; prints each run's id (the existing one if already there)
  iolab push [--db PATH] [--token T] ID URL
                                       send a stored run to the dashboard at URL
  iolab presets                        the experiments' presets
  iolab calibrate [--rounds N] [--output-format=json] [--fio PATH] [fio options…]
      Run fio and iolab with the same options, alternating, and compare
      median IOPS and clat p50/p99 per direction.
`

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "iolab: %s\n", printableLines(err.Error()))
	}
	os.Exit(exitCode(err))
}

// exitCode is 0 on success, 2 for a bad command line or job option (as
// fio), and 1 for anything that went wrong while running.
func exitCode(err error) int {
	var oe *bench.OptionError
	var ue usageError
	var pe *sweep.PreflightError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &oe), errors.As(err, &ue), errors.As(err, &pe):
		return 2
	}
	return 1
}

// usageError is a bad command line outside the job options.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		args = []string{"serve"}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	runner := &bench.Runner{Sys: system.FS{}, Log: logger}

	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stdout, stderr, logger)
	case "run":
		return runJobs(ctx, runner, args[1:], stdout, stderr)
	case "calibrate":
		return calibrate(ctx, runner, args[1:], stdout, stderr)
	case "runs":
		return listRuns(ctx, args[1:], stdout, stderr)
	case "show":
		return showRun(ctx, args[1:], stdout, stderr)
	case "export":
		return exportRun(ctx, args[1:], stdout, stderr)
	case "presets":
		return listPresets(stdout)
	case "import":
		return importRuns(ctx, args[1:], stdout, stderr)
	case "push":
		return pushRunCmd(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return usageError{fmt.Sprintf("unknown command %q", args[0])}
}

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// splitOwn separates a command's own flags (names, with whether they take
// a value) from the fio options and job files around them.
func splitOwn(args []string, names map[string]bool) (own, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := cut(a)
		takesValue, ok := names[strings.TrimLeft(name, "-")]
		if !ok || !strings.HasPrefix(a, "-") {
			rest = append(rest, a)
			continue
		}
		own = append(own, a)
		if takesValue && !hasValue && i+1 < len(args) {
			own = append(own, args[i+1])
			i++
		}
	}
	return own, rest
}

func cut(arg string) (name, value string, ok bool) {
	for i := range len(arg) {
		if arg[i] == '=' {
			return arg[:i], arg[i+1:], true
		}
	}
	return arg, "", false
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// storePath is --db: a path, never empty (an empty --db would otherwise
// quietly mean the default store).
type storePath string

const storePathUsage = "the run store (default $XDG_DATA_HOME/iolab/iolab.db)"

func (p *storePath) String() string { return string(*p) }

func (p *storePath) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return errors.New("--db needs a path; leave --db out for the default store")
	}
	*p = storePath(v)
	return nil
}

// dbFlag defines --db on fs.
func dbFlag(fs *flag.FlagSet) *string {
	var p string
	fs.Var((*storePath)(&p), "db", storePathUsage)
	return &p
}

// limitFlags defines --max-steps, --max-jobs and --max-buffers, the plan
// limits (sweep.Limits), on fs.
func limitFlags(fs *flag.FlagSet, l *sweep.Limits) {
	d := sweep.DefaultLimits()
	*l = d
	fs.IntVar(&l.Steps, "max-steps", d.Steps, "the most steps a plan may have (repeats included)")
	fs.IntVar(&l.Jobs, "max-jobs", d.Jobs, "the most job threads one step may run at once")
	fs.Func("max-buffers", fmt.Sprintf("the most bytes of I/O buffers one step may map, e.g. 8g (default %s)", units.FormatSize(d.Buffers)), func(v string) error {
		n, err := units.ParseSize(v)
		if err != nil || n <= 0 {
			return fmt.Errorf("--max-buffers %q: a size such as 8g", v)
		}
		l.Buffers = n
		return nil
	})
}

// printableLines escapes the control characters of each line of s (an
// error may quote a job file's or a stored name's bytes) and keeps the
// line breaks.
func printableLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = units.Printable(l)
	}
	return strings.Join(lines, "\n")
}
