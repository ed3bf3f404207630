package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// fioImports are real fio 3.33 outputs (bench/fio/testdata/import/README.md
// says how each was made).
const fioImports = "../../bench/fio/testdata/import/"

// TestImportAsRun: a directory of fio outputs imported as one run, shown
// with its steps on the iodepth axis, repeats, the options fio did not
// print, and the host facts fio's output lacks as unknown.
func TestImportAsRun(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "i.db")
	var stdout, stderr bytes.Buffer
	cmd := func(args ...string) error {
		stdout.Reset()
		stderr.Reset()
		return run(args, &stdout, &stderr)
	}
	if err := cmd("import", "--db", dbPath, "--as-run", "qd sweep", "--host", "box7", fioImports+"repeats"); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if stdout.String() != "1\n" || !strings.Contains(stderr.String(), `3 files as "qd sweep": imported as run 1 (fio, 6 steps)`) {
		t.Errorf("stdout %q stderr %q", stdout.String(), stderr.String())
	}
	// The same files again, named one by one: the same run.
	if err := cmd("import", "--db", dbPath, fioImports+"repeats/1.json", fioImports+"repeats/2.json", fioImports+"repeats/3.json", "--as-run", "qd sweep"); err != nil {
		t.Fatal(err)
	}
	if stdout.String() != "1\n" || !strings.Contains(stderr.String(), "already imported as run 1") {
		t.Errorf("again: stdout %q stderr %q", stdout.String(), stderr.String())
	}
	if err := cmd("show", "--db", dbPath, "1"); err != nil {
		t.Fatal(err)
	}
	out := stdout.String()
	for _, want := range []string{
		`run 1 "qd sweep": done`,
		"host box7, kernel unknown, CPU unknown, memory unknown, IOMMU unknown",
		"plan: iolab run --sweep=iodepth=1,8 --repeat=3 ",
		"inferred (not in fio's output): time_based on qd1: it ran its whole runtime=500ms",
		"inferred (not in fio's output): stonewall on qd8: a new reporting group (groupid 1)",
		"note: fio-3.33 leaves value-less options",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"0×", "0.0 GiB", "IOMMU \n", "IOMMU ,"} {
		if strings.Contains(out, bad) {
			t.Errorf("show prints %q for what is unknown:\n%s", bad, out)
		}
	}
	// Six step rows: each file's qd1 and qd8 with fio's own IOPS.
	want := "iodepth=1 #1 7.26k, iodepth=8 #1 23.9k, iodepth=1 #2 5.97k, iodepth=8 #2 7.59k, iodepth=1 #3 7.74k, iodepth=8 #3 28k"
	if got := stepRows(out); got != want {
		t.Errorf("steps %q\nwant %s\n%s", got, want, out)
	}

	// Without --as-run each file is a run of its own; the stonewalled
	// iodepths of one file are three steps.
	if err := cmd("import", "--db", dbPath, fioImports+"stonewall-qd.jsonplus.json", fioImports+"fairness.json"); err != nil {
		t.Fatal(err)
	}
	if stdout.String() != "2\n3\n" || !strings.Contains(stderr.String(), "stonewall-qd.jsonplus.json: imported as run 2 (fio, 3 steps)") ||
		!strings.Contains(stderr.String(), "fairness.json: imported as run 3 (fio, 1 steps)") {
		t.Errorf("stdout %q stderr %q", stdout.String(), stderr.String())
	}
	if err := cmd("show", "--db", dbPath, "2"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "plan: iolab run --sweep=iodepth=1,4,16 ") {
		t.Errorf("show 2:\n%s", stdout.String())
	}
	if got, want := stepRows(stdout.String()), "iodepth=1 #1 7.55k, iodepth=4 #1 11.3k, iodepth=16 #1 29.3k"; got != want {
		t.Errorf("steps %q, want %q", got, want)
	}

	// A directory without --as-run: a run per file, in name order.
	if err := cmd("import", "--db", filepath.Join(t.TempDir(), "d.db"), fioImports+"repeats"); err != nil {
		t.Fatal(err)
	}
	if stdout.String() != "1\n2\n3\n" || !strings.Contains(stderr.String(), "1.json: imported as run 1 (fio, 2 steps)") ||
		!strings.Contains(stderr.String(), "3.json: imported as run 3") {
		t.Errorf("directory: stdout %q stderr %q", stdout.String(), stderr.String())
	}

	notJSON := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notJSON, []byte("fio said hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--as-run", "x", "--name", "y", fioImports + "fairness.json"}, "not both"},
		{[]string{"--as-run", "x", fioImports + "fairness.json", notJSON}, "notes.txt: import: fio import: not JSON"},
		{[]string{"--as-run", "x", "testdata"}, ""}, // testdata holds one fio output
		{[]string{filepath.Join(t.TempDir())}, "no *.json files"},
		{[]string{"no-such-dir"}, "no such file"},
	} {
		err := cmd(append([]string{"import", "--db", dbPath}, tt.args...)...)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("import %q: %v, want %q", tt.args, err, tt.want)
		}
	}
}

// stepRows are the rows of `iolab show`'s performance table as "axis=value
// #repeat IOPS", comma-separated, read by the table's head.
func stepRows(show string) string {
	cells := regexp.MustCompile(`\S+(?: \S+)*`)
	var head []string
	var rows []string
	for _, line := range strings.Split(show, "\n") {
		switch {
		case head == nil && strings.HasPrefix(line, "step  ") && strings.Contains(line, "IOPS"):
			head = cells.FindAllString(line, -1)
		case head != nil && line == "":
			return strings.Join(rows, ", ")
		case head != nil:
			row := map[string]string{"rep": "1"}
			for i, c := range cells.FindAllString(line, -1) {
				row[head[i]] = c
			}
			rows = append(rows, fmt.Sprintf("%s=%s #%s %s", head[1], row[head[1]], row["rep"], row["IOPS"]))
		}
	}
	return strings.Join(rows, ", ")
}

// TestImportFioClients: fio's client output of three servers imports as
// a group of one run per server, named by its address; again, the same
// group and runs.
func TestImportFioClients(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "i.db")
	file := "../../bench/fio/testdata/client/client-three.jsonplus.json"
	var stdout, stderr bytes.Buffer
	if err := run([]string{"import", "--db", dbPath, "--name", "three", file}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	group := regexp.MustCompile(`imported as group ([0-9a-f]+) \(10\.213\.241\.2 run 1, 10\.213\.243\.2 run 2, 10\.213\.242\.2 run 3\)`).FindStringSubmatch(stderr.String())
	if stdout.String() != "1\n2\n3\n" || group == nil {
		t.Fatalf("stdout %q stderr %q", stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if err := run([]string{"import", "--db", dbPath, file}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if stdout.String() != "1\n2\n3\n" || !strings.Contains(stderr.String(), "already imported as group "+group[1]) {
		t.Errorf("again: stdout %q stderr %q", stdout.String(), stderr.String())
	}
	stdout.Reset()
	if err := run([]string{"show", "--db", dbPath, "2"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "10.213.243.2") {
		t.Errorf("run 2 is not the second server's:\n%s", stdout.String())
	}
}
