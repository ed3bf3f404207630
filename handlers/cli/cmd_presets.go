package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"iolab/bench/sweep"
)

var presetsCommand = command{
	name:    "presets",
	summary: "the presets: the write-ups' experiments, ready to run with iolab run --preset NAME",
	flags: func(fs *flag.FlagSet) runFunc {
		return func(ctx context.Context, e *env, args []string) error {
			if len(args) > 0 {
				return e.usage()
			}
			return listPresets(e.stdout)
		}
	},
}

func listPresets(stdout io.Writer) error {
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for _, p := range sweep.Presets() {
		fmt.Fprintf(tw, "%s\t%s\n", p.Name, p.Description)
	}
	fmt.Fprintln(tw, "\nuse: iolab run --preset NAME --filename TARGET [fio options that override the preset's]")
	return tw.Flush()
}
