package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"iolab/bench/fio"
)

// TestRunStatusInterval: iolab run --status-interval prints a report of
// the running jobs every interval before the final one, in each output
// format: JSON a stream of documents whose last is the final report, which
// iolab import - reads from its standard input; normal output the lines
// before the jobs' once, then a report per interval; terse a line per
// report; two formats each report in both, in fio's order; a sweep each step's reports, each of the step running, before
// its own final report.
func TestRunStatusInterval(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	job := []string{"run", "--no-save", "--name=s", "--filename=" + target, "--size=4m", "--rw=randread", "--bs=4k",
		"--runtime=1", "--time_based", "--status-interval=300ms"}
	// A second of runtime gives three reports 300 ms apart, give or take
	// the one at the edge (bench/fio's statusReportsPerRun says why).
	interim := func(t *testing.T, n int) {
		t.Helper()
		if n < 2 || n > 4 {
			t.Errorf("%d interim reports over 1 s at 300 ms, want 3 ± 1", n)
		}
	}

	t.Run("json", func(t *testing.T) {
		code, stdout, stderr := runOut(t, append(job, "--output-format=json")...)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		reps, err := fio.ParseReports(strings.NewReader(stdout))
		if err != nil {
			t.Fatal(err)
		}
		interim(t, len(reps)-1)
		for k := 1; k < len(reps); k++ {
			if a, b := reps[k-1].Jobs[0].Read.TotalIOs, reps[k].Jobs[0].Read.TotalIOs; b < a {
				t.Errorf("report %d: %d I/Os after %d", k+1, b, a)
			}
		}
		stream := filepath.Join(dir, "stream.json")
		if err := os.WriteFile(stream, []byte(stdout), 0o644); err != nil {
			t.Fatal(err)
		}
		in, err := os.Open(stream)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		stdin := os.Stdin
		os.Stdin = in
		defer func() { os.Stdin = stdin }()
		db := filepath.Join(dir, "runs.db")
		code, id, stderr := runOut(t, "import", "--db", db, "-")
		if code != 0 || strings.TrimSpace(id) != "1" || !strings.Contains(stderr, "standard input: imported as run 1") {
			t.Fatalf("import -: exit %d, %q\n%s", code, id, stderr)
		}
		code, shown, stderr := runOut(t, "export", "--db", db, "1")
		if code != 0 {
			t.Fatalf("export: exit %d\n%s", code, stderr)
		}
		final := reps[len(reps)-1].Jobs[0].Read.TotalIOs
		if !strings.Contains(shown, `"ios": `+strconv.FormatUint(final, 10)+",") {
			t.Errorf("the imported run is not the final report's %d I/Os:\n%.2000s", final, shown)
		}
		if code, _, stderr := runOut(t, "import", "--db", db, "-", "-"); code != 2 || !strings.Contains(stderr, "once") {
			t.Errorf("import - -: exit %d\n%s", code, stderr)
		}
	})

	t.Run("normal", func(t *testing.T) {
		code, stdout, stderr := runOut(t, job...)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		if n := strings.Count(stdout, "Starting 1 thread"); n != 1 {
			t.Errorf("%d Starting lines, want 1 before the first report", n)
		}
		interim(t, strings.Count(stdout, "Run status group 0 (all jobs):")-1)
	})

	t.Run("terse", func(t *testing.T) {
		code, stdout, stderr := runOut(t, append(job, "--output-format=terse")...)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		lines := strings.Split(strings.TrimSpace(stdout), "\n")
		interim(t, len(lines)-1)
		for _, l := range lines {
			if !strings.HasPrefix(l, "3;") {
				t.Errorf("not a terse v3 line: %q", l)
			}
		}
	})

	t.Run("normal,json", func(t *testing.T) {
		code, stdout, stderr := runOut(t, append(job, "--output-format=normal,json")...)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		// Each report in both formats, JSON first as fio prints them; the
		// job's line and "Starting" once, before the first.
		reports := strings.Count(stdout, "Run status group 0 (all jobs):")
		interim(t, reports-1)
		if n := strings.Count(stdout, `"iolab version"`); n != reports {
			t.Errorf("%d JSON documents, %d normal reports", n, reports)
		}
		if n := strings.Count(stdout, "Starting 1 thread"); n != 1 || strings.Index(stdout, "Starting") > strings.Index(stdout, "{") {
			t.Errorf("%d Starting lines, want 1 before the first document", n)
		}
		if strings.Index(stdout, "{") > strings.Index(stdout, "Run status") {
			t.Errorf("the first report's normal statistics come before its JSON")
		}
	})

	t.Run("sweep", func(t *testing.T) {
		code, stdout, stderr := runOut(t, append(job, "--output-format=json", "--sweep", "iodepth=1,2", "--ioengine=libaio")...)
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, stderr)
		}
		reps, err := fio.ParseReports(strings.NewReader(stdout))
		if err != nil {
			t.Fatal(err)
		}
		// Each step's reports carry its own iodepth: those of the step
		// running, step 1's then step 2's. The two final reports come
		// last, after every step ran.
		var depths []string
		for _, r := range reps {
			for _, o := range r.Jobs[0].JobOptions {
				if o.Name == "iodepth" {
					depths = append(depths, o.Value)
				}
			}
		}
		n := len(depths)
		if len(depths) != len(reps) || n < 4 || depths[n-2] != "1" || depths[n-1] != "2" || !slices.IsSorted(depths[:n-2]) {
			t.Fatalf("the reports' iodepths in order: %v; want step 1's, step 2's, then both finals", depths)
		}
		interim(t, strings.Count(strings.Join(depths[:n-2], ""), "1"))
		interim(t, strings.Count(strings.Join(depths[:n-2], ""), "2"))
	})
}
