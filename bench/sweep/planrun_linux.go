package sweep

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"iolab/bench"
	"iolab/bench/system"
)

// Run runs every step of plan in order. Before anything runs it checks
// what would fail every step (sweep values, scheduler names and
// permissions); a step that fails on its own (hipri without poll queues)
// is recorded as failed and the plan goes on. Schedulers the plan switched
// are put back when it ends, however it ends.
func Run(ctx context.Context, rn *bench.Runner, plan *Plan, hooks PlanHooks) (results []StepResult, err error) {
	steps, err := plan.Steps()
	if err != nil {
		return nil, err
	}
	steps, disks, err := check(rn, plan, steps)
	if err != nil {
		return nil, err
	}
	for _, d := range disks {
		restore, err := holdScheduler(rn, d, hooks)
		if err != nil {
			return nil, err
		}
		defer func() {
			if rerr := restore(); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}()
	}

	// A PTS test purges and preconditions its device before its first
	// round; what was done is recorded with the first step.
	var prep *Prep
	if plan.PTS != nil {
		if err := plan.ptsCheck(); err != nil {
			return nil, err
		}
		if prep, err = precondition(ctx, rn, plan); err != nil {
			return nil, err
		}
	}

	// runAll runs steps in order; false when the plan must stop (cancel,
	// or the store failed: err says which).
	runAll := func(steps []Step, total int) bool {
		for i := range steps {
			st := &steps[i]
			if ctx.Err() != nil {
				return false
			}
			if hooks.StepStarted != nil {
				hooks.StepStarted(st, total)
			}
			var res StepResult
			if rerr := ResolveRate(st, results); rerr != nil {
				now := time.Now()
				res = StepResult{Step: *st, Status: StepFailed, Error: rerr.Error(), Start: now, End: now}
			} else {
				res = runStep(ctx, rn, plan, st, disks)
			}
			if len(results) == 0 {
				res.Prep = prep
			}
			results = append(results, res)
			if hooks.StepDone != nil {
				if herr := hooks.StepDone(&results[len(results)-1]); herr != nil {
					err = fmt.Errorf("step %d: %w", st.Seq+1, herr)
					return false
				}
			}
			if res.Status == StepCancelled {
				return false
			}
		}
		return true
	}
	more := runAll(steps, len(steps))
	// With AutoRepeat, the combinations whose median is not yet known well
	// enough run again, a round at a time, until it is or the cap is hit.
	for round := plan.rounds(); more && plan.AutoRepeat != nil && round < plan.AutoRepeat.Max; round++ {
		next, nerr := plan.nextRound(results, round, len(results))
		if nerr != nil {
			return results, nerr
		}
		if len(next) == 0 {
			break
		}
		more = runAll(next, len(results)+len(next))
	}
	// A PTS test runs round after round until the specification's steady
	// state, its rounds run out, or (WSAT) it has written enough.
	for round := 1; more && plan.PTS != nil; round++ {
		next, nerr := plan.ptsNextRound(results, round, len(results))
		if nerr != nil {
			return results, nerr
		}
		if len(next) == 0 {
			break
		}
		more = runAll(next, len(results)+len(next))
	}
	if err != nil {
		return results, err
	}
	if ctx.Err() != nil {
		return results, fmt.Errorf("run cancelled: %w", context.Cause(ctx))
	}
	return results, nil
}

// Check finds, before anything runs, what would make steps of plan fail.
// What would fail every step is an error: a bad sweep value, a target that
// is missing, unsafe to write or misaligned for O_DIRECT, a scheduler
// switch this process may not make. What makes only some steps impossible
// (hipri without poll queues, a scheduler one disk lacks, an iodepth a sync
// engine ignores…) is a *PreflightError listing every problem — unless the
// plan has SkipImpossible, in which case Check records those steps in
// plan.Skipped and the plan runs without them.
func Check(rn *bench.Runner, plan *Plan) error {
	steps, err := plan.Steps()
	if err != nil {
		return err
	}
	_, _, err = check(rn, plan, steps)
	return err
}

// CheckSteps is Check of plan's steps as plan.Steps made them, for a
// caller that has them already (bench/launch's Prepare): it returns the
// steps to run, those given unless SkipImpossible left some out.
func CheckSteps(rn *bench.Runner, plan *Plan, steps []Step) ([]Step, error) {
	steps, _, err := check(rn, plan, steps)
	return steps, err
}

func check(rn *bench.Runner, plan *Plan, steps []Step) ([]Step, []string, error) {
	if plan.PTS != nil {
		if err := plan.ptsCheck(); err != nil {
			return nil, nil, err
		}
		if paths := bench.ConfigPaths(&plan.Base); len(paths) != 1 || !system.IsBlockDevice(paths[0]) {
			return nil, nil, &bench.OptionError{Option: "filename", Msg: fmt.Sprintf("a PTS test runs on one block device (it purges and writes all of it), not %s", strings.Join(paths, ", "))}
		}
	}
	base := plan.Base
	base.Jobs = nil
	base.Groups = slices.Clone(base.Groups)
	for g := range base.Groups {
		base.Groups[g].Jobs = slices.Clone(base.Groups[g].Jobs)
		for i := range base.Groups[g].Jobs {
			base.Groups[g].Jobs[i].Hipri = false
		}
	}
	files, err := rn.Prepare(&base)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case base.TraceBlock:
		if err := rn.CheckTraceBlock(files); err != nil {
			return nil, nil, err
		}
	case plan.TraceBlockWhereAble:
		traceWhereAble(rn, plan, steps, files)
	}
	disks, err := schedulerDisks(rn, plan, steps)
	if err != nil {
		// The scheduler sweep's, in the same words: a front door says it
		// beside what sets it.
		return nil, nil, &bench.OptionError{Option: string(AxisScheduler), Msg: err.Error(), Err: err}
	}
	jobDisks, err := ioSchedulerDisks(rn, plan, disks)
	if err != nil {
		return nil, nil, err
	}
	if steps, err = settle(plan, steps, preflight(rn, plan, steps, disks)); err != nil {
		return nil, nil, err
	}
	return steps, append(disks, jobDisks...), nil
}

// traceWhereAble turns the block-layer trace on for the plan and its steps
// where the targets and this process allow it, and notes why not where
// they do not: a preset traces where it can, the plan runs either way.
func traceWhereAble(rn *bench.Runner, plan *Plan, steps []Step, files [][]bench.JobFiles) {
	if err := rn.CheckTraceBlock(files); err != nil {
		note := "the block layer is not traced (no time split): " + err.Error()
		if !slices.Contains(plan.Notes, note) {
			plan.Notes = append(plan.Notes, note)
		}
		return
	}
	plan.Base.TraceBlock = true
	for i := range steps {
		steps[i].Config.TraceBlock = true
	}
}

// runStep prepares and runs one step: discard, drop caches, scheduler,
// then the jobs, with the machine's and the process's CPU around them.
func runStep(ctx context.Context, rn *bench.Runner, plan *Plan, st *Step, disks []string) StepResult {
	res := StepResult{Step: *st, Start: time.Now()}
	fail := func(err error) StepResult {
		res.Status, res.Error, res.End = StepFailed, err.Error(), time.Now()
		if ctx.Err() != nil {
			res.Status = StepCancelled
			return res
		}
		// A failed step carries no figures: whatever its jobs measured
		// before the error, and the CPU over its short life, are not
		// numbers anyone can use.
		res.Unvouched = res.Result
		res.Result, res.CPU, res.Proc = nil, system.CPUBreakdown{}, system.ProcCPU{}
		return res
	}
	if plan.Discard {
		for _, path := range blockTargets(&st.Config) {
			if err := system.Discard(path); err != nil {
				return fail(fmt.Errorf("discard before the step: %w", err))
			}
		}
	}
	if plan.DropCaches {
		if err := rn.Sys.DropCaches(); err != nil {
			return fail(fmt.Errorf("drop caches before the step: %w", err))
		}
	}
	if st.Scheduler != "" {
		for _, d := range disks {
			if err := rn.Sys.SetScheduler(d, st.Scheduler); err != nil {
				return fail(err)
			}
		}
	}
	cpu0, _ := rn.Sys.CPUTimes()
	proc0, _ := system.ProcessCPU()
	stalls := watchStalls()
	began := time.Now()
	result, err := rn.Run(ctx, &st.Config)
	stalled, wall := stalls(), time.Since(began)
	cpu1, _ := rn.Sys.CPUTimes()
	proc1, _ := system.ProcessCPU()
	// Read back, after the jobs, the scheduler they ran under.
	for _, d := range disks {
		if active, _, serr := rn.Sys.Schedulers(d); serr == nil {
			if res.Schedulers == nil {
				res.Schedulers = map[string]string{}
			}
			res.Schedulers[d] = active
		}
	}
	// A job's ioscheduler was put back with its group; the step ran
	// under it.
	if result != nil {
		for _, g := range result.Groups {
			for d, s := range g.Schedulers {
				if res.Schedulers == nil {
					res.Schedulers = map[string]string{}
				}
				res.Schedulers[d] = s
			}
		}
	}
	res.Result = result
	res.CPU = system.CPUDelta(cpu0, cpu1)
	res.Proc = proc1.Sub(proc0)
	res.End = time.Now()
	res.Status = StepDone
	if err == nil {
		err = stallError(stalled, wall, result)
	}
	if err != nil {
		return fail(err)
	}
	return res
}

// blockTargets lists the distinct block devices a config's jobs use.
func blockTargets(cfg *bench.Config) []string {
	var out []string
	for _, p := range bench.ConfigPaths(cfg) {
		if system.IsBlockDevice(p) {
			out = append(out, p)
		}
	}
	return out
}

// schedulerDisks checks, before anything runs, that every scheduler the
// plan names is offered by every disk it will switch and that the switch
// is allowed; it returns those disks.
func schedulerDisks(rn *bench.Runner, plan *Plan, steps []Step) ([]string, error) {
	var names []string
	for _, st := range steps {
		if st.Scheduler != "" && !slices.Contains(names, st.Scheduler) {
			names = append(names, st.Scheduler)
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	var disks []string
	for _, g := range plan.Base.Groups {
		for _, j := range g.Jobs {
			if j.Diskless() {
				continue
			}
			ds, err := jobDisks(rn, plan, &j)
			if err != nil {
				return nil, err
			}
			for _, d := range ds {
				if !slices.Contains(disks, d) {
					disks = append(disks, d)
				}
			}
		}
	}
	for _, d := range disks {
		for _, n := range names {
			// A name the disk does not offer makes only its steps
			// impossible (preflight); anything else (no scheduler at all,
			// no permission) stops the plan.
			if err := rn.Sys.CheckScheduler(d, n); err != nil && !errors.Is(err, system.ErrSchedulerNotOffered) {
				return nil, err
			}
		}
	}
	return disks, nil
}

// holdScheduler records disk's scheduler (in the store, through hooks)
// and returns the function that puts it back.
func holdScheduler(rn *bench.Runner, disk string, hooks PlanHooks) (func() error, error) {
	original, _, err := rn.Sys.Schedulers(disk)
	if err != nil {
		return nil, err
	}
	var token int64
	if hooks.SchedulerSwitched != nil {
		if token, err = hooks.SchedulerSwitched(disk, original); err != nil {
			return nil, fmt.Errorf("record %s's scheduler %s before switching it: %w", disk, original, err)
		}
	}
	return func() error {
		cur, _, err := rn.Sys.Schedulers(disk)
		if err == nil && cur != original {
			err = rn.Sys.SetScheduler(disk, original)
		}
		if err != nil {
			return fmt.Errorf("restore %s's scheduler to %s: %w", disk, original, err)
		}
		if hooks.SchedulerRestored != nil {
			hooks.SchedulerRestored(token)
		}
		return nil
	}, nil
}
