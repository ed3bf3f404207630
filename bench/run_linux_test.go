package bench_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/fio"
	"iolab/bench/testdev"
)

// TestJobFileRunsJobsTogether: the jobs of one group run at the same time;
// a stonewall job waits for them and reports in a group of its own.
func TestJobFileRunsJobsTogether(t *testing.T) {
	dir := t.TempDir()
	a, b, c := testdev.TempFileIn(t, dir, "a", 4<<20), testdev.TempFileIn(t, dir, "b", 4<<20), testdev.TempFileIn(t, dir, "c", 4<<20)
	jobfile := `; two jobs at once, then a third after a stonewall
[global]
ioengine=io_uring
direct=1
bs=4k
iodepth=4
runtime=400ms
time_based

[reader]
filename=` + a + `
rw=randread

# writes at the same time as reader
[writer]
filename=` + b + `
rw=randwrite

[after]
stonewall
filename=` + c + `
rw=read
runtime=200ms
`
	cfg, err := fio.ParseJobFile(strings.NewReader(jobfile), "two.fio")
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&bench.Runner{Interval: 100 * time.Millisecond}).Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Groups) != 2 || len(res.Groups[0].Jobs) != 2 || len(res.Groups[1].Jobs) != 1 {
		t.Fatalf("want groups of 2 and 1 jobs, got %d groups", len(res.Groups))
	}
	r, w, after := res.Groups[0].Jobs[0], res.Groups[0].Jobs[1], res.Groups[1].Jobs[0]
	end := func(j bench.JobResult) time.Time { return j.Start.Add(j.Runtime) }
	if !r.Start.Before(end(w)) || !w.Start.Before(end(r)) {
		t.Fatalf("reader [%v, %v] and writer [%v, %v] did not overlap", r.Start, end(r), w.Start, end(w))
	}
	if after.Start.Before(end(r)) || after.Start.Before(end(w)) {
		t.Fatal("the stonewall job started before the jobs before it ended")
	}
	if r.Dirs[bench.Read].IOs == 0 || w.Dirs[bench.Write].IOs == 0 || after.Dirs[bench.Read].IOs == 0 {
		t.Fatalf("I/Os: reader %d, writer %d, after %d", r.Dirs[bench.Read].IOs, w.Dirs[bench.Write].IOs, after.Dirs[bench.Read].IOs)
	}
	if after.GroupID != 1 || r.GroupID != 0 {
		t.Fatalf("group ids %d, %d", r.GroupID, after.GroupID)
	}
}

// TestGroupReportingMerges: numjobs=2 with group_reporting gives one result
// whose counts and histogram hold both clones' I/Os.
func TestGroupReportingMerges(t *testing.T) {
	path := testdev.TempFile(t, 4<<20)
	cfg, err := fio.ParseArgs([]string{"--name=g", "--filename=" + path, "--rw=randread", "--ioengine=libaio", "--direct=1",
		"--iodepth=2", "--numjobs=2", "--group_reporting", "--size=1m"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&bench.Runner{}).Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	jobs := res.Groups[0].Jobs
	if len(jobs) != 1 || jobs[0].Jobs != 2 {
		t.Fatalf("want one merged result of 2 jobs, got %d results", len(jobs))
	}
	// Each clone reads its 1 MiB once.
	if got := jobs[0].Dirs[bench.Read].IOs; got != 2*256 {
		t.Fatalf("%d reads, want %d", got, 2*256)
	}
	if n := jobs[0].Dirs[bench.Read].Clat.Hist.N(); n != 512 {
		t.Fatalf("merged histogram holds %d samples, want 512", n)
	}
}

// TestReportReadsAsFio: iolab's JSON output parses with the same code that
// parses fio's, and says the same thing as the result it came from.
func TestReportReadsAsFio(t *testing.T) {
	path := testdev.TempFile(t, 4<<20)
	args := []string{"--name=j", "--filename=" + path, "--rw=randrw", "--rwmixread=70", "--ioengine=io_uring", "--direct=1",
		"--iodepth=8", "--runtime=300ms", "--time_based", "--percentile_list=50:99"}
	cfg, err := fio.ParseArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&bench.Runner{Interval: 50 * time.Millisecond}).Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(fio.NewReport(res, cfg, true)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"iolab version"`) || strings.Contains(buf.String(), `"fio version"`) {
		t.Fatal(`want "iolab version" and no "fio version"`)
	}
	reps, err := fio.ParseReports(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 1 || len(reps[0].Jobs) != 1 {
		t.Fatalf("%d reports", len(reps))
	}
	job := reps[0].Jobs[0]
	r := res.Groups[0].Jobs[0]
	if job.JobName != "j" || job.JobOptions[0] != (bench.Option{Name: "name", Value: "j"}) {
		t.Fatalf("jobname %q, options %v", job.JobName, job.JobOptions)
	}
	for d, dr := range []fio.DirReport{job.Read, job.Write} {
		if dr.TotalIOs != r.Dirs[d].IOs || dr.TotalIOs == 0 {
			t.Fatalf("dir %d: total_ios %d, result %d", d, dr.TotalIOs, r.Dirs[d].IOs)
		}
		h, err := dr.Clat.Histogram()
		if err != nil {
			t.Fatal(err)
		}
		if h != r.Dirs[d].Clat.Hist {
			t.Fatalf("dir %d: bins do not rebuild the histogram", d)
		}
		p50, ok := dr.Clat.Percentile.Get(50)
		if !ok || p50 != r.Dirs[d].Clat.Hist.Percentiles([]float64{50})[0] {
			t.Fatalf("dir %d: p50 %d", d, p50)
		}
		if dr.IOPSSamples == 0 || dr.IOPSMin > uint64(dr.IOPSMax) {
			t.Fatalf("dir %d: iops samples %d, min %d max %d", d, dr.IOPSSamples, dr.IOPSMin, dr.IOPSMax)
		}
	}
	if job.UsrCPU+job.SysCPU <= 0 || job.Ctx == 0 {
		t.Fatalf("cpu usr %v sys %v ctx %d", job.UsrCPU, job.SysCPU, job.Ctx)
	}
}

// TestRunDisksInJobOrder: a group whose jobs use two loop devices lists
// the disks' statistics in the order the jobs name the devices, run after
// run, and fio's JSON keeps that order (the list was built from a map, so
// the disk stats and iostat columns changed places from run to run).
func TestRunDisksInJobOrder(t *testing.T) {
	first, second := testdev.Loop(t, 8<<20), testdev.Loop(t, 8<<20)
	// The device attached second is named first.
	cfg, err := fio.ParseArgs([]string{"--ioengine=psync", "--rw=randread", "--bs=4k", "--direct=1", "--runtime=30ms", "--time_based",
		"--name=b", "--filename=" + second, "--name=a", "--filename=" + first})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Base(second), filepath.Base(first)}
	for run := range 6 {
		res, err := (&bench.Runner{}).Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Groups) != 1 {
			t.Fatalf("%d groups, want 1", len(res.Groups))
		}
		var disks []string
		for _, d := range res.Groups[0].Disks {
			disks = append(disks, d.Name)
		}
		var reported []string
		for _, d := range fio.NewReport(res, cfg, false).DiskUtil {
			reported = append(reported, d.Name)
		}
		if !slices.Equal(disks, want) || !slices.Equal(reported, want) {
			t.Fatalf("run %d: disks %v, disk_util %v; want %v, the jobs' order", run, disks, reported, want)
		}
	}
}

// TestRunRefusesMountedDevice: a write job on a loop device whose ext4 is
// mounted is refused before any I/O, naming the mount point.
func TestRunRefusesMountedDevice(t *testing.T) {
	testdev.NeedLoopTools(t, "mkfs.ext4", "mount", "umount")
	dev := testdev.AttachLoop(t, 64<<20, nil, false)
	testdev.Run(t, "mkfs.ext4", "-q", dev)
	dir := testdev.MountTemp(t, dev)
	link := filepath.Join(t.TempDir(), "by-id-link")
	if err := os.Symlink(dev, link); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{dev, link} {
		cfg, err := fio.ParseArgs([]string{"--name=w", "--filename=" + target, "--rw=randwrite", "--ioengine=psync", "--size=1m"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = (&bench.Runner{}).Run(context.Background(), cfg)
		if err == nil || !strings.Contains(err.Error(), "mounted on "+dir) || !strings.Contains(err.Error(), "allow_mounted_write") {
			t.Fatalf("%s: want a refusal naming %s, got %v", target, dir, err)
		}
	}
}

// TestHipriWithoutPollQueues: hipri on a device without poll queues fails up
// front with the reason and the fix, not with I/O errors.
func TestHipriWithoutPollQueues(t *testing.T) {
	dev := testdev.Loop(t, 16<<20)
	cfg, err := fio.ParseArgs([]string{"--name=p", "--filename=" + dev, "--rw=randread", "--ioengine=io_uring", "--hipri", "--direct=1", "--size=1m"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&bench.Runner{}).Run(context.Background(), cfg)
	if err == nil || res != nil {
		t.Fatalf("want an up-front error, got result %v, error %v", res, err)
	}
	for _, want := range []string{"io_poll is 0", "poll_queues"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not say %q", err, want)
		}
	}
}

// TestRunCancelledKeepsResults: cancelling a run stops its jobs, and what
// they measured until then is kept.
func TestRunCancelledKeepsResults(t *testing.T) {
	path := testdev.TempFile(t, 4<<20)
	cfg, err := fio.ParseArgs([]string{"--name=c", "--filename=" + path, "--rw=randread", "--ioengine=io_uring", "--direct=1", "--runtime=60", "--time_based"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err := (&bench.Runner{}).Run(ctx, cfg)
	if err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("want a cancelled error, got %v", err)
	}
	r := res.Groups[0].Jobs[0]
	if r.Dirs[bench.Read].IOs == 0 || r.Runtime > 5*time.Second {
		t.Fatalf("%d reads in %v", r.Dirs[bench.Read].IOs, r.Runtime)
	}
}

// TestTargetErrors: each bad target gets one line saying what and why.
func TestTargetErrors(t *testing.T) {
	testdev.NeedLoopTools(t)
	small := testdev.Loop(t, 64<<10)
	missing := filepath.Join(t.TempDir(), "nope")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing without size", []string{"--filename=" + filepath.Join(t.TempDir(), "absent"), "--rw=read"}, "does not exist (or is empty); give --size"},
		{"missing directory", []string{"--directory=" + missing, "--rw=read", "--size=1m"}, "nope is not a directory"},
		{"too small", []string{"--filename=" + small, "--rw=read", "--size=1m"}, "is 64.0KiB but the job needs 1.00MiB"},
		{"unaligned direct", []string{"--filename=" + small, "--rw=read", "--direct=1", "--bs=1000"}, "multiples of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := fio.ParseArgs(append([]string{"--name=e", "--ioengine=psync"}, tt.args...))
			if err != nil {
				t.Fatal(err)
			}
			_, err = (&bench.Runner{}).Run(context.Background(), cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("want one line with %q, got %v", tt.want, err)
			}
		})
	}
}

// TestLayOutMissingFile: like fio, a missing file with a size is created
// and filled before the job runs.
func TestLayOutMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new")
	cfg, err := fio.ParseArgs([]string{"--name=l", "--filename=" + path, "--rw=read", "--ioengine=psync", "--size=2m", "--direct=1"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&bench.Runner{}).Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Size() != 2<<20 {
		t.Fatalf("laid-out file: %v, %v", st, err)
	}
	if got := res.Groups[0].Jobs[0].Dirs[bench.Read].IOs; got != 512 {
		t.Fatalf("%d reads of a 2 MiB file in 4 KiB blocks", got)
	}
}

// TestSQPollLatency: under SQPOLL each I/O is timed from when its SQE is
// published, so clat stays near the plain ring's instead of the idle
// thread's wake-up time (fio 3.33 reports ~1.5 s there).
func TestSQPollLatency(t *testing.T) {
	path := testdev.TempFile(t, 8<<20)
	p50 := func(extra ...string) uint64 {
		cfg, err := fio.ParseArgs(append([]string{"--name=s", "--filename=" + path, "--rw=randread", "--ioengine=io_uring", "--direct=1",
			"--iodepth=1", "--runtime=300ms", "--time_based"}, extra...))
		if err != nil {
			t.Fatal(err)
		}
		res, err := (&bench.Runner{}).Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		d := res.Groups[0].Jobs[0].Dirs[bench.Read]
		if d.IOs == 0 {
			t.Fatal("no I/O")
		}
		return d.Clat.Hist.Percentiles([]float64{50})[0]
	}
	// fio 3.33's bug shows up as ~1.5 s; 50 ms of slack keeps the check
	// steady on a loaded machine and still catches it.
	plain, sq := p50(), p50("--sqthread_poll")
	if sq > 10*plain+50_000_000 {
		t.Fatalf("SQPOLL clat p50 %dns against %dns without it", sq, plain)
	}
}

// TestDirectRefusedByFilesystem: ramfs has no O_DIRECT; the error says so
// and what to do instead of a bare EINVAL.
func TestDirectRefusedByFilesystem(t *testing.T) {
	testdev.NeedLoopTools(t, "mount", "umount")
	dir := t.TempDir()
	testdev.Run(t, "mount", "-t", "ramfs", "ramfs", dir)
	t.Cleanup(func() { testdev.Run(t, "umount", dir) })
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, make([]byte, 1<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := fio.ParseArgs([]string{"--name=d", "--filename=" + path, "--rw=read", "--ioengine=psync", "--direct=1"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = (&bench.Runner{}).Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "refuses O_DIRECT") || !strings.Contains(err.Error(), "--direct=0") {
		t.Fatalf("want the O_DIRECT refusal explained, got %v", err)
	}
}

// TestRampTimeIsNotMeasured: I/O during ramp_time is done but not counted.
func TestRampTimeIsNotMeasured(t *testing.T) {
	path := testdev.TempFile(t, 4<<20)
	cfg, err := fio.ParseArgs([]string{"--name=r", "--filename=" + path, "--rw=randread", "--ioengine=io_uring", "--direct=1",
		"--ramp_time=300ms", "--runtime=200ms", "--time_based"})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	res, err := (&bench.Runner{}).Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := res.Groups[0].Jobs[0]
	// The upper bound is loose: other test packages load the machine.
	if r.Runtime < 150*time.Millisecond || r.Runtime > time.Second {
		t.Fatalf("measured window %v, want about 200ms", r.Runtime)
	}
	if r.Start.Sub(start) < 250*time.Millisecond {
		t.Fatalf("window began %v after the run, before the 300ms ramp ended", r.Start.Sub(start))
	}
	if r.Dirs[bench.Read].IOs == 0 {
		t.Fatal("no I/O measured")
	}
}
