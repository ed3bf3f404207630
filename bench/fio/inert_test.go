package fio

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestInertOptionsLikeFio: a job file with an option fio takes and
// ignores (a profile's option, a soft-deprecated one) runs in iolab as in
// fio, with a note naming it and its line, and the job is the job without
// it; a bad value, or a deprecated option fio refuses, is refused by both.
func TestInertOptionsLikeFio(t *testing.T) {
	fio := lookFio(t)
	dir := t.TempDir()
	base := "[x]\nsize=1m\nioengine=null\nfilename=" + filepath.Join(dir, "f") + "\n"
	plain, err := ParseJobFile(strings.NewReader(base), "x.fio")
	if err != nil {
		t.Fatal(err)
	}
	fioTakes := func(t *testing.T, line string) bool {
		path := filepath.Join(dir, "t.fio")
		if err := os.WriteFile(path, []byte(base+line+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, _ := exec.Command(fio, "--parse-only", path).CombinedOutput()
		return !strings.Contains(string(out), "dropped") && !strings.Contains(string(out), "Bad option")
	}
	var lines []string
	for _, o := range inertOptions {
		v := map[string]string{"int": "4k", "text": "/x", "time": "10s", "flag": "", "any": "x"}[o.unit]
		if v == "" {
			lines = append(lines, o.name)
		} else {
			lines = append(lines, o.name+"="+v)
		}
	}
	for _, line := range lines {
		t.Run(line, func(t *testing.T) {
			if !fioTakes(t, line) {
				t.Fatalf("fio refuses %s: it is not inert", line)
			}
			cfg, err := ParseJobFile(strings.NewReader(base+line+"\n"), "x.fio")
			if err != nil {
				t.Fatalf("iolab refuses what fio takes: %v", err)
			}
			name, _, _ := strings.Cut(line, "=")
			if len(cfg.Notes) != 1 || !strings.HasPrefix(cfg.Notes[0], "x.fio:5: "+name+": ") || !strings.Contains(cfg.Notes[0], "changes nothing") {
				t.Errorf("notes %q, want one for %s at x.fio:5", cfg.Notes, name)
			}
			if !reflect.DeepEqual(cfg.Jobs, plain.Jobs) {
				t.Errorf("%s changed the job", line)
			}
		})
	}
	for _, line := range []string{"threads=abc", "verifysort", "percentage_sequential=10", "rwmixcycle=5"} {
		t.Run(line, func(t *testing.T) {
			if fioTakes(t, line) {
				t.Fatalf("fio takes %s", line)
			}
			_, err := ParseJobFile(strings.NewReader(base+line+"\n"), "x.fio")
			name, _, _ := strings.Cut(line, "=")
			if err == nil || !strings.Contains(err.Error(), name) || !strings.HasPrefix(err.Error(), "x.fio:5: ") {
				t.Errorf("iolab: %v, want a refusal naming %s at x.fio:5", err, name)
			}
		})
	}
	// On the command line too.
	cfg, err := ParseArgs([]string{"--name=x", "--ioengine=null", "--size=1m", "--threads=1", "--prep", "--timeout=2", "--fileoffset=4k"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Notes) != 2 || !strings.HasPrefix(cfg.Notes[0], "threads: ") || !strings.HasPrefix(cfg.Notes[1], "prep: ") {
		t.Errorf("command line notes %q", cfg.Notes)
	}
	if j := cfg.Jobs[0]; j.Runtime.Seconds() != 2 || j.Offset != 4096 {
		t.Errorf("timeout=2 fileoffset=4k: runtime %v, offset %d (fio's aliases of runtime and offset)", j.Runtime, j.Offset)
	}
}
