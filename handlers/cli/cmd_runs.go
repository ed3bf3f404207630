package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"

	"iolab/bench/units"
	"iolab/db"
)

var runsCommand = command{
	name:    "runs",
	summary: "the stored runs, newest first",
	usage:   "[--db FILE]",
	flags: func(fs *flag.FlagSet) runFunc {
		dbPath := dbFlag(fs)
		return func(ctx context.Context, e *env, args []string) error {
			if len(args) > 0 {
				return e.usage()
			}
			return listRuns(ctx, e, *dbPath)
		}
	},
}

func listRuns(ctx context.Context, e *env, dbPath string) error {
	store, err := openStoreFlag(ctx, e, dbPath)
	if err != nil {
		return err
	}
	defer store.Close()
	runs, err := store.ListRuns(ctx, db.RunFilter{})
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	cols := db.RunColumns()
	for i, c := range cols {
		fmt.Fprint(tw, strings.ToUpper(c.Name), sep(i, len(cols)))
	}
	for _, r := range runs {
		for i, c := range cols {
			fmt.Fprint(tw, units.Printable(c.Value(r)), sep(i, len(cols)))
		}
	}
	return tw.Flush()
}

// sep ends a tab-separated cell: a tab, or a newline after the last.
func sep(i, n int) string {
	if i == n-1 {
		return "\n"
	}
	return "\t"
}
