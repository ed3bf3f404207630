package db

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/sweep"
)

// ImportOptions say what an imported document does not: fio's output has
// no host or kernel. Labels become the run's tags.
type ImportOptions struct {
	Name     string // the run's name; "" takes the file's or the first job's
	Hostname string
	Kernel   string
	Labels   []string
}

// ParseImport reads an import document: an iolab export (a JSON object with
// "format": "iolab-run") or fio's JSON output (json or json+, one or more
// documents). It returns the export to store and its source (SourceImport
// or SourceFio). Nothing is stored: pass the result to ImportRun.
func ParseImport(data []byte, o ImportOptions) (*Export, string, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, "", errors.New("import: the input is empty")
	}
	var head struct {
		Format  *string `json:"format"`
		Version int     `json:"version"`
	}
	// Only a single valid JSON object can be an export; fio's output with
	// warnings or several documents is not one.
	if json.Valid(trimmed) && json.Unmarshal(trimmed, &head) == nil && head.Format != nil {
		if *head.Format != ExportFormat {
			return nil, "", fmt.Errorf("import: format %q is neither an iolab export (%q) nor fio's JSON output", *head.Format, ExportFormat)
		}
		var e Export
		if err := json.Unmarshal(trimmed, &e); err != nil {
			return nil, "", fmt.Errorf("import: iolab export: %w", err)
		}
		if e.Version < 1 || e.Version > ExportVersion {
			return nil, "", fmt.Errorf("import: version %d of %s, this iolab reads 1 to %d", e.Version, ExportFormat, ExportVersion)
		}
		if e.Run.Created.IsZero() {
			return nil, "", errors.New("import: iolab export: the run has no created_at")
		}
		e.Run.Tags = union(e.Run.Tags, o.Labels...)
		if e.Run.Hostname == "" {
			e.Run.Hostname = o.Hostname
		}
		if e.Run.Kernel == "" {
			e.Run.Kernel = o.Kernel
		}
		return &e, SourceImport, nil
	}
	imp, err := fio.ParseFio(data)
	if err != nil {
		return nil, "", fmt.Errorf("import: %w", err)
	}
	return FioExport(imp, o), SourceFio, nil
}

// FioExport turns an imported fio output into a one-step run: the jobs'
// options as the plan, the result as its only step. Its uid comes from the
// fio document's digest, so importing the same output twice keeps one run.
func FioExport(imp *fio.FioImport, o ImportOptions) *Export {
	res := imp.Result
	if o.Hostname != "" {
		res.Host.Hostname = o.Hostname
	}
	if o.Kernel != "" {
		res.Host.KernelRelease = o.Kernel
	}
	start := res.Start
	if start.IsZero() {
		start = time.Now()
	}
	end := start
	status := StatusDone
	var errs []string
	for _, g := range res.Groups {
		for _, j := range g.Jobs {
			if e := j.Start.Add(j.Runtime + j.Job.RampTime); e.After(end) {
				end = e
			}
			if j.Error != "" {
				status = StatusFailed
				errs = append(errs, j.Name+": "+j.Error)
			}
		}
	}
	name := o.Name
	if name == "" && len(imp.Config.Jobs) > 0 {
		name = imp.Config.Jobs[0].Name
	}
	plan := sweep.Plan{Name: name, Base: imp.Config, Repeat: 1}
	for _, opt := range imp.Config.GlobalOptions {
		plan.Args = append(plan.Args, fioArg(opt))
	}
	for _, j := range imp.Config.Jobs {
		plan.Args = append(plan.Args, "--name="+j.Name)
		for _, opt := range j.Options {
			plan.Args = append(plan.Args, fioArg(opt))
		}
	}
	run := Run{
		Name: name, Status: status, Source: SourceFio,
		Created: start, Started: start, Finished: end,
		Hostname: res.Host.Hostname, Kernel: res.Host.KernelRelease,
		Tags: union(nil, o.Labels...),
		Plan: plan, Host: res.Host,
		Error: strings.Join(errs, "; "),
	}
	if imp.Digest != "" {
		run.UID = "fio-" + imp.Digest[:32]
	}
	for _, j := range imp.Config.Jobs {
		if run.Target == "" && j.Filename != "" {
			run.Target = j.Filename
		}
		if j.IOEngine != "" && !slices.Contains(run.Engines, j.IOEngine) {
			run.Engines = append(run.Engines, j.IOEngine)
		}
	}
	stepStatus := sweep.StepDone
	if status == StatusFailed {
		stepStatus = sweep.StepFailed
	}
	step := sweep.StepResult{
		Step:   sweep.Step{Seq: 0, Repeat: 0, Config: imp.Config},
		Status: stepStatus, Error: run.Error,
		Start: start, End: end, Result: res,
	}
	return &Export{Format: ExportFormat, Version: ExportVersion, Run: run, Steps: []sweep.StepResult{step}}
}

func fioArg(o bench.Option) string {
	if o.Value == "" {
		return "--" + o.Name
	}
	return "--" + o.Name + "=" + o.Value
}

// ImportDocument parses data (see ParseImport) and stores it in one
// transaction. existed says the run (by uid) was already stored: id is
// then the existing run's.
func (s *Store) ImportDocument(ctx context.Context, data []byte, o ImportOptions) (id int64, existed bool, err error) {
	e, source, err := ParseImport(data, o)
	if err != nil {
		return 0, false, err
	}
	return s.ImportRun(ctx, e, source)
}
