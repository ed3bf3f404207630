package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"iolab/bench/units"
	"iolab/db"
)

var pruneCommand = command{
	name:    "prune",
	summary: "delete old runs by age, tag, status or the newest N kept, and give their space back",
	usage:   "[--older-than AGE] [--tag TAG] [--status LIST] [--keep N] [--explain] [--delete] [--vacuum] [--db FILE]",
	about: `Without --delete, a dry run: it lists the runs that would go (id, name,
status, host, workload, date, about what their rows hold) and the total,
and deletes nothing. --delete deletes them, 50 to a transaction (a prune
stopped halfway has deleted whole runs), then gives the space back.

A run goes when it matches every rule given: created before --older-than,
tagged --tag, in one of --status. --keep N keeps the newest N finished runs
of each host and workload whatever else matched (alone, it deletes all but
those).
A queued or running run is never pruned, nor a run of a group whose other
hosts are still running, nor (on an agent) a run its dashboard does not
have whole yet: --explain lists each run kept and why.

A store created by this iolab gives freed pages back (auto_vacuum
incremental); one created before keeps them for new runs until --vacuum
rewrites it once (holding off other writers meanwhile, and needing about
its size in free disk). --vacuum alone does only that.

  iolab prune --older-than 90d --keep 3
  iolab prune --older-than 90d --keep 3 --delete
  iolab prune --status failed,cancelled --tag scratch --explain
  iolab prune --vacuum`,
	flags: func(fs *flag.FlagSet) runFunc {
		dbPath := dbFlag(fs)
		var o pruneOptions
		fs.StringVar(&o.age, "older-than", "", "prune runs created more than `AGE` ago: 90d, 12h, 2w, or a date YYYY-MM-DD")
		fs.StringVar(&o.tag, "tag", "", "prune runs tagged `TAG`")
		fs.StringVar(&o.status, "status", "", "prune runs in one of `LIST`, e.g. failed,cancelled")
		fs.IntVar(&o.keep, "keep", 0, "keep the newest `N` finished runs of each host and workload")
		fs.BoolVar(&o.explain, "explain", false, "list the runs the rules matched but that stay, and why")
		fs.BoolVar(&o.dryRun, "dry-run", false, "list what would go and delete nothing (the default without --delete)")
		fs.BoolVar(&o.delete, "delete", false, "delete the runs listed, then give their space back")
		fs.BoolVar(&o.vacuum, "vacuum", false, "rewrite the store once with incremental vacuum (VACUUM), giving back every free page")
		return func(ctx context.Context, e *env, args []string) error {
			if len(args) > 0 {
				return e.usage()
			}
			return prune(ctx, e, *dbPath, o)
		}
	},
}

type pruneOptions struct {
	age, tag, status string
	keep             int
	explain, dryRun  bool
	delete, vacuum   bool
}

// rule is the options' prune rule; ok false when none is given.
func (o pruneOptions) rule(now time.Time) (db.PruneRule, bool, error) {
	var (
		r   db.PruneRule
		err error
	)
	if o.age != "" {
		if r.OlderThan, err = db.ParsePruneAge(o.age, now); err != nil {
			return r, false, usageError{"iolab prune: --older-than: " + err.Error()}
		}
	}
	if r.Statuses, err = db.ParsePruneStatuses(o.status); err != nil {
		return r, false, usageError{"iolab prune: --status: " + err.Error()}
	}
	r.Tag, r.Keep = o.tag, o.keep
	if o.age == "" && o.tag == "" && len(r.Statuses) == 0 && o.keep == 0 {
		return r, false, nil
	}
	if err := r.Check(); err != nil {
		return r, false, usageError{"iolab prune: " + err.Error()}
	}
	return r, true, nil
}

func prune(ctx context.Context, e *env, dbPath string, o pruneOptions) error {
	rule, ruled, err := o.rule(time.Now())
	switch {
	case err != nil:
		return err
	case o.delete && o.dryRun:
		return usageError{"iolab prune: --dry-run and --delete: choose one"}
	case !ruled && !o.vacuum:
		return usageError{"iolab prune: say what to prune (--older-than, --tag, --status, --keep), or give --vacuum"}
	case ruled && o.vacuum && !o.delete:
		return usageError{"iolab prune: a dry run changes nothing: --vacuum goes with --delete, or alone"}
	case !ruled && (o.delete || o.explain):
		return usageError{"iolab prune: --delete and --explain need a rule (--older-than, --tag, --status, --keep)"}
	}
	store, err := openStoreFlag(ctx, e, dbPath)
	if err != nil {
		return err
	}
	defer store.Close()
	if (o.delete || o.vacuum) && store.ReadOnly() {
		return fmt.Errorf("iolab prune: %s", db.FaultMessage(db.FaultReadOnly, store.Path()))
	}
	var start db.Space
	if ruled {
		plan, err := store.PlanPrune(ctx, rule)
		if err != nil {
			return err
		}
		writePrunePlan(e.stdout, plan, o.explain, o.delete)
		if !o.delete {
			fmt.Fprintln(e.stdout, "dry run: nothing deleted; add --delete to delete them")
			return nil
		}
		// The size on disk before the prune: its deletes grow the
		// write-ahead log until the checkpoint after them.
		if start, err = store.Space(ctx); err != nil {
			return err
		}
		res, err := store.Prune(ctx, plan, nil)
		if res != nil {
			fmt.Fprintf(e.stdout, "deleted %d runs (about %s of rows)", len(res.Deleted), units.Bytes(float64(res.Bytes)))
			if len(res.Skipped) > 0 {
				fmt.Fprintf(e.stdout, "; kept %d that started or were deleted since the list: %v", len(res.Skipped), res.Skipped)
			}
			fmt.Fprintln(e.stdout)
		}
		if err != nil {
			return err
		}
	}
	var before, after db.Space
	if o.vacuum {
		before, after, err = store.Vacuum(ctx)
	} else {
		before, after, err = store.GiveBack(ctx)
	}
	if err != nil {
		return err
	}
	if ruled {
		before.FileBytes, before.WALBytes = start.FileBytes, start.WALBytes
	}
	writeSpace(e.stdout, before, after)
	return nil
}

// writePrunePlan lists the runs that go, with the total, and with
// explain those kept, with why.
func writePrunePlan(w io.Writer, plan *db.PrunePlan, explain, deleting bool) {
	verb := "would go"
	if deleting {
		verb = "to delete"
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(plan.Delete) > 0 {
		fmt.Fprintln(tw, "ID\tNAME\tSTATUS\tHOST\tWORKLOAD\tCREATED\tSIZE")
		for _, r := range plan.Delete {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, units.Printable(r.Name), r.Status, units.Printable(r.Hostname),
				units.Printable(r.Workload), db.FormatTime(r.Created), units.Bytes(float64(r.Bytes)))
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "%s: %d runs, about %s of rows", verb, len(plan.Delete), units.Bytes(float64(plan.Bytes)))
	if len(plan.Kept) > 0 {
		fmt.Fprintf(w, "; %d matched but stay", len(plan.Kept))
		if !explain {
			fmt.Fprint(w, " (--explain says why)")
		}
	}
	fmt.Fprintln(w)
	if explain && len(plan.Kept) > 0 {
		fmt.Fprintln(tw, "KEPT\tNAME\tSTATUS\tHOST\tWORKLOAD\tCREATED\tWHY")
		for _, r := range plan.Kept {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, units.Printable(r.Name), r.Status, units.Printable(r.Hostname),
				units.Printable(r.Workload), db.FormatTime(r.Created), units.Printable(r.Kept))
		}
		tw.Flush()
	}
}

// writeSpace says what the file was and is, and what stays free in it.
func writeSpace(w io.Writer, before, after db.Space) {
	size := func(b int64) string { return units.Bytes(float64(b)) + " (" + strconv.FormatInt(b, 10) + " bytes)" }
	fmt.Fprintf(w, "store on disk (file and write-ahead log): %s → %s, %s given back; free pages %d → %d (auto_vacuum %s)\n",
		size(before.Bytes()), size(after.Bytes()), units.Bytes(float64(max(0, before.Bytes()-after.Bytes()))),
		before.FreePages, after.FreePages, after.AutoVacuum)
	switch {
	case after.AutoVacuum == "none" && after.FreePages > 0:
		fmt.Fprintf(w, "the store's %s of free pages stay in the file for new runs: it was created before incremental vacuum; iolab prune --vacuum rewrites it once\n",
			units.Bytes(float64(after.FreeBytes())))
	case !after.Checkpointed:
		fmt.Fprintln(w, "readers held the write-ahead log: the file shrinks at the next checkpoint")
	}
}
