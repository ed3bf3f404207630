package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/bench/units"
	"iolab/db"
)

var showCommand = command{
	name:    "show",
	summary: "a stored run: its environment, each step's figures and the summary tables",
	usage:   "[--db FILE] ID",
	flags:   storedRunFlags(showRun),
}

func showRun(ctx context.Context, e *env, store *db.Store, id int64) error {
	stdout := e.stdout
	r, err := store.GetRun(ctx, id)
	if err != nil {
		return err
	}
	steps, err := store.Steps(ctx, id)
	if err != nil {
		return err
	}
	// Names, hosts and errors may come from other machines (imports,
	// pushes): nothing of theirs reaches the terminal unescaped.
	p := units.Printable
	fmt.Fprintf(stdout, "run %d %q: %s\n", r.ID, r.Name, r.Status)
	if r.Error != "" {
		fmt.Fprintf(stdout, "  error: %s\n", p(r.Error))
	}
	fmt.Fprintf(stdout, "  started %s, finished %s\n", fmtTime(r.Started), fmtTime(r.Finished))
	fmt.Fprintf(stdout, "  %s\n", p(r.Host.Summary()))
	for _, t := range r.Targets {
		fmt.Fprintf(stdout, "  target %s: disk %s (%s %s), %s, scheduler %s of [%s], io_poll %v\n", p(t.Path), p(t.Disk), p(t.Driver), p(t.Model),
			fmtGiB(t.Size), p(t.Scheduler), p(strings.Join(t.Schedulers, " ")), t.IOPoll)
	}
	fmt.Fprintf(stdout, "  plan: %s\n", p(r.Plan.Command()))
	for _, in := range r.Plan.Inferred {
		fmt.Fprintf(stdout, "  inferred (not in fio's output): %s\n", p(in.String()))
	}
	for _, n := range r.Plan.Notes {
		fmt.Fprintf(stdout, "  note: %s\n", p(n))
	}
	fmt.Fprintln(stdout)

	if err := writeStepTable(stdout, steps); err != nil {
		return err
	}
	for _, g := range summary.GroupErrors(steps) {
		fmt.Fprintf(stdout, "%s failed: %s\n", g.StepList(), p(g.Error))
	}
	for _, n := range summary.Notes(steps) {
		fmt.Fprintf(stdout, "step %d: %s\n", n.Step, p(n.Text))
	}
	for _, sk := range r.Plan.Skipped {
		fmt.Fprintf(stdout, "left out before the run: %s: %s\n", p(sweep.FormatAxes(sk.Axes)), p(sk.Reason))
	}
	fmt.Fprintln(stdout, "\nEach job's figures are its own (its clones added up); \"total\" adds up jobs that do the same I/O at the same time.")
	fmt.Fprintf(stdout, "A percentile marked ? rests on too few I/Os to be worth reading (p50 needs %d, p99 %d); a saturated job's thread used over %.0f%% of a core, so iolab itself may be the bottleneck.\n",
		hist.ReliableN(50), hist.ReliableN(99), 100*bench.SaturatedCPU)
	fmt.Fprintln(stdout, "us+sy% is busy CPU; iowait is idle time with I/O outstanding (a thread waiting in io_uring_enter shows up there), not work.")
	if len(steps) > 1 {
		fmt.Fprintln(stdout)
		return summary.WriteSummary(stdout, &r.Plan, steps)
	}
	return nil
}

// writeStepTable prints a row per job of each step — each job's own
// rw, bs, iodepth and figures, then their total when they are alike —
// with the step's CPU and disk figures on its first row.
func writeStepTable(w io.Writer, steps []sweep.StepResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "step\taxes\tstatus\tjob\tIOPS\tBW\tclat p50\tclat p99\tus+sy%\thi+si%\tiowait%\tidle%\tCPU/IO\tr/s\tw/s\tr_await\tw_await\taqu-sz\t%util\tflags\t")
	for i := range steps {
		f := summary.FiguresOf(&steps[i])
		if !f.HasResult {
			// A step that did not finish has no figures to show.
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", f.Seq, units.Printable(f.Label), f.Status, strings.Repeat("-\t", 17))
			continue
		}
		perIO := "-"
		if f.PerIO > 0 {
			perIO = f.PerIO.String()
		}
		d := f.Disk
		stepCols := fmt.Sprintf("%.1f\t%.1f\t%.1f\t%.1f\t%s\t%.0f\t%.0f\t%.3f\t%.3f\t%.2f\t%.1f",
			f.Busy, f.IRQ, f.IOWait, f.Idle, perIO, d.ReadsPerSec, d.WritesPerSec, d.ReadAwait, d.WriteAwait, d.AvgQueueSize, d.Util)
		for k := range f.Jobs {
			j := &f.Jobs[k]
			var flags []string
			if j.Saturated {
				flags = append(flags, fmt.Sprintf("saturated %.0f%%", 100*j.CPU))
			}
			if k == 0 && f.Disturbed != "" {
				flags = append(flags, "disturbed")
			}
			lead, cols := fmt.Sprintf("%d\t%s\t%s", f.Seq, units.Printable(f.Label), f.Status), stepCols
			if k > 0 {
				lead, cols = "\t\t", strings.Repeat("\t", 10)
			}
			fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.1fMiB/s\t%s\t%s\t%s\t%s\t\n", lead, showJob(j), j.IOPS, j.BWMiB,
				showPercentile(j, 50, j.P50), showPercentile(j, 99, j.P99), cols, strings.Join(flags, ", "))
		}
	}
	return tw.Flush()
}

// showJob names a job with what it ran: "fg-reader randread 4k iodepth 1".
func showJob(j *summary.JobFigures) string {
	return units.Printable(strings.TrimSpace(j.Name + " " + j.Options()))
}

// showPercentile writes a job's percentile p, marked ? when too few I/Os
// back it.
func showPercentile(j *summary.JobFigures, p float64, v time.Duration) string {
	if j.IOs == 0 {
		return "-"
	}
	if !j.Reliable(p) {
		return v.String() + "?"
	}
	return v.String()
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

func fmtGiB(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }
