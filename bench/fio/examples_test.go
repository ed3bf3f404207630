package fio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/system"
	"iolab/bench/testdev"
)

// notYet are the example job files iolab refuses today, each with the
// option it refuses (the first one in the file). The test checks that
// the refusal names that option; once iolab takes the option, remove the
// file's line and the test compares it with fio like the others.
var notYet = map[string]string{
	"paced.fio":    "rate_iops",
	"thinking.fio": "thinktime",
}

// TestExampleJobsMatchFio runs the job files under testdata/jobs/examples
// — written after fio's own examples, on a scratch loop device and
// directory — with fio and with iolab, and compares what they did: the
// same jobs (or groups, with group_reporting) in the same order, in the
// same groups, and for a job bounded by its size the same bytes in each
// direction (only their sum where the job mixes reads and writes at
// random: which I/O is a read is fio's random draw). A file listed in
// notYet must be refused, naming its option.
func TestExampleJobsMatchFio(t *testing.T) {
	fio := lookFio(t)
	files, err := filepath.Glob(filepath.Join("testdata", "jobs", "examples", "*.fio"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no example job files: %v", err)
	}
	for i, f := range files {
		if files[i], err = filepath.Abs(f); err != nil {
			t.Fatal(err)
		}
	}
	dev := testdev.Loop(t, 16<<20)
	t.Setenv("IOLAB_DEV", dev)
	t.Setenv("IOLAB_DIR", t.TempDir())
	// They are fio's job files, whatever iolab makes of them.
	if out, err := exec.Command(fio, append([]string{"--parse-only"}, files...)...).CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("fio --parse-only: %v\n%s", err, out)
	}
	var ran, refused []string
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			t.Setenv("IOLAB_DIR", t.TempDir())
			cfg, res, err := runExample(path)
			if option, ok := notYet[name]; ok {
				oe, isOption := errors.AsType[*bench.OptionError](err)
				switch {
				case err == nil:
					t.Errorf("iolab now runs %s: remove it from notYet, and the comparison with fio runs", name)
				case !isOption || oe.Option != option || !strings.Contains(oe.Error(), option):
					t.Errorf("refused with %v (option %q), want a refusal that names %s", err, optionOf(oe), option)
				default:
					refused = append(refused, fmt.Sprintf("%s (%s)", name, option))
				}
				return
			}
			if err != nil {
				t.Fatalf("iolab: %v", err)
			}
			compareWithFio(t, fio, path, cfg, res)
			ran = append(ran, name)
		})
	}
	t.Logf("compared with fio: %s", strings.Join(ran, ", "))
	t.Logf("not yet (refused, naming the option): %s", strings.Join(refused, ", "))
}

func optionOf(oe *bench.OptionError) string {
	if oe == nil {
		return ""
	}
	return oe.Option
}

// runExample parses and runs a job file as `iolab run FILE` does.
func runExample(path string) (*bench.Config, *bench.Result, error) {
	cfg, err := ParseArgs([]string{path})
	if err != nil {
		return nil, nil, err
	}
	res, err := (&bench.Runner{Sys: system.FS{}, Interval: 100 * time.Millisecond}).Run(context.Background(), cfg)
	return cfg, res, err
}

// compareWithFio runs the file with fio and compares its JSON report
// with iolab's result, entry by entry.
func compareWithFio(t *testing.T, fio, path string, cfg *bench.Config, res *bench.Result) {
	t.Helper()
	out := runFio(t, fio, os.Getenv("IOLAB_DIR"), "--output-format=json", path)
	reps, err := ParseReports(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	want, got := reps[len(reps)-1].Jobs, NewReport(res, cfg, false).Jobs
	if len(want) != len(got) {
		t.Fatalf("iolab reports %d jobs, fio %d:\niolab %v\nfio   %v", len(got), len(want), jobNames(got), jobNames(want))
	}
	jobs := resultJobs(res)
	for i := range want {
		w, g, j := &want[i], &got[i], &jobs[i].Job
		if w.JobName != g.JobName || w.GroupID != g.GroupID {
			t.Errorf("entry %d: iolab %s in group %d, fio %s in group %d", i, g.JobName, g.GroupID, w.JobName, w.GroupID)
			continue
		}
		if j.TimeBased {
			continue // bounded by time: the bytes are the speed's
		}
		mixed := j.RW == "rw" || j.RW == "randrw"
		if mixed {
			if gs, ws := g.Read.IOBytes+g.Write.IOBytes, w.Read.IOBytes+w.Write.IOBytes; gs != ws {
				t.Errorf("%s: iolab moved %d bytes, fio %d", g.JobName, gs, ws)
			}
			continue
		}
		if g.Read.IOBytes != w.Read.IOBytes || g.Write.IOBytes != w.Write.IOBytes {
			t.Errorf("%s: iolab read %d and wrote %d bytes, fio %d and %d", g.JobName, g.Read.IOBytes, g.Write.IOBytes, w.Read.IOBytes, w.Write.IOBytes)
		}
	}
}

// resultJobs are the result's jobs (or merged groups) in report order.
func resultJobs(res *bench.Result) []bench.JobResult {
	var out []bench.JobResult
	for _, g := range res.Groups {
		out = append(out, g.Jobs...)
	}
	return out
}

func jobNames(jobs []JobReport) []string {
	var out []string
	for _, j := range jobs {
		out = append(out, fmt.Sprintf("%s/%d", j.JobName, j.GroupID))
	}
	return out
}
