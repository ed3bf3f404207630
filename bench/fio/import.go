package fio

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"iolab/bench"
	"iolab/bench/hist"
	"iolab/bench/system"
)

// FioImport is fio's JSON output (json or json+) turned into iolab's
// types: the result of fio's last document and the jobs its options
// describe.
type FioImport struct {
	FioVersion string
	// Config holds the jobs as fio's "job options" describe them (global
	// options applied first). Options iolab does not know, or values it
	// does not take, are kept in Job.Options and otherwise ignored.
	Config bench.Config
	Result *bench.Result
	// Plus is true when the document had json+ histograms.
	Plus bool
	// Digest is the SHA-256 of the imported document's bytes (hex), set by
	// ParseFio: the same fio output gives the same digest.
	Digest string
	// Inferred are the value-less options fio did not print that the
	// results show (time_based, stonewall, new_group, group_reporting);
	// they are set on the jobs and in their Options.
	Inferred []Inference
	// Notes say what the import could not tell or keep.
	Notes []string
	// Server is the fio server the results came from, for fio's client
	// output (its Result.Host.Hostname is the server as the client named
	// it); nil for fio's own output.
	Server *Server
}

// ParseFio reads fio's JSON output — one document or several from
// --status-interval — and imports the last one. The input must be fio's
// (a "fio version" or "iolab version" and at least one job) with the fields
// iolab needs; anything else is an error that says what is wrong. fio's
// client output is taken when it holds one server's results; with
// several, use ParseFioHosts.
func ParseFio(data []byte) (*FioImport, error) {
	reps, raw, err := parseDocuments(data)
	if err != nil {
		return nil, err
	}
	imp, err := ImportFio(reps)
	if err != nil {
		return nil, withClientMessages(err, data)
	}
	imp.Digest = digest(raw, imp.Server)
	return imp, nil
}

// ParseFioHosts reads fio's JSON output like ParseFio and imports each
// server's results of fio's client output apart (ImportFioHosts); for
// fio's own output it returns the one import.
func ParseFioHosts(data []byte) ([]*FioImport, error) {
	reps, raw, err := parseDocuments(data)
	if err != nil {
		return nil, err
	}
	imps, err := ImportFioHosts(reps)
	if err != nil {
		return nil, withClientMessages(err, data)
	}
	for _, imp := range imps {
		imp.Digest = digest(raw, imp.Server)
	}
	return imps, nil
}

// digest is the SHA-256 of the document, and of the server for one
// server's part of fio's client output, so that each server's import has
// its own.
func digest(raw []byte, server *Server) string {
	h := sha256.New()
	h.Write(raw)
	if server != nil {
		fmt.Fprintf(h, "\x00fio server %s", server)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// withClientMessages adds to err what a fio client printed about its
// servers before the document: why a server has no results.
func withClientMessages(err error, data []byte) error {
	msgs := ClientMessages(data)
	if len(msgs) == 0 {
		return err
	}
	return fmt.Errorf("%w; fio's client printed: %s", err, strings.Join(msgs, "; "))
}

// parseDocuments reads the documents and checks the last one's fields; raw
// is the last one's bytes.
func parseDocuments(data []byte) ([]Report, json.RawMessage, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, errors.New("fio import: the input is empty")
	}
	if nextDocument(data, 0) < 0 {
		return nil, nil, errors.New("fio import: not JSON (no '{' starts a document)")
	}
	// Documents one by one, so that a --status-interval stream cut short
	// (fio killed while printing) still yields its last complete document.
	// Only the last document is imported: the ones before it are read,
	// checked and dropped, so that a long stream holds one at a time.
	var (
		last  []Report
		raw   json.RawMessage
		ndocs int
	)
	for pos := 0; ; {
		start := nextDocument(data, pos)
		if start < 0 {
			break
		}
		dec := json.NewDecoder(bytes.NewReader(data[start:]))
		var doc json.RawMessage
		if err := dec.Decode(&doc); err != nil {
			if ndocs > 0 && (errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)) {
				break // the last document is truncated: keep the one before
			}
			return nil, nil, fmt.Errorf("fio import: document %d (from byte %d): %w", ndocs+1, start, err)
		}
		// Counted before decoding: each job becomes about 100 KiB of
		// histograms.
		if n := CountEntries(doc, MaxImportJobs, "jobs", "client_stats"); n > MaxImportJobs {
			return nil, nil, &LimitError{Msg: fmt.Sprintf("fio import: document %d (from byte %d) has more than %d jobs: iolab imports at most %d of fio's job reports from one document (split the job file, or use group_reporting)", ndocs+1, start, MaxImportJobs, MaxImportJobs)}
		}
		var rep Report
		if err := json.Unmarshal(doc, &rep); err != nil {
			return nil, nil, fmt.Errorf("fio import: document %d (from byte %d): %w", ndocs+1, start, err)
		}
		if rep.Jobs == nil && rep.ClientStats == nil {
			return nil, nil, fmt.Errorf("fio import: document %d (from byte %d): no \"jobs\" (nor fio client's \"client_stats\"): not fio output", ndocs+1, start)
		}
		ndocs++
		last, raw = append(last[:0], rep), doc
		pos = start + int(dec.InputOffset())
	}
	if ndocs == 0 {
		return nil, nil, errors.New("fio import: no fio JSON document in the input")
	}
	if err := checkFioFields(raw); err != nil {
		return nil, nil, fmt.Errorf("fio import: document %d: %w", ndocs, err)
	}
	return last, raw, nil
}

// MaxImportJobs bounds the job reports of one fio document. fio runs up
// to 4096 job threads (REAL_MAX_JOBS), but a run that reports each of
// them apart is rare: numjobs=64 on 16 jobs is 1024 reports, and with
// group_reporting any numjobs is one. iolab runs at most 1024 job threads
// at once (serve's --max-jobs default), and each imported job holds about
// 100 KiB of histograms in memory: 1024 jobs keep an import near 400 MiB.
const MaxImportJobs = 1024

// LimitError is an import refused for its size: more of something than
// iolab takes. The message names the limit.
type LimitError struct{ Msg string }

func (e *LimitError) Error() string { return e.Msg }

// CountEntries counts the entries of the lists under keys of a JSON
// object without decoding them, and stops past limit: what an import
// counts before it decodes. A document it cannot walk counts 0 (decoding
// it then says what is wrong).
func CountEntries(doc []byte, limit int, keys ...string) int {
	dec := json.NewDecoder(bytes.NewReader(doc))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0
	}
	n := 0
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return 0
		}
		if key, _ := t.(string); !slices.Contains(keys, key) {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return 0
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('[') {
			return 0
		}
		for dec.More() {
			if n++; n > limit {
				return n
			}
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return 0
			}
		}
		if _, err := dec.Token(); err != nil {
			return 0
		}
	}
	return n
}

// checkFioFields checks that the document has every field ImportFio reads,
// so that an unknown fio version's renamed field is not taken as zero.
func checkFioFields(doc json.RawMessage) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(doc, &top); err != nil {
		return err
	}
	_, fio := top["fio version"]
	_, iolab := top["iolab version"]
	if !fio && !iolab {
		return errors.New(`no "fio version": not fio's JSON output`)
	}
	key := "jobs"
	if _, ok := top[key]; !ok {
		key = "client_stats"
	}
	var jobs []map[string]json.RawMessage
	if err := json.Unmarshal(top[key], &jobs); err != nil {
		return fmt.Errorf("%q: %w", key, err)
	}
	if len(jobs) == 0 && key == "jobs" {
		return errors.New(`no jobs in "jobs"`)
	}
	for i, j := range jobs {
		for _, k := range []string{"jobname", "groupid", "error", "job_runtime", "usr_cpu", "sys_cpu", "ctx", "read", "write"} {
			if _, ok := j[k]; !ok {
				return fmt.Errorf("job %d: missing %q (an fio version iolab does not know?)", i+1, k)
			}
		}
		for _, d := range []string{"read", "write"} {
			var dir map[string]json.RawMessage
			if err := json.Unmarshal(j[d], &dir); err != nil {
				return fmt.Errorf("job %d: %q: %w", i+1, d, err)
			}
			for _, k := range []string{"io_bytes", "runtime", "total_ios", "slat_ns", "clat_ns", "lat_ns"} {
				if _, ok := dir[k]; !ok {
					return fmt.Errorf("job %d: %s: missing %q (an fio version iolab does not know?)", i+1, d, k)
				}
			}
			for _, l := range []string{"slat_ns", "clat_ns", "lat_ns"} {
				var lat map[string]json.RawMessage
				if err := json.Unmarshal(dir[l], &lat); err != nil {
					return fmt.Errorf("job %d: %s: %q: %w", i+1, d, l, err)
				}
				for _, k := range []string{"min", "max", "mean", "stddev", "N"} {
					if _, ok := lat[k]; !ok {
						return fmt.Errorf("job %d: %s: %s: missing %q (an fio version iolab does not know?)", i+1, d, l, k)
					}
				}
			}
		}
	}
	return nil
}

// ImportFio turns the last of fio's documents into a Result: one
// GroupResult per groupid (in order of appearance), one JobResult per
// entry of "jobs", latencies from fio's min/max/mean/stddev/N, histograms
// from json+ bins, CPU from usr_cpu and sys_cpu, and disk_util on the
// first group. fio's percentiles are not kept: with json+ they follow from
// the histograms. The value-less options an older fio does not print are
// inferred where the results show them (Inferred). fio's client output
// must hold one server's results (ImportFioHosts takes several).
func ImportFio(reps []Report) (*FioImport, error) {
	if len(reps) == 0 {
		return nil, errors.New("fio import: no documents")
	}
	rep := &reps[len(reps)-1]
	if !rep.IsClient() {
		return importReport(rep)
	}
	hosts, notes := rep.Hosts()
	switch len(hosts) {
	case 0:
		return nil, errNoClientResults
	case 1:
		return importServer(&hosts[0], notes)
	}
	names := make([]string, len(hosts))
	for i := range hosts {
		names[i] = hosts[i].Server.String()
	}
	return nil, fmt.Errorf("fio import: fio's client output holds the results of %d servers (%s): import each apart (one run per server); iolab never adds servers' results up", len(hosts), strings.Join(names, ", "))
}

var errNoClientResults = errors.New(`fio import: fio's client output has no results in "client_stats": the servers refused the jobs or did not run them`)

// ImportFioHosts imports each server's results of fio's client output
// apart (Report.Hosts), in the order they appear; each import's Server and
// Result.Host.Hostname name it. fio's "All clients" sum is left out: a
// server's jobs are its own, never added to another's. For fio's own
// output it returns the one import ImportFio makes.
func ImportFioHosts(reps []Report) ([]*FioImport, error) {
	if len(reps) == 0 {
		return nil, errors.New("fio import: no documents")
	}
	rep := &reps[len(reps)-1]
	if !rep.IsClient() {
		imp, err := importReport(rep)
		if err != nil {
			return nil, err
		}
		return []*FioImport{imp}, nil
	}
	hosts, notes := rep.Hosts()
	if len(hosts) == 0 {
		return nil, errNoClientResults
	}
	imps := make([]*FioImport, len(hosts))
	for i := range hosts {
		imp, err := importServer(&hosts[i], notes)
		if err != nil {
			return nil, err
		}
		imps[i] = imp
	}
	return imps, nil
}

// importServer imports one server's part of fio's client output.
func importServer(rep *Report, notes []string) (*FioImport, error) {
	imp, err := importReport(rep)
	if err != nil {
		return nil, fmt.Errorf("fio server %s: %w", rep.Server, err)
	}
	imp.Notes = append(imp.Notes, notes...)
	return imp, nil
}

// importReport imports one document (or one server's part of one).
func importReport(rep *Report) (*FioImport, error) {
	if rep.FioVersion == "" && rep.IolabVersion == "" {
		return nil, errors.New(`fio import: no "fio version": not fio's JSON output`)
	}
	if len(rep.Jobs) == 0 {
		return nil, errors.New("fio import: the document has no jobs")
	}
	out := &FioImport{FioVersion: rep.FioVersion, Result: &bench.Result{}, Server: rep.Server}
	if out.FioVersion == "" {
		out.FioVersion = rep.IolabVersion
	}
	cfg := &out.Config
	cfg.OutputFormat = "json"
	cfg.GlobalOptions = slices.Clone([]bench.Option(rep.GlobalOptions))
	res := out.Result
	res.Host.Hostname, res.Host.KernelRelease = rep.Hostname, rep.Kernel

	if err := checkImportedOptions("global options", rep.GlobalOptions); err != nil {
		return nil, err
	}
	for i := range rep.Jobs {
		jr := &rep.Jobs[i]
		if len(jr.JobName) > MaxJobNameLen {
			return nil, &LimitError{Msg: fmt.Sprintf("fio import: job %d: its name is %d bytes, at most %d", i+1, len(jr.JobName), MaxJobNameLen)}
		}
		if err := checkImportedOptions(fmt.Sprintf("job %d (%s)", i+1, jr.JobName), jr.JobOptions); err != nil {
			return nil, err
		}
	}
	results := make([]bench.JobResult, len(rep.Jobs))
	var elapsed time.Duration
	for i := range rep.Jobs {
		jr := &rep.Jobs[i]
		job := fioJob(jr.JobName, rep.GlobalOptions, jr.JobOptions)
		r, plus, err := fioJobResult(jr, job)
		if err != nil {
			return nil, fmt.Errorf("fio import: job %d (%s): %w", i+1, jr.JobName, err)
		}
		out.Plus = out.Plus || plus
		results[i] = *r
		elapsed = max(elapsed, time.Duration(jr.Elapsed)*time.Second)
	}
	if rep.FioVersion != "" && !printsFlags(rep.FioVersion) {
		out.Inferred = inferOptions(results, elapsed)
		out.Notes = append(out.Notes, flagsNote(rep.FioVersion))
	}

	groupIndex := map[int]int{}
	// Each group's jobs in one allocation: a job's result is about 100
	// KiB, and a growing slice would hold its old copy beside the new.
	groupJobs := map[int]int{}
	for i := range results {
		groupJobs[results[i].GroupID]++
	}
	for i := range results {
		r := &results[i]
		gi, ok := groupIndex[r.GroupID]
		if !ok {
			gi = len(res.Groups)
			groupIndex[r.GroupID] = gi
			res.Groups = append(res.Groups, bench.GroupResult{ID: r.GroupID, Reporting: r.Job.GroupReporting,
				Jobs: make([]bench.JobResult, 0, groupJobs[r.GroupID])})
			cfg.Groups = append(cfg.Groups, bench.Group{ID: r.GroupID, Wait: gi > 0 && r.Job.Stonewall, Reporting: r.Job.GroupReporting})
		}
		g := &cfg.Groups[gi]
		if r.Job.GroupReporting {
			res.Groups[gi].Reporting, g.Reporting = true, true
		}
		if g.Reporting {
			r.Jobs = max(r.Job.NumJobs, 1)
		}
		// Without group_reporting fio prints each of numjobs clones:
		// the job is one job of the config, numjobs entries of its group.
		if n := len(g.Jobs); n == 0 || !isClone(&g.Jobs[n-1], &r.Job, g.Jobs) {
			cfg.Jobs = append(cfg.Jobs, r.Job.Clone())
		}
		g.Jobs = append(g.Jobs, r.Job.Clone())
		res.Groups[gi].Jobs = append(res.Groups[gi].Jobs, *r)
	}
	endMS := rep.TimestampMS
	if rep.Server != nil && endMS == 0 && rep.Timestamp > 0 {
		// The client's timestamp is when it started the servers.
		endMS = rep.Timestamp*1000 + runSpan(res, cfg.Groups).Milliseconds()
		out.Notes = append(out.Notes, "fio's client output says when the run started, to the second, not when each job did: the jobs' start times are laid out from it")
	}
	res.Start = setStarts(res, cfg.Groups, endMS)
	if len(rep.DiskUtil) > 0 && len(stepSpans(cfg.Groups)) > 1 {
		out.Notes = append(out.Notes, "fio's disk_util covers the whole fio run, not one step of it: it is not kept")
	}
	for _, d := range rep.DiskUtil {
		res.Groups[0].Disks = append(res.Groups[0].Disks, diskUtilization(d))
	}
	return out, nil
}

// checkImportedOptions refuses an option whose value is longer than the
// option takes (MaxValueLen), before anything is built of it: an import
// would keep it as written.
func checkImportedOptions(what string, opts Options) error {
	for _, o := range opts {
		if max := MaxValueLen(o.Name); len(o.Value) > max {
			return &LimitError{Msg: fmt.Sprintf("fio import: %s: option %s is %d bytes, at most %d", what, o.Name, len(o.Value), max)}
		}
		if strings.ContainsAny(o.Name+o.Value, "\n\r\x00") {
			return fmt.Errorf("fio import: %s: option %.64q holds a line break or NUL: not what fio prints of a job file's line", what, o.Name)
		}
	}
	return nil
}

// fioJob builds the job fio's options describe, starting from fio's
// defaults. Options iolab cannot take are recorded in Options as written.
func fioJob(name string, global, own Options) bench.Job {
	j := bench.NewJob()
	j.Name = name
	for _, o := range global {
		applyImported(&j, o)
	}
	// The job's own options, as fio lists them; Options records them.
	j.Options = nil
	for _, o := range own {
		if o.Name == "name" {
			continue
		}
		before := len(j.Options)
		applyImported(&j, o)
		if len(j.Options) == before {
			j.Options = append(j.Options, o)
		}
	}
	if j.IODepthBatchSubmit == 0 || j.IODepthBatchSubmit > j.IODepth {
		j.IODepthBatchSubmit = j.IODepth
	}
	return j
}

// applyImported applies one option and drops it on any error: an imported
// run keeps what fio did, whether or not iolab could do it.
func applyImported(j *bench.Job, o bench.Option) {
	saved := *j
	if err := ApplyOption(j, o.Name, o.Value); err != nil {
		*j = saved
	}
}

func fioJobResult(jr *JobReport, job bench.Job) (*bench.JobResult, bool, error) {
	r := &bench.JobResult{Name: jr.JobName, GroupID: jr.GroupID, Job: job, Ctx: jr.Ctx, MinFlt: jr.Minf, MajFlt: jr.Majf, Jobs: 1}
	if jr.Error != 0 {
		r.Error = fmt.Sprintf("fio error %d", jr.Error)
		if jr.FirstError != nil && *jr.FirstError != 0 {
			r.Error += fmt.Sprintf(" (first error %d)", *jr.FirstError)
		}
	}
	if jr.TotalErr != nil && jr.FirstError != nil {
		r.TotalErr, r.FirstError = *jr.TotalErr, *jr.FirstError
	}
	if jr.JobStart > 0 {
		r.Start = time.UnixMilli(jr.JobStart)
	}
	// fio's iops and bw divide by the direction's runtime; the job's
	// window is the longest of them (job_runtime when nothing ran).
	runtime := max(jr.Read.Runtime, jr.Write.Runtime, jr.Trim.Runtime)
	if runtime == 0 {
		runtime = jr.JobRuntime
	}
	r.Runtime = time.Duration(runtime) * time.Millisecond
	cpuBase := time.Duration(jr.JobRuntime) * time.Millisecond
	r.UsrCPU = time.Duration(jr.UsrCPU / 100 * float64(cpuBase))
	r.SysCPU = time.Duration(jr.SysCPU / 100 * float64(cpuBase))
	plus := false
	for d, dr := range []*DirReport{&jr.Read, &jr.Write, &jr.Trim} {
		out := &r.Dirs[d]
		out.IOs, out.Bytes, out.Short = dr.TotalIOs, dr.IOBytes, dr.ShortIOs
		for _, l := range []struct {
			name string
			in   *LatReport
			out  *hist.Lat
		}{{"slat_ns", &dr.Slat, &out.Slat}, {"clat_ns", &dr.Clat, &out.Clat}, {"lat_ns", &dr.Lat, &out.Lat}} {
			lat, hasBins, err := fioLat(l.in)
			if err != nil {
				return nil, false, fmt.Errorf("%s: %s: %w", dirNames[d], l.name, err)
			}
			*l.out = lat
			plus = plus || hasBins
		}
		prios, err := importPrios(dr.Prios)
		if err != nil {
			return nil, false, fmt.Errorf("%s: prios: %w", dirNames[d], err)
		}
		out.Prios = prios
	}
	importSteady(jr, r)
	var err error
	if r.Sync, err = importSync(&jr.Sync); err != nil {
		return nil, false, fmt.Errorf("sync: lat_ns: %w", err)
	}
	return r, plus, nil
}

// importPrios rebuilds a direction's latencies per priority from fio's
// "prios" (clat_ns, or lat_ns with lat_percentiles).
func importPrios(prios []PrioReport) ([]bench.PrioLat, error) {
	var out []bench.PrioLat
	for _, p := range prios {
		lr := p.Clat
		if lr == nil {
			lr = p.Lat
		}
		if lr == nil {
			return nil, fmt.Errorf("priority %d/%d has neither clat_ns nor lat_ns", p.PrioClass, p.Prio)
		}
		lat, _, err := fioLat(lr)
		if err != nil {
			return nil, fmt.Errorf("priority %d/%d: %w", p.PrioClass, p.Prio, err)
		}
		out = append(out, bench.PrioLat{Prio: uint16(p.PrioClass<<13 | p.Prio), Lat: lat})
	}
	return out, nil
}

// fioLat rebuilds a Lat from fio's summary: S, the sum of squared
// deviations, is stddev²·(N-1); the histogram comes from json+ bins.
func fioLat(l *LatReport) (hist.Lat, bool, error) {
	var out hist.Lat
	out.Stat = hist.LatStat{N: l.N, Min: l.Min, Max: l.Max, Mean: l.Mean}
	if l.N > 1 {
		out.Stat.S = l.Stddev * l.Stddev * float64(l.N-1)
	}
	if len(l.Bins) == 0 {
		return out, false, nil
	}
	if len(l.Bins) > hist.HistBuckets {
		return hist.Lat{}, false, &LimitError{Msg: fmt.Sprintf("%d histogram bins: fio's histograms have at most %d", len(l.Bins), hist.HistBuckets)}
	}
	h, err := hist.HistogramFromBins(l.Bins)
	if err != nil {
		return hist.Lat{}, false, err
	}
	if n := h.N(); n != l.N {
		return hist.Lat{}, false, fmt.Errorf("the bins count %d latencies but N is %d", n, l.N)
	}
	out.Hist = h
	return out, true, nil
}

// diskUtilization is diskUtilReport's inverse, with what fio prints.
func diskUtilization(d DiskUtil) system.DiskUtilization {
	return system.DiskUtilization{
		Name: d.Name, ReadIOs: d.ReadIOs, WriteIOs: d.WriteIOs,
		ReadMerges: d.ReadMerges, WriteMerges: d.WriteMerges,
		ReadSectors: d.ReadSectors, WriteSectors: d.WriteSectors,
		ReadTicks: d.ReadTicks, WriteTicks: d.WriteTicks,
		InQueue: d.InQueue, Util: d.Util,
		ReadsPerSec: d.ReadsPerSec, WritesPerSec: d.WritesPerSec,
		ReadKBPerSec: d.ReadKBPerSec, WriteKBPerSec: d.WriteKBPerSec,
		ReadMergesPerSec: d.ReadMergesPerSec, WriteMergesPerSec: d.WriteMergesPerSec,
		ReadAwait: d.ReadAwait, WriteAwait: d.WriteAwait, AvgQueueSize: d.AvgQueueSize,
	}
}
