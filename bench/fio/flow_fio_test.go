package fio

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"iolab/bench"
	"iolab/bench/testdev"
)

// TestFlowMatchesFio runs flowed jobs with fio and with iolab and compares
// the share of the I/Os each job did: the example flow.fio (after fio's: a
// writer and a random reader of weights 1 and 8, flow_sleep=1000, iodepth
// 32 on a loop device), a job held to a paced one's rate at weights 3:1
// with no flow_sleep (spinning while held), and a flow split by a
// stonewall, which fio holds to its first two I/Os. The flow makes the
// ratios, not the machine's speed: they must agree within 3 %.
func TestFlowMatchesFio(t *testing.T) {
	fioBin := lookFio(t)
	t.Setenv("IOLAB_DEV", testdev.Loop(t, 16<<20))
	f := file(t, 1<<20)
	for _, tc := range []struct {
		name  string
		args  []string
		exact bool // the counts themselves, not only their ratios
	}{
		{"flow.fio", []string{exampleJob(t, "flow.fio")}, false},
		{"paced 3:1", []string{"--filename=" + f, "--ioengine=psync", "--time_based", "--runtime=500ms",
			"--name=slow", "--rate_iops=300", "--flow=1", "--name=fast", "--flow=3"}, false},
		{"stonewall", []string{"--filename=" + f, "--name=a", "--flow=1", "--time_based", "--runtime=100ms",
			"--name=b", "--stonewall", "--flow=1", "--size=64k"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The jobs run for a time: one whose thread a loaded machine
			// starts late has the flow to itself once the other is done.
			eventually(t, func() error { return compareFlow(t, fioBin, tc.args, tc.exact) })
		})
	}
}

// compareFlow runs a job with fio and with iolab and compares how many
// I/Os each of its jobs did.
func compareFlow(t *testing.T, fioBin string, args []string, exact bool) error {
	out := runFio(t, fioBin, t.TempDir(), append([]string{"--output-format=json", "--thread"}, args...)...)
	reps, err := ParseReports(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	var want, got []float64
	for _, j := range reps[len(reps)-1].Jobs {
		want = append(want, float64(j.Read.TotalIOs+j.Write.TotalIOs))
	}
	for _, j := range resultJobs(run(t, args...)) {
		if j.Error != "" {
			t.Fatal(j.Error)
		}
		got = append(got, float64(j.Dirs[bench.Read].IOs+j.Dirs[bench.Write].IOs))
	}
	if len(want) != len(got) || want[0] == 0 || got[0] == 0 {
		t.Fatalf("I/Os per job: fio %v, iolab %v", want, got)
	}
	t.Logf("I/Os per job: fio %v, iolab %v", want, got)
	for i := 1; i < len(want); i++ {
		if exact && want[i] != got[i] {
			return fmt.Errorf("I/Os per job: fio %v, iolab %v", want, got)
		}
		if err := within("iolab's ratio of the jobs' I/Os to fio's", got[i]/got[0], want[i]/want[0], 0.03); err != nil {
			return err
		}
	}
	return nil
}

// TestButterflyMatchesFio runs the example butterfly.fio — two readers
// from either end of a device in one flow of equal weights — with fio and
// with iolab under strace: in both, neither job is ever more than a few
// reads ahead of the other — a job goes on while it has issued at most
// one I/O more than the other, so it leads by two, three with a read the
// other has counted but not yet issued — where without the flow one runs
// hundreds ahead.
func TestButterflyMatchesFio(t *testing.T) {
	fioBin := lookFio(t)
	dev := testdev.Loop(t, 16<<20)
	t.Setenv("IOLAB_DEV", dev)
	path := exampleJob(t, "butterfly.fio")
	// A thread preempted between its turn and its read lets the other
	// one read on: a loaded machine may stretch a lead now and then.
	eventually(t, func() error {
		fio := strace(t, "pread64", dev, nil, fioBin, "--thread", path)
		iolab := strace(t, "pread64", dev, []string{"IOLAB_EFFECT_JOB=1"}, os.Args[0], path)
		want, got := maxLead(fio), maxLead(iolab)
		t.Logf("the most reads one job was ahead of the other: fio %d, iolab %d", want, got)
		if want > 4 || got > 4 {
			return fmt.Errorf("the most reads one job was ahead of the other: fio %d, iolab %d", want, got)
		}
		return nil
	})
}

// exampleJob is the path of a job file in testdata/jobs/examples.
func exampleJob(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "jobs", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// maxLead is, over a trace of two jobs' reads in the order they were
// issued, the most reads one had issued beyond the other's.
func maxLead(lines []string) int {
	re := regexp.MustCompile(`^(\d+)\s+pread64\(`)
	n := map[string]int{}
	lead := 0
	for _, l := range lines {
		m := re.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		n[m[1]]++
		var c []int
		for _, v := range n {
			c = append(c, v)
		}
		if len(c) == 1 {
			c = append(c, 0)
		}
		lead = max(lead, c[0]-c[1], c[1]-c[0])
	}
	return lead
}

// TestFlowVerifyMatchesFio: a verifying writer's reads back count in its
// flow as its writes do (fio's do_verify checks the flow too), so held to
// a paced reader's 500 IOPS at equal weights its 128 writes and then its
// 128 reads back each take about a quarter of a second, in fio as in
// iolab — not the few milliseconds the reads take alone.
func TestFlowVerifyMatchesFio(t *testing.T) {
	fioBin := lookFio(t)
	args := []string{"--filename=" + file(t, 1<<20), "--ioengine=psync", "--name=b", "--rw=read", "--rate_iops=500", "--time_based",
		"--runtime=1s", "--flow=1", "--name=a", "--rw=write", "--size=512k", "--verify=crc32c", "--flow=1", "--flow_sleep=500"}
	eventually(t, func() error {
		reps, err := ParseReports(bytes.NewReader(runFio(t, fioBin, t.TempDir(), append([]string{"--output-format=json", "--thread"}, args...)...)))
		if err != nil {
			t.Fatal(err)
		}
		cfg, res, err := runArgs(args)
		if err != nil {
			t.Fatal(err)
		}
		fioA, a := reps[len(reps)-1].Jobs[1], NewReport(res, cfg, false).Jobs[1]
		t.Logf("the writer's reads back: fio %d in %d ms, iolab %d in %d ms", fioA.Read.TotalIOs, fioA.Read.Runtime, a.Read.TotalIOs, a.Read.Runtime)
		if a.Read.TotalIOs != 128 || fioA.Read.TotalIOs != 128 || fioA.Read.Runtime < 150 {
			t.Fatalf("reads back: fio %d in %d ms, iolab %d", fioA.Read.TotalIOs, fioA.Read.Runtime, a.Read.TotalIOs)
		}
		return within("the writer's reads back, ms", float64(a.Read.Runtime), float64(fioA.Read.Runtime), 0.25)
	})
}
