package sweep

import (
	"context"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/system"
	"iolab/bench/testdev"
)

// TestDisturbedStep runs a step on a loop device alone, then with a dd
// reading the same device beside it: only the second is flagged, with the
// device and the share of foreign I/O named.
func TestDisturbedStep(t *testing.T) {
	dev := testdev.Loop(t, 128<<20)
	cfg, err := fio.ParseArgs([]string{"--name=q", "--filename=" + dev, "--rw=randread", "--bs=4k", "--direct=1",
		"--ioengine=libaio", "--iodepth=4", "--runtime=1s", "--time_based"})
	if err != nil {
		t.Fatal(err)
	}
	plan := &Plan{Name: "q", Base: *cfg, Repeat: 1}
	rn := &bench.Runner{Sys: system.FS{}}
	run := func() StepResult {
		t.Helper()
		results, err := Run(context.Background(), rn, plan, PlanHooks{})
		if err != nil || len(results) != 1 || results[0].Status != StepDone {
			t.Fatalf("run: %v %+v", err, results)
		}
		return results[0]
	}
	quiet := run()
	if d := quiet.Disturbed(); d != "" {
		t.Fatalf("a step alone on its device is flagged: %s", d)
	}
	disk := quiet.Result.Groups[0].Disks[0]
	if _, share, ok := disk.Foreign(); !ok || share > 0.01 {
		t.Fatalf("alone: foreign share %.3f (ok %v), job bytes %d, disk sectors %d+%d", share, ok, disk.JobBytes, disk.ReadSectors, disk.WriteSectors)
	}

	// dd after dd, until killed, so the reads span the whole step.
	dd := exec.Command("sh", "-c", "while :; do dd if="+dev+" of=/dev/null bs=4k iflag=direct count=4096 status=none; done")
	dd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := dd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-dd.Process.Pid, syscall.SIGKILL)
		dd.Wait()
	}()
	time.Sleep(50 * time.Millisecond)
	busy := run()
	d := busy.Disturbed()
	if !strings.Contains(d, strings.TrimPrefix(dev, "/dev/")) || !strings.Contains(d, "another process") {
		t.Fatalf("a step with dd beside it: disturbed %q; disks %+v", d, busy.Result.Groups[0].Disks)
	}
}
