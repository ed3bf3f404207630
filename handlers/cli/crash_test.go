package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"iolab/bench/sweep"
	"iolab/bench/system"
	"iolab/db"
)

// crashRounds is how many times each crash test kills iolab.
const crashRounds = 10

// otherScheduler returns dev's active scheduler and another it offers.
func otherScheduler(t *testing.T, dev string) (original, other string) {
	t.Helper()
	original = activeScheduler(t, dev)
	_, avail, _ := (system.FS{}).Schedulers(filepath.Base(dev))
	for _, s := range avail {
		if s != original {
			return original, s
		}
	}
	t.Skip("the loop device offers one scheduler only")
	return "", ""
}

// checkRecovered opens the store as the next start would — right after
// the kill, while the killed process may still be an unreaped zombie —
// and checks the run is interrupted (or finished, if the kill came after
// its end), its stored steps are the first ones, each done, and the
// scheduler is back.
func checkRecovered(t *testing.T, dbPath, dev, original string, finished int) {
	t.Helper()
	store, err := db.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if got := activeScheduler(t, dev); got != original {
		t.Fatalf("scheduler %s after the restart, want %s back", got, original)
	}
	runs, err := store.ListRuns(context.Background(), db.RunFilter{})
	if err == nil && len(runs) == 0 && finished == 0 {
		return // killed before it stored the run: nothing to recover
	}
	if err != nil || len(runs) != 1 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	r := runs[0]
	if r.Status != db.StatusInterrupted && r.Status != db.StatusDone {
		t.Fatalf("run %s after the kill, want interrupted", r.Status)
	}
	steps, err := store.Steps(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	done := 0
	for i, s := range steps {
		// The step that was running when the kill came may be stored as
		// running, and is interrupted now; every other is done.
		last := i == len(steps)-1
		if s.Step.Seq != i || !(s.Status == sweep.StepDone || last && s.Status == db.StatusInterrupted) {
			t.Fatalf("stored step %d: seq %d %s", i, s.Step.Seq, s.Status)
		}
		if s.Status == sweep.StepDone {
			done++
		}
	}
	// A step is reported finished only after it is stored, so none that
	// was reported may be missing. More may be stored than were seen
	// reported: steps go on finishing between the look and the kill (the
	// look is an HTTP request, or a pipe not yet drained), and the stored
	// steps' order and statuses are checked above.
	if done < finished {
		t.Fatalf("%d steps stored done, %d reported finished", done, finished)
	}
}

// TestKillRunAtRandomMoments kills `iolab run` with SIGKILL at random
// moments of a scheduler sweep and starts iolab again at once, ten times:
// every finished step is kept, the run is interrupted and the scheduler
// restored.
func TestKillRunAtRandomMoments(t *testing.T) {
	dev := testLoop(t, 64<<20)
	original, other := otherScheduler(t, dev)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	done := regexp.MustCompile(`(?m)^step \d+/\d+ .*: done`)
	for round := range crashRounds {
		dbPath := filepath.Join(t.TempDir(), "iolab.db")
		cmd := exec.Command(os.Args[0], "run", "--db", dbPath, "--sweep=scheduler="+other, "--sweep=iodepth=1,2,4,8,16,32",
			"--name=k", "--filename="+dev, "--rw=randread", "--direct=1", "--ioengine=libaio", "--runtime=100ms", "--time_based")
		cmd.Env = append(os.Environ(), "IOLAB_TEST_MAIN=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(50+rng.IntN(700)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		// Restart before reaping the killed process.
		finished := len(done.FindAllString(stderr.String(), -1))
		var out, errOut bytes.Buffer
		if err := run([]string{"runs", "--db", dbPath}, &out, &errOut); err != nil {
			t.Fatal(err)
		}
		checkRecovered(t, dbPath, dev, original, finished)
		cmd.Wait()
		t.Logf("round %d: killed after %d finished steps", round+1, finished)
	}
}

// TestKillServeAtRandomMoments does the same to `iolab serve` running a
// run from its API, and restarts the dashboard itself at once.
func TestKillServeAtRandomMoments(t *testing.T) {
	dev := testLoop(t, 64<<20)
	original, other := otherScheduler(t, dev)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	for round := range crashRounds {
		dir := t.TempDir()
		dbPath := filepath.Join(dir, "iolab.db")
		srv, base := startServe(t, dbPath, dev)
		body := fmt.Sprintf(`{"name":"k","options":{"filename":%q,"rw":"randread","direct":1,"ioengine":"libaio","runtime":"100ms","time_based":1},
			"sweep":{"scheduler":[%q],"iodepth":[1,2,4,8,16,32]}}`, dev, other)
		req, _ := http.NewRequest("POST", base+"/api/runs", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+crashToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("launch: %s %s", resp.Status, answer)
		}
		var created struct{ ID int64 }
		json.Unmarshal(answer, &created)
		time.Sleep(time.Duration(100+rng.IntN(700)) * time.Millisecond)
		finished := storedDone(t, base, created.ID)
		srv.Process.Signal(syscall.SIGKILL)
		// The next dashboard starts at once, over the same store.
		next, nextBase := startServe(t, dbPath, dev)
		// It marks the run interrupted at start, or within moments if the
		// killed one was still on its way out.
		deadline := time.Now().Add(10 * time.Second)
		for runStatus(t, nextBase, created.ID) == db.StatusRunning {
			if time.Now().After(deadline) {
				t.Fatal("the restarted dashboard still shows the killed run running")
			}
			time.Sleep(100 * time.Millisecond)
		}
		next.Process.Signal(syscall.SIGTERM)
		next.Wait()
		srv.Wait()
		checkRecovered(t, dbPath, dev, original, finished)
		t.Logf("round %d: killed after %d stored steps", round+1, finished)
	}
}

// crashToken is the token of the dashboards startServe starts.
const crashToken = "crash-test-token"

// startServe starts `iolab serve` on a free loopback port and returns it
// with its base URL once it listens.
func startServe(t *testing.T, dbPath, dev string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "serve", "--listen", "127.0.0.1:0", "--db", dbPath, "--allow-target", dev, "--token", crashToken)
	cmd.Env = append(os.Environ(), "IOLAB_TEST_MAIN=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := regexp.MustCompile(`on (http://[^/ ]+)/`).FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
		io.Copy(io.Discard, out)
	}()
	select {
	case a := <-addr:
		return cmd, a
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("iolab serve did not start listening")
	}
	return nil, ""
}

// runStatus is run id's status as the dashboard at base says.
func runStatus(t *testing.T, base string, id int64) string {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("%s/api/runs/%d", base, id))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc db.Export
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return doc.Run.Status
}

// storedDone is how many of run id's steps the dashboard has stored done.
func storedDone(t *testing.T, base string, id int64) int {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("%s/api/runs/%d", base, id))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc db.Export
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range doc.Steps {
		if s.Status == sweep.StepDone {
			n++
		}
	}
	return n
}
