package fio

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"iolab/bench"
	"iolab/bench/testdev"
)

// TestSteadyExamplesMatchFio runs fio's steady-state and latency-target
// examples (testdata/jobs/steady, adapted to a loop device and seconds)
// with fio 3.33 and with iolab and compares the JSON documents as
// TestJSONMatchesFio does: every member fio prints, in fio's order and of
// its JSON type — the steadystate block with its data arrays, and
// latency_depth, latency_target, latency_percentile and latency_window —
// with the values that do not depend on timing equal; ssd-steadystate's
// bandwidth logs are fio's files, line for line (sameLogs).
func TestSteadyExamplesMatchFio(t *testing.T) {
	fio := lookFio(t)
	dev := testdev.Loop(t, 16<<20)
	t.Setenv("IOLAB_DEV", dev)
	for _, name := range []string{"steadystate.fio", "ssd-steadystate.fio", "latency-profile.fio"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("IOLAB_DIR", dir)
			path, err := filepath.Abs(filepath.Join("testdata", "jobs", "steady", name))
			if err != nil {
				t.Fatal(err)
			}
			fioOut := runFio(t, fio, dir, "--output-format=json", path)
			cfg, res, err := runExample(path)
			if err != nil {
				t.Fatalf("iolab: %v", err)
			}
			ours := writtenJSON(t, NewReport(res, cfg, false))
			want, got := decodeOrdered(t, fioOut), decodeOrdered(t, ours)
			c := &jsonComparison{t: t, values: steadyValues, extra: []*jsonDiff{
				// fio 3.33 leaves out value-less options (see jsonDiffs).
				{path: `global options.(group_reporting|time_based)`}, {path: `jobs[].job options.new_group`}}}
			c.compare("", want, got)

			// What the examples are about is there, in both.
			for _, doc := range []struct {
				who string
				v   any
			}{{"fio", want}, {"iolab", got}} {
				jobs, _ := doc.v.(orderedObject).get("jobs")
				for _, j := range jobs.([]any) {
					job := j.(orderedObject)
					jn, _ := job.get("jobname")
					_, hasSS := job.get("steadystate")
					if wantSS := name == "steadystate.fio"; hasSS != wantSS {
						t.Errorf("%s: %s's job %v has a steadystate block: %v, want %v", name, doc.who, jn, hasSS, wantSS)
					}
					if name == "latency-profile.fio" {
						// 500 ms is never missed on a loop device: the search
						// doubles the depth up to iodepth, in fio and in iolab
						// (unless a loaded machine stalls a whole window, which
						// steps it down).
						if d, _ := job.get("latency_depth"); stringOf(d) != "128" {
							t.Logf("%s: latency_depth %v, want 128 on a quiet machine", doc.who, d)
						}
					}
				}
			}
			// fio's output imports with its windows and depths, drawn as
			// iolab's own are.
			imp, err := ParseFio(fioOut)
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range imp.Result.Groups {
				for _, j := range g.Jobs {
					switch name {
					case "steadystate.fio":
						if s := j.Steady; s == nil || s.Dur != 2 || len(s.IOPS) != 2 || (s.Metric != "iops" && s.Metric != "bw") {
							t.Errorf("imported %s: steady state %+v", j.Name, s)
						}
					case "latency-profile.fio":
						if j.LatencyDepth < 1 || j.LatencyDepth > 128 {
							t.Errorf("imported %s: latency depth %d", j.Name, j.LatencyDepth)
						}
					}
				}
			}
			if name == "ssd-steadystate.fio" {
				sameLogs(t, dir, res)
			}
			if t.Failed() {
				t.Logf("fio:\n%s\niolab:\n%s", fioOut, ours)
			}
		})
	}
}

// sameLogs checks that res kept the log files fio wrote in dir, by
// name, with as many lines of as many columns: ssd-steadystate's clones
// each log every write's bandwidth, fioa-steady-state_bw.2.log to .5.log
// (the fill phase is job 1).
func sameLogs(t *testing.T, dir string, res *bench.Result) {
	t.Helper()
	fioLogs := logNames(t, dir)
	var ours []string
	for _, j := range resultJobs(res) {
		for _, l := range j.Logs {
			name := filepath.Base(l.File)
			ours = append(ours, name)
			if !slices.Contains(fioLogs, name) {
				continue
			}
			theirs, got := logLines(t, filepath.Join(dir, name)), logColumns(l.Data)
			if l.Truncated || len(got) != len(theirs) || int64(len(got)) != l.Lines || len(got) == 0 {
				t.Errorf("%s: %d lines (truncated %v), fio's %d", name, len(got), l.Truncated, len(theirs))
			} else if len(got[0]) != len(theirs[0]) {
				t.Errorf("%s: %d columns, fio's %d", name, len(got[0]), len(theirs[0]))
			}
		}
	}
	slices.Sort(ours)
	if want := []string{"fioa-steady-state_bw.2.log", "fioa-steady-state_bw.3.log", "fioa-steady-state_bw.4.log", "fioa-steady-state_bw.5.log"}; !slices.Equal(fioLogs, want) || !slices.Equal(ours, want) {
		t.Errorf("the logs: iolab's %v, fio's %v; want %v", ours, fioLogs, want)
	}
}

// steadyValues are the values that must be equal in these time-based
// runs: the jobs, their groups and options, the criterion and the window's
// length, the latency target's settings.
var steadyValues = regexp.MustCompile(`^(global options\..*|jobs\[\]\.(jobname|groupid|error|desc|job options\..*|` +
	`latency_(target|percentile|window)|steadystate\.(ss|duration)))$`)

func stringOf(v any) string { return fmt.Sprint(v) }
