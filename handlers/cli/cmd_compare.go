package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strconv"

	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/db"
	"iolab/handlers/chart"
)

var compareCommand = command{
	name:    "compare",
	summary: "the statistical diff of stored runs, or of the values of a run's swept axis",
	usage:   "[--db FILE] [--csv] [--lat KIND] ID ID… | ID [--axis AXIS] [--base VALUE]",
	about: `With two or more runs, each run after the first is compared with the first, point by point (the
values of the axes either run sweeps) and job by job: the change of IOPS, bandwidth and latency p50 and p99
as the ratio of the medians over the repeats (B's median over A's: the one change every page, report and
CSV prints), its 95 % confidence interval (Moses's, distribution-free, as a ratio), the Hodges–Lehmann shift
in a column of its own, and the Mann–Whitney test's p. A change is "significant" only when the repeats could not have given it by chance;
"no significant difference" is the honest reading of two runs that measure the same thing; "too few
repeats to tell" when no outcome of so few repeats could reach 95 % (3 against 3 cannot: 4 on each side
can). Latency percentiles come from each repeat's own histogram, of fio's lat (from submission) when the
runs compare engines or hosts, of clat otherwise, and of the latency from each I/O's intended start for paced
(rate, rate_iops) steps, as the QoS curve plots them; --lat picks one kind for every row (total, clat or
slat, or a traced run's block-layer part: submit, queue, device or completion), and each row names it.

With one run, the values of one of its swept axes are compared with one of them: --axis (default: the
first it sweeps of ioengine, scheduler, rw and option axes) and --base (default: its first value).

One in twenty comparisons of things that do not differ comes out significant at 95 %: a row marked * still
is when every row of the table is taken together (Holm's correction).

  iolab compare 3 5
  iolab compare 7 --axis scheduler --base none
  iolab compare --csv 3 5 > diff.csv`,
	flags: func(fs *flag.FlagSet) runFunc {
		dbPath := dbFlag(fs)
		csv := fs.Bool("csv", false, "write the rows as CSV, every number whole")
		axis := fs.String("axis", "", "with one run: the swept `AXIS` whose values are compared")
		base := fs.String("base", "", "with one run: the `VALUE` of the axis the others are compared with")
		lat := fs.String("lat", "", "the latency compared: `KIND` total (fio's lat), clat or slat, or a traced run's submit, queue, device or completion (default: total for engines or hosts, else clat)")
		return func(ctx context.Context, e *env, args []string) error {
			if len(args) == 0 {
				return e.usage()
			}
			ids, err := diffRunIDs("compare", args, maxCompareRuns, *axis != "" || *base != "")
			if err != nil {
				return err
			}
			k, err := summary.ParseLatKind(*lat)
			if err != nil {
				return usageError{"compare: --lat: " + err.Error()}
			}
			store, err := openStoreFlag(ctx, e, *dbPath)
			if err != nil {
				return err
			}
			defer store.Close()
			diffs, err := compareRuns(ctx, store, ids, sweep.Axis(*axis), *base, k)
			if err != nil {
				return err
			}
			return writeDiffs(e, diffs, *csv)
		}
	},
}

// diffRunIDs reads the run ids of compare and report: at most max, and
// one when an axis (or its base) is named.
func diffRunIDs(cmd string, args []string, max int, axis bool) ([]int64, error) {
	if len(args) > max {
		return nil, usageError{fmt.Sprintf("%s: at most %d runs at once", cmd, max)}
	}
	ids := make([]int64, len(args))
	for i, a := range args {
		id, err := strconv.ParseInt(a, 10, 64)
		if err != nil || id < 1 {
			return nil, usageError{fmt.Sprintf("%s: %q is not a run id (see iolab runs)", cmd, a)}
		}
		ids[i] = id
	}
	if len(ids) > 1 && axis {
		return nil, usageError{cmd + ": --axis and --base compare the values of one run's axis; give one run"}
	}
	return ids, nil
}

// maxCompareRuns bounds the runs one compare reads.
const maxCompareRuns = 8

// compareRuns reads the runs and compares each after the first with it,
// or, for one run, the values of its axis with base, on latency kind k
// ("": lat for engines or hosts, else clat).
func compareRuns(ctx context.Context, store *db.Store, ids []int64, axis sweep.Axis, base string, k summary.LatKind) ([]*summary.Diff, error) {
	sides := make([]summary.DiffSide, len(ids))
	for i, id := range ids {
		r, err := store.GetRun(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("run %d: %w", id, err)
		}
		steps, err := store.StepsFor(ctx, id, db.StepLoad{Hists: db.AllHists})
		if err != nil {
			return nil, err
		}
		sides[i] = summary.DiffSide{Label: "run " + strconv.FormatInt(id, 10), Plan: &r.Plan, Steps: steps, Host: r.Hostname, Lat: k}
	}
	diffs, err := summary.CompareSides(sides, axis, base, summary.DiffConf)
	if err != nil {
		return nil, usageError{"compare: " + err.Error()}
	}
	return diffs, nil
}

func writeDiffs(e *env, diffs []*summary.Diff, csv bool) error {
	if len(diffs) == 0 {
		return errors.New("compare: nothing to compare")
	}
	if csv {
		axes := summary.DiffCSVAxes(diffs...)
		w := chart.NewCSVWriter(e.stdout, summary.DiffCSVColumns(axes))
		if err := w.Header(); err != nil {
			return err
		}
		for _, d := range diffs {
			for _, row := range summary.DiffCSV(d, axes) {
				if err := w.Row(row); err != nil {
					return err
				}
			}
		}
		return w.Flush()
	}
	for i, d := range diffs {
		if i > 0 {
			fmt.Fprintln(e.stdout)
		}
		if err := summary.WriteDiff(e.stdout, d); err != nil {
			return err
		}
	}
	return nil
}
