package summary

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/bench/units"
)

// StepFigures are one step's numbers as the run page's step table, its
// CSV and `iolab show` print them: each job's figures (Jobs), the
// machine's CPU and the first disk of the first group that measured one.
type StepFigures struct {
	Seq                  int
	Label, Status, Error string
	// Jobs are the figures of each job of the step, in order, then their
	// total when the jobs are alike (see Summarize); none when the step
	// did not finish.
	Jobs              []JobFigures
	Busy, IRQ, IOWait float64
	Idle              float64
	PerIO             time.Duration
	HasDisk           bool
	Disk              system.DiskUtilization
	HasResult         bool
	// Disturbed says which disk did I/O beside the step's jobs (see
	// sweep.StepResult.Disturbed); "" when none did.
	Disturbed string
}

// JobFigures are one job's numbers in one step: its clones (numjobs)
// added up, or its reporting group's merged result; or, with Total, the
// step's alike jobs added up.
type JobFigures struct {
	Name  string // the job's, or TotalName
	Total bool
	// RW, BS and IODepth are the job's options, as the step ran it; RW ""
	// when the step does not say, IODepth 0 for a total of jobs that
	// differ in it.
	RW      string
	BS      int64
	IODepth int
	// Threads counts the job threads the figures add up.
	Threads     int
	IOPS, BWMiB float64
	// Lat is the latency P50 and P99 are of: clat, unless As chose
	// another. IOs are the I/Os they come from: a percentile is worth
	// reading only with enough of them (Reliable).
	Lat      LatKind
	IOs      uint64
	P50, P99 time.Duration
	// kinds are IOs, P50 and P99 of each LatKind (LatKind.index), of
	// LatIntended (none for a job not paced) and of the BlockKinds (none
	// for a job not traced).
	kinds [8]latFigures
	// Traced counts the I/Os a block-layer trace accounted for
	// (BlockView.IOs): those of the BlockKinds' figures, the one-to-one,
	// and those merged, split or unmatched; 0 when the job was not traced.
	Traced uint64
	// Split50 and Split99 are the timed I/Os at lat's p50 and p99 split
	// into the block layer's parts, which add up to their lat
	// (bench.SplitByLat.SplitAt); IOs 0 when the job was not traced, or
	// was traced before iolab kept its parts by lat.
	Split50, Split99 bench.LatSplit
	// CPU is the largest share of a core any of the job's threads used
	// over the window (bench.JobResult.CPUShare); Saturated when that is
	// above bench.SaturatedCPU: the numbers may measure iolab itself.
	CPU       float64
	Saturated bool
	// Outcomes are the verdicts of the job's verify, steady-state and
	// latency_target options, a line each (outcomes.go); none on a
	// total.
	Outcomes []string
}

// latFigures are one latency kind's I/Os and percentiles.
type latFigures struct {
	ios      uint64
	p50, p99 time.Duration
}

// As is the figures with IOs, P50 and P99 of kind k ("" keeps them).
func (f JobFigures) As(k LatKind) JobFigures {
	if k == "" {
		return f
	}
	l := f.kinds[k.index()]
	f.Lat, f.IOs, f.P50, f.P99 = k, l.ios, l.p50, l.p99
	return f
}

// OneToOne is the share of the traced I/Os that mapped one-to-one onto
// a request, those the BlockKinds' figures are of; 0 untraced.
func (f JobFigures) OneToOne() float64 {
	if f.Traced == 0 {
		return 0
	}
	return float64(f.kinds[LatSubmit.index()].ios) / float64(f.Traced)
}

// As is the step's figures with each job's latency of kind k.
func (f StepFigures) As(k LatKind) StepFigures {
	f.Jobs = slices.Clone(f.Jobs)
	for i := range f.Jobs {
		f.Jobs[i] = f.Jobs[i].As(k)
	}
	return f
}

// Options writes what the job ran as "randread 4k iodepth 1", and "×4"
// for the threads of its clones; "" when the step does not say.
func (f *JobFigures) Options() string { return f.OptionsBut() }

// OptionsBut is Options without the options named in omit (rw, bs,
// iodepth, numjobs for the clones): those a table shows in columns of
// their own.
func (f *JobFigures) OptionsBut(omit ...string) string {
	var parts []string
	if f.RW != "" && !slices.Contains(omit, "rw") {
		parts = append(parts, f.RW)
	}
	if f.BS > 0 && !slices.Contains(omit, "bs") {
		parts = append(parts, units.FormatSize(f.BS))
	}
	if f.IODepth > 0 && !slices.Contains(omit, "iodepth") {
		parts = append(parts, "iodepth "+strconv.Itoa(f.IODepth))
	}
	if f.Threads > 1 && !f.Total && !slices.Contains(omit, "numjobs") {
		parts = append(parts, "×"+strconv.Itoa(f.Threads))
	}
	return strings.Join(parts, " ")
}

// Reliable reports whether the job's percentile p is backed by enough
// completions (hist.ReliableN).
func (f *JobFigures) Reliable(p float64) bool { return hist.Reliable(p, f.IOs) }

// IOPSText says each job's IOPS as a progress line ends a step: "1.23k
// IOPS" for one job, "bg-writer 912 IOPS, fg-reader 162 IOPS" for several
// (then "total …" when they are alike); "" without figures.
func (f *StepFigures) IOPSText() string {
	parts := make([]string, len(f.Jobs))
	for i, j := range f.Jobs {
		parts[i] = units.Count(j.IOPS) + " IOPS"
		if len(f.Jobs) > 1 {
			parts[i] = j.Name + " " + parts[i]
		}
	}
	return strings.Join(parts, ", ")
}

// FiguresOf computes a step's figures.
func FiguresOf(s *sweep.StepResult) StepFigures {
	st := StepViewOf(s)
	return FiguresOfStep(&st)
}

// FiguresOfStep is FiguresOf a StepView.
func FiguresOfStep(s *StepView) StepFigures {
	if s.figures == nil || s.figuresOf != s.Result {
		return figuresOf(s)
	}
	f := *s.figures
	f.Jobs = slices.Clone(f.Jobs) // the caller's own
	return f
}

func figuresOf(s *StepView) StepFigures {
	f := StepFigures{Seq: s.Step.Seq + 1, Label: s.Step.String(), Status: s.Status, Error: s.Error}
	// Only a done step has figures to show: a failed or cancelled one's
	// are not numbers anyone can vouch for.
	if s.Result == nil || s.Status != sweep.StepDone {
		return f
	}
	f.HasResult = true
	jobs := stepJobs(nil, s)
	var ios uint64
	for _, j := range jobs {
		if len(j.results) == 0 {
			continue
		}
		jf := jobFigures(j.results)
		jf.Name = j.name
		if j.job != nil {
			jf.RW, jf.BS, jf.IODepth = j.job.RW, j.job.BS, j.job.IODepth
		}
		jf.Outcomes = outcomes(j.job, j.results)
		f.Jobs = append(f.Jobs, jf)
		ios += numbersOf(j.results).ios
	}
	if alikeJobs(jobs) {
		t := jobFigures(allResults(jobs))
		t.Name, t.Total = TotalName, true
		t.RW, t.BS = jobs[0].job.RW, jobs[0].job.BS
		t.IODepth = jobs[0].job.IODepth
		for _, j := range jobs {
			if j.job.IODepth != t.IODepth {
				t.IODepth = 0
			}
		}
		f.Jobs = append(f.Jobs, t)
	}
	for _, g := range s.Result.Groups {
		if len(g.Disks) > 0 {
			f.Disk, f.HasDisk = g.Disks[0], true
			break
		}
	}
	if ios > 0 {
		f.PerIO = time.Duration(float64(s.Proc.User+s.Proc.System) / float64(ios))
	}
	f.Busy, f.IRQ, f.IOWait, f.Idle = s.CPU.User+s.CPU.System, s.CPU.IRQ+s.CPU.SoftIRQ, s.CPU.IOWait, s.CPU.Idle
	f.Disturbed = s.Disturbed()
	return f
}

// jobFigures adds up results: their rates, their histograms of each
// latency kind merged for the percentiles (clat's shown), their busiest
// thread.
func jobFigures(results []*JobView) JobFigures {
	n := numbersOf(results)
	f := JobFigures{IOPS: n.iops, BWMiB: n.bw / (1 << 20)}
	// fio's kinds' histograms, and the block layer's parts' only when a
	// result was traced: each is 15 kB to clear and to count, and a long
	// run's page works out thousands of figures.
	var lats [4]hist.Histogram
	var block *[4]hist.Histogram
	var byLat bench.SplitByLat
	for _, r := range results {
		for d := range r.Dirs {
			for _, k := range append(LatKinds[:len(LatKinds):len(LatKinds)], LatIntended) {
				k.Of(&r.Dirs[d]).Hist.AddTo(&lats[k.index()])
			}
			if r.Dirs[d].Block != nil {
				if block == nil {
					block = new([4]hist.Histogram)
				}
				f.Traced += r.Dirs[d].Block.IOs()
				if b := r.Dirs[d].Block.ByLat; len(b) > 0 {
					if byLat == nil {
						byLat = bench.SplitByLat{}
					}
					byLat.Merge(b)
				}
				for i, k := range BlockKinds {
					k.Of(&r.Dirs[d]).Hist.AddTo(&block[i])
				}
			}
		}
		f.Threads += max(r.Jobs, 1)
		f.CPU = max(f.CPU, r.CPUShare())
		f.Saturated = f.Saturated || r.Saturated()
	}
	f.Split50, _ = byLat.SplitAt(50)
	f.Split99, _ = byLat.SplitAt(99)
	hists := lats[:]
	if block != nil {
		hists = append(hists, block[:]...) // the BlockKinds' indexes follow fio's kinds'
	}
	for i := range hists {
		if n := hists[i].N(); n > 0 {
			p := hists[i].Percentiles([]float64{50, 99})
			f.kinds[i] = latFigures{ios: n, p50: time.Duration(p[0]), p99: time.Duration(p[1])}
		}
	}
	return f.As(LatClat)
}
