package fio

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"iolab/bench"
	"iolab/bench/testdev"
)

// scratchExt4 makes a small ext4 filesystem on a loop device of size
// bytes and mounts it on a new directory: the test's own mount,
// unmounted and its device detached when the test ends.
func scratchExt4(t *testing.T, size int64) string {
	t.Helper()
	testdev.NeedLoopTools(t, "mkfs.ext4", "mount")
	dev := testdev.Loop(t, size)
	testdev.Run(t, "mkfs.ext4", "-q", "-F", dev)
	return testdev.MountTemp(t, dev)
}

// clearScan removes what a surface scan leaves in dir: its data file and
// the write phase's verify state.
func clearScan(t *testing.T, dir string) {
	t.Helper()
	states, _ := filepath.Glob(filepath.Join(dir, "local-*-verify.state"))
	for _, p := range append(states, filepath.Join(dir, "datafile.tmp")) {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
}

// TestSurfaceScanMatchesFio runs fio's surface-scan example (fill_device,
// then a create_serialize=0 reading phase that verifies what was written)
// in a 32 MiB scratch ext4 filesystem with fio 3.33 and with iolab: the
// same jobs in the same groups and the same JSON (json+), member by
// member; the write phase ends at ENOSPC without an error, having written
// what fio writes (within a few blocks: the filesystem's own metadata may
// land differently); the verify phase reads all of it and passes. Then a
// block of the file is changed on the filesystem, and the verify phase
// alone fails, naming it.
func TestSurfaceScanMatchesFio(t *testing.T) {
	fio := lookFio(t)
	mnt := scratchExt4(t, 32<<20)
	job, err := filepath.Abs(filepath.Join("testdata", "fill", "surface-scan.fio"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(mnt)
	fioOut := runFio(t, fio, mnt, "--output-format=json+", job)
	reps, err := ParseReports(bytes.NewReader(fioOut))
	if err != nil {
		t.Fatal(err)
	}
	fj := reps[len(reps)-1].Jobs
	clearScan(t, mnt)

	cfg, res, err := runExample(job)
	if err != nil {
		t.Fatalf("iolab: %v", err)
	}
	rep := NewReport(res, cfg, true)
	ours := writtenJSON(t, rep)
	// fio 3.33 leaves out options given without a value (see jsonDiffs).
	thread := []*jsonDiff{{path: `global options.thread`}}
	(&jsonComparison{t: t, extra: thread}).compare("", decodeOrdered(t, fioOut), decodeOrdered(t, ours))
	if t.Failed() {
		t.Logf("fio:\n%s\niolab:\n%s", fioOut, ours)
	}

	ij := rep.Jobs
	if len(ij) != 2 || len(fj) != 2 {
		t.Fatalf("iolab reports %v, fio %v", jobNames(ij), jobNames(fj))
	}
	for i := range ij {
		if ij[i].JobName != fj[i].JobName || ij[i].GroupID != fj[i].GroupID || ij[i].Error != 0 || fj[i].Error != 0 {
			t.Errorf("entry %d: iolab %s in group %d (error %d), fio %s in group %d (error %d)",
				i, ij[i].JobName, ij[i].GroupID, ij[i].Error, fj[i].JobName, fj[i].GroupID, fj[i].Error)
		}
	}
	jobs := resultJobs(res)
	for _, j := range jobs {
		if j.Error != "" {
			t.Errorf("%s failed: %s", j.Job.Name, j.Error)
		}
	}
	wrote, fioWrote := ij[0].Write.IOBytes, fj[0].Write.IOBytes
	if d := int64(wrote) - int64(fioWrote); d > 4<<16 || d < -4<<16 {
		t.Errorf("the write phase wrote %d bytes before ENOSPC, fio %d", wrote, fioWrote)
	}
	if wrote < 20<<20 {
		t.Errorf("the write phase wrote %d bytes: it stopped before the 32 MiB filesystem was full", wrote)
	}
	fi, err := os.Stat(filepath.Join(mnt, "datafile.tmp"))
	if err != nil || uint64(fi.Size()) != wrote {
		t.Errorf("the data file is %v bytes (%v), the write phase wrote %d", fi.Size(), err, wrote)
	}
	if ij[1].Read.IOBytes != wrote || fj[1].Read.IOBytes != fioWrote {
		t.Errorf("the verify phase read %d bytes of %d written (fio %d of %d)", ij[1].Read.IOBytes, wrote, fj[1].Read.IOBytes, fioWrote)
	}
	if v := jobs[1].Verify; v == nil || v.Failed != nil || v.Method != "meta" {
		t.Errorf("the clean file did not verify: %+v", v)
	}
	t.Logf("wrote %d bytes until ENOSPC (fio %d); verified %d", wrote, fioWrote, ij[1].Read.IOBytes)

	// A changed block is found by the verify phase alone.
	text, err := os.ReadFile(job)
	if err != nil {
		t.Fatal(err)
	}
	s := string(text)
	verifyOnly := s[:strings.Index(s, "[write-phase]")] + s[strings.Index(s, "[verify-phase]"):]
	verifyOnly = strings.Replace(verifyOnly, "stonewall\n", "", 1)
	vjob := filepath.Join(t.TempDir(), "verify-phase.fio")
	if err := os.WriteFile(vjob, []byte(verifyOnly), 0o644); err != nil {
		t.Fatal(err)
	}
	const bad = 5<<20 + 3*512 + 100
	corrupt(t, filepath.Join(mnt, "datafile.tmp"), bad)
	_, res, err = runExample(vjob)
	if err == nil || res == nil {
		t.Fatalf("the changed block passed: %v", err)
	}
	r := resultJobs(res)[0]
	if r.Verify == nil || r.Verify.Failed == nil {
		t.Fatalf("the verify phase failed (%v) without naming a block: %+v", err, r.Verify)
	}
	ve := r.Verify.Failed
	if ve.Offset != bad-100 || ve.IOOffset != 5<<20 || !strings.HasSuffix(ve.File, "datafile.tmp") || ve.Expected == ve.Received {
		t.Errorf("the failure does not name the changed interval (offset %d, I/O at %d): %+v", bad-100, 5<<20, ve)
	}
	if !strings.Contains(r.Error, fmt.Sprintf("offset %d", bad-100)) {
		t.Errorf("the job's error %q does not name offset %d", r.Error, bad-100)
	}
}

func init() {
	effects["fill_device"] = fillDeviceEffect
	effects["create_serialize"] = createSerializeEffect
}

// fillDeviceEffect writes a job with fill_fs (fill_device's alias) and
// no size into a scratch filesystem: the file grows until the filesystem
// is full and the job ends without an error; without fill_device the
// same job is refused for want of a size.
func fillDeviceEffect(t *testing.T) {
	mnt := scratchExt4(t, 16<<20)
	path := filepath.Join(mnt, "fill")
	args := []string{"--name=f", "--filename=" + path, "--rw=write", "--bs=64k", "--ioengine=psync", "--direct=1"}
	if _, _, err := runArgs(args); err == nil || !strings.Contains(err.Error(), "give --size") {
		t.Errorf("without fill_device or a size: %v, want a refusal asking for a size", err)
	}
	cfg, res, err := runArgs(append(args, "--fill_fs=1"))
	if err != nil {
		t.Fatalf("fill_fs: %v", err)
	}
	if !cfg.Groups[0].Jobs[0].FillDevice {
		t.Error("fill_fs did not set fill_device")
	}
	r := resultJobs(res)[0]
	fi, serr := os.Stat(path)
	if r.Error != "" || serr != nil || r.Dirs[bench.Write].Bytes < 10<<20 || int64(r.Dirs[bench.Write].Bytes) != fi.Size() {
		t.Errorf("fill_fs: error %q, wrote %d bytes, the file %v (%v)", r.Error, r.Dirs[bench.Write].Bytes, fi, serr)
	}
}

// createSerializeEffect reads, in a second group and without a size, the
// file the first group writes: with create_serialize=0 the reader's file
// is sized when its group starts, and it reads all of it; by default its
// files are worked out before the run, when there is no file yet, and
// the run is refused for want of a size.
func createSerializeEffect(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data")
	// fallocate=none: the writer's file is made empty when laid out,
	// and its writes make it.
	args := []string{"--ioengine=psync", "--bs=4k", "--filename=" + path, "--fallocate=none",
		"--name=w", "--rw=write", "--size=256k",
		"--name=r", "--stonewall", "--rw=read"}
	if _, _, err := runArgs(args); err == nil || !strings.Contains(err.Error(), "give --size") {
		t.Errorf("create_serialize=1: %v, want the reader refused for want of a size", err)
	}
	os.Remove(path)
	_, res, err := runArgs(append(args, "--create_serialize=0"))
	if err != nil {
		t.Fatalf("create_serialize=0: %v", err)
	}
	if r := resultJobs(res)[1]; r.Dirs[bench.Read].Bytes != 256<<10 {
		t.Errorf("create_serialize=0: the reader read %d bytes of the 256 KiB written", r.Dirs[bench.Read].Bytes)
	}
}

// TestFillDeviceVerifies fills a scratch filesystem with a job that
// verifies its own writes, at a depth of 8 on each engine: the writes
// that found the filesystem full are not read back (they were never
// written), everything else is, and the job passes.
func TestFillDeviceVerifies(t *testing.T) {
	mnt := scratchExt4(t, 16<<20)
	path := filepath.Join(mnt, "fill")
	for _, engine := range []string{"io_uring", "libaio", "psync"} {
		t.Run(engine, func(t *testing.T) {
			defer os.Remove(path)
			_, res, err := runArgs([]string{"--name=f", "--filename=" + path, "--rw=write", "--bs=64k", "--direct=1",
				"--ioengine=" + engine, "--iodepth=8", "--fill_device=1", "--verify=crc32c", "--verify_state_save=0"})
			if err != nil {
				t.Fatal(err)
			}
			r := resultJobs(res)[0]
			w := r.Dirs[bench.Write]
			if r.Error != "" || r.Verify == nil || r.Verify.Failed != nil || w.Bytes < 10<<20 || r.Verify.Reads.Bytes != w.Bytes {
				t.Errorf("error %q, wrote %d bytes, verify %+v", r.Error, w.Bytes, r.Verify)
			}
			if w.IOs <= w.Bytes/(64<<10) {
				t.Errorf("%d writes for %d bytes: the write that found the filesystem full is not counted (fio's total_ios counts it)", w.IOs, w.Bytes)
			}
		})
	}
}
