package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/db"
	"iolab/db/launch"
)

// runOptions are `iolab run`'s own flags; every other argument is a fio
// option or a job file.
type runOptions struct {
	sweeps             stringList
	tags               stringList
	repeat             string
	preset             string
	dbPath             string
	noSave             bool
	discard            bool
	dropCaches         bool
	allowDiskScheduler bool
	skipImpossible     bool
	limits             sweep.Limits
	push               string // dashboard URL to push the finished run to
	pushToken          string
}

func runJobs(ctx context.Context, runner *bench.Runner, args []string, stdout, stderr io.Writer) error {
	var o runOptions
	// What fio would print before the jobs run ("Laying out IO file").
	runner.Notice = func(msg string) { fmt.Fprintln(stderr, msg) }
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Var(&o.sweeps, "sweep", "AXIS=v1,v2,… (repeatable): iodepth, ioengine, scheduler, numjobs, bs, rw")
	fs.Var(&o.tags, "tag", "a tag for the stored run (repeatable)")
	fs.StringVar(&o.repeat, "repeat", "", "run every step N times; auto[:5%[:10]] repeats until the median is known within 5% (at most 10 times)")
	fs.StringVar(&o.preset, "preset", "", "start from a preset (iolab presets)")
	fs.Var((*storePath)(&o.dbPath), "db", storePathUsage)
	fs.BoolVar(&o.noSave, "no-save", false, "do not store the run")
	fs.BoolVar(&o.discard, "discard", false, "BLKDISCARD block targets before each step")
	fs.BoolVar(&o.dropCaches, "drop-caches", false, "drop the page cache before each step")
	fs.BoolVar(&o.allowDiskScheduler, "allow-disk-scheduler", false, "let a scheduler sweep switch the disk under a file target")
	limitFlags(fs, &o.limits)
	fs.BoolVar(&o.skipImpossible, "skip-impossible", false, "leave out the steps the targets cannot run (recorded with the run) instead of refusing the plan")
	fs.StringVar(&o.push, "push", "", "send the finished run to the dashboard at URL")
	fs.StringVar(&o.pushToken, "push-token", os.Getenv("IOLAB_TOKEN"), "the dashboard's token for --push")
	own, fioArgs := splitOwn(args, map[string]bool{"sweep": true, "tag": true, "repeat": true, "preset": true, "db": true,
		"max-steps": true, "max-jobs": true, "max-buffers": true, "no-save": false, "discard": false, "drop-caches": false, "allow-disk-scheduler": false, "skip-impossible": false,
		"push": true, "push-token": true})
	if err := fs.Parse(own); err != nil {
		return usageError{err.Error()}
	}
	if o.push != "" && o.noSave {
		return usageError{"--push needs the run stored: drop --no-save"}
	}
	plan, err := buildPlan(&o, fioArgs)
	if err != nil {
		return err
	}
	var store *db.Store
	if !o.noSave {
		if store, err = openStore(ctx, o.dbPath, runner.Log); err != nil {
			return err
		}
		defer store.Close()
	}
	// Nothing is stored for a plan that cannot run at all.
	if err := sweep.Check(runner, plan); err != nil {
		return err
	}
	// The output file is made only once the run can start, so a refused
	// plan or a store that will not open leaves no empty file behind.
	cfg := &plan.Base
	out := stdout
	if cfg.Output != "" {
		f, err := os.Create(cfg.Output)
		if err != nil {
			return fmt.Errorf("--output: %w", err)
		}
		defer f.Close()
		out = f
	}
	rec, err := launch.NewRecord(plan, runner, o.tags)
	if err != nil {
		return err
	}
	if store != nil {
		if _, err := store.CreateRun(ctx, rec); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "iolab: run %d\n", rec.ID)
	}

	steps, err := plan.Steps()
	if err != nil {
		return err
	}
	prog := newProgressLine(stderr, runner, steps)
	results, status, runErr := launch.Execute(ctx, store, runner, rec.ID, plan, launch.Hooks{
		PlanHooks: sweep.PlanHooks{StepStarted: prog.step, StepDone: func(res *sweep.StepResult) error { prog.done(res); return nil }},
		Waiting:   func(msg string) { fmt.Fprintf(stderr, "iolab: %s\n", msg) },
	})
	prog.stop()
	werr := writeResults(out, plan, results)
	if store != nil {
		fmt.Fprintf(stderr, "iolab: run %d %s; see it with: iolab show %d\n", rec.ID, status, rec.ID)
	}
	if runErr == nil && (status == db.StatusFailed || status == db.StatusPartial) {
		runErr = launch.FailedSteps(results)
	}
	for _, n := range summary.Notes(results) {
		fmt.Fprintf(stderr, "iolab: step %d: %s\n", n.Step, n.Text)
	}
	if store != nil && o.push != "" {
		// A failed push keeps the run here; it can be pushed later.
		if res, err := pushRun(context.WithoutCancel(ctx), store, rec.ID, o.push, o.pushToken); err != nil {
			fmt.Fprintf(stderr, "iolab: %v\niolab: run %d is kept here; push it later with: %s\n",
				err, rec.ID, pushHint(o.dbPath, rec.ID, o.push))
		} else {
			fmt.Fprintf(stderr, "iolab: run %d %s\n", rec.ID, res.describe(o.push))
		}
	}
	return errors.Join(runErr, werr)
}

// buildPlan turns the command line into a plan: a preset's jobs, sweeps
// and flags under the user's overrides, or the fio options as given.
func buildPlan(o *runOptions, fioArgs []string) (*sweep.Plan, error) {
	spec := launch.Spec{Preset: o.preset, Args: fioArgs,
		Discard: o.discard, DropCaches: o.dropCaches, AllowDiskScheduler: o.allowDiskScheduler, SkipImpossible: o.skipImpossible,
		Limits: o.limits}
	if o.repeat != "" {
		n, auto, err := sweep.ParseRepeat(o.repeat)
		if err != nil {
			return nil, usageError{err.Error()}
		}
		spec.Repeat, spec.AutoRepeat = n, auto
	}
	for _, s := range o.sweeps {
		sw, err := sweep.ParseSweep(s)
		if err != nil {
			return nil, err
		}
		spec.Sweeps = append(spec.Sweeps, sw)
	}
	return launch.NewPlan(spec)
}

// writeResults prints a one-step run like fio (normal or JSON) and a sweep
// as its summary tables (JSON: one fio document per step).
func writeResults(w io.Writer, plan *sweep.Plan, results []sweep.StepResult) error {
	cfg := &plan.Base
	var errs []error
	if len(results) == 1 || cfg.OutputFormat == "json" || cfg.OutputFormat == "json+" {
		for i := range results {
			r := &results[i]
			if r.Result == nil {
				continue
			}
			switch cfg.OutputFormat {
			case "json", "json+":
				errs = append(errs, writeJSON(w, fio.NewReport(r.Result, &r.Step.Config, cfg.OutputFormat == "json+")))
			default:
				errs = append(errs, fio.WriteNormal(w, r.Result))
			}
		}
		if len(results) == 1 || cfg.OutputFormat != "normal" {
			return errors.Join(errs...)
		}
	}
	return summary.WriteSummary(w, plan, results)
}

// progressLine shows a plan's progress on stderr: on a terminal one line
// redrawn every second (step n/m, its axes, current IOPS, time left);
// otherwise a line as each step ends.
type progressLine struct {
	w     io.Writer
	tty   bool
	steps []sweep.Step
	prog  *launch.Progress
}

func newProgressLine(w io.Writer, runner *bench.Runner, steps []sweep.Step) *progressLine {
	p := &progressLine{w: w, steps: steps}
	if f, ok := w.(*os.File); ok {
		_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
		p.tty = err == nil
	}
	if p.tty {
		p.prog = launch.NewProgress(runner, steps, time.Second, func(t launch.Tick) {
			left := ""
			if t.LeftKnown {
				left = fmt.Sprintf(", %s left", t.Left.Round(time.Second))
			}
			fmt.Fprintf(p.w, "\r\033[Kstep %d/%d %s: %.0f IOPS%s", t.Step.Seq+1, t.Total, t.Step, t.IOPS, left)
		})
	}
	return p
}

func (p *progressLine) step(st *sweep.Step, total int) {
	if p.prog != nil {
		p.prog.StepStarted(st)
	}
}

func (p *progressLine) done(res *sweep.StepResult) {
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	if len(p.steps) == 1 && res.Status == sweep.StepDone {
		return
	}
	line := fmt.Sprintf("step %d/%d %s: %s", res.Step.Seq+1, len(p.steps), &res.Step, res.Status)
	f := summary.FiguresOf(res)
	if t := f.IOPSText(); t != "" {
		line += ", " + t
	}
	if res.Error != "" {
		line += ": " + res.Error
	}
	fmt.Fprintln(p.w, line)
}

func (p *progressLine) stop() {
	if p.prog != nil {
		p.prog.Stop()
	}
}
