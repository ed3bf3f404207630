package summary

import (
	"time"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/joblog"
	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/bench/verify"
)

// StepView is a step as the summaries, the dashboard's pages and its
// charts read it: a view of a sweep.StepResult whose job results keep of
// their latencies what those read — each one's summary (hist.LatStat),
// and the histograms of clat and of the latency from the intended start
// as their non-empty buckets. A bench.JobResult holds eight fixed-size
// histograms (136 kB); a StepView's job holds a few kB, so that the
// steps of a 500-step run are a few MB, and a page built from them
// allocates that much, not 200 MB of job results. StepViewOf makes one
// from a step as the runner produced it; the store keeps each stored
// step's (db.Store.Summaries).
//
// The view types (StepView, ResultView, GroupView, JobView, DirView,
// VerifyView, LatView) are named for what they view, so that a JobView
// is not taken for the bench.Job (the options) a job ran with, a
// GroupView for a bench.Group of jobs to run, nor a StepView for the
// sweep.Step a plan expands to. Their fields name what the viewed types'
// do, so that code reads either alike.
// StepViews handed out by the store share their memory with every other
// reader: nothing may change one in place.
type StepView struct {
	Step       sweep.Step
	Status     string
	Error      string
	Start, End time.Time
	Schedulers map[string]string
	CPU        system.CPUBreakdown
	Proc       system.ProcCPU
	// Prep is what was done to the targets before the step (a PTS run's
	// purge and preconditioning, with its first step); nil for none.
	Prep *sweep.Prep
	// Result is nil when the step failed before any I/O.
	Result *ResultView

	// figures are FiguresOfStep's, worked out once by StepViewOf (a page
	// shows every step's), of the step with its result figuresOf: a copy
	// given another result has them worked out again.
	figures   *StepFigures
	figuresOf *ResultView
}

// ResultView is a StepView's bench.Result.
type ResultView struct {
	Start  time.Time
	Groups []GroupView
}

// GroupView is a StepView's bench.GroupResult.
type GroupView struct {
	ID        int
	Reporting bool
	Jobs      []JobView
	Disks     []system.DiskUtilization
	// Trace is what the group's block-layer trace saw beside its jobs'
	// I/Os and may have missed; nil when the step was not traced.
	Trace *bench.BlockTrace
}

// JobView is a StepView's bench.JobResult: all the summaries and charts read of
// one.
type JobView struct {
	Name    string
	GroupID int
	// Job is the options the job ran with, as the result was read (the
	// dashboard's reads leave them out: the step's config has them).
	Job          bench.Job
	Error        string
	Jobs         int
	Start        time.Time
	Runtime      time.Duration
	Interval     time.Duration
	UsrCPU       time.Duration
	SysCPU       time.Duration
	Dirs         [3]DirView // by bench.Read, Write, Trim
	Samples      []bench.Sample
	Steady       *bench.SteadyResult
	LatencyDepth int
	Logs         []joblog.Log
	// Verify is what the job's verification read back; nil without it.
	Verify *VerifyView
}

// VerifyView is a JobView's bench.VerifyResult without the reads' histograms.
type VerifyView struct {
	Method             string
	ReadIOs, ReadBytes uint64
	Runtime            time.Duration
	Failed             *verify.Error
	Stopped            bool
	// Trimmed blocks, read back as zeros when TrimmedRead
	// (bench.VerifyResult).
	Trimmed     uint64
	TrimmedRead bool
	// Threads are verify_async's threads, ThreadCPU their CPU time.
	Threads   int
	ThreadCPU time.Duration
}

// DirView is a JobView's bench.DirResult, each histogram as its non-empty
// buckets: the charts draw any latency kind (slat, clat, lat).
type DirView struct {
	IOs, Bytes                uint64
	Slat, Clat, Lat, Intended LatView
	// Block is the direction's time in the block layer
	// (bench.DirResult.Block); nil when the step was not traced.
	Block *BlockView
}

// BlockView is a DirView's bench.BlockTime, each part's histogram as its
// non-empty buckets.
type BlockView struct {
	Submit, Queue, Device, Completion  LatView
	OneToOne, Merged, Split, Unmatched uint64
	SplitTimed                         uint64 // of Split, in the histograms
	// ByLat is the timed I/Os' parts by their lat (bench.SplitByLat);
	// empty for a step traced before iolab kept them.
	ByLat bench.SplitByLat
}

// Part is the part k (a BlockKinds kind) of the I/Os' time.
func (b *BlockView) Part(k LatKind) *LatView {
	switch k {
	case LatSubmit:
		return &b.Submit
	case LatQueue:
		return &b.Queue
	case LatDevice:
		return &b.Device
	}
	return &b.Completion
}

// IOs are the I/Os the trace accounts for: those in the histograms and
// those left out of them.
func (b *BlockView) IOs() uint64 { return b.OneToOne + b.Merged + b.Split + b.Unmatched }

// LatView is a hist.Lat whose histogram is its non-empty buckets.
type LatView struct {
	Stat hist.LatStat
	Hist Bins
}

// Bins are a histogram's non-empty buckets, in bucket order.
type Bins []Bin

// Bin is one non-empty bucket of a hist.Histogram: its index and count.
type Bin struct {
	Index int
	Count uint64
}

// BinsOf is h's non-empty buckets; nil when it has none.
func BinsOf(h *hist.Histogram) Bins {
	n := 0
	for _, c := range h.Counts {
		if c != 0 {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	out := make(Bins, 0, n)
	for i, c := range h.Counts {
		if c != 0 {
			out = append(out, Bin{i, c})
		}
	}
	return out
}

// AddTo adds the buckets' counts to h.
func (b Bins) AddTo(h *hist.Histogram) {
	for _, x := range b {
		h.Counts[x.Index] += x.Count
	}
}

// AddTo merges l into dst, as hist.Lat.Merge does.
func (l *LatView) AddTo(dst *hist.Lat) {
	dst.Stat.Merge(&l.Stat)
	l.Hist.AddTo(&dst.Hist)
}

// StepViewOf is r as a StepView. It shares r's axes, config, schedulers, disks,
// samples and logs.
func StepViewOf(r *sweep.StepResult) StepView {
	s := StepView{Step: r.Step, Status: r.Status, Error: r.Error, Start: r.Start, End: r.End,
		Schedulers: r.Schedulers, CPU: r.CPU, Proc: r.Proc, Prep: r.Prep}
	if r.Result == nil {
		f := figuresOf(&s)
		s.figures = &f
		return s
	}
	res := &ResultView{Start: r.Result.Start, Groups: make([]GroupView, len(r.Result.Groups))}
	n := 0
	for _, g := range r.Result.Groups {
		n += len(g.Jobs)
	}
	jobs := make([]JobView, n) // one allocation for the step's jobs
	for i := range r.Result.Groups {
		g := &r.Result.Groups[i]
		mine := jobs[:len(g.Jobs):len(g.Jobs)]
		jobs = jobs[len(g.Jobs):]
		for k := range g.Jobs {
			mine[k] = JobViewOf(&g.Jobs[k])
		}
		if g.Jobs == nil {
			mine = nil
		}
		res.Groups[i] = GroupView{ID: g.ID, Reporting: g.Reporting, Jobs: mine, Disks: g.Disks, Trace: g.Trace}
	}
	s.Result = res
	f := figuresOf(&s)
	s.figures, s.figuresOf = &f, res
	return s
}

// StepViews are results as StepViews.
func StepViews(results []sweep.StepResult) []StepView {
	out := make([]StepView, len(results))
	for i := range results {
		out[i] = StepViewOf(&results[i])
	}
	return out
}

// JobViewOf is r as a JobView; it shares r's samples and logs.
func JobViewOf(r *bench.JobResult) JobView {
	j := JobView{Name: r.Name, GroupID: r.GroupID, Job: r.Job, Error: r.Error, Jobs: r.Jobs, Start: r.Start,
		Runtime: r.Runtime, Interval: r.Interval, UsrCPU: r.UsrCPU, SysCPU: r.SysCPU, Samples: r.Samples,
		Steady: r.Steady, LatencyDepth: r.LatencyDepth, Logs: r.Logs}
	if v := r.Verify; v != nil {
		j.Verify = &VerifyView{Method: v.Method, ReadIOs: v.Reads.IOs, ReadBytes: v.Reads.Bytes, Runtime: v.Runtime, Failed: v.Failed, Stopped: v.Stopped,
			Trimmed: v.Trimmed, TrimmedRead: v.TrimmedRead, Threads: len(v.Threads)}
		for _, t := range v.Threads {
			j.Verify.ThreadCPU += t.CPU
		}
	}
	for d := range r.Dirs {
		src, dst := &r.Dirs[d], &j.Dirs[d]
		dst.IOs, dst.Bytes = src.IOs, src.Bytes
		dst.Slat = LatView{Stat: src.Slat.Stat, Hist: BinsOf(&src.Slat.Hist)}
		dst.Clat = LatView{Stat: src.Clat.Stat, Hist: BinsOf(&src.Clat.Hist)}
		dst.Lat = LatView{Stat: src.Lat.Stat, Hist: BinsOf(&src.Lat.Hist)}
		dst.Intended = LatView{Stat: src.Intended.Stat, Hist: BinsOf(&src.Intended.Hist)}
		if b := src.Block; b != nil {
			dst.Block = &BlockView{OneToOne: b.OneToOne, Merged: b.Merged, Split: b.Split, SplitTimed: b.SplitTimed, Unmatched: b.Unmatched, ByLat: b.ByLat}
			for k, l := range map[LatKind]*hist.Lat{LatSubmit: &b.Submit, LatQueue: &b.Queue, LatDevice: &b.Device, LatCompletion: &b.Completion} {
				*dst.Block.Part(k) = LatView{Stat: l.Stat, Hist: BinsOf(&l.Hist)}
			}
		}
	}
	return j
}

// Disturbed is sweep.StepResult.Disturbed.
func (s *StepView) Disturbed() string {
	if s.Result == nil {
		return ""
	}
	r := sweep.StepResult{Result: &bench.Result{Groups: make([]bench.GroupResult, len(s.Result.Groups))}}
	for i, g := range s.Result.Groups {
		r.Result.Groups[i].Disks = g.Disks
	}
	return r.Disturbed()
}

// Totals is bench.Result.Totals.
func (res *ResultView) Totals() (iops, bw float64) {
	if res == nil {
		return 0, 0
	}
	for _, g := range res.Groups {
		for i := range g.Jobs {
			for d := range g.Jobs[i].Dirs {
				iops += g.Jobs[i].IOPS(d)
				bw += g.Jobs[i].BW(d)
			}
		}
	}
	return iops, bw
}

// The methods below are bench.JobResult's of the same names, for a JobView.

// CPUShare is bench.JobResult.CPUShare.
func (r *JobView) CPUShare() float64 { return bench.CPUShareOf(r.UsrCPU, r.SysCPU, r.Runtime, r.Jobs) }

// Saturated is bench.JobResult.Saturated.
func (r *JobView) Saturated() bool { return r.CPUShare() > bench.SaturatedCPU }

// IOPS is bench.JobResult.IOPS.
func (r *JobView) IOPS(d int) float64 { return bench.PerSecond(r.Dirs[d].IOs, r.Runtime) }

// BW is bench.JobResult.BW.
func (r *JobView) BW(d int) float64 { return bench.PerSecond(r.Dirs[d].Bytes, r.Runtime) }

// Paced is bench.JobResult.Paced.
func (r *JobView) Paced(d int) bool { return r.Dirs[d].Intended.Stat.N > 0 }

// HeadlineLat is bench.JobResult.HeadlineLat.
func (r *JobView) HeadlineLat(d int) (l *LatView, name string) {
	if r.Paced(d) {
		return &r.Dirs[d].Intended, bench.LatIntended
	}
	return &r.Dirs[d].Clat, "clat"
}
