package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/launch"
	"iolab/bench/pts"
	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/db"
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
	slo                string
	traceBlock         bool
	on                 onOptions
	pts                *pts.Spec // iolab pts: the test
}

var runCommand = command{
	name:    "run",
	summary: "run fio jobs with iolab's engines; sweeps and repeats with --sweep, --repeat, --preset",
	usage:   "[flags] [fio options…] [jobfile…]",
	about: `Options are fio's names and units, on the command line (--bs=4k) or in job files ([global] and job
sections, as fio reads them); flags and options may come in any order. One job prints fio's normal or
JSON output; a plan of several steps (--sweep, --repeat, --preset) prints a line per step and its summary
tables, and is stored (see iolab show) unless --no-save.

  iolab run --name=t --filename=/dev/zram0 --rw=randread --bs=4k --iodepth=32 \
            --ioengine=io_uring --direct=1 --runtime=5 --time_based
  iolab run --output-format=json+ jobs.fio
  iolab run --sweep iodepth=1..256 --sweep ioengine=libaio,io_uring --repeat 3 --name=w \
            --filename=/dev/nvme0n1 --rw=randwrite --bs=4k --direct=1 --runtime=60 --time_based
  iolab run --preset sched-fairness --filename=/dev/sdb --runtime=10

The exit status is 0 when every step ran, 1 when one failed or the run went wrong, and 2 for a bad
command line, option or plan.`,
	fioArgs: true,
	flags:   runFlags,
	more:    writeRunHelp,
}

// runFlags defines `iolab run`'s own flags; every other argument is a fio
// option or a job file.
func runFlags(fs *flag.FlagSet) runFunc {
	var o runOptions
	fs.Var(&o.sweeps, "sweep", "repeatable: each `AXIS=v1,v2,…` runs the steps at every value of AXIS: an axis below or any fio option iolab takes (--sweep rate_iops=1000,2000); v1;v2 when a value holds a comma (cpus_allowed=0,1;2,3)")
	fs.Var(&o.tags, "tag", "a `TAG` for the stored run (repeatable)")
	fs.StringVar(&o.repeat, "repeat", "", "run every step `N` times; auto[:5%[:10]] repeats until the median is known within 5% (at most 10 times)")
	fs.StringVar(&o.preset, "preset", "", "start from the preset `NAME` (see iolab presets); needs --filename")
	fs.Var((*storePath)(&o.dbPath), "db", storePathUsage)
	fs.BoolVar(&o.noSave, "no-save", false, "do not store the run")
	fs.BoolVar(&o.discard, "discard", false, "BLKDISCARD block targets before each step")
	fs.BoolVar(&o.dropCaches, "drop-caches", false, "sync and drop the page cache before each step")
	fs.BoolVar(&o.allowDiskScheduler, "allow-disk-scheduler", false, "let a scheduler sweep switch the disk under a file target")
	limitFlags(fs, &o.limits)
	fs.StringVar(&o.slo, "slo", "", "the latency objective `pP<LAT` the QoS curve's knee is found under, e.g. p99<1ms (default p99<1ms, or the preset's)")
	fs.BoolVar(&o.traceBlock, "trace-block", false, "split each I/O's latency into its time before, in and after the block layer (submit, queue, device, completion), from the kernel's trace of the targets' bios (block devices, and files through their extents on the disk under them); needs root (docs/trace.md)")
	fs.BoolVar(&o.skipImpossible, "skip-impossible", false, "leave out the steps the targets cannot run (recorded with the run) instead of refusing the plan")
	fs.StringVar(&o.push, "push", "", "send the finished run to the dashboard at `URL`")
	fs.StringVar(&o.pushToken, "push-token", "", "the dashboard's `TOKEN` for --push and --on (default $IOLAB_TOKEN)")
	fs.Var(&o.on.hosts, "on", "run the plan on the dashboard's `HOSTS` (the names of its Hosts page, comma-separated or repeated; local: its own machine) as a group, not here; needs --dashboard")
	fs.BoolVar(&o.on.serial, "serial", false, "with --on: the hosts one after another, not at once (hosts that share a device or a network)")
	fs.StringVar(&o.on.dashboard, "dashboard", "", "the dashboard's `URL` for --on, e.g. http://lab:8080")
	return func(ctx context.Context, e *env, fioArgs []string) error {
		o.pushToken = envDefault(o.pushToken, "IOLAB_TOKEN")
		return runJobs(ctx, e.runner, &o, fioArgs, e.stdout, e.stderr)
	}
}

func runJobs(ctx context.Context, runner *bench.Runner, o *runOptions, fioArgs []string, stdout, stderr io.Writer) error {
	// What fio would print before the jobs run ("Laying out IO file").
	runner.Notice = func(msg string) { fmt.Fprintln(stderr, msg) }
	runner.LogFiles = true // fio writes its log files in the working directory
	if o.push != "" && o.noSave {
		return usageError{"--push needs the run stored: drop --no-save"}
	}
	plan, err := buildPlan(o, fioArgs)
	if err != nil {
		return err
	}
	plan.Base.TraceBlock = plan.Base.TraceBlock || o.traceBlock
	for _, n := range plan.Base.Notes {
		fmt.Fprintf(stderr, "iolab: note: %s\n", n)
	}
	if plan.Base.ParseOnly {
		return nil
	}
	switch {
	case len(o.on.hosts) > 0 && o.on.dashboard == "":
		return usageError{"--on needs --dashboard URL"}
	case len(o.on.hosts) == 0 && (o.on.serial || o.on.dashboard != ""):
		return usageError{"--serial and --dashboard go with --on HOSTS"}
	case len(o.on.hosts) > 0 && o.push != "":
		return usageError{"--on runs the plan on the dashboard's hosts, which store it there: drop --push"}
	case len(o.on.hosts) > 0 && o.traceBlock:
		return usageError{"--trace-block traces this machine's block layer, but --on runs the plan on the dashboard's hosts (agents, fio servers), which cannot trace yet: drop one of them"}
	case len(o.on.hosts) > 0 && plan.Base.StatusInterval > 0:
		return usageError{"--status-interval prints reports here as the jobs run, but --on runs them on the dashboard's hosts: drop it, and follow the run on the dashboard's page"}
	case len(o.on.hosts) > 0:
		return startOnHosts(ctx, plan, &o.on, o.pushToken, stdout)
	}
	var store *db.Store
	if !o.noSave {
		if store, err = openStore(ctx, o.dbPath, runner.Log); err != nil {
			return err
		}
		defer store.Close()
	}
	// Nothing is stored for a plan that cannot run at all.
	prep, err := launch.PreparePlan(plan, runner, launch.Options{Check: launch.CheckTargets, Tags: o.tags})
	if err != nil {
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
	rec := prep.Record
	if store != nil {
		if _, err := store.CreateRun(ctx, rec); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "iolab: run %d\n", rec.ID)
	}

	prog := newProgressLine(stderr, runner, prep.Steps)
	// --status-interval's reports of the running step, before the final one.
	reports := fio.NewStatusReports(out, runner, cfg)
	var recorder launch.Recorder // none with --no-save: a nil *db.Store is not a nil Recorder
	if store != nil {
		recorder = store
	}
	results, status, runErr := launch.Execute(ctx, recorder, runner, rec.ID, prep, launch.Hooks{
		PlanHooks: sweep.PlanHooks{
			StepStarted: func(st *sweep.Step, total int) { prog.step(st, total); reports.Start(&st.Config) },
			StepDone:    func(res *sweep.StepResult) error { reports.Stop(); prog.done(res); return nil },
		},
		Waiting: func(msg string) { fmt.Fprintf(stderr, "iolab: %s\n", msg) },
	})
	prog.stop()
	reports.Stop()
	werr := errors.Join(reports.Err(), writeResults(out, plan, results, reports.Headed()))
	if store != nil {
		fmt.Fprintf(stderr, "iolab: run %d %s; see it with: iolab show %d\n", rec.ID, status, rec.ID)
	}
	if runErr == nil && (status == db.StatusFailed || status == db.StatusPartial) {
		runErr = launch.FailedSteps(results)
	}
	for _, n := range summary.Notes(results) {
		fmt.Fprintf(stderr, "iolab: step %d: %s\n", n.Step, n.Text)
	}
	if plan.PTS != nil {
		writePTSOutcome(out, plan, results)
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
		Limits: o.limits, SLO: o.slo, PTS: o.pts}
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

// writeResults prints a one-step run like fio (normal, JSON, terse, or
// several of them in fio's order) and a sweep as its summary tables (JSON:
// one fio document per step; terse: each step's lines; normal: the
// summary). headed: --status-interval's reports printed the lines fio's
// normal output starts with, which the final report leaves out.
func writeResults(w io.Writer, plan *sweep.Plan, results []sweep.StepResult, headed bool) error {
	cfg := &plan.Base
	var errs []error
	formats := fio.OutputFormats(cfg)
	for fi, format := range formats {
		if format == "normal" && len(results) != 1 {
			errs = append(errs, summary.WriteSummary(w, plan, results))
			continue
		}
		for i := range results {
			r := &results[i]
			res := r.Result
			if res == nil && len(results) == 1 {
				// As fio reports a failed job, with its err=.
				res = r.Unvouched
			}
			if res == nil {
				continue
			}
			if fi == 0 && len(results) == 1 && format != "normal" && slices.Contains(formats, "normal") && !headed {
				// fio prints the job lines before the run, so before
				// the other formats' statistics.
				errs = append(errs, fio.WriteNormalHead(w, res, &r.Step.Config))
			}
			part := fio.NormalWhole
			switch {
			case headed:
				part = fio.NormalAgain
			case len(formats) > 1:
				part = fio.NormalStats
			}
			errs = append(errs, fio.WriteFormat(w, format, res, &r.Step.Config, cmp.Or(cfg.TerseVersion, fio.DefaultTerseVersion), part))
		}
	}
	return errors.Join(errs...)
}

// progressLine shows a plan's progress on stderr: on a terminal one line
// redrawn every second (step n/m, its axes, current IOPS, time left);
// otherwise a line as each step ends.
type progressLine struct {
	w     io.Writer
	tty   bool
	steps []sweep.Step
	prog  *launch.Progress
	// total is the steps the plan has now: more than steps once rounds
	// are added (--repeat auto, a PTS test).
	total int
}

func newProgressLine(w io.Writer, runner *bench.Runner, steps []sweep.Step) *progressLine {
	p := &progressLine{w: w, steps: steps}
	if f, ok := w.(*os.File); ok {
		p.tty = isTerminal(f)
	}
	if p.tty {
		p.prog = launch.NewProgress(runner, steps, time.Second, func(t launch.Tick) {
			left := ""
			if t.LeftKnown {
				left = fmt.Sprintf(", %s left", t.Left.Round(time.Second))
			}
			// Each job's rate when they are unlike, as the dashboard's,
			// and their clat p99 so far when known.
			ev := launch.ProgressEventOf(t, false)
			rate := ev.IOPSText()
			if lat := ev.LatText(); lat != "" {
				rate += ", " + lat
			}
			fmt.Fprintf(p.w, "\r\033[Kstep %d/%d %s: %s%s", t.Step.Seq+1, t.Total, t.Step, rate, left)
		})
	}
	return p
}

func (p *progressLine) step(st *sweep.Step, total int) {
	p.total = max(total, len(p.steps))
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
	line := fmt.Sprintf("step %d/%d %s: %s", res.Step.Seq+1, max(p.total, len(p.steps)), &res.Step, res.Status)
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
