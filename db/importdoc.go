package db

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
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
	if format, ok := exportFormat(trimmed); ok {
		if format != ExportFormat {
			return nil, "", fmt.Errorf("import: format %q is neither an iolab export (%q) nor fio's JSON output", format, ExportFormat)
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

// exportFormat is the "format" of a document that is a single JSON object
// with one: only such a document can be an export (fio's output with
// warnings or several documents is not one).
func exportFormat(trimmed []byte) (string, bool) {
	var head struct {
		Format *string `json:"format"`
	}
	if !json.Valid(trimmed) || json.Unmarshal(trimmed, &head) != nil || head.Format == nil {
		return "", false
	}
	return *head.Format, true
}

// ParseFioRun reads several of fio's JSON outputs as one run
// (FioRunExport); names (the files') label its errors. iolab exports are
// runs already and do not join.
func ParseFioRun(names []string, docs [][]byte, o ImportOptions) (*Export, error) {
	if len(docs) == 0 {
		return nil, errors.New("import: no fio output to make a run of")
	}
	// The jobs of all the outputs count against one bound: the run is
	// built of them all at once (sweep.Rebuild), each job's results about
	// 100 KiB in memory. Each output is counted before it is decoded
	// (ParseFio), the sum as each one is.
	jobs := 0
	imps := make([]*fio.FioImport, len(docs))
	for i, data := range docs {
		if _, ok := exportFormat(bytes.TrimSpace(data)); ok {
			return nil, fmt.Errorf("%s: not fio's JSON output (an iolab export is a run of its own and does not join another)", names[i])
		}
		imp, err := fio.ParseFio(data)
		if err != nil {
			return nil, fmt.Errorf("%s: import: %w", names[i], err)
		}
		for _, g := range imp.Result.Groups {
			jobs += len(g.Jobs)
		}
		if jobs > fio.MaxImportJobs {
			return nil, &fio.LimitError{Msg: fmt.Sprintf("%s: the outputs have more than %d jobs: iolab imports at most %d of fio's job reports as one run (import them as several runs, or use group_reporting)", names[i], fio.MaxImportJobs, fio.MaxImportJobs)}
		}
		imps[i] = imp
	}
	return FioRunExport(imps, o), nil
}

// FioExport turns one imported fio output into a run (FioRunExport).
func FioExport(imp *fio.FioImport, o ImportOptions) *Export {
	return FioRunExport([]*fio.FioImport{imp}, o)
}

// FioRunExport turns imported fio outputs into one run that keeps fio's
// structure: each output's steps (a reporting group that waited for the
// ones before it, with any started beside it; see fio.FioImport.Steps), in
// order, placed on the axes that differ between them (sweep.Rebuild), the
// same axis values again being repeats. Every job keeps its own numbers:
// nothing is summed across jobs. The plan carries the options fio did not
// print but its results show (Inferred) and what could not be told
// (Notes). The uid comes from the outputs' digests, so importing the same
// outputs again keeps one run.
func FioRunExport(imps []*fio.FioImport, o ImportOptions) *Export {
	var (
		configs  []bench.Config
		results  []*bench.Result
		inferred []fio.Inference
		notes    []string
		digests  []string
	)
	for _, imp := range imps {
		for _, st := range imp.Steps() {
			configs = append(configs, st.Config)
			results = append(results, st.Result)
		}
		for _, in := range imp.Inferred {
			if !slices.ContainsFunc(inferred, func(x fio.Inference) bool { return x.Job == in.Job && x.Option == in.Option }) {
				inferred = append(inferred, in)
			}
		}
		notes = union(notes, imp.Notes...)
		digests = append(digests, imp.Digest)
	}
	host := imps[0].Result.Host
	if o.Hostname != "" {
		host.Hostname = o.Hostname
	}
	if o.Kernel != "" {
		host.KernelRelease = o.Kernel
	}
	name := o.Name
	if name == "" && len(configs) > 0 && len(configs[0].Jobs) > 0 {
		name = configs[0].Jobs[0].Name
	}
	plan, steps := sweep.Rebuild(name, configs)
	plan.Inferred = inferred
	plan.Notes = append(notes, plan.Notes...)

	run := Run{
		Name: name, Status: StatusDone, Source: SourceFio,
		Hostname: host.Hostname, Kernel: host.KernelRelease,
		Tags: union(nil, o.Labels...),
		Plan: plan, Host: host,
		UID: fioUID(digests),
	}
	now := time.Now()
	var errs []string
	out := make([]sweep.StepResult, len(steps))
	for s := range steps {
		res := results[s]
		res.Host = host
		sr := sweep.StepResult{Step: steps[s], Status: sweep.StepDone, Start: res.Start, Result: res}
		if sr.Start.IsZero() {
			sr.Start = now
		}
		sr.End = sr.Start
		var stepErrs []string
		for _, g := range res.Groups {
			for _, j := range g.Jobs {
				if e := j.Start.Add(j.Runtime + j.Job.RampTime); e.After(sr.End) {
					sr.End = e
				}
				if j.Error != "" {
					stepErrs = append(stepErrs, j.Name+": "+j.Error)
				}
			}
		}
		if len(stepErrs) > 0 {
			sr.Status, sr.Error = sweep.StepFailed, joinErrors(stepErrs, "the step's jobs")
			run.Status = StatusFailed
			errs = append(errs, stepErrs...)
		}
		for _, j := range steps[s].Config.Jobs {
			if run.Target == "" && j.Filename != "" {
				run.Target = j.Filename
			}
			run.Engines = union(run.Engines, bench.EngineVariant(&j))
		}
		if s == 0 || sr.Start.Before(run.Started) {
			run.Started = sr.Start
		}
		if sr.End.After(run.Finished) {
			run.Finished = sr.End
		}
		out[s] = sr
	}
	run.Created = run.Started
	run.Error = joinErrors(errs, "the steps")
	return &Export{Format: ExportFormat, Version: ExportVersion, Run: run, Steps: out}
}

// joinErrors joins errors with "; " within MaxErrorLen: past it, the
// rest are counted, and where lists them.
func joinErrors(errs []string, where string) string {
	var b strings.Builder
	for i, e := range errs {
		if b.Len()+len(e)+2 > MaxErrorLen-100 {
			fmt.Fprintf(&b, "; and %d more (see %s)", len(errs)-i, where)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(e)
	}
	return b.String()
}

// fioUID is the uid of the run made of fio outputs with these digests:
// one output's own, or for several one of them all, in order.
func fioUID(digests []string) string {
	if len(digests) == 1 {
		if len(digests[0]) < 32 {
			return ""
		}
		return "fio-" + digests[0][:32]
	}
	for _, d := range digests {
		if d == "" {
			return ""
		}
	}
	sum := sha256.Sum256([]byte(strings.Join(digests, "\n")))
	return "fio-" + hex.EncodeToString(sum[:16])
}

// ImportDocument parses data (see ParseImport) and stores it in one
// transaction. existed says the run (by uid) was already stored: id is
// then the existing run's.
func (s *Store) ImportDocument(ctx context.Context, data []byte, o ImportOptions) (id int64, existed bool, err error) {
	return s.ImportDocumentAs(ctx, data, o, SourceImport)
}

// ImportDocumentAs is ImportDocument with the source an iolab export is
// stored with (SourceImport or SourcePush; fio's output is SourceFio). An
// export is decoded as it is stored, one step at a time (importExport).
func (s *Store) ImportDocumentAs(ctx context.Context, data []byte, o ImportOptions, source string) (id int64, existed bool, err error) {
	trimmed := bytes.TrimSpace(data)
	if format, ok := exportFormat(trimmed); ok && format == ExportFormat {
		return s.importExport(ctx, trimmed, o, source)
	}
	e, src, err := ParseImport(data, o)
	if err != nil {
		return 0, false, err
	}
	if src == SourceImport {
		src = source
	}
	return s.ImportRun(ctx, e, src)
}

// importExport stores an iolab export as it decodes it: the run, then
// each step as it comes, counted (MaxImportSteps) and checked before the
// next is read, so that memory holds one step, never the whole run (a
// step's results hold about 100 KiB of histograms a job in memory, where
// the document holds their non-empty bins). The run must come before
// the steps, as iolab writes it.
func (s *Store) importExport(ctx context.Context, data []byte, o ImportOptions, source string) (int64, bool, error) {
	fail := func(err error) (int64, bool, error) {
		return 0, false, fmt.Errorf("import: iolab export: %w", err)
	}
	var head struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fail(err)
	}
	if head.Version < 1 || head.Version > ExportVersion {
		return 0, false, fmt.Errorf("import: version %d of %s, this iolab reads 1 to %d", head.Version, ExportFormat, ExportVersion)
	}
	// Counted before anything is stored.
	n := fio.CountEntries(data, MaxImportSteps, "steps")
	if n > MaxImportSteps {
		return fail(fmt.Errorf("more than %d steps: at most %d (--max-steps' default)", MaxImportSteps, MaxImportSteps))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if _, err := dec.Token(); err != nil { // {
		return fail(err)
	}
	var imp *runImport
	defer func() {
		if imp != nil && imp.tx != nil {
			imp.tx.Rollback()
		}
	}()
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		switch key, _ := t.(string); key {
		case "run":
			var r Run
			if err := dec.Decode(&r); err != nil {
				return fail(fmt.Errorf("run: %w", err))
			}
			if r.Created.IsZero() {
				return 0, false, errors.New("import: iolab export: the run has no created_at")
			}
			r.Tags = union(r.Tags, o.Labels...)
			if r.Hostname == "" {
				r.Hostname = o.Hostname
			}
			if r.Kernel == "" {
				r.Kernel = o.Kernel
			}
			if imp, err = s.beginImport(ctx, r, source, n); err != nil || imp.existed {
				return imp.id, imp.existed, err
			}
		case "steps":
			if imp == nil {
				return fail(errors.New(`its "steps" come before its "run" (iolab writes the run first)`))
			}
			if t, err := dec.Token(); err != nil || t != json.Delim('[') {
				if t == nil && err == nil {
					continue // "steps": null
				}
				return fail(fmt.Errorf(`"steps" is not a list (%v)`, err))
			}
			for dec.More() {
				if len(imp.seen) >= MaxImportSteps {
					return fail(fmt.Errorf("more than %d steps: at most %d (--max-steps' default)", MaxImportSteps, MaxImportSteps))
				}
				var st sweep.StepResult
				if err := dec.Decode(&st); err != nil {
					return fail(fmt.Errorf("step %d: %w", len(imp.seen)+1, err))
				}
				if err := imp.step(ctx, &st); err != nil {
					return 0, false, err
				}
			}
			if _, err := dec.Token(); err != nil { // ]
				return fail(err)
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fail(err)
			}
		}
	}
	if imp == nil {
		return fail(errors.New(`no "run"`))
	}
	return imp.commit()
}
