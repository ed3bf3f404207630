package sweep

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/pts"
	"iolab/bench/system"
	"iolab/bench/units"
)

// Sweep is one axis and the values a plan takes on it, in order.
type Sweep struct {
	Axis   Axis     `json:"axis"`
	Values []string `json:"values"`
}

// Plan is a base job group plus sweep axes and repeats: it expands into
// ordered steps (Steps).
type Plan struct {
	Name   string `json:"name"`
	Preset string `json:"preset,omitempty"`
	// Args are the fio options and job files the plan was given, so an
	// `iolab run` command line reproduces it.
	Args []string `json:"args"`
	// Base is the parsed jobs every step starts from.
	Base   bench.Config `json:"base"`
	Sweeps []Sweep      `json:"sweeps,omitempty"`
	Repeat int          `json:"repeat"` // at least 1
	// AutoRepeat, when set, repeats each combination until its median is
	// known well enough (or a cap): Steps lists the first rounds only.
	AutoRepeat *AutoRepeat `json:"auto_repeat,omitempty"`

	// Before each step.
	Discard    bool `json:"discard,omitempty"`     // BLKDISCARD the target block devices
	DropCaches bool `json:"drop_caches,omitempty"` // sync; echo 3 > /proc/sys/vm/drop_caches

	// SkipImpossible leaves out the steps the check before the run finds
	// impossible, instead of refusing the plan; Skipped records which
	// and why (set by Check).
	SkipImpossible bool   `json:"skip_impossible,omitempty"`
	Skipped        []Skip `json:"skipped,omitempty"`

	// TraceBlockWhereAble traces the block layer (Base.TraceBlock) where
	// the targets and this process allow it, and says why not in Notes
	// where they do not (a preset's TraceBlock; set by Check).
	TraceBlockWhereAble bool `json:"trace_block_where_able,omitempty"`

	// AllowDiskScheduler lets a scheduler sweep switch the disk holding a
	// file target (it affects everything on that disk).
	AllowDiskScheduler bool `json:"allow_disk_scheduler,omitempty"`

	// SLO is the latency objective the QoS curve's knee is found under
	// (qos.go); nil: DefaultSLO where a curve is drawn.
	SLO *SLO `json:"slo,omitempty"`

	// PTS, when set, makes the plan a SNIA PTS test (pts.go): its
	// sweeps are the test's matrix, each round's steps are Repeat r, and
	// rounds run until the specification's steady state (or WSAT's
	// writes); the device is purged and preconditioned first.
	PTS *pts.Spec `json:"pts,omitempty"`

	// Runtime and RampTime, when set, override every job's for each step.
	Runtime  time.Duration `json:"runtime,omitempty"`
	RampTime time.Duration `json:"ramp_time,omitempty"`

	// What an imported plan's source did not say: Inferred are options its
	// output left out that the results show, Notes what could not be told
	// or reproduced.
	Inferred []fio.Inference `json:"inferred,omitempty"`
	Notes    []string        `json:"notes,omitempty"`
}

// Swept is the plan's sweeps that take more than one value: its axes. A
// sweep of one value sets that value in every job (an override, as an
// option would) and is not an axis: summaries, charts and legends leave
// it out.
func (p *Plan) Swept() []Sweep {
	if p == nil {
		return nil
	}
	var out []Sweep
	for _, s := range p.Sweeps {
		if distinct(s.Values) > 1 {
			out = append(out, s)
		}
	}
	return out
}

// SweepsAxis reports whether the plan sweeps axis a over more than one value.
func (p *Plan) SweepsAxis(a Axis) bool {
	return slices.ContainsFunc(p.Swept(), func(s Sweep) bool { return s.Axis == a })
}

func distinct(vals []string) int {
	var seen []string
	for _, v := range vals {
		if !slices.Contains(seen, v) {
			seen = append(seen, v)
		}
	}
	return len(seen)
}

// MeasuredJob is the job the plan measures, as its preset names it
// (Preset.Measured), when the plan's jobs include it; "" otherwise (then
// the first job speaks for the run).
func (p *Plan) MeasuredJob() string {
	if p == nil || p.Preset == "" {
		return ""
	}
	pr, err := PresetByName(p.Preset)
	if err != nil || pr.Measured == "" {
		return ""
	}
	if slices.ContainsFunc(p.Base.Jobs, func(j bench.Job) bool { return j.Name == pr.Measured }) {
		return pr.Measured
	}
	return ""
}

// EnginesAndSchedulers are the engines and I/O schedulers of a run of
// the plan on targets, as its record starts with them for the run list
// to filter on: the last engine sweep's values, else the base jobs'
// engines; the last scheduler sweep's values, else the scheduler of the
// first target that names one. The store adds the sweeps' values to a
// record made otherwise (db.Store.CreateRun) and each step's as it is
// saved (db.Store.SaveStep).
func (p *Plan) EnginesAndSchedulers(targets []system.Target) (engines, schedulers []string) {
	for _, j := range p.Base.Jobs {
		if !slices.Contains(engines, j.IOEngine) {
			engines = append(engines, j.IOEngine)
		}
	}
	for _, sw := range p.Sweeps {
		switch sw.Axis {
		case AxisEngine:
			engines = slices.Clone(sw.Values)
		case AxisScheduler:
			schedulers = slices.Clone(sw.Values)
		}
	}
	for _, t := range targets {
		if t.Scheduler != "" && len(schedulers) == 0 {
			schedulers = []string{t.Scheduler}
		}
	}
	return engines, schedulers
}

// AxisValue is one axis's value in a step.
type AxisValue struct {
	Axis  Axis   `json:"axis"`
	Value string `json:"value"`
}

// Step is one run of the plan's jobs with one combination of axis values.
type Step struct {
	Seq    int         `json:"seq"`    // 0-based, the order steps run in
	Repeat int         `json:"repeat"` // 0-based repeat index
	Axes   []AxisValue `json:"axes"`
	// Scheduler is the I/O scheduler to switch the targets' disks to before
	// the step; "" leaves them as they are.
	Scheduler string       `json:"scheduler,omitempty"`
	Config    bench.Config `json:"config"`
}

// Value returns the step's value on axis a, or "".
func (s *Step) Value(a Axis) string {
	for _, v := range s.Axes {
		if v.Axis == a {
			return v.Value
		}
	}
	return ""
}

// Step statuses.
const (
	StepDone      = "done"
	StepFailed    = "failed"
	StepCancelled = "cancelled"
)

// StepResult is what one step measured, with the step it belongs to.
type StepResult struct {
	Step   Step      `json:"step"`
	Status string    `json:"status"`
	Error  string    `json:"error,omitempty"`
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	// Schedulers are the schedulers active on the targets' disks during
	// the step, read back from sysfs: disk → scheduler.
	Schedulers map[string]string `json:"schedulers,omitempty"`
	// Result holds the step's groups and jobs (nil when it failed before
	// any I/O).
	Result *bench.Result `json:"result,omitempty"`
	// Unvouched is what the jobs of a failed step measured before the
	// error (the job's err=, its writes, its reads up to a block that did
	// not verify): fio prints it as the report of the failed job, and so
	// does `iolab run` for a one-step run. It is neither stored nor
	// summarised: a failed step carries no figures.
	Unvouched *bench.Result `json:"-"`
	// CPU is the whole machine's CPU over the step, from /proc/stat.
	CPU system.CPUBreakdown `json:"cpu"`
	// Proc is the iolab process's own CPU use over the step.
	Proc system.ProcCPU `json:"proc"`
	// Prep is what was done to the targets before the step (a PTS run's
	// purge and preconditioning, with its first step); nil for none.
	Prep *Prep `json:"prep,omitempty"`
}

// Disturbed says which of the step's disks did more I/O than its jobs —
// another process using the device during the step — when that is more
// than system.DisturbedShare of the jobs' bytes; "" when none did or it
// could not be told.
func (r *StepResult) Disturbed() string {
	if r.Result == nil {
		return ""
	}
	var notes []string
	seen := map[string]bool{}
	for _, g := range r.Result.Groups {
		for _, d := range g.Disks {
			bytes, share, ok := d.Foreign()
			if !ok || share <= system.DisturbedShare || seen[d.Name] {
				continue
			}
			seen[d.Name] = true
			notes = append(notes, fmt.Sprintf("%s did %s (%.1f%%) more I/O than the step's jobs: another process used it",
				d.Name, units.Bytes(float64(bytes)), 100*share))
		}
	}
	return strings.Join(notes, "; ")
}
