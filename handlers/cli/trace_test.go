package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"iolab/bench/testdev"
	"iolab/db"
)

// TestTraceBlockOutput: `iolab run --trace-block` prints each traced
// direction's parts after its lat lines, and puts them in the JSON's iolab
// key.
func TestTraceBlockOutput(t *testing.T) {
	dev := testdev.LoopInMemory(t, 32<<20)
	var out, errOut bytes.Buffer
	err := run([]string{"run", "--no-save", "--trace-block", "--output-format=json,normal", "--name=r", "--filename=" + dev,
		"--rw=randread", "--direct=1", "--ioengine=io_uring", "--iodepth=4", "--runtime=500ms", "--time_based"}, &out, &errOut)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	text := out.String()
	if j := strings.Index(text, "{\n"); j > 0 {
		text = text[j:] // the lines fio prints as the jobs start
	}
	i := strings.Index(text, "\n}\n")
	if i < 0 {
		t.Fatalf("no JSON document first:\n%s", text)
	}
	var doc struct {
		Jobs []struct {
			IOLab struct {
				Read struct {
					Block struct {
						Device   struct{ N uint64 } `json:"device_ns"`
						OneToOne uint64             `json:"one_to_one"`
					} `json:"block"`
				} `json:"read"`
			} `json:"iolab"`
			Read struct {
				TotalIOs uint64 `json:"total_ios"`
			} `json:"read"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(text[:i+3]), &doc); err != nil || len(doc.Jobs) != 1 {
		t.Fatalf("JSON: %v", err)
	}
	b := doc.Jobs[0].IOLab.Read.Block
	if b.OneToOne == 0 || b.Device.N != b.OneToOne || b.OneToOne > doc.Jobs[0].Read.TotalIOs {
		t.Errorf("iolab.read.block: one-to-one %d, device's n %d, of %d reads", b.OneToOne, b.Device.N, doc.Jobs[0].Read.TotalIOs)
	}
	normal := text[i+3:]
	lat := strings.Index(normal, "     lat (")
	blk := strings.Index(normal, "    block (")
	if lat < 0 || blk < lat || !strings.Contains(normal, "    block I/Os : one-to-one=") || !strings.Contains(normal, "lat p99=") {
		t.Errorf("normal output without the block lines after lat:\n%s", normal)
	}
}

// TestTraceBlockRefusals: a file on tmpfs (nothing stored, nothing run),
// --on, and a process without the rights are refused, each saying why.
func TestTraceBlockRefusals(t *testing.T) {
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "iolab.db")
	shm, err := os.MkdirTemp("/dev/shm", "iolab-test-")
	if err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	file := testdev.TempFileIn(t, shm, "target", 1<<20)
	var out, errOut bytes.Buffer
	err = run([]string{"run", "--db", dbPath, "--trace-block", "--name=r", "--filename=" + file, "--rw=read", "--size=1m"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "--trace-block needs a block device under its targets; "+file+" is a file on tmpfs") {
		t.Errorf("a file target: %v", err)
	}
	if store, err := db.Open(context.Background(), dbPath); err == nil {
		runs, _ := store.ListRuns(context.Background(), db.RunFilter{})
		store.Close()
		if len(runs) != 0 {
			t.Errorf("%d runs stored for a refused plan", len(runs))
		}
	}

	err = run([]string{"run", "--trace-block", "--on", "local", "--dashboard", "http://127.0.0.1:1", "--name=r", "--filename=/dev/null", "--rw=read"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "--on runs the plan on the dashboard's hosts") {
		t.Errorf("--on: %v", err)
	}

	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("no setpriv here")
	}
	dev := testdev.LoopInMemory(t, 1<<20)
	cmd := exec.Command("setpriv", "--inh-caps=-all", "--bounding-set=-all", "--", os.Args[0], "run", "--no-save", "--trace-block",
		"--name=r", "--filename="+dev, "--rw=read", "--size=64k")
	cmd.Env = append(os.Environ(), "IOLAB_TEST_MAIN=1")
	msg, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "needs root (CAP_BPF and CAP_PERFMON)") || strings.Contains(string(msg), "READ:") {
		t.Errorf("without capabilities (%v): %s", err, msg)
	}
}

// TestTraceBlockKilledLeavesNothing: iolab killed (SIGKILL) in the middle
// of a traced run leaves none of its BPF programs loaded.
func TestTraceBlockKilledLeavesNothing(t *testing.T) {
	dev := testdev.LoopInMemory(t, 16<<20)
	cmd := exec.Command(os.Args[0], "run", "--no-save", "--trace-block", "--name=r", "--filename="+dev,
		"--rw=randread", "--direct=1", "--runtime=20s", "--time_based")
	cmd.Env = append(os.Environ(), "IOLAB_TEST_MAIN=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	suffix := "_" + strconv.Itoa(cmd.Process.Pid)
	deadline := time.Now().Add(10 * time.Second)
	for testdev.ProgramsEnding(t, suffix) == 0 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the traced run loaded no program in 10 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The plan's check loads the programs and lets them go; the run's
	// phase loads them again: wait for them past the check.
	time.Sleep(300 * time.Millisecond)
	for testdev.ProgramsEnding(t, suffix) == 0 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("no program while the traced run runs")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	deadline = time.Now().Add(5 * time.Second)
	for testdev.ProgramsEnding(t, suffix) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the killed run's programs are still loaded")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
