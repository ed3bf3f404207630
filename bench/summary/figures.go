package summary

import (
	"time"

	"iolab/bench/hist"
	"iolab/bench/sweep"
	"iolab/bench/system"
)

// StepFigures are one step's numbers as the run page's step table, its
// CSV and `iolab show` print them: totals over the step's jobs, clat
// percentiles of their merged histograms, the machine's CPU and the first
// disk of the first group that measured one.
type StepFigures struct {
	Seq                  int
	Label, Status, Error string
	IOPS, BWMiB          float64
	P50, P99             time.Duration
	Busy, IRQ, IOWait    float64
	Idle                 float64
	PerIO                time.Duration
	HasDisk              bool
	Disk                 system.DiskUtilization
	HasResult            bool
	// Disturbed says which disk did I/O beside the step's jobs (see
	// sweep.StepResult.Disturbed); "" when none did.
	Disturbed string
}

// FiguresOf computes a step's figures.
func FiguresOf(s *sweep.StepResult) StepFigures {
	f := StepFigures{Seq: s.Step.Seq + 1, Label: s.Step.String(), Status: s.Status, Error: s.Error}
	var ios uint64
	var clat hist.Histogram
	// Only a done step has figures to show: a failed or cancelled one's
	// are not numbers anyone can vouch for.
	if s.Result != nil && s.Status == sweep.StepDone {
		f.HasResult = true
		for _, g := range s.Result.Groups {
			for j := range g.Jobs {
				job := &g.Jobs[j]
				for d := range 2 {
					f.IOPS += job.IOPS(d)
					f.BWMiB += job.BW(d) / (1 << 20)
					ios += job.Dirs[d].IOs
					clat.Merge(&job.Dirs[d].Clat.Hist)
				}
			}
			if len(g.Disks) > 0 && !f.HasDisk {
				f.Disk, f.HasDisk = g.Disks[0], true
			}
		}
	}
	if clat.N() > 0 {
		p := clat.Percentiles([]float64{50, 99})
		f.P50, f.P99 = time.Duration(p[0]), time.Duration(p[1])
	}
	if ios > 0 {
		f.PerIO = time.Duration(float64(s.Proc.User+s.Proc.System) / float64(ios))
	}
	if f.HasResult {
		f.Busy, f.IRQ, f.IOWait, f.Idle = s.CPU.User+s.CPU.System, s.CPU.IRQ+s.CPU.SoftIRQ, s.CPU.IOWait, s.CPU.Idle
		f.Disturbed = s.Disturbed()
	}
	return f
}
