package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"iolab/bench/units"
	"iolab/db"
)

var runsCommand = command{
	name:    "runs",
	summary: "the stored runs, newest first",
	usage:   "[--db FILE] [--host HOST] [--tag TAG] [--since TIME] … [--sort ORDER] [--limit N [--after CURSOR]]",
	about: `The filters are the dashboard's runs list's (its URL's parameters, and /api/runs'): each keeps
the runs that match it, and together the runs that match them all. --sort orders them by date
(newest first), name, host or status, -ORDER the other way. Without --limit every run that
matches is printed; with it, the first N, and a line on stderr with where they stand among all
("1–50 of 31,204") and the --after that prints the next N.

  iolab runs --host lab1 --tag nightly --since 2026-11-01
  iolab runs --engine io_uring --status done --sort=-name --limit 20`,
	flags: func(fs *flag.FlagSet) runFunc {
		dbPath := dbFlag(fs)
		values := map[string]*string{}
		for _, p := range db.RunParams() {
			if p.Name == "limit" {
				continue // the CLI's own: any number, 0 for all
			}
			values[p.Name] = fs.String(p.Name, "", p.Help)
		}
		limit := fs.Int("limit", 0, "print the first `N` runs that match (default 0: all), with where they stand")
		return func(ctx context.Context, e *env, args []string) error {
			if len(args) > 0 {
				return e.usage()
			}
			if *limit < 0 {
				return usageError{fmt.Sprintf("runs: --limit %d: want 0 (all) or more", *limit)}
			}
			q, err := db.ParseRunQuery(func(name string) string {
				if v, ok := values[name]; ok {
					return *v
				}
				return ""
			})
			var pe *db.ParamError
			if errors.As(err, &pe) {
				return usageError{fmt.Sprintf("runs: --%s: %s", pe.Param, pe.Msg)}
			}
			if err != nil {
				return err
			}
			return listRuns(ctx, e, *dbPath, q, *limit)
		}
	},
}

// listRuns prints the runs q keeps, limit of them (0: all), a page of the
// store's at a time.
func listRuns(ctx context.Context, e *env, dbPath string, q db.RunQuery, limit int) error {
	store, err := openStoreFlag(ctx, e, dbPath)
	if err != nil {
		return err
	}
	defer store.Close()
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	cols := db.RunColumns()
	for i, c := range cols {
		fmt.Fprint(tw, strings.ToUpper(c.Name), sep(i, len(cols)))
	}
	printed, first, total := 0, 0, 0
	next := ""
	for {
		q.Limit = db.MaxRunPage
		if limit > 0 {
			q.Limit = min(db.MaxRunPage, limit-printed)
		}
		page, err := store.RunPage(ctx, q)
		if err != nil {
			return err
		}
		if first == 0 {
			first, total = page.First, page.Total
		}
		for _, r := range page.Runs {
			for i, c := range cols {
				fmt.Fprint(tw, units.Printable(c.Value(r)), sep(i, len(cols)))
			}
		}
		printed += len(page.Runs)
		next = page.Next
		if next == "" || (limit > 0 && printed >= limit) || q.Before != "" {
			break
		}
		q.After, q.Before = next, ""
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if limit > 0 {
		switch {
		case printed == 0:
			fmt.Fprintf(e.stderr, "no runs here, of %s\n", thousands(total))
		case next != "":
			fmt.Fprintf(e.stderr, "runs %s–%s of %s; the next: --after %s\n", thousands(first), thousands(first+printed-1), thousands(total), next)
		default:
			fmt.Fprintf(e.stderr, "runs %s–%s of %s\n", thousands(first), thousands(first+printed-1), thousands(total))
		}
	}
	return nil
}

// thousands writes n with its thousands apart: 31,204.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// sep ends a tab-separated cell: a tab, or a newline after the last.
func sep(i, n int) string {
	if i == n-1 {
		return "\n"
	}
	return "\t"
}
