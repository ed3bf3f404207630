package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"iolab/bench/testdev"
)

// TestPlansBeyondLimits replays the plans that used to grow memory until
// the OOM killer came or exhaust threads: each is refused with exit 2,
// naming the limit, and nothing is stored.
func TestPlansBeyondLimits(t *testing.T) {
	dir := t.TempDir()
	var sections strings.Builder
	sections.WriteString("[global]\nioengine=null\nsize=1m\n")
	for i := range 10001 {
		fmt.Fprintf(&sections, "[j%d]\n", i)
	}
	jobFile := filepath.Join(dir, "many.fio")
	if err := os.WriteFile(jobFile, []byte(sections.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"--name=x", "--ioengine=null", "--size=1m", "--runtime=1s", "--time_based"}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"iodepth range to 2^63", append([]string{"--sweep", "iodepth=1..9223372036854775807"}, base...), "out of range"},
		{"a hundred million repeats", append([]string{"--repeat", "100000000"}, base...), "from 1 to 1000"},
		{"4096 jobs at once", append([]string{"--numjobs=4096", "--bs=128k", "--iodepth=4"}, base...), "4096 jobs at once"},
		{"buffers beyond the limit", append(base, "--numjobs=256", "--bs=32m", "--size=32m"), "of I/O buffers"},
		{"10,001 sections", []string{jobFile}, "at most 4096"},
		{"a sweep of every value", append([]string{"--sweep", "bs=" + strings.Repeat("4k,", 2000) + "4k"}, base...), "at most 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dbPath := filepath.Join(t.TempDir(), "iolab.db")
			var stdout, stderr bytes.Buffer
			err := run(append([]string{"run", "--db", dbPath}, tc.args...), &stdout, &stderr)
			if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v (exit %d), want exit 2 mentioning %q", err, exitCode(err), tc.want)
			}
			if _, serr := os.Stat(dbPath); serr == nil {
				runs := listedRuns(t, dbPath)
				if runs != 0 {
					t.Fatalf("%d runs stored for a refused plan", runs)
				}
			}
		})
	}
}

func listedRuns(t *testing.T, dbPath string) int {
	t.Helper()
	var out, errOut bytes.Buffer
	if err := run([]string{"runs", "--db", dbPath}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	return strings.Count(strings.TrimSpace(out.String()), "\n") // lines after the header
}

// TestErrorsKnownBeforeTheRun: what can be known before anything runs is
// refused then — exit 2 or 1 with the reason, no run stored, no output
// file left behind — and a job file's bytes are never printed raw.
func TestErrorsKnownBeforeTheRun(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "t.dat")
	if err := os.WriteFile(target, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	testdev.NeedLoopTools(t)
	dev := testdev.Loop(t, 1<<20)
	escFile := filepath.Join(dir, "esc.fio")
	if err := os.WriteFile(escFile, []byte("[\x1b[31mred\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		// A device is not extended (a file would be laid out larger, as
		// fio does).
		{"offset past the end", []string{"--name=x", "--filename=" + dev, "--offset=10g", "--size=4k"}, "at or past the end"},
		{"size beyond the target", []string{"--name=x", "--filename=" + dev, "--size=2m"}, "but the job needs"},
		{"iodepth beyond io_uring's ring", []string{"--name=x", "--filename=" + target, "--ioengine=io_uring", "--iodepth=65536"}, "at most 32768"},
		{"escapes in a job file", []string{escFile}, `\x1b[31m`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dbPath := filepath.Join(t.TempDir(), "iolab.db")
			out := filepath.Join(t.TempDir(), "out.json")
			var stdout, stderr bytes.Buffer
			err := run(append([]string{"run", "--db", dbPath, "--output=" + out}, tc.args...), &stdout, &stderr)
			if err == nil || !strings.Contains(printableLines(err.Error()), tc.want) {
				t.Fatalf("err %v, want it to say %q", err, tc.want)
			}
			if strings.ContainsRune(printableLines(err.Error()), 0x1b) {
				t.Error("the error as printed holds a raw escape")
			}
			if _, serr := os.Stat(out); serr == nil {
				t.Error("a refused run left its --output file")
			}
			if _, serr := os.Stat(dbPath); serr == nil && listedRuns(t, dbPath) != 0 {
				t.Error("a refused run was stored")
			}
		})
	}
}
