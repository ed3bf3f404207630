package fio

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"iolab/bench"
	"iolab/bench/stats"
	"iolab/bench/units"
)

// MatrixSpec is a calibration over targets × engines × iodepths: for each
// cell fio and iolab run the same 4 KiB random read, alternating, Rounds
// times each, both as child processes, so that each is measured the same
// way — its IOPS and latencies from its own json+ report, and its CPU time
// (user + system of every thread of the process, io_uring's io-wq workers
// included) from the kernel's account of the child.
type MatrixSpec struct {
	Targets []MatrixTarget
	Engines []string
	Depths  []int
	// NumJobs are the numjobs of the rows (fio's numjobs: clones of the
	// job, each with its own I/Os, reported together); none is 1.
	NumJobs []int
	Rounds  int
	Runtime time.Duration
	// Fio runs fio; Iolab runs iolab's `run` command: both get the job's
	// fio options appended, and print fio's json+ on stdout.
	Fio, Iolab []string
	// Machine describes where it ran, for the table's heading: the host's
	// summary and iolab's timer.
	Machine string
	// Command is the iolab command line that makes the table, shown
	// above it.
	Command string
	// CPUsAllowed, when set, is fio's cpus_allowed for every job of both
	// tools: the job (and the io-wq workers it starts) runs on those CPUs.
	CPUsAllowed string
}

// MatrixTarget is one device the matrix runs on.
type MatrixTarget struct {
	Name string // as the table shows it: zram, loop
	Path string
	// Desc says what the target is, for the table's heading: "/dev/zram0,
	// 512 MiB of random data".
	Desc string
}

// MatrixRow is one cell of the matrix.
type MatrixRow struct {
	Target string `json:"target"`
	Engine string `json:"engine"`
	Depth  int    `json:"iodepth"`
	Jobs   int    `json:"numjobs"`
	Fio    Sample `json:"fio"`
	Iolab  Sample `json:"iolab"`
	// Ratio is iolab / fio IOPS: the median over the rounds' pairs, and a
	// bootstrap 95 % interval of that median. Tie is set when the
	// interval holds 1.
	Ratio    float64 `json:"iops_ratio"`
	RatioLo  float64 `json:"iops_ratio_lo"`
	RatioHi  float64 `json:"iops_ratio_hi"`
	RatioMin float64 `json:"iops_ratio_min"`
	RatioMax float64 `json:"iops_ratio_max"`
	Tie      bool    `json:"tie"`
	// CPURatio is iolab / fio CPU time per I/O, the median over the
	// rounds' pairs, with its bootstrap 95 % interval; CPUTie is set when
	// the interval holds 1.
	CPURatio   float64 `json:"cpu_per_io_ratio"`
	CPURatioLo float64 `json:"cpu_per_io_ratio_lo"`
	CPURatioHi float64 `json:"cpu_per_io_ratio_hi"`
	CPUTie     bool    `json:"cpu_tie"`
	RoundsPair int     `json:"rounds"`
}

// Meets is the bar issue 14 set a row: a median iolab/fio IOPS ratio of at
// least 1 and a median CPU-per-I/O ratio of at most 1.
func (r MatrixRow) Meets() bool { return r.Ratio >= 1 && r.CPURatio > 0 && r.CPURatio <= 1 }

// Below is true when the row's IOPS interval lies wholly below 1: iolab
// was slower beyond the rounds' spread.
func (r MatrixRow) Below() bool { return r.RatioHi < 1 }

// Sample is one tool's medians over a cell's rounds.
type Sample struct {
	IOPS       float64 `json:"iops"`
	ClatP50NS  float64 `json:"clat_p50_ns"`
	LatMeanNS  float64 `json:"lat_mean_ns"`
	CPUPerIONS float64 `json:"cpu_per_io_ns"`
	// FixedCPUNS is the CPU time of a one-I/O run of the same job: the
	// tool's start-up and exit, taken off each round's CPU time before it
	// is divided by the I/Os.
	FixedCPUNS float64 `json:"fixed_cpu_ns"`

	RoundsIOPS []float64 `json:"rounds_iops"`
	RoundsCPU  []float64 `json:"rounds_cpu_per_io_ns"`
}

// Matrix runs spec, writing a line per run to progress.
func Matrix(ctx context.Context, spec MatrixSpec, progress io.Writer) ([]MatrixRow, error) {
	var rows []MatrixRow
	numJobs := spec.NumJobs
	if len(numJobs) == 0 {
		numJobs = []int{1}
	}
	for _, tg := range spec.Targets {
		for _, eng := range spec.Engines {
			for _, depth := range spec.Depths {
				for _, jobs := range numJobs {
					row, err := matrixRow(ctx, spec, tg, eng, depth, jobs, progress)
					if err != nil {
						return rows, err
					}
					if row.Engine != "" {
						rows = append(rows, row)
					}
				}
			}
		}
	}
	return rows, nil
}

// matrixRow runs one cell of the matrix; a zero row where the cell does
// not exist (a sync engine above iodepth 1).
func matrixRow(ctx context.Context, spec MatrixSpec, tg MatrixTarget, eng string, depth, jobs int, progress io.Writer) (MatrixRow, error) {
	e, ok := bench.LookupEngine(eng)
	if !ok {
		return MatrixRow{}, fmt.Errorf("calibrate: no engine %q", eng)
	}
	if e.Has(bench.SyncIO) && depth > 1 {
		return MatrixRow{}, nil // a sync engine does one I/O at a time
	}
	job := []string{"--name=cal", "--filename=" + tg.Path, "--rw=randread", "--bs=4k", "--direct=1",
		"--ioengine=" + eng, "--iodepth=" + strconv.Itoa(depth), "--numjobs=" + strconv.Itoa(jobs), "--output-format=json+"}
	if spec.CPUsAllowed != "" {
		job = append(job, "--cpus_allowed="+spec.CPUsAllowed)
	}
	args := append(slices.Clip(job), "--time_based", "--runtime="+units.FormatDuration(spec.Runtime))
	row := MatrixRow{Target: tg.Name, Engine: eng, Depth: depth, Jobs: jobs}
	tools := []*matrixTool{{name: "fio", cmd: spec.Fio}, {name: "iolab", cmd: spec.Iolab}}
	// Each tool's start-up and exit, measured on a one-I/O run
	// of the same job, is taken off its CPU time: what is left
	// is the cost of the I/Os.
	one := append(slices.Clip(job), "--size=4k")
	for _, tool := range tools {
		r, err := runChild(ctx, append(slices.Clone(tool.cmd), one...), 0)
		if err != nil {
			return MatrixRow{}, fmt.Errorf("calibrate: %s on %s, one I/O: %w", tool.name, tg.Path, err)
		}
		tool.fixed = r.cpu
	}
	for round := 1; round <= spec.Rounds; round++ {
		for _, tool := range inTurn(round, tools[0], tools[1]) {
			fmt.Fprintf(progress, "%s %s iodepth=%d%s round %d/%d: %s\n", tg.Name, eng, depth, jobsNote(jobs), round, spec.Rounds, tool.name)
			r, err := runChild(ctx, append(slices.Clone(tool.cmd), args...), tool.fixed)
			if err != nil {
				return MatrixRow{}, fmt.Errorf("calibrate: %s on %s: %w", tool.name, tg.Path, err)
			}
			tool.runs = append(tool.runs, r)
		}
	}
	fioRuns, iolabRuns := tools[0].runs, tools[1].runs
	row.Fio, row.Iolab = summarise(fioRuns), summarise(iolabRuns)
	row.Fio.FixedCPUNS, row.Iolab.FixedCPUNS = float64(tools[0].fixed), float64(tools[1].fixed)
	var ratios, cpuRatios []float64
	for i := range fioRuns {
		if fioRuns[i].iops > 0 {
			ratios = append(ratios, iolabRuns[i].iops/fioRuns[i].iops)
		}
		if fioRuns[i].cpuPerIO > 0 {
			cpuRatios = append(cpuRatios, iolabRuns[i].cpuPerIO/fioRuns[i].cpuPerIO)
		}
	}
	sp := stats.SpreadOf(ratios)
	row.Ratio, row.RatioMin, row.RatioMax = sp.Median, sp.Min, sp.Max
	row.RatioLo, row.RatioHi, row.Tie = interval(ratios, 1)
	if len(cpuRatios) > 0 {
		row.CPURatio = stats.Median(cpuRatios)
		row.CPURatioLo, row.CPURatioHi, row.CPUTie = interval(cpuRatios, 2)
	}
	row.RoundsPair = len(ratios)
	return row, nil
}

// jobsNote is " numjobs=N" above one job, for the progress lines.
func jobsNote(jobs int) string {
	if jobs > 1 {
		return " numjobs=" + strconv.Itoa(jobs)
	}
	return ""
}

// matrixTool is fio or iolab in one row of the matrix: its command, the
// CPU time of its one-I/O run, and its rounds.
type matrixTool struct {
	name  string
	cmd   []string
	fixed time.Duration
	runs  []childRun
}

// childRun is what one child run measured.
type childRun struct {
	iops, clatP50, latMean, cpuPerIO float64
	cpu                              time.Duration
}

// childCommand is the command for one of the matrix's runs. It starts a
// session of its own: fio's job processes each call setsid(), so under
// the kernel's autogroup scheduling every fio job gets a CPU share of its
// own, apart from what else runs in the session it was started from;
// iolab's job threads live in its process, so the process gets its own
// session for the same treatment. Canceled, it is asked to stop
// (SIGTERM: fio ends its jobs, iolab its run) and killed 10 s later.
func childCommand(ctx context.Context, argv []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// runChild runs argv, reads its json+ report and its CPU time, and
// counts what is above fixed as the I/Os' CPU time.
func runChild(ctx context.Context, argv []string, fixed time.Duration) (childRun, error) {
	cmd := childCommand(ctx, argv)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return childRun{}, fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	reps, err := ParseReports(&stdout)
	if err != nil {
		return childRun{}, fmt.Errorf("%s: reading its JSON: %w", argv[0], err)
	}
	s, ok, err := side(reps[len(reps)-1:], bench.Read)
	if err != nil || !ok {
		return childRun{}, fmt.Errorf("%s: no reads in its report (%v)", argv[0], err)
	}
	var ios uint64
	for _, j := range reps[len(reps)-1].Jobs {
		ios += j.Read.TotalIOs
	}
	var cpu time.Duration
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	r := childRun{iops: s.IOPS, clatP50: float64(s.ClatP50NS), latMean: s.LatMeanNS, cpu: cpu}
	if ios > 0 {
		r.cpuPerIO = float64(max(cpu-fixed, 0)) / float64(ios)
	}
	return r, nil
}

func summarise(runs []childRun) Sample {
	var s Sample
	var p50, lat []float64
	for _, r := range runs {
		s.RoundsIOPS = append(s.RoundsIOPS, r.iops)
		s.RoundsCPU = append(s.RoundsCPU, r.cpuPerIO)
		p50 = append(p50, r.clatP50)
		lat = append(lat, r.latMean)
	}
	s.IOPS, s.CPUPerIONS = stats.Median(s.RoundsIOPS), stats.Median(s.RoundsCPU)
	s.ClatP50NS, s.LatMeanNS = stats.Median(p50), stats.Median(lat)
	return s
}

// WriteMatrixMarkdown writes the matrix as the Markdown table
// BENCHMARKS.md is made from.
func WriteMatrixMarkdown(w io.Writer, spec MatrixSpec, fioVersion string, rows []MatrixRow) error {
	var b strings.Builder
	fmt.Fprintf(&b, "4 KiB random read, O_DIRECT, %s per run, %d rounds of a pair (fio then iolab, then iolab then fio, …); %s vs %s.\n",
		spec.Runtime, spec.Rounds, fioVersion, Version)
	if spec.Command != "" {
		fmt.Fprintf(&b, "Made by `%s`.\n", spec.Command)
	}
	if spec.Machine != "" {
		fmt.Fprintf(&b, "Machine: %s.\n", spec.Machine)
	}
	if spec.CPUsAllowed != "" {
		fmt.Fprintf(&b, "Every job of both tools runs with cpus_allowed=%s (the job and the io-wq workers it starts).\n", spec.CPUsAllowed)
	}
	for _, t := range spec.Targets {
		if t.Desc != "" {
			fmt.Fprintf(&b, "Target %s: %s.\n", t.Name, t.Desc)
		}
	}
	b.WriteString("Ratios are iolab / fio: the median over the rounds' pairs, its bootstrap 95 % interval, and the\n")
	b.WriteString("pairs' min–max; *tie* where the interval holds 1. CPU per I/O is each process's user + system\n")
	b.WriteString("time (all its threads, io_uring's io-wq workers included), less that of a one-I/O run of the same\n")
	b.WriteString("job (start-up and exit), over the I/Os it did; its ratio is the median of the pairs' ratios.\n\n")
	b.WriteString("| target | engine | iodepth | numjobs | fio IOPS | iolab IOPS | iolab/fio (95 % CI) | min–max | fio clat p50 | iolab clat p50 | fio lat mean | iolab lat mean | fio CPU/IO | iolab CPU/IO | CPU ratio (95 % CI) |\n")
	b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rows {
		ratio := intervalCell(fmt.Sprintf("**%.3f**", r.Ratio), r.RatioLo, r.RatioHi, r.Tie)
		cpu := intervalCell(fmt.Sprintf("%.3f", r.CPURatio), r.CPURatioLo, r.CPURatioHi, r.CPUTie)
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s | %s | %.3f–%.3f | %s | %s | %s | %s | %s | %s | %s |\n",
			r.Target, r.Engine, r.Depth, max(r.Jobs, 1), units.Count(r.Fio.IOPS), units.Count(r.Iolab.IOPS), ratio, r.RatioMin, r.RatioMax,
			units.Nanos(r.Fio.ClatP50NS), units.Nanos(r.Iolab.ClatP50NS), units.Nanos(r.Fio.LatMeanNS), units.Nanos(r.Iolab.LatMeanNS),
			units.Nanos(r.Fio.CPUPerIONS), units.Nanos(r.Iolab.CPUPerIONS), cpu)
	}
	b.WriteString("\n" + matrixVerdict(rows) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// inTurn is the order two tools run in a round: a then b in odd rounds,
// b then a in even ones, so that what a run leaves behind for the next
// (the device's and the scheduler's state) favours neither — of two fio
// runs one after the other, the second did 1–3 % more IOPS (medians of 14
// pairs) on the loop device.
func inTurn[T any](round int, a, b T) [2]T {
	if round%2 == 0 {
		return [2]T{b, a}
	}
	return [2]T{a, b}
}

// interval is the bootstrap 95 % interval of the median of ratios, and
// whether it holds 1 (a tie).
func interval(ratios []float64, seed uint64) (lo, hi float64, tie bool) {
	lo, hi = stats.BootstrapMedianCI(ratios, 0.95, 2000, seed)
	return lo, hi, lo <= 1 && hi >= 1
}

// intervalCell is a table cell of a median, its interval, and *tie*.
func intervalCell(median string, lo, hi float64, tie bool) string {
	s := fmt.Sprintf("%s (%.3f–%.3f)", median, lo, hi)
	if tie {
		s += " *tie*"
	}
	return s
}

// matrixVerdict says how the rows stand against the bar of issue 14: a
// median IOPS ratio ≥ 1 and CPU ratio ≤ 1 on every row, and no row whose
// IOPS interval lies wholly below 1; it names the rows short of it.
func matrixVerdict(rows []MatrixRow) string {
	var short, below []string
	for _, r := range rows {
		name := fmt.Sprintf("%s %s %d", r.Target, r.Engine, r.Depth)
		if r.Jobs > 1 {
			name += fmt.Sprintf("×%d", r.Jobs)
		}
		if !r.Meets() {
			short = append(short, fmt.Sprintf("%s (%.3f, CPU %.3f)", name, r.Ratio, r.CPURatio))
		}
		if r.Below() {
			below = append(below, name)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "iolab's median IOPS at least fio's and its median CPU per I/O at most fio's on %d of %d rows", len(rows)-len(short), len(rows))
	if len(short) > 0 {
		fmt.Fprintf(&b, "; short: %s", strings.Join(short, ", "))
	}
	if len(below) == 0 {
		b.WriteString(". No row's IOPS interval lies wholly below 1.")
	} else {
		fmt.Fprintf(&b, ". IOPS interval wholly below 1: %s.", strings.Join(below, ", "))
	}
	return b.String()
}

// WriteMatrixJSON writes the matrix for scripts.
func WriteMatrixJSON(w io.Writer, rows []MatrixRow) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rows)
}
