package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"iolab/bench/fio"
	"iolab/bench/testdev"
)

// TestCalibrateMatrix runs a one-round matrix on a loop device named by
// the user (fio and this binary as iolab, both as children) and checks
// the table BENCHMARKS.md is made from: one row per engine × depth ×
// numjobs (a sync engine only at iodepth 1), both tools' figures (of the
// job's two clones together), the ratio and the
// CPU per I/O, in the Markdown file and in JSON.
func TestCalibrateMatrix(t *testing.T) {
	if _, err := exec.LookPath("fio"); err != nil {
		t.Fatal("fio is not installed (the test command installs it)")
	}
	dev := testLoop(t, 64<<20)
	t.Setenv("IOLAB_TEST_MAIN", "1") // the children of this test binary act as iolab
	md := filepath.Join(t.TempDir(), "matrix.md")
	var out, errOut bytes.Buffer
	err := run([]string{"calibrate", "--matrix", "--targets", "dev=" + dev, "--engines", "psync,libaio", "--depths", "1,4", "--numjobs", "2",
		"--rounds", "2", "--duration", "200ms", "--markdown", md, "--output-format", "json", "--cpus", "0"}, &out, &errOut)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut.String())
	}
	// Which tool goes first alternates from round to round.
	if want := "dev psync iodepth=1 numjobs=2 round 1/2: fio\ndev psync iodepth=1 numjobs=2 round 1/2: iolab\n" +
		"dev psync iodepth=1 numjobs=2 round 2/2: iolab\ndev psync iodepth=1 numjobs=2 round 2/2: fio\n"; !strings.Contains(errOut.String(), want) {
		t.Errorf("rounds not alternating who goes first:\n%s", errOut.String())
	}
	var rows []fio.MatrixRow
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out.String())
	}
	want := []string{"psync/1×2", "libaio/1×2", "libaio/4×2"}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %v: %+v", len(rows), want, rows)
	}
	for i, r := range rows {
		if got := r.Engine + "/" + strconv.Itoa(r.Depth) + "×" + strconv.Itoa(r.Jobs); got != want[i] || r.Target != "dev" {
			t.Errorf("row %d is %s on %s, want %s on dev", i, got, r.Target, want[i])
		}
		if r.Fio.IOPS <= 0 || r.Iolab.IOPS <= 0 || r.Ratio <= 0 || r.Fio.CPUPerIONS <= 0 || r.Iolab.CPUPerIONS <= 0 || r.Iolab.ClatP50NS <= 0 ||
			r.Fio.FixedCPUNS <= 0 || r.Iolab.FixedCPUNS <= 0 || r.Iolab.LatMeanNS <= 0 {
			t.Errorf("row %d lacks figures: %+v", i, r)
		}
		if r.Ratio < r.RatioLo || r.Ratio > r.RatioHi {
			t.Errorf("row %d: ratio %g outside its interval [%g, %g]", i, r.Ratio, r.RatioLo, r.RatioHi)
		}
		if r.CPURatio <= 0 || r.CPURatio < r.CPURatioLo || r.CPURatio > r.CPURatioHi {
			t.Errorf("row %d: CPU ratio %g, its interval [%g, %g]", i, r.CPURatio, r.CPURatioLo, r.CPURatioHi)
		}
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n| dev |"); n != 3 || !strings.Contains(string(b), "| target | engine | iodepth | numjobs |") ||
		!strings.Contains(string(b), "| dev | libaio | 4 | 2 |") ||
		!strings.Contains(string(b), "iolab's timer ") ||
		!strings.Contains(string(b), " of 3 rows") ||
		!strings.Contains(string(b), "Every job of both tools runs with cpus_allowed=0 ") ||
		!strings.Contains(string(b), "Made by `iolab calibrate --matrix --rounds 2 --duration 200ms --targets dev="+dev+" --engines psync,libaio --depths 1,4 --numjobs 2 --cpus 0`") {
		t.Errorf("the Markdown table has %d rows:\n%s", n, b)
	}
}

// TestCalibrateLoopTarget: the loop target calibrate sets up for itself is
// a direct-I/O loop device over a file of random data, which the table's
// heading describes, and is gone after. Unless --dir says, the file is on
// /dev/shm when that is a tmpfs with room.
func TestCalibrateLoopTarget(t *testing.T) {
	testdev.NeedLoopTools(t)
	dir := t.TempDir()
	tg, err := setUpTarget("loop", dir, 4<<20)
	if err != nil {
		t.Fatal(err)
	}
	if want := "a direct-I/O loop device over a file of 4 MiB of random data in " + dir; !strings.HasPrefix(tg.Desc, want) {
		t.Errorf("described as %q, want %q…", tg.Desc, want)
	}
	if d := defaultLoopDir(); d != os.TempDir() && (d != "/dev/shm" || !onTmpfs(d)) {
		t.Errorf("default loop dir %q: neither a tmpfs /dev/shm nor %s", d, os.TempDir())
	}
	back, err := os.ReadFile(filepath.Join("/sys/block", filepath.Base(tg.Path), "loop", "dio"))
	if err != nil || strings.TrimSpace(string(back)) != "1" {
		tg.cleanup()
		t.Fatalf("%s: direct I/O %q (%v), want 1", tg.Path, back, err)
	}
	if err := tg.cleanup(); err != nil {
		t.Fatal(err)
	}
	// Other packages' tests attach loop devices at the same time, and one
	// may take the name this one had: what must be gone is a loop device
	// over this test's file.
	backs, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, b := range backs {
		if f, err := os.ReadFile(b); err == nil && strings.HasPrefix(string(f), dir+"/") {
			t.Errorf("%s is still attached over %s", filepath.Base(filepath.Dir(filepath.Dir(b))), strings.TrimSpace(string(f)))
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("files left behind: %v", left)
	}
	if _, err := setUpTarget("floppy", dir, 1); err == nil || !strings.Contains(err.Error(), "zram, zram-empty, loop or NAME=PATH") {
		t.Errorf("unknown target: %v", err)
	}
}

// TestCalibrateEmptyZramTarget: the zram-empty target is a zram device of
// its own, sized and never written (the kernel stores no page of it), which
// the heading says, and is gone after.
func TestCalibrateEmptyZramTarget(t *testing.T) {
	if _, err := os.Stat("/sys/class/zram-control/hot_add"); err != nil {
		if err := exec.Command("modprobe", "zram").Run(); err != nil {
			t.Skipf("no zram here (modprobe zram failed: %v)", err)
		}
	}
	tg, err := setUpTarget("zram-empty", "", 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(tg.Path)
	size, _ := os.ReadFile("/sys/block/" + name + "/disksize")
	mm, _ := os.ReadFile("/sys/block/" + name + "/mm_stat")
	fields := strings.Fields(string(mm))
	if err := tg.cleanup(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(name, "zram") || strings.TrimSpace(string(size)) != strconv.Itoa(64<<20) {
		t.Errorf("%s: disksize %q, want %d", tg.Path, size, 64<<20)
	}
	// mm_stat's first field is the data stored: nothing was written.
	if len(fields) == 0 || fields[0] != "0" {
		t.Errorf("%s: mm_stat %q: pages were written", tg.Path, mm)
	}
	if tg.Name != "zram-empty" || !strings.Contains(tg.Desc, "64 MiB never written") {
		t.Errorf("target %q described as %q", tg.Name, tg.Desc)
	}
	if _, err := os.Stat("/sys/block/" + name); err == nil {
		t.Errorf("%s is still there after the cleanup", tg.Path)
	}
}

// TestCalibrateMatrixBadCPUs: a --cpus fio's cpus_allowed would not take
// is refused before any target is set up.
func TestCalibrateMatrixBadCPUs(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run([]string{"calibrate", "--matrix", "--cpus", "x7"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "--cpus") || !strings.Contains(err.Error(), "not a CPU number") {
		t.Fatalf("--cpus x7: %v", err)
	}
	if strings.Contains(errOut.String(), "setting up") {
		t.Errorf("targets were set up before the refusal:\n%s", errOut.String())
	}
}
