package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"iolab/bench"
	"iolab/bench/fio"
)

func calibrate(ctx context.Context, runner *bench.Runner, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rounds := fs.Int("rounds", 3, "rounds of fio + iolab")
	format := fs.String("output-format", "normal", "normal or json")
	fioPath := fs.String("fio", "fio", "the fio binary")
	// Everything but calibrate's own flags goes to both tools unchanged.
	own, job := splitOwn(args, map[string]bool{"rounds": true, "output-format": true, "fio": true})
	if err := fs.Parse(own); err != nil {
		return usageError{err.Error()}
	}
	if *format != "normal" && *format != "json" {
		return usageError{fmt.Sprintf("calibrate: --output-format=%q: use normal or json", *format)}
	}
	cal, err := fio.Calibrate(ctx, runner, *fioPath, job, *rounds, stderr)
	if err != nil {
		return err
	}
	if *format == "json" {
		return cal.WriteJSON(stdout)
	}
	return cal.WriteText(stdout)
}
