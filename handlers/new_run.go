package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"iolab/bench/launch"
	"iolab/bench/pts"
	"iolab/bench/sweep"
	"iolab/db"

	"github.com/labstack/echo/v4"
)

// runForm is the new-run form's fields, as typed.
type runForm struct {
	Name, Preset, Target, Size string
	RW, BS, RWMixRead          string
	// Sweeps are the axis fields (sweep.AxisSpec.Form), by axis name:
	// comma-separated lists (semicolons when a value holds a comma),
	// where two values or more sweep.
	Sweeps map[string]string
	// MoreSweeps are sweeps of any other fio option, one OPTION=v1,v2 a
	// line, as --sweep takes them.
	MoreSweeps                string
	Runtime, RampTime, Repeat string
	Direct, Discard           bool
	DropCaches                bool
	TraceBlock                bool
	SkipImpossible            bool
	SLO                       string
	JobFile                   string
	// Hosts run the plan as a group (LocalHost for this machine), Serial
	// one after another.
	Hosts  []string
	Serial bool
}

// formAxes are the axes the form has a field for, in the table's order.
func formAxes() []sweep.AxisSpec {
	return slices.DeleteFunc(sweep.Axes(), func(a sweep.AxisSpec) bool { return a.Form == "" })
}

// defaultForm is what the form shows first: a small io_uring iodepth
// sweep, a valid plan as it stands (a sync engine would make the iodepth
// sweep measure iodepth 1 three times, which the check before the run
// refuses). numjobs is left blank: a field that sets nothing sweeps
// nothing.
func defaultForm() runForm {
	return runForm{RW: "randread", BS: "4k", Sweeps: map[string]string{"iodepth": "1,4,16", "ioengine": "io_uring"},
		Runtime: "10", Repeat: "1", Direct: true}
}

// withPreset is the form as picking the preset called name fills it (as
// app.js does when the preset changes): /runs/new?preset=qos-curve shows,
// and submits, the preset's own options and sweeps, not the form's
// default iodepth and engine sweeps over them. A name no preset has is
// kept for the submit to refuse.
func (f runForm) withPreset(name string) runForm {
	f.Preset = name
	for _, p := range presetInfos() {
		if p.Name != name {
			continue
		}
		for k, v := range p.Fields {
			switch k {
			case "rw":
				f.RW = v
			case "bs":
				f.BS = v
			case "rwmixread":
				f.RWMixRead = v
			case "runtime":
				f.Runtime = v
			case "ramp_time":
				f.RampTime = v
			case "repeat":
				f.Repeat = v
			case "direct":
				f.Direct = v == "true"
			case "discard":
				f.Discard = v == "true"
			case "drop_caches":
				f.DropCaches = v == "true"
			case "trace_block":
				f.TraceBlock = v == "true"
			case "slo":
				f.SLO = v
			default:
				if slices.ContainsFunc(formAxes(), func(a sweep.AxisSpec) bool { return string(a.Name) == k }) {
					f.Sweeps[k] = v
				}
			}
		}
	}
	return f
}

func readForm(c echo.Context) runForm {
	v := func(k string) string { return strings.TrimSpace(c.FormValue(k)) }
	on := func(k string) bool { x := c.FormValue(k); return x == "on" || x == "1" || x == "true" }
	f := runForm{Name: v("name"), Preset: v("preset"), Target: v("target"), Size: v("size"), RW: v("rw"), BS: v("bs"),
		RWMixRead: v("rwmixread"), Sweeps: map[string]string{},
		Runtime: v("runtime"), RampTime: v("ramp_time"), Repeat: v("repeat"),
		Direct: on("direct"), Discard: on("discard"), DropCaches: on("drop_caches"), TraceBlock: on("trace_block"), SkipImpossible: on("skip_impossible"),
		JobFile: c.FormValue("jobfile"), MoreSweeps: c.FormValue("sweeps"), Serial: on("serial"), SLO: v("slo")}
	if params, err := c.FormParams(); err == nil {
		f.Hosts = params["hosts"]
	}
	for _, a := range formAxes() {
		f.Sweeps[string(a.Name)] = v(string(a.Name))
	}
	return f
}

// axisSweep reads an axis field as --sweep reads AXIS=FIELD, through
// the CLI's own parser (sweep.NewSweep after sweep.SplitValues): lists,
// ranges (1..128, 10%..100%), engine variants and values that hold commas
// are taken as on the command line, and refused in its words. A blank
// field sweeps nothing.
func axisSweep(axis sweep.Axis, field string) (sweep.Sweep, bool, error) {
	if strings.TrimSpace(field) == "" {
		return sweep.Sweep{}, false, nil
	}
	sw, err := sweep.NewSweep(axis, sweep.SplitValues(field))
	return sw, err == nil, err
}

// request turns the form into a plan request: an axis field is read as
// --sweep reads it (axisSweep); what is one value after that is an
// option (an engine variant, a step axis such as the scheduler, a value
// only a sweep takes, or anything with a job file stays a sweep of that
// one value: an override of every job, never an axis). With a job file,
// an axis field still at the form's default is not applied: the job file
// says what its jobs do. Every field's error is returned at once, with
// the request of the fields that read, for the checks of the others
// (Server.fieldErrors).
func (f *runForm) request() (*PlanRequest, error) {
	req := &PlanRequest{Name: f.Name, Preset: f.Preset, Discard: f.Discard, DropCaches: f.DropCaches, TraceBlock: f.TraceBlock, SkipImpossible: f.SkipImpossible, SLO: f.SLO, exact: true,
		Hosts: f.Hosts, Serial: f.Serial}
	var errs ValidationErrors
	if f.Repeat != "" {
		if err := req.Repeat.set(f.Repeat); err != nil {
			errs = append(errs, &ValidationError{Field: "repeat", Msg: err.Error()})
		}
	}
	opts := map[string]OptionValue{}
	set := func(k, v string) {
		if v != "" {
			opts[k] = OptionValue(v)
		}
	}
	jobFile := strings.TrimSpace(f.JobFile) != ""
	defaults := defaultForm().Sweeps
	for _, a := range formAxes() {
		field := f.Sweeps[string(a.Name)]
		sw, ok, err := axisSweep(a.Name, field)
		switch {
		case err != nil:
			errs = append(errs, &ValidationError{Field: "sweep." + string(a.Name), Msg: err.Error()})
		case !ok:
		case jobFile && slices.Equal(sw.Values, defaultSweep(a.Name, defaults)):
		case len(sw.Values) == 1 && !jobFile && !a.Step && !strings.Contains(sw.Values[0], "+") && !a.SweepOnly(sw.Values[0]):
			set(string(a.Name), sw.Values[0])
		default:
			req.Sweep = append(req.Sweep, sw)
		}
	}
	for line := range strings.Lines(f.MoreSweeps) {
		if line = strings.TrimSpace(line); line == "" {
			continue
		}
		sw, err := sweep.ParseSweep(line)
		if err != nil {
			errs = append(errs, &ValidationError{Field: "sweeps", Msg: err.Error()})
			continue
		}
		req.Sweep = append(req.Sweep, sw)
	}
	var err error
	if len(errs) > 0 {
		err = errs
	}
	if jobFile {
		req.JobFile = f.JobFile
		return req, err
	}
	set("filename", f.Target)
	set("size", f.Size)
	set("rw", f.RW)
	set("bs", f.BS)
	if f.RW == "rw" || f.RW == "randrw" || f.RW == "" {
		set("rwmixread", f.RWMixRead)
	}
	if f.Runtime != "" {
		set("runtime", f.Runtime)
		set("time_based", "1")
	}
	set("ramp_time", f.RampTime)
	if f.Direct {
		opts["direct"] = "1"
	} else {
		opts["direct"] = "0"
	}
	req.Options = opts
	return req, err
}

// defaultSweep is the values of the form's default in the field of axis.
func defaultSweep(axis sweep.Axis, defaults map[string]string) []string {
	sw, _, _ := axisSweep(axis, defaults[string(axis)])
	return sw.Values
}

// formField maps a request field to the form's input.
func formField(field string) string {
	name := field
	if i := strings.LastIndexByte(field, '.'); i >= 0 {
		name = field[i+1:]
	}
	switch name {
	case "filename":
		return "target"
	case "time_based":
		return "runtime"
	case "plan":
		return "plan" // steps the targets cannot run: beside the checkbox that leaves them out
	case "name", "preset", "size", "rw", "bs", "rwmixread", "runtime", "ramp_time", "repeat", "jobfile", "direct", "sweeps", "hosts", "slo":
	default:
		if !slices.ContainsFunc(formAxes(), func(a sweep.AxisSpec) bool { return string(a.Name) == name }) {
			if strings.HasPrefix(field, "sweep.") {
				return "sweeps" // an option axis: the field of other sweeps
			}
			return ""
		}
	}
	if field == "name" || !strings.Contains(field, ".") || strings.HasPrefix(field, "options.") || strings.HasPrefix(field, "sweep.") {
		return name
	}
	return ""
}

// newRunPageData is the new-run form.
type newRunPageData struct {
	pageBase
	Form        runForm
	Presets     []PresetInfo
	PresetsJSON string
	Errors      map[string]string // form field → message
	Error       string            // about the whole plan
	Targets     []string          // the allow-list, offered in the target field
	DataDir     string
	Hosts       []db.Host // the fleet's hosts, offered besides this machine
	SweepFields []sweepField
	RWModes     []string
	// SkipImpossibleLabel and DiscardLabel label the checkboxes the
	// errors of steps that cannot run name (formWords).
	SkipImpossibleLabel, DiscardLabel string
	// PTS is the form's SNIA PTS part (new_run_pts.go), its errors
	// beside its fields and PTSError above them; PTSTests and
	// PurgeMethods its choices.
	PTS          ptsForm
	PTSErrors    map[string]string
	PTSError     string
	PTSTests     []pts.Test
	PurgeMethods []string
}

// sweepField is one axis field of the form.
type sweepField struct {
	Name, Label, Placeholder, Value string
}

func (s *Server) newRunData(c echo.Context, f runForm) (*newRunPageData, error) {
	presets := presetInfos()
	js, err := json.Marshal(presets)
	if err != nil {
		return nil, err
	}
	hosts, err := s.hosts(c.Request().Context())
	if err != nil {
		return nil, err
	}
	return &newRunPageData{pageBase: s.base(c, "New run"), Form: f, Presets: presets, PresetsJSON: string(js), Errors: map[string]string{},
		Targets: s.allowTargets, DataDir: s.dataDir, SweepFields: sweepFields(f), Hosts: hosts,
		RWModes: []string{"read", "write", "randread", "randwrite", "rw", "randrw", "trim", "randtrim", "trimwrite", "randtrimwrite"}, SkipImpossibleLabel: skipImpossibleLabel, DiscardLabel: discardLabel,
		PTS: defaultPTSForm(), PTSErrors: map[string]string{}, PTSTests: pts.Tests, PurgeMethods: pts.PurgeMethods}, nil
}

// sweepFields are the form's axis fields with what f holds in them.
func sweepFields(f runForm) []sweepField {
	var out []sweepField
	for _, a := range formAxes() {
		out = append(out, sweepField{Name: string(a.Name), Label: a.Form, Placeholder: a.Placeholder, Value: f.Sweeps[string(a.Name)]})
	}
	return out
}

func (s *Server) newRunPage(c echo.Context) error {
	f := defaultForm()
	if p := c.QueryParam("preset"); p != "" {
		f = f.withPreset(p)
	}
	data, err := s.newRunData(c, f)
	if err != nil {
		return err
	}
	return s.render(c, http.StatusOK, "new", data)
}

// createRun takes the form: a valid plan is handed to the launcher and
// answered with 303 to its page; an invalid one shows the form again with
// the error next to its field, and nothing starts.
func (s *Server) createRun(c echo.Context) error {
	f := readForm(c)
	req, err := f.request()
	if errs, ok := err.(ValidationErrors); ok {
		// The form's own fields refused: the others are checked too, to
		// say every field's error at once.
		err = append(errs, s.fieldErrors(req)...)
	}
	var (
		id  int64
		grp *db.FleetRun
	)
	switch {
	case err == nil && isGroup(req.Hosts):
		grp, err = s.launchGroup(c.Request().Context(), req)
	case err == nil:
		id, err = s.launch(c.Request().Context(), req)
	}
	var ve *ValidationError
	if errors.As(err, &ve) {
		data, derr := s.newRunData(c, f)
		if derr != nil {
			return derr
		}
		// Every field's error beside its field; those of no one field
		// above the form.
		all := ValidationErrors{ve}
		errors.As(err, &all)
		var general []string
		for _, v := range all {
			msg := formWords(v.Msg)
			if field := formField(v.Field); field != "" && data.Errors[field] == "" {
				data.Errors[field] = msg
			} else if field == "" {
				general = append(general, msg)
			}
		}
		data.Error = strings.Join(general, "\n")
		return s.render(c, http.StatusBadRequest, "new", data)
	}
	if err != nil {
		return err
	}
	if grp != nil {
		return c.Redirect(http.StatusSeeOther, groupURL(grp.UID))
	}
	return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/runs/%d", id))
}

// launch prepares a request's plan (once: launch.Prepare checks it
// against its targets here when they all exist, laying out a new file is
// left to the run, off the request) and hands it to the launcher.
func (s *Server) launch(ctx context.Context, req *PlanRequest) (int64, error) {
	prep, err := s.prepare(req, launch.CheckExisting)
	if err != nil {
		return 0, err
	}
	return s.launcher.Launch(ctx, prep)
}
