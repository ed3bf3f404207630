package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/summary"
	"iolab/bench/sweep"
	"iolab/bench/units"
	"iolab/db"
)

// StepRow is one step of the per-step table, formatted: its jobs' rows
// (one per job, then their total when they are alike; one empty row for
// a step without figures) beside the step's own figures.
type StepRow struct {
	Seq                                 int
	Label, Status, Error, Disturbed     string
	Jobs                                []JobRow
	Busy, IRQ, IOWait, PerIO            string
	RPS, WPS, RAwait, WAwait, AQU, Util string
}

// JobRow is one job of a step, formatted.
type JobRow struct {
	Name    string // the job's, or summary.TotalName
	Total   bool
	Options string // "randread 4k iodepth 1": what the job ran
	// Saturated says why the job's thread may have been the bottleneck;
	// "" when it was not.
	Saturated string
	// Outcomes are what the job's verify, steady-state and
	// latency_target options concluded, a line each.
	Outcomes   []string
	IOPS, BW   string
	P50, P99   string
	Unreliable [2]string // why P50 and P99 rest on too few I/Os; "" when they do not
	// Block is each block-layer part's p50 and p99 ("2.1 ms / 4.3 ms", in
	// the order of summary.BlockKinds) of a traced job; "" untraced.
	Block [4]string
	// FewOneToOne says why the parts describe few of the job's I/Os (under
	// MinOneToOne of them were timed: one-to-one, or split with every
	// piece seen); "" when they do not.
	FewOneToOne string
}

// MinOneToOne is summary.MinOneToOne: the share of a job's traced I/Os
// below which its block-layer parts are flagged.
const MinOneToOne = summary.MinOneToOne

// Traced reports whether a step of steps has a block-layer time split
// (--trace-block): the step table and its CSV then show the parts.
func Traced(steps []summary.StepView) bool {
	for i := range steps {
		if r := steps[i].Result; r != nil {
			for _, g := range r.Groups {
				for j := range g.Jobs {
					for d := range g.Jobs[j].Dirs {
						if g.Jobs[j].Dirs[d].Block != nil {
							return true
						}
					}
				}
			}
		}
	}
	return false
}

// StepRows formats the per-step table, its latencies of kind k (StepLat);
// the CSV at /runs/:id/steps.csv has the same columns, unformatted.
func StepRows(steps []sweep.StepResult, k summary.LatKind) []StepRow {
	return SummaryRows(summary.StepViews(steps), k)
}

// SummaryRows is StepRows of summaries.
func SummaryRows(steps []summary.StepView, k summary.LatKind) []StepRow {
	rows := make([]StepRow, len(steps))
	for i := range steps {
		rows[i] = stepRowOf(summary.FiguresOfStep(&steps[i]).As(k))
	}
	return rows
}

// StepLat is the latency kind a run's step table shows: k when asked
// (?lat=, --lat), else lat when the run compares engines, clat
// otherwise (summary.LatKindOf).
func StepLat(k summary.LatKind, run *db.Run, steps []summary.StepView) summary.LatKind {
	return summary.LatKindOf(k, []*sweep.Plan{&run.Plan}, [][]summary.StepView{steps})
}

// stepFigures are a step's numbers as the table and its CSV show them.
type stepFigures = summary.StepFigures

func stepFiguresOf(s *sweep.StepResult) stepFigures { return summary.FiguresOf(s) }

// StepPercentiles are the percentiles the step table shows, in the
// order of JobFigures.P50 and P99.
var StepPercentiles = [2]float64{50, 99}

func stepRowOf(f stepFigures) StepRow {
	r := StepRow{Seq: f.Seq, Label: f.Label, Status: f.Status, Error: f.Error, Disturbed: f.Disturbed}
	for i := range f.Jobs {
		r.Jobs = append(r.Jobs, jobRowOf(&f.Jobs[i]))
	}
	if len(r.Jobs) == 0 {
		r.Jobs = []JobRow{{}}
	}
	if !f.HasResult {
		return r
	}
	r.Busy, r.IRQ, r.IOWait = units.Number(f.Busy), units.Number(f.IRQ), units.Number(f.IOWait)
	r.PerIO = fmtLatency(f.PerIO)
	if f.HasDisk {
		d := f.Disk
		r.RPS, r.WPS = units.Number(d.ReadsPerSec), units.Number(d.WritesPerSec)
		r.RAwait, r.WAwait = awaitText(d.ReadsPerSec, d.ReadAwait), awaitText(d.WritesPerSec, d.WriteAwait)
		r.AQU, r.Util = units.Number(d.AvgQueueSize), units.Number(d.Util)
	}
	return r
}

func jobRowOf(j *summary.JobFigures) JobRow {
	r := JobRow{Name: j.Name, Total: j.Total, Options: j.Options(), Outcomes: j.Outcomes,
		IOPS: units.Number(j.IOPS), BW: units.Number(j.BWMiB),
		P50: fmtLatency(j.P50), P99: fmtLatency(j.P99)}
	for i, p := range StepPercentiles {
		if j.IOs > 0 && !j.Reliable(p) {
			r.Unreliable[i] = fmt.Sprintf("from %d I/Os: p%g needs %d to be worth reading", j.IOs, p, hist.ReliableN(p))
		}
	}
	if j.Traced > 0 {
		for k, part := range summary.BlockKinds {
			if f := j.As(part); f.IOs > 0 {
				r.Block[k] = fmtLatency(f.P50) + " / " + fmtLatency(f.P99)
			}
		}
		if sh := j.OneToOne(); sh < MinOneToOne {
			r.FewOneToOne = fmt.Sprintf("%.0f %% timed", 100*sh)
		}
	}
	if j.Saturated {
		r.Saturated = fmt.Sprintf("a thread of this job used %.0f %% of a core (above %.0f %%): iolab itself may be the bottleneck", 100*j.CPU, 100*bench.SaturatedCPU)
	}
	return r
}

// awaitText writes iostat's r_await or w_await (ms per I/O) as a latency
// in its own unit, as iolab show does: "1.55 µs", not "0.00155" ms; "–"
// when there was no such I/O.
func awaitText(perSec, ms float64) string {
	if perSec == 0 {
		return "–"
	}
	return fmtLatency(time.Duration(ms * 1e6))
}

// fmtLatency shows a duration with three significant digits in the
// unit that suits it: 812 ns, 81.2 µs, 12.3 ms.
func fmtLatency(d time.Duration) string {
	if d <= 0 {
		return "–"
	}
	s := units.Nanos(float64(d))
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	return s[:i] + " " + s[i:]
}

// StepsColumns are the per-step CSV's columns, its latencies of kind k
// ("clat p50 (µs)"); with block (a step was traced: Traced), each
// block-layer part's p50 and p99 and the share of I/Os they are of, at
// the end, so that an untraced run's CSV is as it always was.
func StepsColumns(k summary.LatKind, block bool) []string {
	lat := k.Name()
	cols := []string{"step", "axes", "status", "job", "rw", "bs", "iodepth", "IOPS", "bandwidth (MiB/s)",
		lat + " p50 (µs)", lat + " p50 reliable", lat + " p99 (µs)", lat + " p99 reliable", "job CPU (% of a core)", "saturated",
		"us+sy (%)", "hi+si (%)", "iowait (%)", "CPU per I/O (µs)", "r/s", "w/s", "r_await (ms)", "w_await (ms)", "aqu-sz", "%util",
		"outcomes", "disturbed", "error"}
	if block {
		for _, part := range summary.BlockKinds {
			cols = append(cols, part.Name()+" p50 (µs)", part.Name()+" p99 (µs)")
		}
		cols = append(cols, "timed (%)")
	}
	return cols
}

// StepsTableRows are one step's rows of the per-step CSV, its latencies
// of kind k, with the block-layer parts' columns when block.
func StepsTableRows(st *sweep.StepResult, k summary.LatKind, block bool) [][]string {
	return figuresTableRows(stepFiguresOf(st).As(k), block)
}

// SummaryTableRows is StepsTableRows of a summary.
func SummaryTableRows(st *summary.StepView, k summary.LatKind, block bool) [][]string {
	return figuresTableRows(summary.FiguresOfStep(st).As(k), block)
}

// figuresTableRows are the rows of the per-step CSV of a step's figures.
func figuresTableRows(f stepFigures, block bool) [][]string {
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	us := func(d time.Duration) string { return g(float64(d) / 1e3) }
	var rows [][]string
	jobs := f.Jobs
	if len(jobs) == 0 {
		jobs = []summary.JobFigures{{}}
	}
	for k := range jobs {
		j := &jobs[k]
		row := []string{strconv.Itoa(f.Seq), f.Label, f.Status, j.Name, j.RW, "", "", g(j.IOPS), g(j.BWMiB),
			us(j.P50), strconv.FormatBool(j.Reliable(50)), us(j.P99), strconv.FormatBool(j.Reliable(99)),
			g(100 * j.CPU), strconv.FormatBool(j.Saturated)}
		if !f.HasResult {
			row = append(row[:3], make([]string, 12)...) // no figures to vouch for, or against
		}
		if j.BS > 0 {
			row[5] = units.FormatSize(j.BS)
		}
		if j.IODepth > 0 {
			row[6] = strconv.Itoa(j.IODepth)
		}
		row = append(row, g(f.Busy), g(f.IRQ), g(f.IOWait), us(f.PerIO), g(f.Disk.ReadsPerSec),
			g(f.Disk.WritesPerSec), g(f.Disk.ReadAwait), g(f.Disk.WriteAwait), g(f.Disk.AvgQueueSize), g(f.Disk.Util),
			strings.Join(j.Outcomes, "; "), f.Disturbed, f.Error)
		if block {
			// Empty where the job was not traced: never zeros.
			for _, part := range summary.BlockKinds {
				if p := j.As(part); p.IOs > 0 && f.HasResult {
					row = append(row, us(p.P50), us(p.P99))
				} else {
					row = append(row, "", "")
				}
			}
			if j.Traced > 0 && f.HasResult {
				row = append(row, g(100*j.OneToOne()))
			} else {
				row = append(row, "")
			}
		}
		rows = append(rows, row)
	}
	return rows
}
