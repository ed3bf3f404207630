package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"iolab/db"
)

// submitReapPattern runs a command under strace and writes its io_submit
// and io_getevents calls in order: S for a submit, G(min,max) for a reap.
func submitReapPattern(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	var b strings.Builder
	reap := regexp.MustCompile(`io_getevents\(\w+, (\d+), (\d+),`)
	for _, l := range strings.Split(straceTrace(t, "io_submit,io_getevents", env, name, args...), "\n") {
		if strings.Contains(l, "io_submit(") {
			b.WriteByte('S')
		} else if m := reap.FindStringSubmatch(l); m != nil {
			fmt.Fprintf(&b, "G(%s,%s)", m[1], m[2])
		}
	}
	return b.String()
}

// drainedSubmits is the share of submits made with nothing in flight,
// and the distinct reaps.
func drainedSubmits(pattern string) (float64, []string) {
	inFlight, drained, submits := 0, 0, 0
	var reaps []string
	for i := 0; i < len(pattern); i++ {
		if pattern[i] == 'S' {
			submits++
			if inFlight == 0 {
				drained++
			}
			inFlight++
			continue
		}
		end := strings.IndexByte(pattern[i:], ')')
		g := pattern[i : i+end+1]
		if !slices.Contains(reaps, g) {
			reaps = append(reaps, g)
		}
		inFlight-- // one completion each: the quiesce asks for at least 1
		i += end
	}
	slices.Sort(reaps)
	return float64(drained) / float64(max(submits, 1)), reaps
}

// TestPacingSyscallsMatchFio runs fio and iolab with think time and rates
// on one loop device under strace: before it thinks or waits for a rate,
// fio drains what is in flight (io_u_quiesce), and iolab must make the
// same calls in the same order. Think time counted in I/Os gives one
// order whatever the timing (as long as each reap takes one completion,
// fio's default); a rate's order depends on the machine
// keeping up, so there the test compares the share of submits made with
// nothing in flight, which is all of them when the job keeps up.
func TestPacingSyscallsMatchFio(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		t.Fatal("strace is not installed (the test command installs it)")
	}
	fio := lookFio(t)
	dev := testLoop(t, 64<<20)
	base := []string{"--name=t", "--filename=" + dev, "--rw=randread", "--bs=4k", "--size=64k", "--direct=1", "--ioengine=libaio", "--iodepth=4"}
	both := func(extra ...string) (fioPattern, iolabPattern string) {
		args := append(append([]string{}, base...), extra...)
		return submitReapPattern(t, nil, fio, args...),
			submitReapPattern(t, []string{"IOLAB_TEST_MAIN=1"}, os.Args[0], append([]string{"run", "--no-save"}, args...)...)
	}
	for _, extra := range [][]string{
		{"--thinktime=1ms", "--thinktime_blocks=4"},
		{"--thinktime=1ms", "--thinktime_blocks=3"},
		{"--thinktime=1ms", "--thinktime_blocks=4", "--thinktime_blocks_type=issue"},
		{"--thinktime=1ms", "--thinktime_blocks=2", "--iodepth=2"},
	} {
		t.Run(strings.Join(extra, " "), func(t *testing.T) {
			want, got := both(extra...)
			if got != want {
				t.Errorf("submits (S) and reaps (G):\n fio   %s\n iolab %s", want, got)
			}
		})
	}
	// A linear rate: one I/O every 40 ms, each long done before the next
	// is due even on a loaded machine (poisson's short gaps let the next
	// go while one is in flight).
	for _, extra := range [][]string{{"--rate_iops=25"}} {
		t.Run(strings.Join(extra, " "), func(t *testing.T) {
			for try := 1; ; try++ {
				want, got := both(extra...)
				w, wr := drainedSubmits(want)
				g, gr := drainedSubmits(got)
				if w >= 0.8 && g >= 0.8 && slices.Equal(wr, gr) {
					return
				}
				msg := "submits made with nothing in flight: fio %.2f, iolab %.2f; reaps fio %v, iolab %v\n fio   %s\n iolab %s"
				if try == 3 {
					t.Fatalf(msg, w, g, wr, gr, want, got)
				}
				t.Logf(msg+"; again", w, g, wr, gr, want, got)
			}
		})
	}
}

// killAndRestart kills the iolab cmd while it has dev's scheduler
// switched to other, starts iolab again on its store (as the next start
// would) and checks that dev is back on original. It returns the runs the
// restart listed.
func killAndRestart(t *testing.T, cmd *exec.Cmd, dbPath, dev, original, other string) string {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if got := activeScheduler(t, dev); got != other {
		t.Fatalf("scheduler %s while killed, want %s (the test needs the switch to be left behind)", got, other)
	}
	var out, errOut bytes.Buffer
	if err := run([]string{"runs", "--db", dbPath}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	if got := activeScheduler(t, dev); got != original {
		t.Fatalf("scheduler %s after the next start, want %s", got, original)
	}
	return out.String()
}

// TestKillIOSchedulerRun kills `iolab run` while a job's ioscheduler has
// the loop device switched: the next start puts the device's scheduler
// back, from the record the run made before switching.
func TestKillIOSchedulerRun(t *testing.T) {
	dev := testLoop(t, 64<<20)
	original, other := otherScheduler(t, dev)
	dbPath := filepath.Join(t.TempDir(), "iolab.db")
	cmd := exec.Command(os.Args[0], "run", "--db", dbPath, "--name=k", "--filename="+dev, "--rw=randread", "--direct=1",
		"--ioengine=libaio", "--runtime=20s", "--time_based", "--ioscheduler="+other)
	cmd.Env = append(os.Environ(), "IOLAB_TEST_MAIN=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for activeScheduler(t, dev) != other {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the job never switched %s to %s:\n%s", dev, other, stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	killAndRestart(t, cmd, dbPath, dev, original, other)
	store, err := db.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if left, err := store.SchedulerRestores(context.Background()); err != nil || len(left) != 0 {
		t.Errorf("restore records left: %v %v", left, err)
	}
}
