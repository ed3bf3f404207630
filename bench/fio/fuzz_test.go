package fio

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"iolab/bench"
)

// FuzzParseJobFile: any text is a job file or an error that says what is
// wrong; parsing never panics, and what it accepts holds finished jobs.
func FuzzParseJobFile(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "jobs", "*.fio"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
	f.Add("[global]\nioengine=null\nsize=1m\n[a]\nrw=randrw\nrwmixread=70\n[b]\nstonewall\nnumjobs=4\n")
	f.Add("[a]\nfilename=/dev/null\nbs=4k,8k\n")
	f.Add("[\x1b[31m]\nfilename=x\n")
	f.Fuzz(func(t *testing.T, text string) {
		if strings.Contains(text, "${") {
			return // the environment is not the fuzzer's to read
		}
		cfg, err := ParseJobFile(strings.NewReader(text), "f.fio")
		if err != nil {
			var oe *bench.OptionError
			if !errors.As(err, &oe) {
				t.Fatalf("error %v is not an OptionError", err)
			}
			return
		}
		checkConfig(t, cfg)
	})
}

// FuzzParseArgs: any command line is a config or an OptionError.
func FuzzParseArgs(f *testing.F) {
	f.Add("--name=a --ioengine=null --size=1m --iodepth=8 --rw=randread")
	f.Add("--name=a --filename=/dev/null --bs=4k --runtime=10s --time_based --numjobs=2 --group_reporting")
	f.Add("--name=a --ioengine=io_uring --hipri --sqthread_poll --sqthread_poll_cpu=1 --filename=x")
	f.Add("--iodepth_batch_complete_max=0x10 --percentile_list=50:99:99.99 --cpus_allowed=0-1 --name=b --filename=y")
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Fields(line)
		for _, a := range args {
			if !strings.HasPrefix(a, "-") {
				return // a job file path: the fuzzer does not read files
			}
		}
		cfg, err := ParseArgs(args)
		if err != nil {
			var oe *bench.OptionError
			if !errors.As(err, &oe) {
				t.Fatalf("error %v is not an OptionError", err)
			}
			return
		}
		checkConfig(t, cfg)
	})
}

// checkConfig asserts what every parsed config holds.
func checkConfig(t *testing.T, cfg *bench.Config) {
	t.Helper()
	if len(cfg.Jobs) == 0 || len(cfg.Jobs) > MaxJobs {
		t.Fatalf("%d jobs", len(cfg.Jobs))
	}
	for _, j := range cfg.Jobs {
		if j.BS <= 0 || j.IODepth < 1 || j.IODepth > bench.MaxIODepth || j.NumJobs < 1 || j.RWMixRead < 0 || j.RWMixRead > 100 {
			t.Fatalf("job %q: bs %d iodepth %d numjobs %d rwmixread %d", j.Name, j.BS, j.IODepth, j.NumJobs, j.RWMixRead)
		}
		if j.Engine() == nil {
			t.Fatalf("job %q: engine %q", j.Name, j.IOEngine)
		}
		if j.IODepthBatchSubmit < 1 || j.IODepthBatchSubmit > j.IODepth {
			t.Fatalf("job %q: iodepth_batch %d at iodepth %d", j.Name, j.IODepthBatchSubmit, j.IODepth)
		}
	}
}

// FuzzParseFio: any bytes are fio's JSON output or an error; an import
// never panics, whatever the document claims.
func FuzzParseFio(f *testing.F) {
	for _, p := range append([]string{fioTestdata}, globFiles("testdata/import/*.json")...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`{"fio version":"fio-3.33","jobs":[{"jobname":"a","groupid":0,"read":{"iops":1e308,"clat_ns":{"bins":{"-1":2}}}}]}`))
	f.Add([]byte(`{"fio version":"x","jobs":[]}{"fio version":"x","jobs":[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		imp, err := ParseFio(data)
		if err != nil {
			return
		}
		if imp.Result == nil {
			t.Fatal("an import without a result")
		}
	})
}

func globFiles(pattern string) []string {
	m, _ := filepath.Glob(pattern)
	return m
}
