// Command iolab is a Linux block-I/O lab: it runs fio-style benchmarks with
// its own in-process io_uring, libaio, psync and null engines.
//
//	iolab run [fio options…] [jobfile…]     run jobs, print fio-style results
//	iolab calibrate [--rounds N] [--output-format=json] [fio options…]
//	                                        run fio and iolab side by side
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/hist"
	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"
	"iolab/handlers"

	"github.com/labstack/echo/v4"
	"golang.org/x/sys/unix"
)

const usage = `usage:
  iolab [serve] [--listen 127.0.0.1:8080] [--db PATH] [--token T] [--allow-target PATH]… [--data-dir DIR]
      The dashboard: launch runs, watch them live, charts, compare, CSV, JSON API.
  iolab run [run flags] [fio options…] [jobfile…]
      Run fio jobs with iolab's own engines (io_uring, libaio, psync, null).
      Options use fio's names and units, e.g.
        iolab run --name=t --filename=/dev/zram0 --rw=randread --bs=4k \
                  --iodepth=32 --ioengine=io_uring --direct=1 --runtime=5 --time_based
      --output-format=normal|json|json+  --output=FILE
      Run flags:
        --sweep AXIS=v1,v2,…   repeatable; axes iodepth, ioengine, scheduler, numjobs, bs, rw;
                               ranges like iodepth=1..256 (powers of two); engine variants
                               io_uring, io_uring+hipri, io_uring+sqpoll, io_uring+sqpoll+hipri,
                               io_uring+fixedbufs, libaio, psync
        --repeat N             run every step N times
        --preset NAME          start from a preset (see iolab presets); needs --filename
        --discard              BLKDISCARD block targets before each step
        --drop-caches          sync and drop the page cache before each step
        --allow-disk-scheduler let a scheduler sweep switch the disk under a file target
        --db PATH              the run store (default $XDG_DATA_HOME/iolab/iolab.db)
        --no-save              do not store the run
        --tag TAG              tag the stored run (repeatable)
        --push URL             send the finished run to the dashboard at URL
        --push-token T         the dashboard's token for --push (default $IOLAB_TOKEN)
  iolab runs [--db PATH]               stored runs, newest first
  iolab show [--db PATH] ID            a run's environment, steps and summary
  iolab export [--db PATH] ID          a run as a self-contained JSON document
  iolab import [--db PATH] [--host H] [--kernel K] [--label L]… [--name N] FILE…
                                       store iolab exports or fio JSON (json, json+) as runs;
                                       prints each run's id (the existing one if already there)
  iolab push [--db PATH] [--token T] ID URL
                                       send a stored run to the dashboard at URL
  iolab presets                        the experiments' presets
  iolab calibrate [--rounds N] [--output-format=json] [--fio PATH] [fio options…]
      Run fio and iolab with the same options, alternating, and compare
      median IOPS and clat p50/p99 per direction.
`

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "iolab: %v\n", err)
	}
	os.Exit(exitCode(err))
}

// exitCode is 0 on success, 2 for a bad command line or job option (as
// fio), and 1 for anything that went wrong while running.
func exitCode(err error) int {
	var oe *bench.OptionError
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &oe), errors.As(err, &ue):
		return 2
	}
	return 1
}

// usageError is a bad command line outside the job options.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		args = []string{"serve"}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	runner := &bench.Runner{Sys: system.FS{}, Log: logger}

	switch args[0] {
	case "serve":
		return serve(ctx, args[1:], stdout, stderr, logger)
	case "run":
		return runJobs(ctx, runner, args[1:], stdout, stderr)
	case "calibrate":
		return calibrate(ctx, runner, args[1:], stdout, stderr)
	case "runs":
		return listRuns(ctx, args[1:], stdout, stderr)
	case "show":
		return showRun(ctx, args[1:], stdout, stderr)
	case "export":
		return exportRun(ctx, args[1:], stdout, stderr)
	case "presets":
		return listPresets(stdout)
	// Import and push (issue 5): push.go.
	case "import":
		return importRuns(ctx, args[1:], stdout, stderr)
	case "push":
		return pushRunCmd(ctx, args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return usageError{fmt.Sprintf("unknown command %q", args[0])}
}

// runOptions are `iolab run`'s own flags; every other argument is a fio
// option or a job file.
type runOptions struct {
	sweeps             stringList
	tags               stringList
	repeat             int
	preset             string
	dbPath             string
	noSave             bool
	discard            bool
	dropCaches         bool
	allowDiskScheduler bool
	push               string // dashboard URL to push the finished run to
	pushToken          string
}

type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, " ") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// splitOwn separates a command's own flags (names, with whether they take
// a value) from the fio options and job files around them.
func splitOwn(args []string, names map[string]bool) (own, rest []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasValue := cut(a)
		takesValue, ok := names[strings.TrimLeft(name, "-")]
		if !ok || !strings.HasPrefix(a, "-") {
			rest = append(rest, a)
			continue
		}
		own = append(own, a)
		if takesValue && !hasValue && i+1 < len(args) {
			own = append(own, args[i+1])
			i++
		}
	}
	return own, rest
}

func runJobs(ctx context.Context, runner *bench.Runner, args []string, stdout, stderr io.Writer) error {
	var o runOptions
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Var(&o.sweeps, "sweep", "AXIS=v1,v2,… (repeatable): iodepth, ioengine, scheduler, numjobs, bs, rw")
	fs.Var(&o.tags, "tag", "a tag for the stored run (repeatable)")
	fs.IntVar(&o.repeat, "repeat", 0, "run every step N times")
	fs.StringVar(&o.preset, "preset", "", "start from a preset (iolab presets)")
	fs.StringVar(&o.dbPath, "db", "", "the run store (default $XDG_DATA_HOME/iolab/iolab.db)")
	fs.BoolVar(&o.noSave, "no-save", false, "do not store the run")
	fs.BoolVar(&o.discard, "discard", false, "BLKDISCARD block targets before each step")
	fs.BoolVar(&o.dropCaches, "drop-caches", false, "drop the page cache before each step")
	fs.BoolVar(&o.allowDiskScheduler, "allow-disk-scheduler", false, "let a scheduler sweep switch the disk under a file target")
	fs.StringVar(&o.push, "push", "", "send the finished run to the dashboard at URL")
	fs.StringVar(&o.pushToken, "push-token", os.Getenv("IOLAB_TOKEN"), "the dashboard's token for --push")
	own, fioArgs := splitOwn(args, map[string]bool{"sweep": true, "tag": true, "repeat": true, "preset": true, "db": true,
		"no-save": false, "discard": false, "drop-caches": false, "allow-disk-scheduler": false,
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

	var store *db.Store
	if !o.noSave {
		if store, err = openStore(ctx, o.dbPath, runner, stderr); err != nil {
			return err
		}
		defer store.Close()
	}
	// Nothing is stored for a plan that cannot run at all.
	if err := sweep.Check(runner, plan); err != nil {
		return err
	}
	rec, err := handlers.NewRunRecord(plan, runner, o.tags)
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
	prog := newProgress(stderr, runner, steps)
	defer prog.stop()
	results, status, runErr := handlers.ExecutePlan(ctx, store, runner, rec.ID, plan,
		sweep.PlanHooks{StepStarted: prog.step, StepDone: func(res *sweep.StepResult) error { prog.done(res); return nil }})
	prog.stop()
	werr := writeResults(out, plan, results)
	if store != nil {
		fmt.Fprintf(stderr, "iolab: run %d %s; see it with: iolab show %d\n", rec.ID, status, rec.ID)
	}
	if runErr == nil && status == db.StatusFailed {
		runErr = handlers.FailedSteps(results)
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
	plan := &sweep.Plan{Repeat: 1, Discard: o.discard, DropCaches: o.dropCaches, AllowDiskScheduler: o.allowDiskScheduler}
	if o.preset != "" {
		p, err := sweep.PresetByName(o.preset)
		if err != nil {
			return nil, usageError{err.Error()}
		}
		filename, overrides := "", []string(nil)
		for i := 0; i < len(fioArgs); i++ {
			name, value, hasValue := cut(fioArgs[i])
			if name == "--filename" {
				if !hasValue && i+1 < len(fioArgs) {
					value = fioArgs[i+1]
					i++
				}
				filename = value
				continue
			}
			overrides = append(overrides, fioArgs[i])
		}
		if filename == "" {
			return nil, usageError{fmt.Sprintf("--preset %s needs --filename=TARGET", p.Name)}
		}
		fioArgs = p.Args(filename, overrides)
		plan.Name, plan.Preset = p.Name, p.Name
		plan.Sweeps = append(plan.Sweeps, p.Sweeps...)
		plan.Repeat = max(p.Repeat, 1)
		plan.Discard = plan.Discard || p.Discard
		plan.DropCaches = plan.DropCaches || p.DropCaches
	}
	for _, s := range o.sweeps {
		sw, err := sweep.ParseSweep(s)
		if err != nil {
			return nil, err
		}
		// A sweep on the command line replaces a preset's on that axis.
		plan.Sweeps = slices.DeleteFunc(plan.Sweeps, func(x sweep.Sweep) bool { return x.Axis == sw.Axis })
		plan.Sweeps = append(plan.Sweeps, sw)
	}
	if o.repeat < 0 {
		return nil, usageError{"--repeat must be at least 1"}
	}
	if o.repeat > 0 {
		plan.Repeat = o.repeat
	}
	cfg, err := fio.ParseArgs(fioArgs)
	if err != nil {
		return nil, err
	}
	plan.Args = fioArgs
	plan.Base = *cfg
	if plan.Name == "" && len(cfg.Jobs) > 0 {
		plan.Name = cfg.Jobs[0].Name
	}
	return plan, nil
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

// openStore opens the run store and puts back any I/O scheduler that a run
// killed halfway left switched.
func openStore(ctx context.Context, path string, runner *bench.Runner, stderr io.Writer) (*db.Store, error) {
	if path == "" {
		var err error
		if path, err = db.DefaultPath(); err != nil {
			return nil, err
		}
	}
	store, err := db.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	logger := runner.Log
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	if err := handlers.RestoreSchedulers(ctx, store, runner, logger); err != nil {
		store.Close()
		return nil, err
	}
	return store, nil
}

func calibrate(ctx context.Context, runner *bench.Runner, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rounds := fs.Int("rounds", 3, "rounds of fio + iolab")
	format := fs.String("output-format", "normal", "normal or json")
	fioPath := fs.String("fio", "fio", "the fio binary")
	// Everything but calibrate's own flags goes to both tools unchanged.
	own, job := splitOwn(args, map[string]bool{"rounds": true, "output-format": true, "fio": true})
	if err := fs.Parse(own); err != nil {
		return usageError{err.Error()}
	}
	if *format != "normal" && *format != "json" {
		return usageError{fmt.Sprintf("calibrate: --output-format=%q: use normal or json", *format)}
	}
	cal, err := fio.Calibrate(ctx, runner, *fioPath, job, *rounds, stderr)
	if err != nil {
		return err
	}
	if *format == "json" {
		return cal.WriteJSON(stdout)
	}
	return cal.WriteText(stdout)
}

func cut(arg string) (name, value string, ok bool) {
	for i := range len(arg) {
		if arg[i] == '=' {
			return arg[:i], arg[i+1:], true
		}
	}
	return arg, "", false
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// progress shows a plan's progress on stderr: on a terminal one line
// redrawn every second (step n/m, its axes, current IOPS, time left);
// otherwise a line as each step starts and ends.
type progress struct {
	w        io.Writer
	tty      bool
	runner   *bench.Runner
	steps    []sweep.Step
	mu       sync.Mutex
	cur      *sweep.Step
	started  time.Time
	quit     chan struct{}
	stopOnce sync.Once
}

func newProgress(w io.Writer, runner *bench.Runner, steps []sweep.Step) *progress {
	p := &progress{w: w, runner: runner, steps: steps, quit: make(chan struct{})}
	if f, ok := w.(*os.File); ok {
		_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
		p.tty = err == nil
	}
	if p.tty {
		go p.loop()
	}
	return p
}

func (p *progress) step(st *sweep.Step, total int) {
	p.mu.Lock()
	p.cur, p.started = st, time.Now()
	p.mu.Unlock()
}

func (p *progress) done(res *sweep.StepResult) {
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K")
	}
	if len(p.steps) == 1 && res.Status == sweep.StepDone {
		return
	}
	line := fmt.Sprintf("step %d/%d %s: %s", res.Step.Seq+1, len(p.steps), &res.Step, res.Status)
	if res.Result != nil {
		iops, _ := res.Result.Totals()
		line += fmt.Sprintf(", %.0f IOPS", iops)
	}
	if res.Error != "" {
		line += ": " + res.Error
	}
	fmt.Fprintln(p.w, line)
}

func (p *progress) loop() {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last := p.runner.CompletedIOs()
	for {
		select {
		case <-p.quit:
			return
		case <-tick.C:
		}
		now := p.runner.CompletedIOs()
		iops := now - last
		last = now
		p.mu.Lock()
		st, started := p.cur, p.started
		p.mu.Unlock()
		if st == nil {
			continue
		}
		left := ""
		var remaining time.Duration
		known := true
		for i := st.Seq; i < len(p.steps); i++ {
			d, ok := handlers.StepLength(&p.steps[i])
			if !ok {
				known = false
				break
			}
			remaining += d
		}
		if known {
			remaining -= time.Since(started)
			left = fmt.Sprintf(", %s left", max(remaining, 0).Round(time.Second))
		}
		fmt.Fprintf(p.w, "\r\033[Kstep %d/%d %s: %d IOPS%s", st.Seq+1, len(p.steps), st, iops, left)
	}
}

func (p *progress) stop() {
	p.stopOnce.Do(func() { close(p.quit) })
}

// storeFromArgs opens the store named by a command's --db flag.
func storeFromArgs(ctx context.Context, name string, args []string, stderr io.Writer) (*db.Store, []string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("db", "", "the run store (default $XDG_DATA_HOME/iolab/iolab.db)")
	if err := fs.Parse(args); err != nil {
		return nil, nil, usageError{err.Error()}
	}
	store, err := openStore(ctx, *path, &bench.Runner{Sys: system.FS{}}, stderr)
	if err != nil {
		return nil, nil, err
	}
	return store, fs.Args(), nil
}

func runID(args []string, cmd string) (int64, error) {
	if len(args) != 1 {
		return 0, usageError{fmt.Sprintf("usage: iolab %s [--db PATH] ID", cmd)}
	}
	id, err := strconv.ParseInt(args[0], 10, 64)
	if err != nil || id < 1 {
		return 0, usageError{fmt.Sprintf("iolab %s: %q is not a run id (see iolab runs)", cmd, args[0])}
	}
	return id, nil
}

func listRuns(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	store, _, err := storeFromArgs(ctx, "runs", args, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	runs, err := store.ListRuns(ctx, db.RunFilter{})
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tWHEN\tSTATUS\tNAME\tHOST\tKERNEL\tTARGET\tENGINES\tSTEPS")
	for _, r := range runs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", r.ID, r.Created.Local().Format("2006-01-02 15:04"), r.Status, r.Name,
			r.Hostname, r.Kernel, r.Target, strings.Join(r.Engines, ","), r.Steps)
	}
	return tw.Flush()
}

func showRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	store, rest, err := storeFromArgs(ctx, "show", args, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	id, err := runID(rest, "show")
	if err != nil {
		return err
	}
	r, err := store.GetRun(ctx, id)
	if err != nil {
		return err
	}
	steps, err := store.Steps(ctx, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "run %d %q: %s\n", r.ID, r.Name, r.Status)
	if r.Error != "" {
		fmt.Fprintf(stdout, "  error: %s\n", r.Error)
	}
	fmt.Fprintf(stdout, "  started %s, finished %s\n", fmtTime(r.Started), fmtTime(r.Finished))
	h := r.Host
	fmt.Fprintf(stdout, "  host %s, kernel %s, %d× %s, %s memory, IOMMU %s\n", h.Hostname, h.KernelRelease, h.CPUCount, h.CPUModel,
		fmtGiB(h.MemTotal), h.IOMMU.Mode)
	for _, t := range r.Targets {
		fmt.Fprintf(stdout, "  target %s: disk %s (%s %s), %s, scheduler %s of [%s], io_poll %v\n", t.Path, t.Disk, t.Driver, t.Model,
			fmtGiB(t.Size), t.Scheduler, strings.Join(t.Schedulers, " "), t.IOPoll)
	}
	fmt.Fprintf(stdout, "  plan: %s\n\n", handlers.PlanCommand(&r.Plan))

	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "step\taxes\tstatus\tIOPS\tBW\tclat p50\tclat p99\tus+sy%\thi+si%\tiowait%\tidle%\tCPU/IO\tr/s\tw/s\tr_await\tw_await\taqu-sz\t%util\t")
	for i := range steps {
		s := &steps[i]
		var iops, bw float64
		var ios uint64
		var clat hist.Histogram
		var disk system.DiskUtilization
		if s.Result != nil {
			for _, g := range s.Result.Groups {
				for j := range g.Jobs {
					job := &g.Jobs[j]
					for d := range 2 {
						iops += job.IOPS(d)
						bw += job.BW(d)
						ios += job.Dirs[d].IOs
						clat.Merge(&job.Dirs[d].Clat.Hist)
					}
				}
				if len(g.Disks) > 0 {
					disk = g.Disks[0]
				}
			}
		}
		p := clat.Percentiles([]float64{50, 99})
		perIO := "-"
		if ios > 0 {
			perIO = (time.Duration(float64(s.Proc.User+s.Proc.System) / float64(ios))).String()
		}
		c := s.CPU
		fmt.Fprintf(tw, "%d\t%s\t%s\t%.0f\t%.1fMiB/s\t%s\t%s\t%.1f\t%.1f\t%.1f\t%.1f\t%s\t%.0f\t%.0f\t%.3f\t%.3f\t%.2f\t%.1f\t\n",
			s.Step.Seq+1, &s.Step, s.Status, iops, bw/(1<<20), time.Duration(p[0]), time.Duration(p[1]),
			c.User+c.System, c.IRQ+c.SoftIRQ, c.IOWait, c.Idle, perIO,
			disk.ReadsPerSec, disk.WritesPerSec, disk.ReadAwait, disk.WriteAwait, disk.AvgQueueSize, disk.Util)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range steps {
		if s.Error != "" {
			fmt.Fprintf(stdout, "step %d: %s\n", s.Step.Seq+1, s.Error)
		}
	}
	fmt.Fprintln(stdout, "\nus+sy% is busy CPU; iowait is idle time with I/O outstanding (a thread waiting in io_uring_enter shows up there), not work.")
	if len(steps) > 1 {
		fmt.Fprintln(stdout)
		return summary.WriteSummary(stdout, &r.Plan, steps)
	}
	return nil
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

func fmtGiB(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }

func exportRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	store, rest, err := storeFromArgs(ctx, "export", args, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	id, err := runID(rest, "export")
	if err != nil {
		return err
	}
	doc, err := store.Export(ctx, id)
	if err != nil {
		return err
	}
	return writeJSON(stdout, doc)
}

func listPresets(stdout io.Writer) error {
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for _, p := range sweep.Presets() {
		fmt.Fprintf(tw, "%s\t%s\n", p.Name, p.Description)
	}
	fmt.Fprintln(tw, "\nuse: iolab run --preset NAME --filename TARGET [fio options that override the preset's]")
	return tw.Flush()
}

// serve starts the dashboard: the HTTP server over the same store the CLI
// uses; on SIGINT/SIGTERM it shuts down in order — HTTP server, the running
// plan (its step cancelled, its scheduler restored, the run marked
// cancelled), the store.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer, logger *slog.Logger) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "127.0.0.1:8080", "address to listen on")
	dbPath := fs.String("db", "", "the run store (default $XDG_DATA_HOME/iolab/iolab.db)")
	token := fs.String("token", "", "token for launching, cancelling and deleting (default: generated when not on loopback)")
	readToken := fs.Bool("read-token", false, "require the token for reading too")
	dataDir := fs.String("data-dir", "", "directory whose files web runs may use as targets (default: next to the store)")
	var allow stringList
	fs.Var(&allow, "allow-target", "a device or file web runs may use (repeatable)")
	if err := fs.Parse(args); err != nil {
		return usageError{err.Error()}
	}
	runner := &bench.Runner{Sys: system.FS{}, Log: logger}
	store, err := openStore(ctx, *dbPath, runner, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	if *dataDir == "" {
		path := *dbPath
		if path == "" {
			if path, err = db.DefaultPath(); err != nil {
				return err
			}
		}
		*dataDir = filepath.Join(filepath.Dir(path), "data")
	}
	if err := os.MkdirAll(*dataDir, 0o755); err != nil {
		return fmt.Errorf("--data-dir: %w", err)
	}
	loopback := isLoopback(*listen)
	if *token == "" && !loopback {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		*token = hex.EncodeToString(b)
		fmt.Fprintf(stdout, "token for launching, cancelling and deleting: %s\n", *token)
	}
	srv, err := handlers.New(handlers.Config{
		Store: store, Runner: runner, Token: *token, RequireToken: !loopback, ReadNeedsToken: *readToken,
		AllowTargets: allow, DataDir: *dataDir, Logger: logger,
	})
	if err != nil {
		return err
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	srv.Register(e)
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", *listen, err)
	}
	e.Listener = ln
	fmt.Fprintf(stdout, "iolab dashboard on http://%s/ (store %s, web targets: %s and files under %s)\n",
		ln.Addr(), store.Path(), strings.Join(allow, ", "), *dataDir)
	errc := make(chan error, 1)
	go func() { errc <- e.Start("") }()
	select {
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	return errors.Join(e.Shutdown(shutdown), srv.Shutdown(shutdown))
}

func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// importRuns is `iolab import [--db PATH] [--host H] [--kernel K]
// [--label L]… [--name N] FILE…`: each file is an iolab export or fio's JSON
// output, stored in one transaction each. It prints each run's id.
func importRuns(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbPath := fs.String("db", "", "the run store (default $XDG_DATA_HOME/iolab/iolab.db)")
	var o db.ImportOptions
	var labels stringList
	fs.StringVar(&o.Hostname, "host", "", "the host fio ran on (fio's output does not say)")
	fs.StringVar(&o.Kernel, "kernel", "", "the kernel release fio ran on (uname -r)")
	fs.StringVar(&o.Name, "name", "", "the run's name (default: the first job's)")
	fs.Var(&labels, "label", "a label for the run (repeatable)")
	// Flags may come after the files, as with iolab run.
	own, files := splitOwn(args, map[string]bool{"db": true, "host": true, "kernel": true, "name": true, "label": true})
	if err := fs.Parse(own); err != nil {
		return usageError{err.Error()}
	}
	if len(files) == 0 {
		return usageError{"usage: iolab import [--db PATH] [--host H] [--kernel K] [--label L]… FILE…"}
	}
	o.Labels = labels
	// Read and check every file before opening the store.
	docs := make([]*db.Export, len(files))
	sources := make([]string, len(files))
	for i, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("import %s: %w", f, err)
		}
		if docs[i], sources[i], err = db.ParseImport(data, o); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
	}
	store, err := openStore(ctx, *dbPath, &bench.Runner{Sys: system.FS{}}, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	for i, f := range files {
		id, existed, err := store.ImportRun(ctx, docs[i], sources[i])
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if existed {
			fmt.Fprintf(stderr, "iolab: %s: already imported as run %d\n", filepath.Base(f), id)
		} else {
			fmt.Fprintf(stderr, "iolab: %s: imported as run %d (%s)\n", filepath.Base(f), id, sources[i])
		}
		fmt.Fprintln(stdout, id)
	}
	return nil
}

// pushRunCmd is `iolab push [--db PATH] [--token T] ID URL`.
func pushRunCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("push", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dbPath := fs.String("db", "", "the run store (default $XDG_DATA_HOME/iolab/iolab.db)")
	token := fs.String("token", os.Getenv("IOLAB_TOKEN"), "the dashboard's token (default $IOLAB_TOKEN)")
	own, rest := splitOwn(args, map[string]bool{"db": true, "token": true})
	if err := fs.Parse(own); err != nil {
		return usageError{err.Error()}
	}
	if len(rest) != 2 {
		return usageError{"usage: iolab push [--db PATH] [--token T] ID URL"}
	}
	id, err := runID(rest[:1], "push")
	if err != nil {
		return err
	}
	store, err := openStore(ctx, *dbPath, &bench.Runner{Sys: system.FS{}}, stderr)
	if err != nil {
		return err
	}
	defer store.Close()
	res, err := pushRun(ctx, store, id, rest[1], *token)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, res.describe(rest[1]))
	return nil
}

// pushResult is the dashboard's answer to a push.
type pushResult struct {
	ID       int64  `json:"id"`
	URL      string `json:"url"`
	Existing bool   `json:"existing"`
}

func (p *pushResult) describe(base string) string {
	u := strings.TrimRight(base, "/") + p.URL
	if p.Existing {
		return fmt.Sprintf("already there as run %d: %s", p.ID, u)
	}
	return fmt.Sprintf("pushed as run %d: %s", p.ID, u)
}

// pushRun sends run id's export to the dashboard at base (its
// /api/import).
func pushRun(ctx context.Context, store *db.Store, id int64, base, token string) (*pushResult, error) {
	doc, err := store.Export(ctx, id)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(strings.TrimRight(base, "/") + "/api/import")
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usageError{fmt.Sprintf("push: %q is not a dashboard URL (e.g. http://lab:8080)", base)}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Iolab-Push", "1")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("push run %d to %s: %w", id, base, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		var eb struct {
			Error string `json:"error"`
		}
		msg := strings.TrimSpace(string(answer))
		if json.Unmarshal(answer, &eb) == nil && eb.Error != "" {
			msg = eb.Error
		}
		if resp.StatusCode == http.StatusUnauthorized {
			msg += " (give the dashboard's token with --push-token or --token)"
		}
		return nil, fmt.Errorf("push run %d to %s: %s: %s", id, base, resp.Status, msg)
	}
	var res pushResult
	if err := json.Unmarshal(answer, &res); err != nil || res.ID == 0 {
		return nil, errors.Join(fmt.Errorf("push run %d to %s: unexpected answer %q", id, base, answer), err)
	}
	return &res, nil
}

// pushHint is the command that pushes run id to base later.
func pushHint(dbPath string, id int64, base string) string {
	cmd := "iolab push"
	if dbPath != "" {
		cmd += " --db " + dbPath
	}
	return fmt.Sprintf("%s [--token T] %d %s", cmd, id, base)
}
