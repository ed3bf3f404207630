package handlers

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"iolab/bench/pts"
	"iolab/bench/units"

	"github.com/labstack/echo/v4"
)

// ptsForm is the new-run page's PTS part, as typed: POST /runs/pts.
type ptsForm struct {
	Test, Device, RoundTime, Rounds, Size string
	NumJobs, IODepth, Purge, WIPC         string
	// YesDestroy is the device's path typed again, as the CLI's
	// --yes-destroy.
	YesDestroy string
}

// defaultPTSForm is what the PTS part shows first: the specification's
// parameters, the IOPS test.
func defaultPTSForm() ptsForm {
	return ptsForm{Test: "iops", Purge: pts.PurgeAuto, WIPC: strconv.Itoa(pts.WIPCLoops)}
}

func readPTSForm(c echo.Context) ptsForm {
	v := func(k string) string { return strings.TrimSpace(c.FormValue(k)) }
	return ptsForm{Test: v("pts_test"), Device: v("pts_device"), RoundTime: v("pts_round_time"), Rounds: v("pts_rounds"),
		Size: v("pts_size"), NumJobs: v("pts_numjobs"), IODepth: v("pts_iodepth"), Purge: v("pts_purge"), WIPC: v("pts_wipc"),
		YesDestroy: v("pts_yes_destroy")}
}

// ptsFormFields maps a request's field to the PTS part's input.
var ptsFormFields = map[string]string{
	"pts.test": "pts_test", "options.filename": "pts_device", "pts.round_time": "pts_round_time",
	"pts.max_rounds": "pts_rounds", "pts.size": "pts_size", "pts.numjobs": "pts_numjobs", "pts.iodepth": "pts_iodepth",
	"pts.purge": "pts_purge", "pts.wipc_loops": "pts_wipc", "yes_destroy": "pts_yes_destroy",
}

// request is the form as POST /api/runs takes it; every field that does
// not read is an error of its own, returned together.
func (f ptsForm) request() (*PlanRequest, error) {
	spec := pts.Spec{Test: f.Test, Purge: f.Purge}
	var errs ValidationErrors
	num := func(field, v string, dst *int) {
		if v == "" {
			return
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			errs = append(errs, &ValidationError{Field: field, Msg: fmt.Sprintf("%q is not a whole number", v)})
			return
		}
		*dst = n
	}
	num("pts.max_rounds", f.Rounds, &spec.MaxRounds)
	num("pts.numjobs", f.NumJobs, &spec.NumJobs)
	num("pts.iodepth", f.IODepth, &spec.IODepth)
	if f.WIPC != "" {
		num("pts.wipc_loops", f.WIPC, &spec.WIPCLoops)
		if spec.WIPCLoops == 0 && f.WIPC != "" {
			spec.WIPCLoops = -1 // 0 typed: none (the spec's 0 is the default, 2)
		}
	}
	if f.RoundTime != "" {
		d, err := units.ParseDuration(f.RoundTime)
		if err != nil {
			errs = append(errs, &ValidationError{Field: "pts.round_time", Msg: err.Error()})
		}
		spec.RoundTime = d
	}
	if f.Size != "" {
		n, err := units.ParseSize(f.Size)
		if err != nil {
			errs = append(errs, &ValidationError{Field: "pts.size", Msg: err.Error()})
		}
		spec.Size = n
	}
	req := &PlanRequest{PTS: &spec, Options: map[string]OptionValue{}, YesDestroy: f.YesDestroy}
	if f.Device != "" {
		req.Options["filename"] = OptionValue(f.Device)
	}
	if len(errs) > 0 {
		return req, errs
	}
	return req, nil
}

// createPTSRun takes the form's PTS part: a test the device may take is
// handed to the launcher and answered with 303 to its run's page; a
// refused one shows the page again with each error beside its field.
func (s *Server) createPTSRun(c echo.Context) error {
	f := readPTSForm(c)
	req, err := f.request()
	var id int64
	if err == nil {
		id, err = s.launch(c.Request().Context(), req)
	}
	var ve *ValidationError
	if !errors.As(err, &ve) {
		if err != nil {
			return err
		}
		return c.Redirect(http.StatusSeeOther, fmt.Sprintf("/runs/%d", id))
	}
	data, derr := s.newRunData(c, defaultForm())
	if derr != nil {
		return derr
	}
	data.PTS = f
	all := ValidationErrors{ve}
	errors.As(err, &all)
	var general []string
	for _, v := range all {
		if field, ok := ptsFormFields[v.Field]; ok && data.PTSErrors[field] == "" {
			data.PTSErrors[field] = v.Msg
		} else if !ok {
			general = append(general, v.Msg)
		}
	}
	data.PTSError = strings.Join(general, "\n")
	return s.render(c, http.StatusBadRequest, "new", data)
}
