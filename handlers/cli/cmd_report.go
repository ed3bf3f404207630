package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"iolab/bench/fio"
	"iolab/bench/summary"
	"iolab/handlers/report"
)

var reportCommand = command{
	name:    "report",
	summary: "a write-up of stored runs: one offline HTML file, or Markdown, PNGs and CSVs",
	usage:   "[--db FILE] [--axis AXIS] [--base VALUE] [--lat KIND] -o DIR|FILE.html ID…",
	about: `One run: its charts, steps, errors, environment and plan, and the statistical diff of the values of
its swept engines, schedulers or other axis (--axis, --base as in iolab compare). Several runs: the compare
page — what differs besides what is compared, the environment and plan differences, each run against the
first (the statistical diff), the charts overlaid, the max IOPS table — then each run's environment and plan.
A run that sweeps rate_iops (or iodepth with --slo) leads with its QoS knee and the table of its points.

-o FILE.html writes one HTML file: the charts are inline SVG drawn by the echarts built into iolab, with no
script, style sheet or font to fetch, so it opens offline and can be attached to a ticket. -o DIR writes
report.html, README.md (the tables in Markdown, each chart as an image), each chart as SVG, PNG at twice its
size (drawn by headless chromium when one is installed; SVG only otherwise) and CSV, each run's steps and the
statistical diff as CSV.

  iolab report 7 -o run7.html
  iolab report 3 5 -o ticket-1234/`,
	flags: func(fs *flag.FlagSet) runFunc {
		dbPath := dbFlag(fs)
		out := fs.String("o", "", "write to `DIR` (a bundle) or FILE.html (one file)")
		axis := fs.String("axis", "", "with one run: the swept `AXIS` whose values the statistical diff compares")
		base := fs.String("base", "", "with one run: the `VALUE` of the axis the others are compared with")
		lat := fs.String("lat", "", "the latency the tables and charts show: `KIND` total (fio's lat), clat or slat, or a traced run's submit, queue, device or completion (default: total for engines or hosts, else clat)")
		return func(ctx context.Context, e *env, args []string) error {
			if len(args) == 0 || *out == "" {
				return e.usage()
			}
			ids, err := diffRunIDs("report", args, report.MaxRuns, *axis != "" || *base != "")
			if err != nil {
				return err
			}
			store, err := openStoreFlag(ctx, e, *dbPath)
			if err != nil {
				return err
			}
			defer store.Close()
			k, err := summary.ParseLatKind(*lat)
			if err != nil {
				return usageError{"report: --lat: " + err.Error()}
			}
			rep, err := report.Build(ctx, store, ids, report.Options{Axis: *axis, Base: *base, Version: fio.Version, Lat: k})
			if err != nil {
				return fmt.Errorf("report: %w", err)
			}
			if strings.HasSuffix(strings.ToLower(*out), ".html") || strings.HasSuffix(strings.ToLower(*out), ".htm") {
				return writeReportFile(e, rep, *out)
			}
			b, err := rep.WriteBundle(ctx, *out, report.BundleOptions{})
			if err != nil {
				return fmt.Errorf("report: %w", err)
			}
			fmt.Fprintf(e.stdout, "wrote %d files to %s: %s\n", len(b.Files), *out, strings.Join(b.Files, ", "))
			if b.NoPNG != "" {
				fmt.Fprintf(e.stderr, "iolab report: no PNGs: %s\n", b.NoPNG)
			}
			return nil
		}
	},
}

// writeReportFile writes the HTML report to path, through a temporary
// file so that a failure leaves no half report.
func writeReportFile(e *env, rep *report.Report, path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".iolab-report-*")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	defer os.Remove(f.Name())
	if err := rep.WriteHTML(f); err != nil {
		f.Close()
		return fmt.Errorf("report: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	fmt.Fprintf(e.stdout, "wrote %s\n", path)
	return nil
}
