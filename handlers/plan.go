package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/launch"
	"iolab/bench/pts"
	"iolab/bench/sweep"
	"iolab/bench/units"
)

// PlanRequest is a plan as the API (POST /api/runs) and the new-run form
// give it: fio options (fio's names; values as strings or numbers), or a
// pasted fio job file, plus sweeps, repeats and what to do before each
// step. With a preset, options override the preset's, as on the command
// line (`iolab run --preset NAME --filename T --opt=v`).
type PlanRequest struct {
	Name       string                 `json:"name"`
	Preset     string                 `json:"preset,omitempty"`
	Options    map[string]OptionValue `json:"options,omitempty"`
	Jobs       []JobRequest           `json:"jobs,omitempty"`
	JobFile    string                 `json:"jobfile,omitempty"`
	Sweep      SweepList              `json:"sweep,omitempty"`
	Repeat     RepeatValue            `json:"repeat,omitempty"`
	Discard    bool                   `json:"discard,omitempty"`
	DropCaches bool                   `json:"drop_caches,omitempty"`
	// TraceBlock is --trace-block: each I/O's time split across the
	// block layer, the plan refused where it cannot be traced.
	TraceBlock bool `json:"trace_block,omitempty"`
	// SkipImpossible leaves out the steps the targets cannot run (they are
	// recorded with the run) instead of refusing the plan.
	SkipImpossible bool `json:"skip_impossible,omitempty"`
	// SLO is the latency objective of the QoS curve's knee (p99<1ms).
	SLO string `json:"slo,omitempty"`
	// Hosts run the plan as a group, one run each (handlers/groups.go):
	// "local" for this machine, else the names of the Hosts page; Serial
	// runs them one after another.
	Hosts  []string `json:"hosts,omitempty"`
	Serial bool     `json:"serial,omitempty"`
	// PTS makes the plan a SNIA PTS test on the device options.filename
	// names (pts_run.go); YesDestroy must name that device again, as the
	// CLI's --yes-destroy: the test purges and overwrites all of it.
	PTS        *pts.Spec `json:"pts,omitempty"`
	YesDestroy string    `json:"yes_destroy,omitempty"`

	// grouped: the plan runs on a group's hosts, each of which resolves
	// and checks its targets itself; groupLocal: this machine is one.
	grouped, groupLocal bool

	// exact: sweeps, repeat, discard and drop caches are the request's
	// alone, not merged with the preset's (the form shows the preset's
	// and sends back what the user kept).
	exact bool
}

// RepeatValue is "repeat": a number of repeats, or "auto" (auto:5%:10)
// for repeats until each median is known well enough.
type RepeatValue struct {
	N    int
	Auto *sweep.AutoRepeat
}

// UnmarshalJSON takes a number or a string.
func (r *RepeatValue) UnmarshalJSON(b []byte) error {
	var v OptionValue
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	if v == "0" {
		*r = RepeatValue{} // as if left out: the preset's, or 1
		return nil
	}
	return r.set(string(v))
}

func (r *RepeatValue) set(v string) error {
	v = strings.TrimSpace(v)
	if v == "" {
		*r = RepeatValue{} // the preset's, or 1
		return nil
	}
	n, auto, err := sweep.ParseRepeat(v)
	if err != nil {
		return errors.New(strings.Replace(err.Error(), "--repeat", "repeat", 1))
	}
	r.N, r.Auto = n, auto
	return nil
}

// JobRequest is one job of a PlanRequest.
type JobRequest struct {
	Name    string                 `json:"name"`
	Options map[string]OptionValue `json:"options"`
}

// OptionValue is an option's value: JSON strings, numbers and booleans
// (true is 1) are all taken.
type OptionValue string

// UnmarshalJSON takes a string, a number or a boolean.
func (v *OptionValue) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*v = OptionValue(s)
		return nil
	}
	var n json.Number
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&n); err == nil {
		*v = OptionValue(n.String())
		return nil
	}
	var f bool
	if err := json.Unmarshal(b, &f); err == nil {
		*v = "0"
		if f {
			*v = "1"
		}
		return nil
	}
	return fmt.Errorf("want a string, a number or a boolean, not %s", b)
}

// SweepList is the "sweep" object: axis → values, in the order written
// (the first axis varies slowest), so it is decoded by hand.
type SweepList []sweep.Sweep

// UnmarshalJSON reads {"iodepth": [1, 4], "ioengine": ["libaio"]} keeping
// the order; a single value may be given without the list.
func (s *SweepList) UnmarshalJSON(b []byte) error {
	d := json.NewDecoder(bytes.NewReader(b))
	tok, err := d.Token()
	if err != nil {
		return err
	}
	if tok == nil {
		*s = nil
		return nil
	}
	if tok != json.Delim('{') {
		return errors.New(`sweep: want an object, e.g. {"iodepth": [1, 4]}`)
	}
	var out SweepList
	for d.More() {
		k, err := d.Token()
		if err != nil {
			return err
		}
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return err
		}
		var vals []OptionValue
		if err := json.Unmarshal(raw, &vals); err != nil {
			var one OptionValue
			if err := json.Unmarshal(raw, &one); err != nil {
				return fmt.Errorf("sweep %s: want a list of values", k)
			}
			vals = []OptionValue{one}
		}
		sw := sweep.Sweep{Axis: sweep.Axis(k.(string))}
		for _, v := range vals {
			sw.Values = append(sw.Values, string(v))
		}
		out = append(out, sw)
	}
	*s = out
	return nil
}

var optionName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// fieldOf names the request field an option error is about.
func fieldOf(req *PlanRequest, option string) string {
	if option == "" {
		return ""
	}
	set := func() bool {
		_, ok := req.Options[option]
		return ok || slices.ContainsFunc(req.Jobs, func(j JobRequest) bool { _, ok := j.Options[option]; return ok })
	}
	if !set() && slices.ContainsFunc(req.Sweep, func(sw sweep.Sweep) bool { return string(sw.Axis) == option }) {
		// A swept option, or a step axis (the scheduler), which no job
		// file sets.
		return "sweep." + option
	}
	if req.JobFile != "" {
		return "jobfile"
	}
	for i, j := range req.Jobs {
		if _, ok := j.Options[option]; ok {
			return fmt.Sprintf("jobs[%d].options.%s", i, option)
		}
	}
	return "options." + option
}

// unnamedJob drops the job's name from msg when the request named no job:
// its one job is called "job" only inside iolab, whether a message quotes
// it (job "job": …) or not (job job: …).
func unnamedJob(req *PlanRequest, msg string) string {
	if req.Name == "" && req.Preset == "" && len(req.Jobs) == 0 {
		return strings.NewReplacer(`job "job": `, "", "job job: ", "").Replace(msg)
	}
	return msg
}

// validation turns a bench error into a ValidationError on field.
func validation(field string, err error) error {
	var ve *ValidationError
	if errors.As(err, &ve) {
		return err
	}
	return &ValidationError{Field: field, Msg: err.Error()}
}

// BuildPlan turns a request into a plan, checking everything that can be
// checked without touching the target: options, job file, sweeps, steps,
// and that every target is on the allow-list.
func (s *Server) BuildPlan(req *PlanRequest) (*sweep.Plan, error) {
	prep, err := s.prepare(req, launch.CheckNone)
	if err != nil {
		return nil, err
	}
	return prep.Plan, nil
}

// prepare turns a request into a plan prepared to run (launch.Prepare,
// once per launch): the request's own checks, then the plan, the
// allow-list (before anything looks at a target), the steps and, as
// check says, this machine's targets and the run's record. Prepare's
// errors are answered as the request's fields (prepareError).
func (s *Server) prepare(req *PlanRequest, check launch.Check) (*launch.Prepared, error) {
	if req.PTS != nil {
		return s.preparePTS(req, check)
	}
	if req.YesDestroy != "" {
		return nil, &ValidationError{Field: "yes_destroy", Msg: "yes_destroy names the device a PTS test (pts) overwrites: give it with pts, or leave it out"}
	}
	// Several fields wrong: say them all at once (ValidationErrors); one
	// alone is said by the checks below, in their words.
	if errs := s.fieldErrors(req); len(errs) > 1 {
		return nil, errs
	}
	if len(req.Name) > 200 {
		return nil, &ValidationError{Field: "name", Msg: "name: at most 200 characters"}
	}
	if req.Repeat.N < 0 || req.Repeat.N > 100 || (req.Repeat.Auto != nil && req.Repeat.Auto.Max > 100) {
		return nil, &ValidationError{Field: "repeat", Msg: "repeat: from 1 to 100, or auto (at most 100 repeats from the web)"}
	}
	spec := launch.Spec{Name: req.Name, Preset: req.Preset, Repeat: req.Repeat.N, AutoRepeat: req.Repeat.Auto, Discard: req.Discard, DropCaches: req.DropCaches,
		TraceBlock: req.TraceBlock, SkipImpossible: req.SkipImpossible, Exact: req.exact, Limits: s.limits, SLO: req.SLO}
	if !req.grouped || req.groupLocal {
		spec.Quota = s.quota // this machine's data directory
	}
	if len(req.SLO) > 64 {
		return nil, &ValidationError{Field: "slo", Msg: "slo: at most 64 characters, e.g. p99<1ms"}
	}
	if req.SLO != "" {
		if _, err := sweep.ParseSLO(req.SLO); err != nil {
			return nil, validation("slo", err)
		}
	}
	if req.JobFile != "" {
		if req.Preset != "" || len(req.Options) > 0 || len(req.Jobs) > 0 {
			return nil, &ValidationError{Field: "jobfile", Msg: "give a job file or options (and a preset), not both"}
		}
		if strings.Contains(req.JobFile, "${") {
			// ParseJobFile would put the server's environment in the plan.
			return nil, &ValidationError{Field: "jobfile", Msg: "${VAR} is not expanded in a job file sent to the server; write the value"}
		}
		spec.JobFile = req.JobFile
	} else {
		args, err := s.requestArgs(req)
		if err != nil {
			return nil, err
		}
		spec.Args = args
	}
	for _, sw := range req.Sweep {
		// Each value is a string of its own: one may hold a comma
		// (cpus_allowed=0,2), none a separator.
		parsed, err := sweep.NewSweep(sw.Axis, sw.Values)
		if err != nil {
			return nil, validation("sweep."+string(sw.Axis), err)
		}
		spec.Sweeps = append(spec.Sweeps, parsed)
	}
	prep, err := launch.Prepare(spec, s.newRunner(), launch.Options{Check: check, Admit: func(plan *sweep.Plan) error { return s.admit(req, plan) }})
	if err != nil {
		return nil, prepareError(req, err)
	}
	return prep, nil
}

// admit refuses a plan with a target off the allow-list (targetOK).
func (s *Server) admit(req *PlanRequest, plan *sweep.Plan) error {
	// Every file of every job, clones included: fio names a job's files
	// after its clone number (and, with several directories, picks the
	// directory by it).
	for _, g := range plan.Base.Groups {
		for _, j := range g.Jobs {
			for _, path := range j.FilePaths() {
				err := s.targetOK(req, path, j.AllowMountedWrite)
				if err == nil {
					continue
				}
				field := "options.filename"
				if req.JobFile != "" {
					field = "jobfile"
				}
				msg := fmt.Sprintf("job %s: %v", j.Name, err)
				if !filepath.IsAbs(path) && j.Filename == "" {
					msg += fmt.Sprintf(" (a job without filename uses fio's names, %s, in its directory: set directory= to an allowed directory)", path)
				}
				return &ValidationError{Field: field, Msg: msg}
			}
		}
	}
	return nil
}

// prepareError answers launch.Prepare's error as the request's field at
// fault, by the stage it failed at: the options or job file that make the
// plan, the steps of its sweeps, a target that is not there, the check
// against the targets. The host's description failing is no field's.
func prepareError(req *PlanRequest, err error) error {
	pe, ok := errors.AsType[*launch.PrepareError](err)
	if !ok {
		return err
	}
	var oe *bench.OptionError
	isOption := errors.As(pe.Err, &oe)
	switch pe.Stage {
	case launch.StagePlan:
		switch {
		case req.JobFile != "":
			return validation("jobfile", pe.Err)
		case isOption && oe.Option == "preset":
			return validation("preset", pe.Err)
		case isOption:
			return &ValidationError{Field: fieldOf(req, oe.Option), Msg: unnamedJob(req, oe.Msg)}
		case errors.As(pe.Err, new(*ValidationError)):
			return pe.Err
		}
		return &ValidationError{Field: "options", Msg: unnamedJob(req, pe.Err.Error())}
	case launch.StageAdmit:
		return pe.Err // admit's own ValidationError
	case launch.StageSteps:
		if isOption {
			return &ValidationError{Field: fieldOf(req, oe.Option), Msg: unnamedJob(req, pe.Err.Error())}
		}
		return &ValidationError{Field: "sweep", Msg: unnamedJob(req, pe.Err.Error())}
	case launch.StageTargets:
		return &ValidationError{Field: fieldOf(req, "filename"), Msg: unnamedJob(req, pe.Err.Error())}
	case launch.StageCheck:
		if isOption {
			return &ValidationError{Field: fieldOf(req, oe.Option), Msg: unnamedJob(req, pe.Err.Error())}
		}
		return &ValidationError{Field: "plan", Msg: unnamedJob(req, pe.Err.Error())}
	}
	return pe.Err
}

// fieldErrors checks each field of a request on its own: the name, the
// repeat count, every option (alone in a job, as fio reads it) and
// every sweep, so that a form can show every field's error at once.
// Errors that come from fields together (a job file, a preset's jobs, the
// steps) are BuildPlan's to find after.
func (s *Server) fieldErrors(req *PlanRequest) ValidationErrors {
	var errs ValidationErrors
	if len(req.Name) > 200 {
		errs = append(errs, &ValidationError{Field: "name", Msg: "name: at most 200 characters"})
	}
	if req.Repeat.N < 0 || req.Repeat.N > 100 || (req.Repeat.Auto != nil && req.Repeat.Auto.Max > 100) {
		errs = append(errs, &ValidationError{Field: "repeat", Msg: "repeat: from 1 to 100, or auto (at most 100 repeats from the web)"})
	}
	check := func(m map[string]OptionValue, prefix string) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			v := string(m[k])
			if !optionName.MatchString(k) || k == "name" || strings.ContainsAny(v, "\n\x00") {
				continue // requestArgs says why
			}
			if k == "filename" {
				for _, name := range bench.SplitFileList(s.resolveFor(req, v)) {
					if err := s.targetOK(req, name, false); err != nil && !errors.Is(err, fs.ErrNotExist) {
						errs = append(errs, &ValidationError{Field: prefix + k, Msg: err.Error()})
						break
					}
				}
				continue
			}
			// The option alone, without the checks of a whole job: those
			// need the other options (time_based needs the plan's
			// runtime, verify its engine) and BuildPlan makes them after.
			if err := fio.CheckOption(k, v); err != nil {
				errs = append(errs, &ValidationError{Field: prefix + k, Msg: err.Error()})
			}
		}
	}
	if req.JobFile == "" {
		check(req.Options, "options.")
		for i, j := range req.Jobs {
			check(j.Options, fmt.Sprintf("jobs[%d].options.", i))
		}
	}
	for _, sw := range req.Sweep {
		// Each value a string of its own, as prepare takes them: one may
		// hold a comma (cpus_allowed=0,2).
		if _, err := sweep.NewSweep(sw.Axis, sw.Values); err != nil {
			errs = append(errs, &ValidationError{Field: "sweep." + string(sw.Axis), Msg: err.Error()})
		}
	}
	return errs
}

// requestArgs builds the fio command line of a request without a job file.
func (s *Server) requestArgs(req *PlanRequest) ([]string, error) {
	hasTarget := false
	opts := func(m map[string]OptionValue, prefix string) ([]string, error) {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var out []string
		for _, k := range keys {
			v := string(m[k])
			if !optionName.MatchString(k) || k == "name" {
				return nil, &ValidationError{Field: prefix + k, Msg: fmt.Sprintf("%q is not an option name (fio's names: rw, bs, iodepth, …)", k)}
			}
			if strings.ContainsAny(v, "\n\x00") {
				return nil, &ValidationError{Field: prefix + k, Msg: fmt.Sprintf("option %s: the value has a line break", k)}
			}
			if k == "filename" || k == "directory" {
				v = s.resolveFor(req, v)
				hasTarget = true
			}
			out = append(out, "--"+k+"="+v)
		}
		return out, nil
	}
	global, err := opts(req.Options, "options.")
	if err != nil {
		return nil, err
	}
	var jobs []string
	for i, j := range req.Jobs {
		if j.Name == "" || strings.ContainsAny(j.Name, "\n\x00") {
			return nil, &ValidationError{Field: fmt.Sprintf("jobs[%d].name", i), Msg: "every job needs a name"}
		}
		o, err := opts(j.Options, fmt.Sprintf("jobs[%d].options.", i))
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, "--name="+j.Name)
		jobs = append(jobs, o...)
	}
	if req.Preset != "" {
		return append(global, jobs...), nil
	}
	if len(jobs) == 0 {
		name := req.Name
		if name == "" || strings.ContainsAny(name, "\n\x00") {
			name = "job"
		}
		jobs = []string{"--name=" + name}
	}
	if !hasTarget && s.dataDir != "" && !req.grouped {
		// A job without filename uses fio's names (jobname.jobnum.filenum)
		// in its directory: here, the data directory.
		global = append([]string{"--directory=" + s.dataDir}, global...)
	}
	return append(global, jobs...), nil
}

// resolveTargets makes each relative name of a fio list (filename or
// directory: a:b, "\:" for a colon) one under the data directory.
func (s *Server) resolveTargets(list string) string {
	names := bench.SplitFileList(list)
	for i, p := range names {
		if !filepath.IsAbs(p) && s.dataDir != "" {
			p = filepath.Join(s.dataDir, p)
		}
		names[i] = strings.ReplaceAll(p, ":", `\:`)
	}
	if len(names) == 0 {
		return list
	}
	return strings.Join(names, ":")
}

// checkTarget refuses a target that is neither on the allow-list nor a
// regular file (existing or to be created) under the data directory.
// allow_mounted_write is only taken on allow-listed targets: the server's
// owner named them.
func (s *Server) checkTarget(p string, mountedWrite bool) error {
	if p == "" {
		return nil
	}
	clean := filepath.Clean(p)
	if slices.Contains(s.allowTargets, clean) {
		return nil
	}
	refuse := func(why string) error {
		where := []string{}
		if len(s.allowTargets) > 0 {
			where = append(where, strings.Join(s.allowTargets, ", "))
		}
		if s.dataDir != "" {
			where = append(where, "files under "+s.dataDir)
		}
		if len(where) == 0 {
			return fmt.Errorf("%s: %s; this server allows no targets (start it with --allow-target or --data-dir); only ioengine=null runs", p, why)
		}
		return fmt.Errorf("%s: %s; allowed: %s", p, why, strings.Join(where, "; "))
	}
	if !filepath.IsAbs(clean) {
		return refuse("not an absolute path")
	}
	if s.dataDir == "" || !launch.Within(s.dataDir, clean) {
		return refuse("not on the server's allow-list")
	}
	if mountedWrite {
		return refuse("allow_mounted_write is only taken on allow-listed targets")
	}
	// Follow symlinks: a link under the data directory must not lead out
	// of it, or to a device.
	if real, err := filepath.EvalSymlinks(clean); err == nil {
		fi, err := os.Stat(real)
		if err != nil {
			return refuse(err.Error())
		}
		if !launch.Within(s.dataDir, real) || !fi.Mode().IsRegular() {
			return refuse("not a regular file under the data directory")
		}
		return nil
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(clean))
	if err != nil {
		return refuse("its directory does not exist")
	}
	if !launch.Within(s.dataDir, dir) && dir != s.dataDir {
		return refuse("not under the data directory")
	}
	return nil
}

// PresetInfo is a preset as the form and GET /api/presets show it: its
// plan, and the form's fields it fills ("" where its jobs differ).
type PresetInfo struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Args        []string      `json:"args"` // with TARGET for the target
	Sweeps      []sweep.Sweep `json:"sweeps"`
	Repeat      int           `json:"repeat"`
	Discard     bool          `json:"discard"`
	DropCaches  bool          `json:"drop_caches"`
	// TraceBlock: the preset traces the block layer where the target and
	// the dashboard's rights allow it (its run notes why not elsewhere).
	TraceBlock bool              `json:"trace_block_where_able"`
	Fields     map[string]string `json:"fields"`
}

// presetInfos describes every preset.
func presetInfos() []PresetInfo {
	var out []PresetInfo
	for _, p := range sweep.Presets() {
		info := PresetInfo{Name: p.Name, Description: p.Description, Args: p.Args("TARGET", nil), Sweeps: p.Sweeps,
			Repeat: max(p.Repeat, 1), Discard: p.Discard, DropCaches: p.DropCaches, TraceBlock: p.TraceBlock, Fields: map[string]string{}}
		if cfg, err := fio.ParseArgs(info.Args); err == nil {
			same := func(f func(j *bench.Job) string) string {
				v := f(&cfg.Jobs[0])
				for i := range cfg.Jobs {
					if f(&cfg.Jobs[i]) != v {
						return ""
					}
				}
				return v
			}
			info.Fields["rwmixread"] = same(func(j *bench.Job) string {
				if j.RW == "rw" || j.RW == "randrw" {
					return strconv.Itoa(j.RWMixRead)
				}
				return ""
			})
			info.Fields["runtime"] = same(func(j *bench.Job) string { return units.FormatDuration(j.Runtime) })
			info.Fields["ramp_time"] = same(func(j *bench.Job) string { return units.FormatDuration(j.RampTime) })
			info.Fields["direct"] = same(func(j *bench.Job) string { return strconv.FormatBool(j.Direct) })
			// Every axis the form shows, as the preset's jobs set it (a
			// step axis, the scheduler, is not a job's: blank unless swept).
			for _, a := range sweep.Axes() {
				info.Fields[string(a.Name)] = same(func(j *bench.Job) string { return a.Value(j) })
			}
		}
		for _, sw := range p.Sweeps {
			info.Fields[string(sw.Axis)] = sweep.JoinValues(sw.Values)
		}
		info.Fields["repeat"] = strconv.Itoa(info.Repeat)
		info.Fields["discard"] = strconv.FormatBool(p.Discard)
		info.Fields["drop_caches"] = strconv.FormatBool(p.DropCaches)
		info.Fields["slo"] = p.SLO
		out = append(out, info)
	}
	return out
}
