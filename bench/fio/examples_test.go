package fio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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
var notYet = map[string]string{}

// TestExampleJobsMatchFio runs the job files under testdata/jobs/examples
// — written after fio's own examples, on a scratch loop device and
// directory — with fio and with iolab, and compares what they did: the
// same jobs (or groups, with group_reporting) in the same order, in the
// same groups, with the same error, and for a job bounded by its size the
// same bytes and I/Os in each direction, mixed jobs' included (iolab draws
// the mix, the block sizes and the offsets as fio does), and the same I/Os
// in each priority — or, for one that went on after I/O errors, the same
// I/Os issued (which count the failed ones: what succeeded depends on when
// the disk filled). A file listed in notYet must be refused, naming its
// option.
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
	// A filesystem for jobs that fill it (enospc.fio); emptied before
	// each run.
	smallfs := scratchExt4(t, 32<<20)
	t.Setenv("IOLAB_SMALLFS", smallfs)
	// They are fio's job files, whatever iolab makes of them.
	if out, err := exec.Command(fio, append([]string{"--parse-only"}, files...)...).CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("fio --parse-only: %v\n%s", err, out)
	}
	var ran, refused []string
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			t.Setenv("IOLAB_DIR", t.TempDir())
			t.Chdir(os.Getenv("IOLAB_DIR")) // verify state files land in the working directory
			emptyDir(t, smallfs)
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
			emptyDir(t, smallfs)
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
	return runArgs([]string{path})
}

// runArgs parses and runs a job given as `iolab run` arguments.
func runArgs(args []string) (*bench.Config, *bench.Result, error) {
	cfg, err := ParseArgs(args)
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
	run := runFio
	if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte("io_submit_mode=offload")) {
		run = runFioOffload // fio 3.33's offload hangs at the start otherwise
	}
	out := run(t, fio, os.Getenv("IOLAB_DIR"), "--output-format=json", path)
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
		for d, dirs := range [][2]DirReport{{w.Read, g.Read}, {w.Write, g.Write}} {
			examplePrios(t, g.JobName, d, dirs[0].Prios, dirs[1].Prios, !j.TimeBased)
		}
		if w.Error != g.Error {
			t.Errorf("%s: iolab's error is %d, fio's %d", g.JobName, g.Error, w.Error)
		}
		if j.TimeBased {
			continue // bounded by time: the bytes are the speed's
		}
		if jobs[i].TotalErr > 0 || (w.TotalErr != nil && *w.TotalErr > 0) {
			// Bounded by what it issued, failed I/Os included.
			gi, wi := issued(g, j), issued(w, j)
			if gi != wi {
				t.Errorf("%s: iolab issued %d I/Os, fio %d", g.JobName, gi, wi)
			}
			continue
		}
		if g.Read.IOBytes != w.Read.IOBytes || g.Write.IOBytes != w.Write.IOBytes ||
			g.Read.TotalIOs != w.Read.TotalIOs || g.Write.TotalIOs != w.Write.TotalIOs {
			t.Errorf("%s: iolab read %d bytes in %d I/Os and wrote %d in %d, fio %d in %d and %d in %d", g.JobName,
				g.Read.IOBytes, g.Read.TotalIOs, g.Write.IOBytes, g.Write.TotalIOs,
				w.Read.IOBytes, w.Read.TotalIOs, w.Write.IOBytes, w.Write.TotalIOs)
		}
		if g.Trim.IOBytes != w.Trim.IOBytes || g.Trim.TotalIOs != w.Trim.TotalIOs {
			t.Errorf("%s: iolab trimmed %d bytes in %d I/Os, fio %d in %d", g.JobName, g.Trim.IOBytes, g.Trim.TotalIOs, w.Trim.IOBytes, w.Trim.TotalIOs)
		}
	}
}

// examplePrios compares a direction's latencies per priority with
// fio's. With exact (a size-bound job, whose draws are fio's): the same
// priorities in the same order, as many I/Os in each. Otherwise (bounded
// by time) how many I/Os there are is the speed's, and a priority with
// few I/Os may have none: both show latencies per priority or neither,
// headed by the job's own.
func examplePrios(t *testing.T, job string, d int, theirs, ours []PrioReport, exact bool) {
	t.Helper()
	name := func(ps []PrioReport) []string {
		var out []string
		for _, p := range ps {
			out = append(out, fmt.Sprintf("%d/%d", p.PrioClass, p.Prio))
		}
		return out
	}
	g, w := name(ours), name(theirs)
	switch {
	case !exact && (len(g) == 0) == (len(w) == 0) && (len(g) == 0 || g[0] == w[0]):
		return
	case !slices.Equal(g, w):
		t.Errorf("%s %s: iolab's priorities %v, fio's %v", job, dirNames[d], g, w)
		return
	}
	for i := range theirs {
		if w, g := theirs[i].Clat, ours[i].Clat; w != nil && g != nil && w.N != g.N {
			t.Errorf("%s %s priority %d/%d: iolab %d I/Os, fio %d", job, dirNames[d], theirs[i].PrioClass, theirs[i].Prio, g.N, w.N)
		}
	}
}

// issued is how many I/Os a job issued in the directions its rw does:
// total_ios counts the failed ones too (fio's total_io_u).
func issued(r *JobReport, j *bench.Job) uint64 {
	var n uint64
	if j.Reads() {
		n += r.Read.TotalIOs
	}
	if j.Writes() {
		n += r.Write.TotalIOs
	}
	if j.Trims() {
		n += r.Trim.TotalIOs
	}
	return n
}

// emptyDir removes what a run left in dir.
func emptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "lost+found" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
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
