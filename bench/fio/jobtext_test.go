package fio

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"iolab/bench"
)

// jobTextConfigs are configs as iolab makes them: from the command line,
// from job files (several [global]s, two files, every io_uring option),
// with values a plan sets on the jobs directly, and from fio's client
// output.
func jobTextConfigs(t *testing.T) map[string]*bench.Config {
	t.Helper()
	args := func(a ...string) *bench.Config {
		cfg, err := ParseArgs(a)
		if err != nil {
			t.Fatalf("%v: %v", a, err)
		}
		return cfg
	}
	cfgs := map[string]*bench.Config{
		"command line": args("--ioengine=libaio", "--direct=1", "--filename=/tmp/x", "--size=64m",
			"--name=fg", "--rw=randread", "--bs=4k", "--iodepth=1",
			"--name=bg", "--rw=write", "--bs=1m", "--iodepth=16", "--runtime=10", "--time_based"),
		"groups":            args("testdata/jobs/groups.fio"),
		"several globals":   args("testdata/jobs/multiglobal.fio"),
		"two files":         args("testdata/jobs/basic.fio", "testdata/jobs/second.fio"),
		"io_uring":          args("testdata/jobs/uring.fio"),
		"group_reporting":   args("--group_reporting", "--ioengine=null", "--size=1m", "--name=a", "--numjobs=2", "--name=b", "--stonewall"),
		"value with blanks": args("--name=d", "--ioengine=null", "--size=1m", "--description=a job of two words"),
	}
	// A plan's step: the sweep's value in the options, the plan's runtime
	// and ramp set on the job alone.
	step := args("--filename=/tmp/x", "--name=r", "--rw=randread", "--iodepth=4", "--runtime=30")
	step.Jobs[0].Options[len(step.Jobs[0].Options)-2].Value = "16"
	step.Jobs[0].IODepth = 16
	step.Jobs[0].Runtime, step.Jobs[0].RampTime = 2*time.Second, 500*time.Millisecond
	cfgs["plan step"] = step

	imps, err := ParseFioHosts(readClientTestdata(t, "client-two.json"))
	if err != nil {
		t.Fatal(err)
	}
	cfgs["fio client import"] = &imps[0].Config
	return cfgs
}

// TestFormatJobFile: the text reads back as the same jobs, in iolab and in
// fio (--parse-only).
func TestFormatJobFile(t *testing.T) {
	fio, _ := exec.LookPath("fio")
	dir := t.TempDir()
	for name, cfg := range jobTextConfigs(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // fio takes most of a second to start
			text, err := FormatJobFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			back, err := ParseJobFile(strings.NewReader(text), "text")
			if err != nil {
				t.Fatalf("%v\n%s", err, text)
			}
			if len(back.Jobs) != len(cfg.Jobs) {
				t.Fatalf("%d jobs back, want %d\n%s", len(back.Jobs), len(cfg.Jobs), text)
			}
			for i := range cfg.Jobs {
				if d := jobDiff(&cfg.Jobs[i], &back.Jobs[i]); len(d) > 0 {
					t.Errorf("job %s: %v\n%s", cfg.Jobs[i].Name, d, text)
				}
			}
			if len(back.Groups) != len(cfg.Groups) {
				t.Errorf("%d groups back, want %d", len(back.Groups), len(cfg.Groups))
			}
			if fio == "" {
				return
			}
			f := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".fio")
			if err := os.WriteFile(f, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(fio, "--parse-only", f).CombinedOutput()
			if err != nil || len(strings.TrimSpace(string(out))) > 0 {
				t.Errorf("fio --parse-only: %v\n%s\n%s", err, out, text)
			}
		})
	}
	if fio == "" {
		t.Log("fio is not installed: fio did not read the job files")
	}
}

func TestFormatJobFileText(t *testing.T) {
	cfg := jobTextConfigs(t)["plan step"]
	text, err := FormatJobFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := "[global]\nfilename=/tmp/x\n\n[r]\nrw=randread\niodepth=16\nruntime=2\nramp_time=500ms\n"
	if text != want {
		t.Errorf("got\n%s\nwant\n%s", text, want)
	}
}

func TestFormatJobFileRefuses(t *testing.T) {
	base := func() *bench.Config {
		cfg, err := ParseArgs([]string{"--name=j", "--ioengine=null", "--size=1m"})
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	for _, tt := range []struct {
		name, want string
		edit       func(*bench.Config)
	}{
		{"no jobs", "no jobs", func(c *bench.Config) { c.Jobs = nil }},
		{"bracket in name", "cannot name a section", func(c *bench.Config) { c.Jobs[0].Name = "a]b" }},
		{"global name", "as [global]", func(c *bench.Config) { c.Jobs[0].Name = "global-1" }},
		{"line break", "line break", func(c *bench.Config) { c.Jobs[0].Options[1].Value = "null\nexec_prerun=rm" }},
		{"environment", "${", func(c *bench.Config) {
			c.Jobs[0].Options = append(c.Jobs[0].Options, bench.Option{Name: "filename", Value: "/dev/${DISK}"})
		}},
		{"bad option name", "cannot be written", func(c *bench.Config) {
			c.GlobalOptions = append(c.GlobalOptions, bench.Option{Name: "a=b", Value: "1"})
		}},
		{"unsaid", "do not say what the jobs do", func(c *bench.Config) { c.Jobs[0].RandSeed = 7 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := base()
			tt.edit(cfg)
			_, err := FormatJobFile(cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}
