package launch

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"

	"iolab/bench"
	"iolab/bench/record"
	"iolab/bench/sweep"
	"iolab/bench/system"
)

// Prepared is a plan made ready to run on this machine, worked out once
// by Prepare: the front doors (the CLI, the dashboard's launch, a fleet's
// run here, an agent) hand it to Execute or the Launcher, which neither
// expand its steps nor resolve its targets again.
type Prepared struct {
	Plan *sweep.Plan
	// Steps are the plan's steps, without those SkipImpossible left out.
	Steps []sweep.Step
	// Record is the run as it will be recorded: the plan, this host and
	// its targets, status running (Launch stores it queued). Nil when
	// the plan was prepared for other hosts only (CheckNone).
	Record *record.Run
	// Devices are the keys of the devices the run needs to itself, for
	// the one-run-per-device rule: the whole disk when there is one, else
	// the filesystem's device number (tmpfs), else the path. Nil with
	// CheckNone.
	Devices []string
}

// Check says how Prepare checks a plan against this machine.
type Check int

const (
	// CheckNone expands the steps only: the plan runs on other hosts,
	// each of which checks its own targets (a fleet without this machine).
	CheckNone Check = iota
	// CheckTargets checks the plan against its targets (sweep.Check),
	// laying out missing files: the CLI, an agent.
	CheckTargets
	// CheckExisting checks the plan against its targets when they all
	// exist, else makes only the checks that need no device
	// (sweep.CheckOffline) and leaves laying out files to the run, off
	// the request: the dashboard. A missing device, or a missing file
	// without a size, is a *MissingTargetError.
	CheckExisting
)

// Options are what a front door adds to a plan it prepares.
type Options struct {
	Check Check
	// Admit, when set, is called with the plan before anything looks at
	// its targets: the front door's allow-list.
	Admit func(*sweep.Plan) error
	Tags  []string // the record's
}

// Stage names what Prepare was doing when it failed, so that a front
// door can say which of its fields is at fault.
type Stage string

// Prepare's stages, in order.
const (
	StagePlan    Stage = "plan"    // NewPlan: options, job file, preset, limits, quota
	StageAdmit   Stage = "admit"   // Options.Admit
	StageSteps   Stage = "steps"   // the plan's steps
	StageTargets Stage = "targets" // a target that is not there (CheckExisting)
	StageCheck   Stage = "check"   // sweep.Check or sweep.CheckOffline
	StageRecord  Stage = "record"  // this host's description
)

// PrepareError is Prepare's error: the stage it failed at and the error,
// whose message it keeps as it is.
type PrepareError struct {
	Stage Stage
	Err   error
}

func (e *PrepareError) Error() string { return e.Err.Error() }
func (e *PrepareError) Unwrap() error { return e.Err }

// MissingTargetError is a target of a job that is not there and that the
// run will not make: a device (iolab never creates files in /dev), or a
// file without a size to lay it out with.
type MissingTargetError struct {
	Job, Path string
	Device    bool
}

func (e *MissingTargetError) Error() string {
	if e.Device {
		return fmt.Sprintf("job %s: %s: no such device (detached since the server started? iolab never creates files in /dev)", e.Job, e.Path)
	}
	return fmt.Sprintf("job %s: %s does not exist; give size= so iolab creates it", e.Job, e.Path)
}

// counts are how many times this package has expanded a plan's steps and
// resolved a plan's targets, for the tests that hold a launch to one of
// each (Counts).
var counts struct{ expansions, resolutions atomic.Int64 }

// Counts reports how many times, since the process started, this package
// expanded a plan's steps and resolved a plan's targets (each a whole
// pass over the plan). A launch from any front door does each once, in
// Prepare; tests compare the counts before and after one.
func Counts() (expansions, resolutions int64) {
	return counts.expansions.Load(), counts.resolutions.Load()
}

// expand is plan.Steps, counted.
func expand(plan *sweep.Plan) ([]sweep.Step, error) {
	counts.expansions.Add(1)
	return plan.Steps()
}

// Prepare builds the plan spec describes (NewPlan) and prepares it
// (PreparePlan).
func Prepare(spec Spec, runner *bench.Runner, opts Options) (*Prepared, error) {
	plan, err := NewPlan(spec)
	if err != nil {
		return nil, &PrepareError{Stage: StagePlan, Err: err}
	}
	return PreparePlan(plan, runner, opts)
}

// PreparePlan makes plan ready to run here, once: the front door's
// allow-list (opts.Admit), the steps, the check against the targets
// (opts.Check), and the run's record and device keys from one resolution
// of every target. Errors are *PrepareError. The run's own check, at its
// start, is the engine's (sweep.Run): a queued run's targets may change
// while it waits, and a file is laid out only then.
func PreparePlan(plan *sweep.Plan, runner *bench.Runner, opts Options) (*Prepared, error) {
	fail := func(stage Stage, err error) (*Prepared, error) {
		return nil, &PrepareError{Stage: stage, Err: err}
	}
	if opts.Admit != nil {
		if err := opts.Admit(plan); err != nil {
			return fail(StageAdmit, err)
		}
	}
	steps, err := expand(plan)
	if err != nil {
		return fail(StageSteps, err)
	}
	switch opts.Check {
	case CheckTargets:
		steps, err = sweep.CheckSteps(runner, plan, steps)
	case CheckExisting:
		var exist bool
		if exist, err = targetsExist(plan); err != nil {
			return fail(StageTargets, err)
		}
		if exist {
			steps, err = sweep.CheckSteps(runner, plan, steps)
		} else {
			steps, err = sweep.CheckOfflineSteps(plan, steps)
		}
	}
	if err != nil {
		return fail(StageCheck, err)
	}
	p := &Prepared{Plan: plan, Steps: steps}
	if opts.Check == CheckNone {
		return p, nil
	}
	if p.Record, p.Devices, err = resolve(plan, runner, opts.Tags); err != nil {
		return fail(StageRecord, err)
	}
	return p, nil
}

// targetsExist reports whether every file of every job is there; a
// missing one the run cannot make is a *MissingTargetError.
func targetsExist(plan *sweep.Plan) (bool, error) {
	exist := true
	for _, g := range plan.Base.Groups {
		for _, j := range g.Jobs {
			for _, path := range j.FilePaths() {
				if _, err := os.Stat(path); err != nil {
					exist = false
					if strings.HasPrefix(filepath.Clean(path), "/dev/") {
						// Never a file to make: a device that is not there.
						return false, &MissingTargetError{Job: j.Name, Path: path, Device: true}
					}
					if j.Size <= 0 && j.FileSize[0] == 0 {
						return false, &MissingTargetError{Job: j.Name, Path: path}
					}
				}
			}
		}
	}
	return exist, nil
}

// resolve describes the run for the record — the plan, the host and its
// targets, status running as `iolab run` stores it — and works out the
// keys of the devices it uses (Prepared.Devices), resolving each target
// once for both.
func resolve(plan *sweep.Plan, runner *bench.Runner, tags []string) (*record.Run, []string, error) {
	counts.resolutions.Add(1)
	host, err := runner.Sys.Host()
	if err != nil {
		return nil, nil, fmt.Errorf("read the host's description: %w", err)
	}
	host.Clock = bench.ClockSource()
	rec := &record.Run{Name: plan.Name, Status: record.StatusRunning, Source: record.SourceLocal, Hostname: host.Hostname, Kernel: host.KernelRelease,
		Plan: *plan, Host: host, Tags: tags}
	var devices []string
	// Files yet to be made in one directory are described alike (from
	// the directory), and every regular file of a filesystem has its
	// device key: each is worked out once, not once a file (a job of 1000
	// files read sysfs and mountinfo 1000 times).
	missing := map[string]system.Target{}
	byFS := map[uint64]string{}
	for _, path := range bench.ConfigPaths(&plan.Base) {
		dir := filepath.Dir(path)
		_, err := os.Lstat(path)
		gone := errors.Is(err, fs.ErrNotExist)
		t, derived := missing[dir]
		var terr error
		if derived && gone {
			t.Path, t.Resolved = path, filepath.Join(filepath.Dir(t.Resolved), filepath.Base(path))
		} else if t, terr = runner.Sys.ResolveTarget(path); terr == nil && gone && !t.IsBlock {
			missing[dir] = t
		}
		if terr == nil {
			rec.Targets = append(rec.Targets, t)
		}
		if rec.Target == "" {
			rec.Target = path
		}
		key := deviceKey(runner, path, t, terr, byFS)
		if !slices.Contains(devices, key) {
			devices = append(devices, key)
		}
	}
	rec.Engines, rec.Schedulers = plan.EnginesAndSchedulers(rec.Targets)
	return rec, devices, nil
}
