package handlers

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"iolab/bench"
	"iolab/bench/launch"
	"iolab/bench/pts"
	"iolab/bench/sweep"
	"iolab/bench/system"
)

// A SNIA PTS test launched from the dashboard: POST /api/runs with "pts"
// (a pts.Spec) and "yes_destroy", or the form's PTS part (POST
// /runs/pts, new_run_pts.go). The test purges and overwrites a whole
// device, so the device is refused unless it is one the dashboard's
// owner named (--allow-target), a block device, not mounted, held or
// carrying a filesystem, and named again in yes_destroy, as the CLI's
// --yes-destroy asks. The plan is launch's (launch.Spec.PTS), prepared
// once like any other run's.

// maxYesDestroy bounds yes_destroy: a device's path.
const maxYesDestroy = 4096

// preparePTS is prepare for a request with PTS: the request's own
// checks, the device's, then launch.Prepare once.
func (s *Server) preparePTS(req *PlanRequest, check launch.Check) (*launch.Prepared, error) {
	if err := ptsRequestAlone(req); err != nil {
		return nil, err
	}
	ps := *req.PTS
	if len(ps.Test) > 64 || strings.ContainsAny(ps.Test, "\n\x00") {
		return nil, &ValidationError{Field: "pts.test", Msg: "pts: unknown PTS test: the tests are " + strings.Join(pts.TestNames(), ", ")}
	}
	ps.Axes = slices.Clone(ps.Axes)
	for _, a := range ps.Axes {
		for _, v := range a.Values {
			if v == "" || len(v) > 64 || strings.ContainsAny(v, "\n\x00,") {
				return nil, &ValidationError{Field: "pts.axes", Msg: fmt.Sprintf("pts.axes %s: %q is not one value of the option", a.Option, v)}
			}
		}
	}
	if err := ps.Check(); err != nil {
		return nil, &ValidationError{Field: ptsField(err.Error()), Msg: "pts: " + err.Error()}
	}
	dev, args, err := ptsArgs(req)
	if err != nil {
		return nil, err
	}
	if err := s.ptsDevice(req, dev); err != nil {
		return nil, err
	}
	spec := launch.Spec{Name: req.Name, PTS: &ps, Args: args, DropCaches: req.DropCaches, TraceBlock: req.TraceBlock,
		Limits: s.limits, Quota: s.quota}
	prep, err := launch.Prepare(spec, s.newRunner(), launch.Options{Check: check, Tags: []string{"pts"},
		Admit: func(plan *sweep.Plan) error { return s.admit(req, plan) }})
	if err != nil {
		// The spec's own refusals are pts's fields; an option's, its own.
		if oe, ok := errors.AsType[*bench.OptionError](err); ok && oe.Option == "pts" {
			return nil, &ValidationError{Field: ptsField(oe.Msg), Msg: "pts: " + oe.Msg}
		}
		return nil, prepareError(req, err)
	}
	return prep, nil
}

// ptsRequestAlone refuses what a PTS test does not take: it is its own
// plan (no preset, job file, jobs, sweeps or repeats: its matrix and
// rounds are its own), purges once (no discard) and runs on this
// machine's device (no hosts).
func ptsRequestAlone(req *PlanRequest) error {
	bad := func(field, what string) error {
		return &ValidationError{Field: field, Msg: "a PTS test is its own plan: " + what}
	}
	switch {
	case req.grouped || isGroup(req.Hosts):
		return bad("hosts", "it runs on this machine's device alone, give no hosts")
	case req.Preset != "":
		return bad("preset", "give no preset")
	case req.JobFile != "":
		return bad("jobfile", "give no job file")
	case len(req.Jobs) > 0:
		return bad("jobs", "it runs one job of its own, give no jobs")
	case len(req.Sweep) > 0:
		return bad("sweep", "its matrix is its sweeps, give no sweep (pts.axes scale the matrix down)")
	case req.Repeat.N > 1 || req.Repeat.Auto != nil:
		return bad("repeat", "its rounds are its repeats, give no repeat (pts.max_rounds bounds the rounds)")
	case req.Discard:
		return bad("discard", "it purges the device once, before preconditioning (pts.purge): give no discard")
	case req.SkipImpossible:
		return bad("skip_impossible", "every element of its matrix runs, give no skip_impossible")
	case req.SLO != "":
		return bad("slo", "give no slo")
	case len(req.Name) > 200:
		return &ValidationError{Field: "name", Msg: "name: at most 200 characters"}
	}
	return nil
}

// ptsArgs is the request's fio options as the PTS plan takes them: the
// device (options.filename, one absolute path) and the others as they
// are (launch moves runtime, size, numjobs, iodepth and the matrix's
// options into the spec).
func ptsArgs(req *PlanRequest) (dev string, args []string, err error) {
	dev = string(req.Options["filename"])
	switch {
	case dev == "":
		return "", nil, &ValidationError{Field: "options.filename", Msg: "a PTS test needs its device: options.filename, an allowed block device"}
	case strings.ContainsAny(dev, "\n\x00"):
		return "", nil, &ValidationError{Field: "options.filename", Msg: "filename: the value has a line break"}
	case !filepath.IsAbs(dev):
		return "", nil, &ValidationError{Field: "options.filename", Msg: fmt.Sprintf("%s: a PTS test runs on a device: give its absolute path", dev)}
	case len(bench.SplitFileList(dev)) != 1:
		return "", nil, &ValidationError{Field: "options.filename", Msg: fmt.Sprintf("%s: a PTS test runs on one device", dev)}
	}
	args = []string{"--filename=" + dev}
	for _, k := range slices.Sorted(maps.Keys(req.Options)) {
		v := string(req.Options[k])
		field := "options." + k
		switch {
		case k == "filename":
			continue
		case !optionName.MatchString(k) || k == "name":
			return "", nil, &ValidationError{Field: field, Msg: fmt.Sprintf("%q is not an option name (fio's names: ioengine, …)", k)}
		case strings.ContainsAny(v, "\n\x00"):
			return "", nil, &ValidationError{Field: field, Msg: fmt.Sprintf("option %s: the value has a line break", k)}
		case k == "directory" || k == "filename_format" || k == "opendir":
			return "", nil, &ValidationError{Field: field, Msg: fmt.Sprintf("option %s: a PTS test runs on the device options.filename names", k)}
		case k == "allow_mounted_write":
			return "", nil, &ValidationError{Field: field, Msg: "allow_mounted_write: a PTS test purges and overwrites the whole device, never a mounted one"}
		}
		args = append(args, "--"+k+"="+v)
	}
	return dev, args, nil
}

// ptsDevice refuses a device the test may not destroy: one off the
// allow-list, not named again in yes_destroy, not a block device, or in
// use (mounted, held, a filesystem's or a partition table's).
func (s *Server) ptsDevice(req *PlanRequest, dev string) error {
	field := "options.filename"
	clean := filepath.Clean(dev)
	if s.dataDir != "" && launch.Within(s.dataDir, clean) {
		return &ValidationError{Field: field, Msg: fmt.Sprintf("%s is a file under the data directory, not a device: a PTS test purges and preconditions a whole block device on the dashboard's allow-list (--allow-target)", dev)}
	}
	if !slices.Contains(s.allowTargets, clean) {
		allowed := "none (start the dashboard with --allow-target DEV)"
		if len(s.allowTargets) > 0 {
			allowed = strings.Join(s.allowTargets, ", ")
		}
		return &ValidationError{Field: field, Msg: fmt.Sprintf("%s is not on the dashboard's allow-list (--allow-target): a PTS test overwrites only a device its owner named; allowed: %s", dev, allowed)}
	}
	destroy := req.YesDestroy
	switch {
	case len(destroy) > maxYesDestroy || strings.ContainsAny(destroy, "\n\x00"):
		return &ValidationError{Field: "yes_destroy", Msg: "yes_destroy: a device's path"}
	case destroy == "":
		return &ValidationError{Field: "yes_destroy", Msg: fmt.Sprintf("the test purges and overwrites all of %s: give yes_destroy %s, the device's path again, to say so", dev, dev)}
	}
	fi, err := os.Stat(clean)
	if err != nil {
		return &ValidationError{Field: field, Msg: fmt.Sprintf("%s: %v", dev, err)}
	}
	if !launch.NamesDevice(clean, destroy) {
		return &ValidationError{Field: "yes_destroy", Msg: fmt.Sprintf("yes_destroy %s does not name the device the test overwrites, %s: give yes_destroy %s", destroy, dev, dev)}
	}
	if fi.Mode()&os.ModeDevice == 0 || fi.Mode()&os.ModeCharDevice != 0 {
		return &ValidationError{Field: field, Msg: fmt.Sprintf("%s is not a block device: a PTS test purges and preconditions a whole device (a file has no purge; run it with iolab run)", dev)}
	}
	sys := s.newRunner().Sys
	t, err := sys.ResolveTarget(clean)
	if err != nil {
		return &ValidationError{Field: field, Msg: fmt.Sprintf("%s: %v", dev, err)}
	}
	if err := sys.CheckWritable(t); err != nil {
		if ue, ok := errors.AsType[*system.UnsafeTargetError](err); ok {
			return &ValidationError{Field: field, Msg: fmt.Sprintf("%s %s: a PTS test purges and overwrites the whole device; refused", dev, ue.Reason)}
		}
		return &ValidationError{Field: field, Msg: err.Error()}
	}
	return nil
}

// ptsField is the request field a pts.Spec error is about, by the word
// pts.Spec.Check starts it with.
func ptsField(msg string) string {
	word, _, _ := strings.Cut(msg, " ")
	switch word {
	case "unknown":
		return "pts.test"
	case "purge":
		return "pts.purge"
	case "rounds":
		return "pts.max_rounds"
	case "runtime":
		return "pts.round_time"
	case "wipc":
		return "pts.wipc_loops"
	case "size":
		return "pts.size"
	case "numjobs":
		return "pts.numjobs"
	case "iodepth":
		return "pts.iodepth"
	case "wsat":
		return "pts.wsat"
	}
	return "pts"
}
