package fio

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The pacing family's run-control probes: which jobs a job's end stops
// (exitall, exit_what, exitall_on_error), run by fio and by iolab on the
// same job file and compared job by job.

// howJobsRan says of each job of a run whether it ran to its end
// ("full"), was stopped by another ("stopped") or never started
// ("never"): a job that did nothing never started; one whose runtime
// (from the job file's runtimes, in ms) is under three quarters of it was
// stopped (fio starts a delayed job up to 0.1 s late, and stops a job
// later than iolab); one without a runtime must have done all its
// number_ios.
func howJobsRan(jobs []JobReport, runtimes map[string]uint64, ios map[string]uint64) string {
	var out []string
	for _, j := range jobs {
		how := "full"
		n := j.Read.TotalIOs + j.Write.TotalIOs
		switch {
		case n == 0:
			how = "never"
		case runtimes[j.JobName] > 0 && j.JobRuntime < runtimes[j.JobName]*3/4:
			how = "stopped"
		case ios[j.JobName] > 0 && n < ios[j.JobName]:
			how = "stopped"
		}
		out = append(out, j.JobName+":"+how)
	}
	return strings.Join(out, " ")
}

// sameStops writes the job file, runs it with fio and iolab and checks
// that the same jobs ran, were stopped or never started; it returns
// iolab's account. Without fio it runs iolab alone.
func sameStops(t *testing.T, jobFile string, runtimes, ios map[string]uint64, withFio bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stops.fio")
	if err := os.WriteFile(path, []byte(jobFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if !withFio {
		cfg, res, err := runArgs([]string{path})
		if err != nil {
			t.Fatal(err)
		}
		return howJobsRan(NewReport(res, cfg, false).Jobs, runtimes, ios)
	}
	b := runBoth(t, nil, path)
	f, g := howJobsRan(b.fio, runtimes, ios), howJobsRan(b.iolab, runtimes, ios)
	if f != g {
		t.Errorf("fio   %s\niolab %s", f, g)
	}
	return g
}

func init() {
	effects["exit_what"] = func(t *testing.T) {
		// short ends after 10 I/Os and about 0.1 s, while sibling (in its
		// group) and other (in a group of its own) run, late waits out its
		// start delay and next waits for the phase.
		jobs := func(exitWhat, lateGroup string) string {
			return fmt.Sprintf(`[global]
filename=%s
size=1m
bs=4k
ioengine=psync
thinktime=1ms
exitall
[short]
number_ios=10
thinktime=10ms
exit_what=%s
[sibling]
time_based
runtime=900ms
[other]
new_group
time_based
runtime=900ms
[late]
%s
startdelay=500ms
time_based
runtime=200ms
[next]
stonewall
number_ios=10
`, file(t, 1<<20), exitWhat, lateGroup)
		}
		runtimes := map[string]uint64{"sibling": 900, "other": 900, "late": 200}
		ios := map[string]uint64{"short": 10, "next": 10}
		for _, tc := range []struct {
			name, exitWhat, lateGroup, want string
			withFio                         bool
		}{
			// Its group: sibling; other runs on, and the run goes on.
			{"group", "group", "new_group", "short:full sibling:stopped other:full late:full next:full", true},
			// The running jobs of the phase; late, not started, is spared
			// and runs, and so does the next phase.
			{"stonewall", "stonewall", "new_group", "short:full sibling:stopped other:stopped late:full next:full", true},
			// The ending job's exit_what decides: sibling, stopped, ends
			// its own group (exit_what=group), late with it, before it
			// starts. fio 3.33 means the same (libfio.c marks late) but
			// never ends: run_threads counts a marked job that was never
			// created as done on every pass (todo--, unsigned), so its
			// count wraps and it waits for ever.
			{"stonewall-then-group", "stonewall", "", "short:full sibling:stopped other:stopped late:never next:full", false},
			// Everything: late and the next phase never start.
			{"all", "all", "new_group", "short:full sibling:stopped other:stopped late:never next:never", true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if got := sameStops(t, jobs(tc.exitWhat, tc.lateGroup), runtimes, ios, tc.withFio); got != tc.want {
					t.Errorf("iolab %s\nwant  %s", got, tc.want)
				}
			})
		}
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 4096), "--exit_what=phase"), "not one of group, stonewall, all")
	}
	effects["exitall_on_error"] = func(t *testing.T) {
		// bad fails at its first I/O, on the disk's bad sectors, a moment
		// after good has started; good would run for 0.6 s.
		dev := badDisk(t)
		jobs := func(badOptions string) string {
			return fmt.Sprintf(`[global]
filename=%s
bs=4k
direct=1
ioengine=psync
[bad]
offset=1m
size=64k
startdelay=100ms
%s
[good]
size=1m
time_based
runtime=600ms
thinktime=1ms
`, dev, badOptions)
		}
		runtimes := map[string]uint64{"good": 600}
		for _, tc := range []struct{ name, options, want string }{
			{"on", "exitall_on_error", "bad:full good:stopped"},
			{"off", "exitall_on_error=0", "bad:full good:full"},
			{"none", "", "bad:full good:full"},
			// An error the job goes on after is no error at its end.
			{"went-on", "exitall_on_error\ncontinue_on_error=read", "bad:full good:full"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if got := sameStops(t, jobs(tc.options), runtimes, nil, true); got != tc.want {
					t.Errorf("iolab %s\nwant  %s", got, tc.want)
				}
			})
		}
	}
}
