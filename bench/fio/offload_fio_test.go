package fio

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"iolab/bench/testdev"
)

// runFioOffload runs fio 3.33 on a job with io_submit_mode=offload. fio
// 3.33 starts its submit workers racing their own start-up: a worker that
// marks itself running before start_worker marks it idle has its mark
// overwritten, and workqueue_init waits for it forever (fixed after 3.42,
// "workqueue: fix threads stall when running with io_submit_mode
// offload"). On two busy CPUs most runs of iodepth=8 hang so. Run as
// SCHED_FIFO on one CPU, fio's job thread goes on until it waits for its
// workers, so each marks itself running after it was marked idle.
func runFioOffload(t *testing.T, fio, dir string, args ...string) []byte {
	t.Helper()
	for _, tool := range []string{"taskset", "chrt"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: fio 3.33's offload needs it not to hang", tool)
		}
	}
	return runFio(t, "taskset", dir, append([]string{"-c", "0", "chrt", "-f", "1", fio}, args...)...)
}

// TestOffloadMatchesFio runs jobs with io_submit_mode=offload under fio
// 3.33 and iolab: a size-bound job does the same I/Os, as fio's submit
// workers account them (each at depth 1, one I/O per submit and per
// reap), with libaio and with psync.
func TestOffloadMatchesFio(t *testing.T) {
	fio := lookFio(t)
	dev := testdev.Loop(t, 16<<20)
	for _, engine := range []string{"--ioengine=libaio --iodepth=8", "--ioengine=psync --iodepth=4", "--ioengine=libaio --iodepth=4 --rw=randrw --bsrange=4k-16k"} {
		t.Run(engine, func(t *testing.T) {
			args := append([]string{"--name=off", "--filename=" + dev, "--rw=randread", "--size=4m", "--bs=4k", "--direct=1", "--io_submit_mode=offload"}, strings.Fields(engine)...)
			reps, err := ParseReports(bytes.NewReader(runFioOffload(t, fio, t.TempDir(), append([]string{"--output-format=json"}, args...)...)))
			if err != nil {
				t.Fatal(err)
			}
			cfg, res := runIolab(t, args...)
			w, g := reps[0].Jobs[0], NewReport(res, cfg, false).Jobs[0]
			if g.Read.TotalIOs != w.Read.TotalIOs || g.Read.IOBytes != w.Read.IOBytes || g.Write.TotalIOs != w.Write.TotalIOs || g.Write.IOBytes != w.Write.IOBytes {
				t.Errorf("iolab read %d bytes in %d I/Os and wrote %d in %d, fio %d in %d and %d in %d",
					g.Read.IOBytes, g.Read.TotalIOs, g.Write.IOBytes, g.Write.TotalIOs, w.Read.IOBytes, w.Read.TotalIOs, w.Write.IOBytes, w.Write.TotalIOs)
			}
			for _, m := range []struct {
				name       string
				fio, iolab Dist
			}{{"IO depths", w.IODepthLevel, g.IODepthLevel}, {"submit", w.IODepthSubmit, g.IODepthSubmit}, {"complete", w.IODepthComplete, g.IODepthComplete}} {
				for _, b := range m.fio {
					if got, _ := m.iolab.Get(b.Key); got != b.Percent {
						t.Errorf("%s: iolab %v, fio %v", m.name, m.iolab, m.fio)
						break
					}
				}
			}
			// slat is the hand-over and the submit call, up to the worker's
			// issue: none for a sync engine, whose worker does the I/O in
			// the call.
			wantSlat := g.Read.TotalIOs
			if strings.Contains(engine, "psync") {
				wantSlat = 0
			}
			if g.Read.Slat.N != w.Read.Slat.N || g.Read.Slat.N != wantSlat {
				t.Errorf("slat: iolab %d samples, fio %d; want %d", g.Read.Slat.N, w.Read.Slat.N, wantSlat)
			}
			if g.Read.Lat.N != w.Read.Lat.N || g.Read.Clat.N != w.Read.Clat.N {
				t.Errorf("lat and clat: iolab %d and %d samples, fio %d and %d", g.Read.Lat.N, g.Read.Clat.N, w.Read.Lat.N, w.Read.Clat.N)
			}
		})
	}
}
