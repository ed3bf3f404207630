package fio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"iolab/bench"
)

func parseTestJobFile(t *testing.T, name string) *bench.Config {
	t.Helper()
	path := filepath.Join("testdata", "jobs", name)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := ParseJobFile(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// groupNames shows groups compactly: "0:[a b] 1:wait[c]report".
func groupNames(groups []bench.Group) string {
	var parts []string
	for _, g := range groups {
		var names []string
		for _, j := range g.Jobs {
			names = append(names, j.Name)
		}
		s := fmt.Sprintf("%d:", g.ID)
		if g.Wait {
			s += "wait"
		}
		s += "[" + strings.Join(names, " ") + "]"
		if g.Reporting {
			s += "report"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

func allJobs(groups []bench.Group) []bench.Job {
	var jobs []bench.Job
	for _, g := range groups {
		jobs = append(jobs, g.Jobs...)
	}
	return jobs
}

func TestParseJobFileBasic(t *testing.T) {
	cfg := parseTestJobFile(t, "basic.fio")
	if cfg.OutputFormat != "normal" || cfg.Output != "" {
		t.Errorf("OutputFormat, Output = %q, %q; want normal, \"\"", cfg.OutputFormat, cfg.Output)
	}
	wantGlobals := []bench.Option{{Name: "filename", Value: "/dev/nvme0n1"}, {Name: "ioengine", Value: "libaio"}, {Name: "direct", Value: "1"}, {Name: "bs", Value: "4k"}, {Name: "iodepth", Value: "1"}}
	if !reflect.DeepEqual(cfg.GlobalOptions, wantGlobals) {
		t.Errorf("GlobalOptions = %v, want %v", cfg.GlobalOptions, wantGlobals)
	}
	if got := groupNames(cfg.Groups); got != "0:[seq-read rand-write]" {
		t.Fatalf("groups = %s, want 0:[seq-read rand-write]", got)
	}
	base := bench.NewJob()
	base.Filename, base.IOEngine, base.Direct = "/dev/nvme0n1", "libaio", true

	seq := base.Clone()
	seq.Name, seq.Size, seq.Runtime = "seq-read", 1<<30, 30*time.Second
	seq.Options = []bench.Option{{Name: "rw", Value: "read"}, {Name: "size", Value: "1g"}, {Name: "runtime", Value: "30"}}

	rnd := base.Clone()
	rnd.Name, rnd.RW, rnd.IODepth, rnd.BS, rnd.Runtime, rnd.TimeBased = "rand-write", "randwrite", 32, 64<<10, 2*time.Minute, true
	rnd.Options = []bench.Option{{Name: "rw", Value: "randwrite"}, {Name: "iodepth", Value: "32"}, {Name: "bs", Value: "64k"}, {Name: "runtime", Value: "2m"}, {Name: "time_based", Value: ""}}

	for i, want := range []bench.Job{seq, rnd} {
		if got := cfg.Groups[0].Jobs[i]; !reflect.DeepEqual(got, want) {
			t.Errorf("job %d:\n got %+v\nwant %+v", i, got, want)
		}
	}
}

func TestParseJobFileMultiGlobal(t *testing.T) {
	cfg := parseTestJobFile(t, "multiglobal.fio")
	jobs := allJobs(cfg.Groups)
	type view struct {
		Name, RW string
		BS       int64
		IODepth  int
		Filename string
	}
	var got []view
	for _, j := range jobs {
		got = append(got, view{j.Name, j.RW, j.BS, j.IODepth, j.Filename})
	}
	want := []view{
		{"first", "randread", 4096, 1, "/dev/loop0"},
		{"second", "randread", 8192, 8, "/dev/loop0"},
		{"third", "write", 8192, 8, "/dev/loop0"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("jobs:\n got %+v\nwant %+v", got, want)
	}
	wantGlobals := []bench.Option{{Name: "ioengine", Value: "io_uring"}, {Name: "filename", Value: "/dev/loop0"}, {Name: "bs", Value: "4k"}, {Name: "bs", Value: "8k"}, {Name: "iodepth", Value: "8"}, {Name: "rw", Value: "write"}}
	if !reflect.DeepEqual(cfg.GlobalOptions, wantGlobals) {
		t.Errorf("GlobalOptions = %v, want %v", cfg.GlobalOptions, wantGlobals)
	}
	if jobs[2].Options != nil {
		t.Errorf("third's Options = %v, want none: its section is empty", jobs[2].Options)
	}
}

func TestParseJobFileUring(t *testing.T) {
	cfg := parseTestJobFile(t, "uring.fio")
	if got := groupNames(cfg.Groups); got != "0:[polled polled]report" {
		t.Fatalf("groups = %s, want 0:[polled polled]report", got)
	}
	want := bench.NewJob()
	want.Name, want.Filename, want.IOEngine, want.Direct, want.GroupReporting = "polled", "/dev/nvme0n1", "io_uring", true, true
	want.RW, want.RWMixRead, want.BS, want.IODepth = "randrw", 70, 4096, 128
	want.IODepthBatchSubmit, want.IODepthBatchCompleteMin, want.IODepthBatchCompleteMax = 16, 8, 32
	want.Hipri, want.SQThreadPoll, want.SQThreadPollCPU, want.FixedBufs, want.RegisterFiles = true, true, 1, true, true
	want.NoRandomMap, want.RandRepeat, want.RandSeed, want.RandSeedSet = true, false, 42, true
	want.CPUsAllowed = []int{0, 2, 3}
	want.PercentileList = []float64{50, 99, 99.9}
	want.RampTime, want.Runtime, want.TimeBased = 500*time.Millisecond, time.Hour, true
	want.NumJobs, want.Offset, want.Size = 2, 1<<30, 4<<30
	want.Options = []bench.Option{
		{Name: "rw", Value: "randrw"}, {Name: "rwmixread", Value: "70"}, {Name: "bs", Value: "4k"}, {Name: "iodepth", Value: "128"},
		{Name: "iodepth_batch", Value: "16"}, {Name: "iodepth_batch_complete_min", Value: "8"}, {Name: "iodepth_batch_complete_max", Value: "32"},
		{Name: "hipri", Value: ""}, {Name: "sqthread_poll", Value: ""}, {Name: "sqthread_poll_cpu", Value: "1"}, {Name: "fixedbufs", Value: ""}, {Name: "registerfiles", Value: ""},
		{Name: "norandommap", Value: ""}, {Name: "randrepeat", Value: "0"}, {Name: "randseed", Value: "42"}, {Name: "cpus_allowed", Value: "0,2-3"},
		{Name: "percentile_list", Value: "50:99:99.9"}, {Name: "ramp_time", Value: "500ms"}, {Name: "runtime", Value: "1h"}, {Name: "time_based", Value: ""},
		{Name: "numjobs", Value: "2"}, {Name: "offset", Value: "1g"}, {Name: "size", Value: "4g"}, {Name: "allow_mounted_write", Value: "0"},
	}
	for i, got := range cfg.Groups[0].Jobs {
		want.JobNum = i // fio's jobnum: numjobs-1 down to 1 for the clones
		if !reflect.DeepEqual(got, want) {
			t.Errorf("clone %d:\n got %+v\nwant %+v", i, got, want)
		}
	}
	// The clones share nothing: changing one leaves the other alone.
	cfg.Groups[0].Jobs[0].CPUsAllowed[0] = 7
	cfg.Groups[0].Jobs[0].Options[0].Value = "x"
	if j := cfg.Groups[0].Jobs[1]; j.CPUsAllowed[0] != 0 || j.Options[0].Value != "randrw" {
		t.Errorf("clones share slices")
	}
}

func TestParseJobFileEnv(t *testing.T) {
	t.Setenv("IOLAB_TEST_DEV", "/dev/loop7")
	t.Setenv("IOLAB_TEST_BS", "16k")
	cfg := parseTestJobFile(t, "env.fio")
	j := cfg.Groups[0].Jobs[0]
	if j.Filename != "/dev/loop7" || j.BS != 16384 {
		t.Errorf("filename, bs = %q, %d; want /dev/loop7, 16384", j.Filename, j.BS)
	}
	// Recorded as fio records it: expanded, and filename last (fio sorts
	// a section's options by priority).
	want := []bench.Option{{Name: "bs", Value: "16k"}, {Name: "filename", Value: "/dev/loop7"}}
	if !reflect.DeepEqual(j.Options, want) {
		t.Errorf("Options = %v, want %v", j.Options, want)
	}
}

func TestParseJobFileGroups(t *testing.T) {
	cfg := parseTestJobFile(t, "groups.fio")
	if got, want := groupNames(cfg.Groups), "0:[a] 1:wait[b b] 2:[c d] 3:wait[e f]"; got != want {
		t.Errorf("groups = %s, want %s", got, want)
	}
}

func TestParseJobFileSyntax(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      string // groupNames
	}{
		{"comments and blanks", "; c\n# c\n\n  ; c\n[a]\n\t# c\nfilename=f\n\n", "0:[a]"},
		{"blanks around =", "[a]\n  filename  =  f  \n", "0:[a]"},
		{"CRLF lines", "[a]\r\nfilename=f\r\n", "0:[a]"},
		{"same name twice", "[global]\nfilename=f\n[a]\n[a]\n", "0:[a a]"},
		{"global prefix", "[global-defaults]\nfilename=f\n[a]\n", "0:[a]"}, // fio compares six letters
		{"filename in global", "[global]\nfilename=/dev/loop0\n[a]\n[b]\n", "0:[a b]"},
		{"stonewall in global", "[global]\nfilename=f\nstonewall\n[a]\n[b]\n[c]\n", "0:[a] 1:wait[b] 2:wait[c]"},
		{"group_reporting", "[global]\nfilename=f\n[a]\n[b]\ngroup_reporting\n[c]\nnew_group\n", "0:[a b]report 1:[c]"},
		{"value with =", "[a]\nfilename=/tmp/a=b\n", "0:[a]"},
		{"comments after options and headers", "[a] ; first\nfilename=f\t; or /dev/sda\nbs=8k# big\n[b]#\nfilename=g\nstonewall ; phase 2\n", "0:[a] 1:wait[b]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseJobFile(strings.NewReader(tc.src), "x.fio")
			if err != nil {
				t.Fatal(err)
			}
			if got := groupNames(cfg.Groups); got != tc.want {
				t.Errorf("groups = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestJobFileCommentsCut: fio cuts every line at its first ';' or '#'
// (strip_blank_end), so what follows an option is not part of its value.
func TestJobFileCommentsCut(t *testing.T) {
	cfg, err := ParseJobFile(strings.NewReader("[global]\nbs=8k ; 8 KiB\n[w] # the writer\nfilename=datafile.tmp\t; or use a full disk, for example /dev/sda\nrw=write#seq\n"), "x.fio")
	if err != nil {
		t.Fatal(err)
	}
	j := cfg.Groups[0].Jobs[0]
	if j.Name != "w" || j.Filename != "datafile.tmp" || j.BS != 8192 || j.RW != "write" {
		t.Errorf("job %q: filename %q, bs %d, rw %q; want w, datafile.tmp, 8192, write", j.Name, j.Filename, j.BS, j.RW)
	}
}

func TestParseJobFileErrors(t *testing.T) {
	t.Setenv("IOLAB_TEST_EMPTY", "")
	for _, tc := range []struct {
		name, src string
		want      string // the whole message
	}{
		{"outside a section", "bs=4k\n[a]\n", "x.fio:1: bs=4k is outside any section (put it under [global] or a [job])"},
		{"unknown option", "[a]\nfilename=f\n\niodeph=8\n", `x.fio:4: unknown option "iodeph" (did you mean "iodepth"?)`},
		{"unsupported option", "[global]\nverify_backlog_batch=2\n", `x.fio:2: option "verify_backlog_batch" is not supported by iolab (remove it, or run this job with fio)`},
		{"bad value", "[a]\nfilename=f\nbs=4q\n", `x.fio:3: option bs: "4q" is not a size (use e.g. 4k, 1m)`},
		{"rw suffix", "[a]\nrw=randread:0\n", `x.fio:2: option rw: rw=randread:0: for a random mode :N is a number of I/Os per random offset, at least 1`},
		{"a comment does not hide a bad value", "[a]\nfilename=f\nbs=4q # small\n",
			`x.fio:3: option bs: "4q" is not a size (use e.g. 4k, 1m)`},
		{"bool without value", "[a]\nfilename=f\ndirect\n", "x.fio:3: option direct: needs a value (e.g. direct=1)"},
		{"strided without zonesize", "[global]\nbs=4k\n\n[a]\nzonemode=strided\n",
			`x.fio:4: job "a": zonemode=strided needs zonesize (e.g. zonesize=1m)`},
		{"strided without zonesize, found at the next section", "[a]\nzonemode=strided\n[b]\nfilename=f\n", `x.fio:1: job "a": zonemode=strided needs zonesize`},
		{"time_based without runtime", "[a]\nfilename=f\ntime_based\n", `x.fio:1: job "a": time_based needs a runtime (e.g. runtime=30s)`},
		{"engine option", "[a]\nfilename=f\nioengine=libaio\nsqthread_poll\n", `x.fio:1: job "a": sqthread_poll is an io_uring option but the job uses ioengine=libaio`},
		{"include", "[a]\ninclude other.fio\n", "x.fio:2: iolab does not support include; copy the included options here"},
		{"unclosed header", "[a\nfilename=f\n", "x.fio:1: section header [a has no closing ] (write e.g. [randread])"},
		{"empty header", "[]\n", "x.fio:1: a job needs a name (e.g. --name=randread or [randread])"},
		{"unset variable", "[a]\nfilename=/dev/${IOLAB_TEST_UNSET}\n", "x.fio:2: environment variable ${IOLAB_TEST_UNSET} is not set (export it, or write the value)"},
		{"empty variable", "[a]\nfilename=${IOLAB_TEST_EMPTY}\n", "x.fio:2: option filename: needs a value (e.g. filename=/dev/nvme0n1)"},
		{"no jobs", "[global]\nbs=4k\n", "x.fio: no jobs: add a [job] section"},
		{"empty file", "", "x.fio: no jobs: add a [job] section"},
		// A line longer than 1 MiB makes a file larger than the limit too.
		{"line too long", "[a]\nfilename=" + strings.Repeat("x", 1<<20) + "\n", "x.fio: the job file is larger than 1.00MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseJobFile(strings.NewReader(tc.src), "x.fio")
			oe, ok := errors.AsType[*bench.OptionError](err)
			if !ok {
				t.Fatalf("ParseJobFile = %v, want an *OptionError", err)
			}
			if oe.File != "x.fio" {
				t.Errorf("File = %q, want x.fio", oe.File)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error:\n got %s\nwant %s", err, tc.want)
			}
		})
	}
}

func TestExpand(t *testing.T) {
	job := func(name string, set func(j *bench.Job)) bench.Job {
		j := bench.NewJob()
		j.Name = name
		if set != nil {
			set(&j)
		}
		return j
	}
	stonewall := func(j *bench.Job) { j.Stonewall = true }
	newGroup := func(j *bench.Job) { j.NewGroup = true }
	reporting := func(j *bench.Job) { j.GroupReporting = true }
	for _, tc := range []struct {
		name string
		jobs []bench.Job
		want string
	}{
		{"none", nil, ""},
		{"one group", []bench.Job{job("a", nil), job("b", nil)}, "0:[a b]"},
		{"numjobs", []bench.Job{job("a", func(j *bench.Job) { j.NumJobs = 3 }), job("b", nil)}, "0:[a a a b]"},
		{"stonewall first starts no empty group", []bench.Job{job("a", stonewall), job("b", nil)}, "0:[a b]"},
		{"stonewall waits", []bench.Job{job("a", nil), job("b", stonewall), job("c", nil)}, "0:[a] 1:wait[b c]"},
		{"new_group does not wait", []bench.Job{job("a", nil), job("b", newGroup)}, "0:[a] 1:[b]"},
		{"stonewall and new_group", []bench.Job{job("a", nil), job("b", func(j *bench.Job) { stonewall(j); newGroup(j) })}, "0:[a] 1:wait[b]"},
		{"stonewall with numjobs", []bench.Job{job("a", nil), job("b", func(j *bench.Job) { stonewall(j); j.NumJobs = 2 }), job("c", stonewall)}, "0:[a] 1:wait[b b] 2:wait[c]"},
		{"group_reporting on any job", []bench.Job{job("a", nil), job("b", reporting), job("c", stonewall)}, "0:[a b]report 1:wait[c]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			groups := bench.Expand(tc.jobs)
			if got := groupNames(groups); got != tc.want {
				t.Errorf("groups = %s, want %s", got, tc.want)
			}
			for _, g := range groups {
				for i, j := range g.Jobs[1:] {
					if j.Name == g.Jobs[i].Name && (j.Stonewall || j.NewGroup) {
						t.Errorf("clone %d of %s keeps stonewall/new_group", i+1, j.Name)
					}
				}
			}
		})
	}
}

func TestExpandClonesShareNothing(t *testing.T) {
	j := bench.NewJob()
	j.NumJobs = 2
	j.CPUsAllowed = []int{1}
	j.Options = []bench.Option{{Name: "numjobs", Value: "2"}}
	groups := bench.Expand([]bench.Job{j})
	groups[0].Jobs[0].CPUsAllowed[0] = 5
	groups[0].Jobs[0].PercentileList[0] = 5
	groups[0].Jobs[0].Options[0].Value = "5"
	for _, c := range []bench.Job{j, groups[0].Jobs[1]} {
		if c.CPUsAllowed[0] != 1 || c.PercentileList[0] != 1 || c.Options[0].Value != "2" {
			t.Errorf("a change to one clone shows in another job: %+v", c)
		}
	}
}

// fioJobFiles are the job files under testdata/jobs with the environment
// env.fio needs.
func fioJobFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "jobs", "*.fio"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no job files: %v", err)
	}
	t.Setenv("IOLAB_TEST_DEV", "/dev/loop0")
	t.Setenv("IOLAB_TEST_BS", "8k")
	return files
}

func lookFio(t *testing.T) string {
	t.Helper()
	fio, err := exec.LookPath("fio")
	if err != nil {
		t.Skip("fio is not installed (apt-get install -y fio)")
	}
	return fio
}

// TestJobFilesFioAccepts checks that the test job files are fio job files:
// iolab's tests would prove little on a dialect of their own.
func TestJobFilesFioAccepts(t *testing.T) {
	fio := lookFio(t)
	for _, path := range fioJobFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			out, err := exec.Command(fio, "--parse-only", path).CombinedOutput()
			if err != nil || len(out) > 0 {
				t.Errorf("fio --parse-only %s: %v\n%s", path, err, out)
			}
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := ParseJobFile(f, path); err != nil {
				t.Errorf("iolab: %v", err)
			}
		})
	}
}

// TestJobFileMatchesFio runs fio on job files with its null engine and
// checks that iolab puts the same jobs in the same groups, and records the
// options fio lists in "job options".
func TestJobFileMatchesFio(t *testing.T) {
	fio := lookFio(t)
	dir := filepath.Join("testdata", "jobs")
	for _, args := range [][]string{
		{filepath.Join(dir, "groups.fio")},
		// Command-line defaults and jobs, then two files: the second starts
		// from fio's defaults after a stonewall.
		{"--rw=randwrite", "--ioengine=null", "--size=1m", filepath.Join(dir, "groups.fio"), "--name=x", "--bs=8k", filepath.Join(dir, "second.fio")},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			cmd := exec.Command(fio, append([]string{"--output-format=json"}, args...)...)
			cmd.Dir = t.TempDir() // the null engine writes nothing, but be sure
			for i, a := range cmd.Args {
				if strings.HasSuffix(a, ".fio") {
					abs, err := filepath.Abs(a)
					if err != nil {
						t.Fatal(err)
					}
					cmd.Args[i] = abs
				}
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("fio: %v\n%s", err, stderr.Bytes())
			}
			var report struct {
				Global Options `json:"global options"`
				Jobs   []struct {
					Name    string  `json:"jobname"`
					GroupID int     `json:"groupid"`
					Options Options `json:"job options"`
				} `json:"jobs"`
			}
			if err := json.Unmarshal(out, &report); err != nil {
				t.Fatalf("fio's JSON: %v", err)
			}

			cfg, err := ParseArgs(args)
			if err != nil {
				t.Fatal(err)
			}
			var got, want []string
			for _, j := range report.Jobs {
				want = append(want, fmt.Sprintf("%d %s %v", j.GroupID, j.Name, []bench.Option(j.Options)))
			}
			for _, g := range cfg.Groups {
				for _, j := range g.Jobs {
					// fio before 3.39 leaves value-less options out.
					var opts []bench.Option
					for _, o := range j.Options {
						if o.Value != "" {
							opts = append(opts, o)
						}
					}
					got = append(got, fmt.Sprintf("%d %s %v", g.ID, j.Name, opts))
				}
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("iolab:\n%s\nfio:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if !reflect.DeepEqual([]bench.Option(report.Global), cfg.GlobalOptions) {
				t.Errorf("global options: iolab %v, fio %v", cfg.GlobalOptions, report.Global)
			}
		})
	}
}

// TestJobFileLimits: a job file beyond MaxJobFileBytes or with more than
// MaxJobs jobs is refused, naming the limit, before anything is built.
func TestJobFileLimits(t *testing.T) {
	big := "[j]\nfilename=/dev/null\n; " + strings.Repeat("x", MaxJobFileBytes) + "\n"
	if _, err := ParseJobFile(strings.NewReader(big), "big.fio"); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a 1 MiB+ job file: %v", err)
	}
	var b strings.Builder
	b.WriteString("[global]\nioengine=null\nsize=1m\n")
	for i := range MaxJobs + 1 {
		fmt.Fprintf(&b, "[j%d]\n", i)
	}
	if _, err := ParseJobFile(strings.NewReader(b.String()), "many.fio"); err == nil || !strings.Contains(err.Error(), "at most 4096") {
		t.Errorf("%d jobs: %v", MaxJobs+1, err)
	}
}
