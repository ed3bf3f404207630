package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"iolab/bench/fio"
	"iolab/bench/sweep/sweeptest"
)

func TestCommandLineErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{

		{"unknown command", []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"misspelt option", []string{"run", "--name=x", "--iodeph=4"}, 2, `"iodepth"`},
		{"unsupported option", []string{"run", "--name=x", "--cgroup=x"}, 2, "not supported"},
		{"no jobs", []string{"run"}, 2, "no jobs"},
		{"missing target", []string{"run", "--name=x", "--filename=/nonexistent/dev"}, 1, "does not exist"},
		{"calibrate without fio", []string{"calibrate", "--fio=/nonexistent/fio", "--name=x", "--ioengine=null", "--size=1m"}, 1, "apt-get install -y fio"},
		{"calibrate bad rounds", []string{"calibrate", "--rounds=0", "--name=x", "--ioengine=null", "--size=1m"}, 1, "at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(tt.args, &out, &errOut)
			if got := exitCode(err); got != tt.code {
				t.Fatalf("exit code %d, want %d (error %v)", got, tt.code, err)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v does not say %q", err, tt.want)
			}
		})
	}
}

// TestMainExitAndStreams: Main, what iolab's main runs, writes a command's
// output to stdout, an error to stderr as "iolab: …" (a terminal escape
// in an operand printed escaped), and returns the exit status.
func TestMainExitAndStreams(t *testing.T) {
	tests := []struct {
		args       []string
		code       int
		out, error string
	}{
		{[]string{"version"}, 0, fio.Version + "\n", ""},
		{[]string{"--version"}, 0, fio.Version + "\n", ""},
		{[]string{"presets", "extra"}, 2, "", "iolab: usage: iolab presets\n"},
		{[]string{"show", "\x1b[31m"}, 2, "", `iolab: iolab show: "\x1b[31m" is not a run id (see iolab runs)`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			if got := Main(tt.args, &out, &errOut); got != tt.code {
				t.Errorf("exit status %d, want %d (stderr %q)", got, tt.code, errOut.String())
			}
			if !strings.HasPrefix(out.String(), tt.out) || (tt.out == "" && out.Len() > 0) {
				t.Errorf("stdout %q, want it to start with %q", out.String(), tt.out)
			}
			if !strings.HasPrefix(errOut.String(), tt.error) || (tt.error == "" && errOut.Len() > 0) {
				t.Errorf("stderr %q, want it to start with %q", errOut.String(), tt.error)
			}
		})
	}
}

// TestRunJSONToFile: --output-format=json+ --output=FILE writes fio's JSON
// that fio's own parser reads.
func TestRunJSONToFile(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	out := filepath.Join(dir, "out.json")
	var stdout, stderr bytes.Buffer
	err := run([]string{"run", "--name=j", "--filename=" + target, "--size=1m", "--rw=randread", "--ioengine=libaio",
		"--iodepth=4", "--direct=1", "--output-format=json+", "--output=" + out}, &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reps, err := fio.ParseReports(f)
	if err != nil {
		t.Fatal(err)
	}
	read := reps[0].Jobs[0].Read
	if read.TotalIOs != 256 || len(read.Clat.Bins) == 0 || reps[0].IolabVersion == "" {
		t.Fatalf("total_ios %d, %d bins, version %q", read.TotalIOs, len(read.Clat.Bins), reps[0].IolabVersion)
	}
	if stdout.Len() != 0 {
		t.Fatalf("stdout should be empty with --output, got %q", stdout.String())
	}
}

// TestRunTerse: --output-format=terse prints fio's terse v3 line per job
// (--terse-version picks another), and a sweep each step's lines.
func TestRunTerse(t *testing.T) {
	target := filepath.Join(t.TempDir(), "target")
	base := []string{"run", "--no-save", "--name=j", "--filename=" + target, "--size=1m", "--rw=write", "--bs=4k", "--output-format=terse"}
	for _, tc := range []struct {
		extra  []string
		lines  int
		prefix string
	}{
		{nil, 1, "3;" + fio.Version + ";j;0;0;0;"},
		{[]string{"--terse-version=4"}, 1, "4;" + fio.Version + ";j;0;0;0;"},
		{[]string{"--sweep", "bs=4k,8k"}, 2, "3;" + fio.Version + ";j;0;0;0;"},
	} {
		t.Run(strings.Join(tc.extra, " "), func(t *testing.T) {
			code, stdout, stderr := runOut(t, append(base, tc.extra...)...)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
			if len(lines) != tc.lines {
				t.Fatalf("%d lines, want %d:\n%s", len(lines), tc.lines, stdout)
			}
			for _, l := range lines {
				if !strings.HasPrefix(l, tc.prefix) {
					t.Errorf("line %q, want it to start with %q", l, tc.prefix)
				}
				// The write direction's KiB: after the 5 leading fields
				// and the read direction's 41.
				if f := strings.Split(l, ";"); len(f) < 47 || f[46] != "1024" {
					t.Errorf("line %q: the write's KiB is not 1024", l)
				}
			}
		})
	}
}

// TestRunReportsFailedVerify: a one-job run whose verify finds a changed
// block exits 1 and still prints fio's report of the job, as fio does:
// its error 84 (EILSEQ) and the reads up to the block, in JSON and in
// the normal output's err= line.
func TestRunReportsFailedVerify(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	target := filepath.Join(dir, "target")
	args := []string{"run", "--no-save", "--name=v", "--filename=" + target, "--size=256k", "--rw=write", "--bs=4k", "--verify=crc32c"}
	if code, _, stderr := runOut(t, args...); code != 0 {
		t.Fatalf("the write: exit %d\n%s", code, stderr)
	}
	f, err := os.OpenFile(target, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0xde, 0xad}, 40*4096+1000); err != nil {
		t.Fatal(err)
	}
	f.Close()
	code, stdout, stderr := runOut(t, append(args, "--verify_only", "--output-format=json")...)
	if code != 1 || !strings.Contains(stderr, "verify failed at file "+target+" offset 163840") {
		t.Fatalf("verify_only: exit %d, want 1 naming the block\n%s", code, stderr)
	}
	reps, err := fio.ParseReports(strings.NewReader(stdout))
	if err != nil || len(reps) != 1 || len(reps[0].Jobs) != 1 {
		t.Fatalf("no fio report of the failed job (%v):\n%s", err, stdout)
	}
	if j := reps[0].Jobs[0]; j.Error != 84 || j.Read.IOBytes < 40*4096 || j.Read.IOBytes > 41*4096 {
		t.Errorf("the report: error %d, read %d bytes; want 84 and the 41 blocks up to the changed one", j.Error, j.Read.IOBytes)
	}
	if _, stdout, _ := runOut(t, append(args, "--verify_only")...); !strings.Contains(stdout, "err=84 (") {
		t.Errorf("the normal output does not say err=84:\n%s", stdout)
	}
}

// TestCalibrateAgainstFio runs the real fio beside iolab on the null
// engine (CI installs fio; elsewhere the test needs it on PATH).
func TestCalibrateAgainstFio(t *testing.T) {
	if _, err := exec.LookPath("fio"); err != nil {
		t.Skip("fio is not installed; .ci/test installs it")
	}
	var stdout, stderr bytes.Buffer
	err := run([]string{"calibrate", "--rounds", "1", "--output-format=json", "--name=c", "--ioengine=null", "--size=64m",
		"--rw=randrw", "--iodepth=4", "--runtime=300ms", "--time_based"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var cal fio.Calibration
	if err := json.Unmarshal(stdout.Bytes(), &cal); err != nil {
		t.Fatal(err)
	}
	if len(cal.Directions) != 2 || !strings.HasPrefix(cal.FioVersion, "fio-") {
		t.Fatalf("%d directions, fio version %q", len(cal.Directions), cal.FioVersion)
	}
	for _, d := range cal.Directions {
		if d.Fio.IOPS <= 0 || d.Iolab.IOPS <= 0 || d.IOPSRatio != d.Iolab.IOPS/d.Fio.IOPS {
			t.Fatalf("%s: fio %v, iolab %v, ratio %v", d.Direction, d.Fio.IOPS, d.Iolab.IOPS, d.IOPSRatio)
		}
	}
}

// TestRunParseOnly: fio's --parse-only reads the options and job files and
// runs nothing: exit 0 and no target touched for good ones, the error
// for a bad one.
func TestRunParseOnly(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	job := filepath.Join(dir, "j.fio")
	if err := os.WriteFile(job, []byte("[j]\nfilename="+target+"\nsize=1m\nthreads=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := run([]string{"run", "--parse-only", "--db=" + filepath.Join(dir, "db"), job}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(target); !os.IsNotExist(err) {
		t.Errorf("--parse-only laid out the target: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "db")); !os.IsNotExist(err) {
		t.Errorf("--parse-only opened the store: %v", err)
	}
	if stdout.Len() != 0 || !strings.Contains(stderr.String(), "threads: ") {
		t.Errorf("stdout %q, stderr %q: want nothing, and the note on threads", stdout.String(), stderr.String())
	}
	err := run([]string{"run", "--parse-only", "--name=x", "--iodeph=4"}, &stdout, &stderr)
	if exitCode(err) != 2 || !strings.Contains(err.Error(), `"iodepth"`) {
		t.Errorf("a bad option with --parse-only: %v (exit %d), want exit 2 naming it", err, exitCode(err))
	}
}

// A mistyped sweep axis is refused with the nearest axis, before
// anything runs, as a mistyped option is; its syntax is the form's
// (sweeptest.ParseCases, which the dashboard's form test shares).
func TestRunSweepDidYouMean(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	err := run([]string{"run", "--parse-only", "--name=x", "--filename=" + filepath.Join(dir, "t"), "--size=1m", "--sweep", "schedular=none,bfq"}, &stdout, &stderr)
	if exitCode(err) != 2 || !strings.Contains(err.Error(), `"schedular" is not an axis (did you mean "scheduler"?)`) || !strings.Contains(err.Error(), "--sweep") {
		t.Errorf("--sweep schedular=…: %v (exit %d), want exit 2 suggesting scheduler, in the CLI's words", err, exitCode(err))
	}
	for _, tc := range sweeptest.ParseCases() {
		err := run([]string{"run", "--parse-only", "--name=x", "--filename=" + filepath.Join(dir, "t"), "--size=1m", "--ioengine=io_uring", "--sweep", tc.In}, &stdout, &stderr)
		if tc.Err == "" && err != nil || tc.Err != "" && (err == nil || !strings.Contains(err.Error(), tc.Err)) {
			t.Errorf("--sweep %s: %v, want %q", tc.In, err, tc.Err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "t")); !os.IsNotExist(err) {
		t.Errorf("--parse-only laid out the target: %v", err)
	}
}
