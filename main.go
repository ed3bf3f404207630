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
	"syscall"

	"iolab/bench"
)

const usage = `usage:
  iolab run [fio options…] [jobfile…]
      Run fio jobs with iolab's own engines (io_uring, libaio, psync, null).
      Options use fio's names and units, e.g.
        iolab run --name=t --filename=/dev/zram0 --rw=randread --bs=4k \
                  --iodepth=32 --ioengine=io_uring --direct=1 --runtime=5 --time_based
      --output-format=normal|json|json+  --output=FILE
  iolab calibrate [--rounds N] [--output-format=json] [--fio PATH] [fio options…]
      Run fio and iolab with the same options, alternating, and compare
      median IOPS and clat p50/p99 per direction.
`

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "iolab: %v\n", err)
	}
	os.Exit(exitCode(err))
}

// exitCode is 0 on success, 2 for a bad command line or job option (as
// fio), and 1 for anything that went wrong while running.
func exitCode(err error) int {
	var oe *bench.OptionError
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &oe), errors.As(err, &ue):
		return 2
	}
	return 1
}

// usageError is a bad command line outside the job options.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usageError{"no command given"}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	runner := &bench.Runner{Sys: bench.System{}, Log: logger}

	switch args[0] {
	case "run":
		return runJobs(ctx, runner, args[1:], stdout)
	case "calibrate":
		return calibrate(ctx, runner, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return usageError{fmt.Sprintf("unknown command %q", args[0])}
}

func runJobs(ctx context.Context, runner *bench.Runner, args []string, stdout io.Writer) error {
	cfg, err := bench.ParseArgs(args)
	if err != nil {
		return err
	}
	if len(cfg.Groups) == 0 {
		return usageError{"no jobs: give fio options (--name=… --filename=…) or a job file"}
	}
	out := stdout
	if cfg.Output != "" {
		f, err := os.Create(cfg.Output)
		if err != nil {
			return fmt.Errorf("--output: %w", err)
		}
		defer f.Close()
		out = f
	}
	res, runErr := runner.Run(ctx, cfg)
	if res == nil {
		return runErr
	}
	var werr error
	switch cfg.OutputFormat {
	case "json", "json+":
		werr = writeJSON(out, res.Report(cfg, cfg.OutputFormat == "json+"))
	default:
		werr = res.WriteNormal(out)
	}
	return errors.Join(runErr, werr)
}

func calibrate(ctx context.Context, runner *bench.Runner, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rounds := fs.Int("rounds", 3, "rounds of fio + iolab")
	format := fs.String("output-format", "normal", "normal or json")
	fioPath := fs.String("fio", "fio", "the fio binary")
	// Calibrate's own flags come first; everything from the first fio
	// option on is passed to both tools unchanged.
	var own, job []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := cut(a)
		if name == "--rounds" || name == "-rounds" || name == "--output-format" || name == "--fio" {
			own = append(own, a)
			if !hasValue && i+1 < len(args) {
				own = append(own, args[i+1])
				i++
			}
			continue
		}
		job = append(job, a)
	}
	if err := fs.Parse(own); err != nil {
		return usageError{err.Error()}
	}
	if *format != "normal" && *format != "json" {
		return usageError{fmt.Sprintf("calibrate: --output-format=%q: use normal or json", *format)}
	}
	cal, err := runner.Calibrate(ctx, *fioPath, job, *rounds, stderr)
	if err != nil {
		return err
	}
	if *format == "json" {
		return cal.WriteJSON(stdout)
	}
	return cal.WriteText(stdout)
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
