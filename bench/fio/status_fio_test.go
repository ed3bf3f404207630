package fio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/system"
	"iolab/bench/testdev"
)

// statusArgs are the job of testdata/status/fio-3.33-json.json, fio 3.33's
// own stream (fio --filename=/dev/loop3 and these arguments, on a 16 MiB
// loop device), and without --output-format=json of
// testdata/status/fio-3.33-normal.txt (on /dev/loop5): a time-based job of
// 3 s, a report every second.
var statusArgs = []string{"--name=s", "--rw=randread", "--bs=4k", "--ioengine=psync", "--direct=1",
	"--runtime=3", "--time_based", "--status-interval=1", "--output-format=json"}

// statusReportsPerRun is how many interim reports a run of statusArgs
// prints: one per interval of its runtime. fio's helper thread reports
// every interval from its start, a little before the jobs', and iolab's
// from the step's start, so the report at the runtime's edge may fall
// just before or just after the jobs end: each prints this many, give or
// take one, and the two differ by at most one.
const statusReportsPerRun = 3

// TestStatusMatchesFio runs the job of statusArgs with iolab, printing its
// --status-interval reports as iolab run does, and with fio 3.33 on the
// same loop device: each stream is a series of complete JSON documents
// (fio's recorded one too), about one a second and the final one; within
// a stream each job's counts and runtimes never go down, and the last
// interim report's are at most the final's; iolab's documents have fio's
// structure (every member fio prints, in its order, of its type, as
// TestJSONMatchesFio compares them) and, live, the same job, options and
// disk.
func TestStatusMatchesFio(t *testing.T) {
	dev := testdev.Loop(t, 16<<20)
	args := append([]string{"--filename=" + dev}, statusArgs...)
	ours := splitDocuments(t, iolabStatusStream(t, args))
	checkStatusStream(t, "iolab", ours)

	recorded, err := os.ReadFile("testdata/status/fio-3.33-json.json")
	if err != nil {
		t.Fatal(err)
	}
	theirs := splitDocuments(t, recorded)
	checkStatusStream(t, "fio's recorded", theirs)
	// fio 3.33 leaves out options given without a value, as jsonDiffs'
	// stonewall.
	valueless := []*jsonDiff{{path: `jobs[].job options.time_based`}}
	structure := &jsonComparison{t: t, values: regexp.MustCompile(`^(jobs\[\]\.(jobname|groupid|error))$`), extra: valueless}
	for _, k := range []int{0, len(ours) - 2, len(ours) - 1} {
		w := min(k, len(theirs)-2)
		if k == len(ours)-1 {
			w = len(theirs) - 1
		}
		structure.compare("", decodeOrdered(t, theirs[w]), decodeOrdered(t, ours[k]))
	}

	fio := lookFio(t)
	live := splitDocuments(t, runFio(t, fio, "", args...))
	checkStatusStream(t, "fio", live)
	if d := len(ours) - len(live); d < -1 || d > 1 {
		t.Errorf("iolab printed %d documents, fio %d: want at most one apart", len(ours), len(live))
	}
	same := &jsonComparison{t: t, values: regexp.MustCompile(`^(global options\..*|jobs\[\]\.(jobname|groupid|error|job options\..*)|disk_util\[\]\.name)$`), extra: valueless}
	same.compare("", decodeOrdered(t, live[0]), decodeOrdered(t, ours[0]))
	if t.Failed() {
		t.Logf("fio:\n%s\niolab:\n%s", bytes.Join(live, nil), bytes.Join(ours, nil))
	}
}

// TestStatusNormalMatchesFio: the job of statusArgs in fio's normal
// output, by iolab and by fio 3.33 (recorded, and live on the same loop
// device): the lines before the jobs' once, then a report per interval
// (statusReportsPerRun ± 1, at most one apart), each the job's block and
// its group's run status, then the final one.
func TestStatusNormalMatchesFio(t *testing.T) {
	dev := testdev.Loop(t, 16<<20)
	args := append([]string{"--filename=" + dev}, statusArgs[:len(statusArgs)-1]...)
	ours := string(iolabStatusStream(t, args))
	recorded, err := os.ReadFile("testdata/status/fio-3.33-normal.txt")
	if err != nil {
		t.Fatal(err)
	}
	reports := checkNormalStream(t, "iolab", ours, "Starting 1 thread")
	checkNormalStream(t, "fio's recorded", string(recorded), "Starting 1 process")
	live := checkNormalStream(t, "fio", string(runFio(t, lookFio(t), "", args...)), "Starting 1 process")
	if d := reports - live; d < -1 || d > 1 {
		t.Errorf("iolab printed %d reports, fio %d: want at most one apart", reports, live)
	}
}

// checkNormalStream checks a normal stream of statusArgs' job and returns
// how many reports it has, the final one included.
func checkNormalStream(t *testing.T, who, out, starting string) int {
	t.Helper()
	if n := strings.Count(out, starting); n != 1 || !strings.HasPrefix(out, "s: (g=0): rw=randread") {
		t.Errorf("%s: %d %q lines, want the job's line, then that once", who, n, starting)
	}
	reports := strings.Count(out, "\nRun status group 0 (all jobs):\n")
	if n := reports - 1; n < statusReportsPerRun-1 || n > statusReportsPerRun+1 {
		t.Errorf("%s: %d interim reports, want %d ± 1", who, n, statusReportsPerRun)
	}
	if jobs := strings.Count(out, "\ns: (groupid=0, jobs=1): err= 0: "); jobs != reports {
		t.Errorf("%s: %d job blocks in %d reports", who, jobs, reports)
	}
	return reports
}

// iolabStatusStream runs args as iolab run does with --status-interval:
// the reports while the job runs, then the final one.
func iolabStatusStream(t *testing.T, args []string) []byte {
	t.Helper()
	cfg, err := ParseArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rn := &bench.Runner{Sys: system.FS{}}
	reports := NewStatusReports(&out, rn, cfg)
	reports.Start(cfg)
	res, err := rn.Run(context.Background(), cfg)
	reports.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if reports.Err() != nil {
		t.Fatal(reports.Err())
	}
	if cfg.OutputFormat == "json" {
		rep := NewReport(res, cfg, false)
		err = WriteJSON(&out, &rep)
		if docs := splitDocuments(t, out.Bytes()); reports.Printed() != len(docs)-1 {
			t.Fatalf("%d reports printed, %d documents", reports.Printed(), len(docs))
		}
	} else if reports.Headed() {
		err = WriteNormalAgain(&out, res, cfg)
	} else {
		err = WriteNormal(&out, res, cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// splitDocuments splits a stream of JSON documents, failing the test on
// anything that is not one.
func splitDocuments(t *testing.T, data []byte) [][]byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	var docs [][]byte
	for {
		var doc json.RawMessage
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs
		}
		if err != nil {
			t.Fatalf("document %d: %v", len(docs)+1, err)
		}
		docs = append(docs, doc)
	}
}

// checkStatusStream checks one stream of statusArgs' reports: each a
// complete fio report of the one job, statusReportsPerRun ± 1 of them
// before the final, cumulative.
func checkStatusStream(t *testing.T, who string, docs [][]byte) {
	t.Helper()
	if n := len(docs) - 1; n < statusReportsPerRun-1 || n > statusReportsPerRun+1 {
		t.Errorf("%s: %d interim reports, want %d ± 1", who, n, statusReportsPerRun)
	}
	var prev *DirReport
	for k, doc := range docs {
		reps, err := ParseReports(bytes.NewReader(doc))
		if err != nil || len(reps) != 1 || len(reps[0].Jobs) != 1 {
			t.Fatalf("%s: document %d is not a report of one job (%v)", who, k+1, err)
		}
		r := reps[0].Jobs[0].Read
		if prev != nil && (r.TotalIOs < prev.TotalIOs || r.IOBytes < prev.IOBytes || r.Runtime < prev.Runtime) {
			t.Errorf("%s: document %d: %d I/Os, %d bytes in %d ms after %d, %d in %d ms", who, k+1,
				r.TotalIOs, r.IOBytes, r.Runtime, prev.TotalIOs, prev.IOBytes, prev.Runtime)
		}
		if k < len(docs)-1 && r.Runtime > uint64((time.Duration(k+1)*time.Second+700*time.Millisecond)/time.Millisecond) {
			t.Errorf("%s: interim report %d covers %d ms, more than its intervals", who, k+1, r.Runtime)
		}
		prev = &r
	}
	if prev.TotalIOs == 0 {
		t.Errorf("%s: the final report has no I/O", who)
	}
}
