package sweep

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"iolab/bench"
	"iolab/bench/system"
)

// Problem is something that makes some of a plan's steps impossible (or
// pointless), found before the first step runs: hipri on a device without
// poll queues, a scheduler a disk does not offer, --discard on a device
// that cannot, an iodepth a sync engine ignores, a block size O_DIRECT
// refuses.
type Problem struct {
	Reason string `json:"reason"`
	// Axes are the combinations of axis values it makes impossible, in
	// plan order; every repeat of each.
	Axes [][]AxisValue `json:"axes"`
}

// Skip is one combination of axis values the plan leaves out
// (SkipImpossible), and why: the run records what it did not measure.
type Skip struct {
	Axes   []AxisValue `json:"axes"`
	Reason string      `json:"reason"`
}

// PreflightError refuses a plan with impossible steps, listing every
// problem at once; --skip-impossible runs the rest instead.
type PreflightError struct {
	Problems []Problem
	Combos   int // the plan's combinations of axis values
}

func (e *PreflightError) Error() string {
	var b strings.Builder
	n := 0
	for _, p := range e.Problems {
		n += len(p.Axes)
	}
	fmt.Fprintf(&b, "%d of the plan's %d steps (repeats aside) cannot run as asked:", n, e.Combos)
	for _, p := range e.Problems {
		fmt.Fprintf(&b, "\n  - %s: %s", describeCombos(p.Axes), p.Reason)
	}
	b.WriteString("\nfix them, or add --skip-impossible to leave those steps out (they are recorded with the run)")
	return b.String()
}

func describeCombos(combos [][]AxisValue) string {
	parts := make([]string, 0, min(len(combos), 4))
	for i, c := range combos {
		if i == 3 && len(combos) > 4 {
			parts = append(parts, fmt.Sprintf("… %d in all", len(combos)))
			break
		}
		a := fmtAxes(c)
		if a == "" {
			a = "the step"
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, "; ")
}

// preflight checks every combination of plan's axis values against the
// targets and returns the problems, grouped by reason. disks are the
// disks whose scheduler the plan switches. With a nil rn it checks only
// what needs no target.
func preflight(rn *bench.Runner, plan *Plan, steps []Step, disks []string) []Problem {
	var problems []Problem
	add := func(reason string, axes []AxisValue) {
		i := slices.IndexFunc(problems, func(p Problem) bool { return p.Reason == reason })
		if i < 0 {
			i = len(problems)
			problems = append(problems, Problem{Reason: reason})
		}
		if !slices.ContainsFunc(problems[i].Axes, func(a []AxisValue) bool { return sameAxes(a, axes) }) {
			problems[i].Axes = append(problems[i].Axes, axes)
		}
	}
	targets := map[string]*system.Target{} // nil: not there yet (laid out by the run), or not looked at
	target := func(path string) *system.Target {
		t, ok := targets[path]
		if !ok && rn != nil {
			if r, err := rn.Sys.ResolveTarget(path); err == nil {
				t = &r
			}
			targets[path] = t
		}
		return t
	}
	minDepth := 0
	if sw, ok := plan.sweep(AxisIODepth); ok {
		for _, v := range sw.Values {
			var d int
			if _, err := fmt.Sscan(v, &d); err == nil && (minDepth == 0 || d < minDepth) {
				minDepth = d
			}
		}
	}
	for i := range steps {
		st := &steps[i]
		if st.Repeat > 0 {
			break // later repeats repeat the first's combinations
		}
		if st.Scheduler != "" && rn != nil {
			for _, d := range disks {
				if err := rn.Sys.CheckScheduler(d, st.Scheduler); errors.Is(err, system.ErrSchedulerNotOffered) {
					add(err.Error(), st.Axes)
				}
			}
		}
		if plan.Discard && rn != nil {
			for _, path := range jobPaths(&st.Config) {
				if t := target(path); t != nil {
					if err := rn.Sys.CheckDiscard(*t); err != nil {
						add("--discard: "+err.Error(), st.Axes)
					}
				}
			}
		}
		for _, g := range st.Config.Groups {
			for _, j := range g.Jobs {
				if j.Diskless() {
					continue
				}
				if e := j.Engine(); e != nil && e.Has(bench.SyncIO) && minDepth > 0 && j.IODepth > minDepth {
					add(fmt.Sprintf("ioengine=%s does one I/O at a time (fio caps sync engines at depth 1): an iodepth above %d measures what iodepth=%d does; sweep iodepth with an asynchronous engine (io_uring, libaio)",
						j.IOEngine, minDepth, minDepth), st.Axes)
				}
				for _, path := range j.FilePaths() {
					t := target(path)
					if t == nil {
						continue
					}
					if j.NeedsPollQueues() {
						if err := rn.Sys.CheckPoll(*t); err != nil {
							add(err.Error(), st.Axes)
						}
					}
					if j.Direct {
						align := int64(t.LogicalBlockSize)
						if !t.IsBlock && t.DIOOffsetAlign > 0 {
							align = int64(t.DIOOffsetAlign)
						}
						lo, hi := j.BlockSizes(bench.Read)
						wlo, whi := j.BlockSizes(bench.Write)
						if align > 0 && (lo%align != 0 || hi%align != 0 || wlo%align != 0 || whi%align != 0 || j.Offset%align != 0) {
							add(fmt.Sprintf("direct I/O on %s needs bs and offset in multiples of %d bytes (bs=%d, offset=%d)", t.Path, align, j.BS, j.Offset), st.Axes)
						}
					}
				}
			}
		}
	}
	return problems
}

// jobPaths lists the distinct files a config's jobs use.
func jobPaths(cfg *bench.Config) []string { return bench.ConfigPaths(cfg) }

func sameAxes(a, b []AxisValue) bool { return slices.Equal(a, b) }

// sweep returns the plan's sweep on axis a.
func (p *Plan) sweep(a Axis) (Sweep, bool) {
	for _, s := range p.Sweeps {
		if s.Axis == a {
			return s, true
		}
	}
	return Sweep{}, false
}

// skipped reports whether the plan leaves the combination axes out.
func (p *Plan) skipped(axes []AxisValue) bool {
	return slices.ContainsFunc(p.Skipped, func(s Skip) bool { return sameAxes(s.Axes, axes) })
}

// CheckOffline is Check without the targets: it finds the problems that
// need no device to tell (an iodepth a sync engine ignores) and refuses or
// records them as Check does. Front doors call it when a target does not
// exist yet, before the run lays it out; the run's own Check does the
// rest.
func CheckOffline(plan *Plan) error {
	steps, err := plan.Steps()
	if err != nil {
		return err
	}
	_, err = CheckOfflineSteps(plan, steps)
	return err
}

// CheckOfflineSteps is CheckOffline of plan's steps as plan.Steps made
// them: it returns the steps to run, those given unless SkipImpossible
// left some out.
func CheckOfflineSteps(plan *Plan, steps []Step) ([]Step, error) {
	if err := traceOffline(plan); err != nil {
		return nil, err
	}
	return settle(plan, steps, preflight(nil, plan, steps, nil))
}

// traceOffline is the block-layer trace's check of a plan whose targets
// the run lays out: a file to be laid out on a filesystem with no block
// device under it, or on btrfs, cannot be traced (bench's CheckTraceBlock
// says the same of a file that is there).
func traceOffline(plan *Plan) error {
	if !plan.Base.TraceBlock && !plan.TraceBlockWhereAble {
		return nil
	}
	var why error
	for _, g := range plan.Base.Groups {
		for _, j := range g.Jobs {
			for _, path := range j.FilePaths() {
				if _, err := os.Stat(path); err == nil || why != nil {
					continue
				}
				t, err := system.FS{}.ResolveTarget(path)
				if err != nil {
					why = fmt.Errorf("--trace-block: %w", err)
				} else {
					why = bench.CheckTraceFile(t)
				}
			}
		}
	}
	if why == nil {
		return nil
	}
	if plan.Base.TraceBlock {
		return why
	}
	note := "the block layer is not traced (no time split): " + why.Error()
	if !slices.Contains(plan.Notes, note) {
		plan.Notes = append(plan.Notes, note)
	}
	return nil
}

// settle refuses a plan with problems, or with SkipImpossible records the
// impossible combinations in plan.Skipped; a plan left with no step is
// refused either way. It returns the steps left to run: steps when
// nothing was left out, else the plan's steps made again without the
// impossible ones.
func settle(plan *Plan, steps []Step, problems []Problem) ([]Step, error) {
	if len(problems) == 0 {
		return steps, nil
	}
	combos := 0
	for _, st := range steps {
		if st.Repeat == 0 {
			combos++
		}
	}
	if !plan.SkipImpossible {
		return nil, &PreflightError{Problems: problems, Combos: combos}
	}
	for _, p := range problems {
		for _, axes := range p.Axes {
			if !plan.skipped(axes) {
				plan.Skipped = append(plan.Skipped, Skip{Axes: axes, Reason: p.Reason})
			}
		}
	}
	left, err := plan.Steps()
	if err != nil {
		return nil, err
	}
	if len(left) == 0 {
		return nil, &PreflightError{Problems: problems, Combos: combos}
	}
	return left, nil
}
