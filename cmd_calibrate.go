package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"iolab/bench"
	"iolab/bench/fio"
)

var calibrateCommand = command{
	name:    "calibrate",
	summary: "run fio and iolab with the same options, alternating, and compare what they measure",
	usage:   "[--rounds N] [--output-format FORMAT] [--fio PATH] [fio options…]",
	about: `Every argument but calibrate's own flags goes to both fio and iolab unchanged (the fio options are
listed by iolab help run). It prints per direction the median IOPS, clat p50 and p99 and mean lat of
each, and their ratio.

  iolab calibrate --rounds 3 --name=cal --filename=/dev/zram0 --rw=randread --bs=4k --iodepth=1 \
                  --ioengine=io_uring --direct=1 --runtime=3 --time_based --size=1g`,
	fioArgs: true,
	flags: func(fs *flag.FlagSet) runFunc {
		rounds := fs.Int("rounds", 3, "`N` rounds of fio then iolab")
		format := fs.String("output-format", "normal", "the output's `FORMAT`: normal, or json for scripts")
		fioPath := fs.String("fio", "fio", "the fio binary: a `PATH`, or a name looked up in $PATH")
		return func(ctx context.Context, e *env, job []string) error {
			return calibrate(ctx, e.runner, *rounds, *format, *fioPath, job, e.stdout, e.stderr)
		}
	},
}

func calibrate(ctx context.Context, runner *bench.Runner, rounds int, format, fioPath string, job []string, stdout, stderr io.Writer) error {
	if format != "normal" && format != "json" {
		return usageError{fmt.Sprintf("calibrate: --output-format=%q: use normal or json", format)}
	}
	cal, err := fio.Calibrate(ctx, runner, fioPath, job, rounds, stderr)
	if err != nil {
		return err
	}
	if format == "json" {
		return cal.WriteJSON(stdout)
	}
	return cal.WriteText(stdout)
}
