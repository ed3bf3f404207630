package fio

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"iolab/bench"
)

// TestJSONPlusClat2CSV hands iolab's json+ documents to
// fio_jsonplus_clat2csv, the script Debian's fio package ships to turn
// json+ latency bins into CSV, and checks it reads every bin: its own
// --validate pass, and the counts it wrote adding up to each job's clat N.
// CI installs fio, so there the test runs; elsewhere it skips without it.
func TestJSONPlusClat2CSV(t *testing.T) {
	tool, err := exec.LookPath("fio_jsonplus_clat2csv")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI installs fio, which ships fio_jsonplus_clat2csv: %v", err)
		}
		t.Skipf("fio_jsonplus_clat2csv (Debian's fio package) not installed: %v", err)
	}
	// The script's #! takes python3 from PATH, which may be another
	// Python (pyenv) without the six module Debian's python3-six gives
	// the system's: run it with the system's python3 when there is one.
	run := func(args ...string) *exec.Cmd {
		if _, err := os.Stat("/usr/bin/python3"); err == nil {
			return exec.Command("/usr/bin/python3", append([]string{tool}, args...)...)
		}
		return exec.Command(tool, args...)
	}
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			src, dest := filepath.Join(dir, c.name+".json"), filepath.Join(dir, "clat.csv")
			if err := os.WriteFile(src, goldenJSON(t, c, true), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := run(src, dest).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", tool, err, out)
			}
			// --validate rebuilds the bins from the CSV files and compares
			// them with the document's; on a mismatch it says so but
			// still exits 0.
			out, err := run(src, dest, "--validate").CombinedOutput()
			if err != nil || strings.Contains(string(out), "mismatch") {
				t.Fatalf("%s --validate: %v\n%s", tool, err, out)
			}

			_, res := goldenRun(t, c)
			k := 0
			for _, g := range res.Groups {
				for i := range g.Jobs {
					csv := filepath.Join(dir, fmt.Sprintf("clat_job%d.csv", k))
					if !strings.Contains(string(out), csv+" validated") {
						t.Errorf("--validate did not validate %s:\n%s", csv, out)
					}
					checkClatCSV(t, csv, &g.Jobs[i])
					k++
				}
			}
		})
	}
}

// checkClatCSV checks that the script's CSV for job r counts each
// direction's clat I/Os, in ascending latency, ending at the 100th
// percentile.
func checkClatCSV(t *testing.T, path string, r *bench.JobResult) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	header := splitCSV(lines[0])
	for d, dir := range []string{"read", "write"} {
		col := indexOf(header, dir+"_clat_ns_count")
		if col < 0 {
			t.Fatalf("%s: no %s_clat_ns_count column in %q", path, dir, lines[0])
		}
		var sum, prev uint64
		lastPercentile := ""
		for _, line := range lines[1:] {
			row := splitCSV(line)
			nsec, err := strconv.ParseUint(row[0], 10, 64)
			if err != nil || nsec <= prev && prev != 0 {
				t.Fatalf("%s: latency %q after %d: not ascending", path, row[0], prev)
			}
			prev = nsec
			if row[col] == "" {
				continue
			}
			n, err := strconv.ParseUint(row[col], 10, 64)
			if err != nil {
				t.Fatalf("%s: count %q: %v", path, row[col], err)
			}
			sum += n
			lastPercentile = row[col+2]
		}
		want := r.Dirs[d].Clat.Stat.N
		if sum != want {
			t.Errorf("%s: %s clat counts add up to %d, want %d", path, dir, sum, want)
		}
		if want > 0 && lastPercentile != "1.0" {
			t.Errorf("%s: %s clat ends at percentile %q, want 1.0", path, dir, lastPercentile)
		}
	}
}

// splitCSV splits one of the script's lines ("a, b, , c, ") into its
// trimmed fields.
func splitCSV(line string) []string {
	fields := strings.Split(line, ",")
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	return fields
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}
