package db

import (
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/sweep"
)

// Each bound on a plan's and a step's text: at the bound it is taken,
// one past it is refused with the bound named.
func TestTextLimits(t *testing.T) {
	job := func(edit func(j *bench.Job)) *bench.Job {
		j := bench.NewJob()
		j.Name, j.Filename, j.RW = "j", "/dev/loop7", "randread"
		edit(&j)
		return &j
	}
	planWith := func(j *bench.Job) *Run {
		return &Run{Status: StatusDone, Source: SourceImport, Created: time.Unix(1_780_000_000, 0),
			Plan: sweep.Plan{Base: bench.Config{Jobs: []bench.Job{*j}, Groups: []bench.Group{{Jobs: []bench.Job{*j}}}}}}
	}
	stepWith := func(jrs ...bench.JobResult) *sweep.StepResult {
		return &sweep.StepResult{Step: sweep.Step{Seq: 1}, Status: sweep.StepDone, Result: &bench.Result{Groups: []bench.GroupResult{{Jobs: jrs}}}}
	}
	many := func(n int) []bench.JobResult { return make([]bench.JobResult, n) }
	for _, tc := range []struct {
		name string
		err  func() error
		want string // "" when taken
	}{
		{"description at its bound", func() error {
			return CheckRun(planWith(job(func(j *bench.Job) { j.Description = strings.Repeat("d", fio.MaxDescriptionLen) })))
		}, ""},
		{"description past its bound", func() error {
			return CheckRun(planWith(job(func(j *bench.Job) { j.Description = strings.Repeat("d", fio.MaxDescriptionLen+1) })))
		}, "at most 1024"},
		{"option value past its bound", func() error {
			return CheckRun(planWith(job(func(j *bench.Job) {
				j.Options = []bench.Option{{Name: "filename", Value: strings.Repeat("f", fio.MaxOptionValueLen+1)}}
			})))
		}, "at most 4096"},
		{"a job's text in all past its bound", func() error {
			return CheckRun(planWith(job(func(j *bench.Job) {
				for range 40 {
					j.Options = append(j.Options, bench.Option{Name: "filename", Value: strings.Repeat("f", 2000)})
				}
			})))
		}, "more than 65536 bytes"},
		{"an option value with a line break", func() error {
			return CheckRun(planWith(job(func(j *bench.Job) {
				j.Options = []bench.Option{{Name: "description", Value: "x\nfilename=/dev/loop3"}}
			})))
		}, "line break"},
		{"a job name with a newline", func() error {
			return CheckRun(planWith(job(func(j *bench.Job) { j.Name = "a\nb" })))
		}, "control characters"},
		{"a run's error past its bound", func() error {
			r := planWith(job(func(*bench.Job) {}))
			r.Error = strings.Repeat("e", MaxErrorLen+1)
			return CheckRun(r)
		}, "at most 65536"},
		{"a step of MaxStepJobs jobs", func() error { return CheckStepText(stepWith(many(MaxStepJobs)...)) }, ""},
		{"a step of one job more", func() error { return CheckStepText(stepWith(many(MaxStepJobs + 1)...)) }, "at most 1024"},
		{"a job's samples past their bound", func() error {
			return CheckStepText(stepWith(bench.JobResult{Samples: make([]bench.Sample, MaxJobSamples+1)}))
		}, "samples: at most"},
		{"a step's error past its bound", func() error {
			st := stepWith()
			st.Error = strings.Repeat("e", MaxErrorLen+1)
			return CheckStepText(st)
		}, "at most 65536"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("got %v, want an error with %q", err, tc.want)
			}
		})
	}
}
