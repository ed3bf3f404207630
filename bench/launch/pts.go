package launch

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/pts"
	"iolab/bench/sweep"
	"iolab/bench/units"
)

// newPTSPlan builds the plan of a PTS test: one job on the device, the
// test's fio options, the outstanding I/O, each element's round time
// (time_based) and the active range, then the spec's own fio options
// (--ioengine, …) over them; the test's matrix as the plan's sweeps.
func newPTSPlan(spec Spec) (*sweep.Plan, error) {
	ps := *spec.PTS
	bad := func(option, msg string) (*sweep.Plan, error) {
		return nil, &bench.OptionError{Option: option, Msg: msg}
	}
	switch {
	case spec.Preset != "" || spec.JobFile != "":
		return bad("pts", "a PTS test is its own plan: give no preset or job file")
	case len(spec.Sweeps) > 0 || spec.Repeat > 1 || spec.AutoRepeat != nil:
		return bad("pts", "a PTS test's rounds are its repeats and its matrix its sweeps: give no --sweep or --repeat (--rounds bounds the rounds)")
	case spec.Discard:
		return bad("pts", "a PTS test purges the device once, before preconditioning (--purge): give no --discard")
	}
	filename, rest := takeFilename(spec.Args)
	rest, err := takePTSOptions(&ps, rest)
	if err != nil {
		return nil, err
	}
	if err := ps.Check(); err != nil {
		return bad("pts", err.Error())
	}
	t, _ := pts.Lookup(ps.Test)
	if filename == "" {
		return bad("filename", "a PTS test needs its device: --filename=DEV")
	}
	for _, a := range rest {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "sweep", "repeat", "preset":
			return bad("pts", "--"+name+": a PTS test's matrix is its sweeps and its rounds its repeats; scale the matrix down with its options' values (--bs=4k,64k) and the rounds with --rounds")
		}
		if name == "name" || !strings.HasPrefix(a, "-") {
			return bad("pts", "a PTS test runs one job of its own: "+a+" is another job or a job file")
		}
	}
	numjobs, iodepth := ps.OIO(t)
	args := []string{"--filename=" + filename, "--name=pts-" + t.Name, "--ioengine=libaio", "--direct=1",
		"--numjobs=" + strconv.Itoa(numjobs), "--iodepth=" + strconv.Itoa(iodepth),
		"--runtime=" + units.FormatDuration(ps.Round()), "--time_based"}
	matrix := ps.Matrix(t)
	if numjobs > 1 || sweepsOption(matrix, "numjobs") {
		// A job's clones are reported as one: the element's figure is
		// theirs together, as the specification's thread count means.
		args = append(args, "--group_reporting")
	}
	if ps.Size > 0 {
		args = append(args, "--size="+strconv.FormatInt(ps.Size, 10))
	}
	args = append(args, t.Options...)
	args = append(args, rest...)
	ps.Args = rest
	cfg, err := fio.ParseArgs(args)
	if err != nil {
		return nil, err
	}
	plan := &sweep.Plan{Name: "pts-" + t.Name, Repeat: 1, PTS: &ps, Args: args, Base: *cfg,
		DropCaches: spec.DropCaches, AllowDiskScheduler: spec.AllowDiskScheduler}
	for _, a := range matrix {
		plan.Sweeps = append(plan.Sweeps, sweep.Sweep{Axis: sweep.Axis(a.Option), Values: a.Values})
	}
	plan.Base.TraceBlock = spec.TraceBlock
	if spec.Name != "" {
		plan.Name = spec.Name
	}
	if err := plan.CheckLimits(spec.Limits); err != nil {
		return nil, err
	}
	if spec.Quota != nil {
		if err := spec.Quota.Check(plan); err != nil {
			return nil, err
		}
	}
	return plan, nil
}

// takePTSOptions moves the fio options that are a PTS test's parameters
// out of args into ps: --runtime (each element's time in a round), --size
// (the active range), --numjobs and --iodepth (the outstanding I/O; for a
// test whose matrix sweeps them, a list replaces the matrix's values:
// --numjobs=4,2,1), and any option of the test's matrix (--bs=4k,64k,
// --rwmixread=100,0: the matrix scaled down).
func takePTSOptions(ps *pts.Spec, args []string) ([]string, error) {
	t, err := pts.Lookup(ps.Test)
	if err != nil {
		return nil, &bench.OptionError{Option: "pts", Msg: err.Error()}
	}
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") {
			rest = append(rest, a)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		axis := slices.ContainsFunc(t.Axes, func(a pts.Axis) bool { return a.Option == name })
		switch {
		case name == "runtime", name == "size", name == "numjobs", name == "iodepth", axis:
		default:
			rest = append(rest, a)
			continue
		}
		if !hasValue && i+1 < len(args) {
			value = args[i+1]
			i++
		}
		bad := func(err error) error { return &bench.OptionError{Option: name, Value: value, Msg: err.Error()} }
		switch {
		case name == "runtime":
			d, err := units.ParseDuration(value)
			if err != nil {
				return nil, bad(err)
			}
			ps.RoundTime = d
		case name == "size":
			n, err := units.ParseSize(value)
			if err != nil {
				return nil, bad(err)
			}
			ps.Size = n
		case axis:
			// The test's matrix on this option, scaled down: the
			// values must still include the tracking element's
			// (pts.Spec.Check), and each is checked as the steps are
			// made.
			vals := strings.Split(value, ",")
			ps.Axes = append(slices.DeleteFunc(ps.Axes, func(a pts.Axis) bool { return a.Option == name }), pts.Axis{Option: name, Values: vals})
		default: // numjobs, iodepth outside the matrix: the outstanding I/O
			vals := strings.Split(value, ",")
			if len(vals) != 1 {
				return nil, bad(fmt.Errorf("the %s test runs at one %s", t.Name, name))
			}
			n, err := units.ParseInt(vals[0], 1, 4096)
			if err != nil {
				return nil, bad(err)
			}
			if name == "numjobs" {
				ps.NumJobs = n
			} else {
				ps.IODepth = n
			}
		}
	}
	return rest, nil
}

func sweepsOption(matrix []pts.Axis, option string) bool {
	for _, a := range matrix {
		if a.Option == option && len(a.Values) > 1 {
			return true
		}
	}
	return false
}

// NamesDevice says whether destroy, the path a PTS test's --yes-destroy
// (the API's yes_destroy) gives, names dev, the device the test
// overwrites: the same path, or another path to the same device.
func NamesDevice(dev, destroy string) bool {
	if destroy == "" {
		return false
	}
	if filepath.Clean(destroy) == filepath.Clean(dev) {
		return true
	}
	a, errA := os.Stat(dev)
	b, errB := os.Stat(destroy)
	return errA == nil && errB == nil && os.SameFile(a, b)
}
