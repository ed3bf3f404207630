package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/system"
)

var calibrateCommand = command{
	name:    "calibrate",
	summary: "run fio and iolab with the same options, alternating, and compare what they measure",
	usage:   "[--rounds N] [--output-format FORMAT] [--fio PATH] [fio options…] | --matrix [--targets …] [--engines …] [--depths …] [--numjobs …]",
	about: `Every argument but calibrate's own flags goes to both fio and iolab unchanged (the fio options are
listed by iolab help run). It prints per direction the median IOPS, clat p50 and p99 and mean lat of
each, and their ratio.

  iolab calibrate --rounds 3 --name=cal --filename=/dev/zram0 --rw=randread --bs=4k --iodepth=1 \
                  --ioengine=io_uring --direct=1 --runtime=3 --time_based --size=1g

With --matrix it runs the table BENCHMARKS.md is made from: a 4 KiB random read on each target ×
engine × iodepth × numjobs, fio and iolab as child processes alternating (default 5 rounds), and prints per row
the median iolab/fio IOPS ratio with its bootstrap 95 % interval (rows whose interval holds 1 are
ties), both tools' IOPS, clat p50 and mean latency, and CPU time per I/O (user + system of each
process, io_uring's workers included, less that of a one-I/O run of the same job: start-up and exit),
with the CPU ratio's median and interval; under the table, the rows where iolab did at least fio's
IOPS for at most its CPU per I/O, naming the others. Each tool runs in a session of its own, as fio's
job processes do. Targets zram, zram-empty and loop are set up for the run and removed after:
/dev/zram0 filled with 512 MiB of random data (it must be unused: each read decompresses a page), a
zram device of its own whose 512 MiB were never written (each read returns zeros at once: what is
left is the engine's and the kernel's own cost per I/O), and a direct-I/O loop device over a
1 GiB file of random data (in /dev/shm when it is a tmpfs: a disk the host shares with other tenants
would add their noise to the engines' differences; --dir puts it elsewhere); NAME=PATH adds a device
of yours, which is only read.

  iolab calibrate --matrix --markdown matrix.md
  iolab calibrate --matrix --targets loop,nvme=/dev/nvme0n1 --engines io_uring --depths 1,32`,
	fioArgs: true,
	flags: func(fs *flag.FlagSet) runFunc {
		var rounds optionalInt
		fs.Var(&rounds, "rounds", "`N` rounds of a pair, fio and iolab taking turns going first (default 3; 5 with --matrix)")
		format := fs.String("output-format", "normal", "the output's `FORMAT`: normal (with --matrix: Markdown), or json for scripts")
		fioPath := fs.String("fio", "fio", "the fio binary: a `PATH`, or a name looked up in $PATH")
		matrix := fs.Bool("matrix", false, "run the calibration matrix (targets × engines × iodepths) instead of one job")
		targets := fs.String("targets", "zram,zram-empty,loop", "with --matrix: the `LIST` of targets: zram, zram-empty, loop, NAME=PATH")
		engines := fs.String("engines", "io_uring,libaio,psync", "with --matrix: the `LIST` of engines")
		depths := fs.String("depths", "1,8,32", "with --matrix: the `LIST` of iodepths (sync engines run at 1 only)")
		numJobs := fs.String("numjobs", "1,4,16", "with --matrix: the `LIST` of numjobs (fio's: clones of the job, their figures together)")
		runtime := fs.Duration("duration", 3*time.Second, "with --matrix: each run's `DURATION` (fio's runtime)")
		markdown := fs.String("markdown", "", "with --matrix: also write the Markdown table to `FILE`")
		cpus := fs.String("cpus", "", "with --matrix: run every job of both tools with fio's cpus_allowed=`CPUS` (e.g. 1): without it the scheduler places the job and its workers, which on a VM decides much of a run's speed")
		dir := fs.String("dir", "", "with --matrix: the `DIR` for the loop target's backing file (default /dev/shm when it is a tmpfs with 2 GiB free, else "+os.TempDir()+")")
		return func(ctx context.Context, e *env, job []string) error {
			if !*matrix {
				n := rounds.or(3)
				return calibrate(ctx, e.runner, n, *format, *fioPath, job, e.stdout, e.stderr)
			}
			if len(job) > 0 {
				return usageError{fmt.Sprintf("calibrate --matrix runs its own jobs: drop %q (choose targets, engines and depths with --targets, --engines, --depths)", job[0])}
			}
			n := rounds.or(5)
			m := matrixOptions{rounds: n, format: *format, fio: *fioPath, targets: splitList(*targets), engines: splitList(*engines),
				runtime: *runtime, markdown: *markdown, dir: *dir, cpus: *cpus}
			if m.dir == "" {
				m.dir = defaultLoopDir()
			}
			for _, d := range splitList(*depths) {
				v, err := strconv.Atoi(d)
				if err != nil || v < 1 || v > 65536 {
					return usageError{fmt.Sprintf("calibrate: --depths %q: want whole numbers from 1 to 65536", d)}
				}
				m.depths = append(m.depths, v)
			}
			for _, d := range splitList(*numJobs) {
				v, err := strconv.Atoi(d)
				if err != nil || v < 1 || v > 256 {
					return usageError{fmt.Sprintf("calibrate: --numjobs %q: want whole numbers from 1 to 256", d)}
				}
				m.numJobs = append(m.numJobs, v)
			}
			return calibrateMatrix(ctx, m, e.stdout, e.stderr)
		}
	},
}

type matrixOptions struct {
	rounds           int
	format, fio      string
	targets, engines []string
	depths, numJobs  []int
	runtime          time.Duration
	markdown, dir    string
	cpus             string
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

func splitList(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// calibrateMatrix sets the targets up, runs the matrix and takes the
// targets down again, whatever happened.
func calibrateMatrix(ctx context.Context, m matrixOptions, stdout, stderr io.Writer) (err error) {
	if m.format != "normal" && m.format != "json" {
		return usageError{fmt.Sprintf("calibrate: --output-format=%q: use normal or json", m.format)}
	}
	if m.rounds < 1 || m.rounds > 100 {
		return usageError{"calibrate: --rounds: from 1 to 100"}
	}
	if m.runtime < 100*time.Millisecond || m.runtime > time.Hour {
		return usageError{"calibrate: --duration: from 100ms to 1h"}
	}
	if m.cpus != "" {
		if err := fio.CheckCPUList(m.cpus); err != nil {
			return usageError{fmt.Sprintf("calibrate: --cpus: %v", err)}
		}
	}
	if len(m.targets) == 0 || len(m.engines) == 0 || len(m.depths) == 0 || len(m.numJobs) == 0 {
		return usageError{"calibrate: --targets, --engines, --depths and --numjobs each need at least one value"}
	}
	for _, eng := range m.engines {
		if _, ok := bench.LookupEngine(eng); !ok {
			return usageError{fmt.Sprintf("calibrate: --engines: no engine %q", eng)}
		}
	}
	fioBin, err := exec.LookPath(m.fio)
	if err != nil {
		return fmt.Errorf("calibrate: fio (%s) is not installed: %w; install it (apt-get install fio) or give --fio PATH", m.fio, err)
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("calibrate: finding iolab's own binary: %w", err)
	}
	version, _ := exec.Command(fioBin, "--version").Output()
	spec := fio.MatrixSpec{Engines: m.engines, Depths: m.depths, NumJobs: m.numJobs, Rounds: m.rounds, Runtime: m.runtime,
		Fio: []string{fioBin}, Iolab: []string{self, "run", "--no-save"}, CPUsAllowed: m.cpus}
	spec.Command = fmt.Sprintf("iolab calibrate --matrix --rounds %d --duration %s --targets %s --engines %s --depths %s",
		m.rounds, m.runtime, strings.Join(m.targets, ","), strings.Join(m.engines, ","), joinInts(m.depths))
	if !slices.Equal(m.numJobs, []int{1}) {
		spec.Command += " --numjobs " + joinInts(m.numJobs)
	}
	if m.cpus != "" {
		spec.Command += " --cpus " + m.cpus
	}
	if host, err := (system.FS{}).Host(); err == nil {
		spec.Machine = host.Summary() + ", iolab's timer " + bench.ClockSource() + " (" + bench.ClockWhy() + ")"
	}
	sizes := map[string]int64{"zram": 512 << 20, "zram-empty": 512 << 20, "loop": 1 << 30}
	for _, t := range m.targets {
		fmt.Fprintf(stderr, "setting up %s\n", t)
		tg, serr := setUpTarget(t, m.dir, sizes[t])
		if serr != nil {
			err = serr
			break
		}
		defer func() {
			if cerr := tg.cleanup(); cerr != nil {
				err = errors.Join(err, fmt.Errorf("calibrate: taking %s down: %w", tg.Name, cerr))
			}
		}()
		spec.Targets = append(spec.Targets, tg.MatrixTarget)
	}
	if err != nil {
		return err
	}
	rows, err := fio.Matrix(ctx, spec, stderr)
	if err != nil {
		return err
	}
	if m.markdown != "" {
		var b strings.Builder
		if err := fio.WriteMatrixMarkdown(&b, spec, strings.TrimSpace(string(version)), rows); err != nil {
			return err
		}
		if err := os.WriteFile(m.markdown, []byte(b.String()), 0o644); err != nil {
			return fmt.Errorf("calibrate: --markdown: %w", err)
		}
	}
	if m.format == "json" {
		return fio.WriteMatrixJSON(stdout, rows)
	}
	return fio.WriteMatrixMarkdown(stdout, spec, strings.TrimSpace(string(version)), rows)
}

func calibrate(ctx context.Context, runner *bench.Runner, rounds int, format, fioPath string, job []string, stdout, stderr io.Writer) error {
	if format != "normal" && format != "json" {
		return usageError{fmt.Sprintf("calibrate: --output-format=%q: use normal or json", format)}
	}
	cal, err := fio.Calibrate(ctx, runner, fioPath, job, rounds, stderr)
	if err != nil {
		return err
	}
	if format == "json" {
		return cal.WriteJSON(stdout)
	}
	return cal.WriteText(stdout)
}

// optionalInt is an integer flag whose default depends on other flags:
// unset, or what was given.
type optionalInt struct {
	n   int
	set bool
}

func (o *optionalInt) String() string {
	if o == nil || !o.set {
		return ""
	}
	return strconv.Itoa(o.n)
}

func (o *optionalInt) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("want a whole number")
	}
	o.n, o.set = n, true
	return nil
}

func (o *optionalInt) or(def int) int {
	if o.set {
		return o.n
	}
	return def
}
