package fio

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"iolab/bench"
	"iolab/bench/system"
	"iolab/bench/testdev"
)

// fioCount is one job's (or group's) bytes and I/Os per direction, as
// fio's JSON reports them (io_bytes, total_ios).
type fioCount struct {
	Group int
	Bytes [2]uint64
	IOs   [2]uint64
}

// fioCounts runs fio on a job file and returns its jobs' counts.
func fioCounts(t *testing.T, fio, jobFile string) []fioCount {
	t.Helper()
	cmd := exec.Command(fio, "--output-format=json", jobFile)
	cmd.Dir = filepath.Dir(jobFile)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fio: %v\n%s", err, out)
	}
	var doc struct {
		Jobs []struct {
			GroupID int `json:"groupid"`
			Read    struct {
				IOBytes  uint64 `json:"io_bytes"`
				TotalIOs uint64 `json:"total_ios"`
			} `json:"read"`
			Write struct {
				IOBytes  uint64 `json:"io_bytes"`
				TotalIOs uint64 `json:"total_ios"`
			} `json:"write"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatalf("fio's JSON: %v\n%s", err, out)
	}
	var counts []fioCount
	for _, j := range doc.Jobs {
		counts = append(counts, fioCount{Group: j.GroupID, Bytes: [2]uint64{j.Read.IOBytes, j.Write.IOBytes},
			IOs: [2]uint64{j.Read.TotalIOs, j.Write.TotalIOs}})
	}
	return counts
}

// iolabCounts runs the job file with iolab, in its directory.
func iolabCounts(t *testing.T, jobFile string) []fioCount {
	t.Helper()
	f, err := os.Open(jobFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := ParseJobFile(f, jobFile)
	if err != nil {
		t.Fatal(err)
	}
	res, err := (&bench.Runner{Sys: system.FS{}}).Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var counts []fioCount
	for _, g := range res.Groups {
		for _, j := range g.Jobs {
			counts = append(counts, fioCount{Group: g.ID, Bytes: [2]uint64{j.Dirs[bench.Read].Bytes, j.Dirs[bench.Write].Bytes},
				IOs: [2]uint64{j.Dirs[bench.Read].IOs, j.Dirs[bench.Write].IOs}})
		}
	}
	return counts
}

// filesLeft lists a directory's files, but for the job file.
func filesLeft(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.Name() != "job.fio" {
			out = append(out, e.Name())
		}
	}
	return out
}

// inProcess serialises the runs a test makes in this process.
var inProcess sync.Mutex

// TestFilesLikeFio runs job files that use the file, size and offset
// options with fio and with iolab, each in a directory of its own, and
// compares what fio's JSON says (the jobs and their groups, io_bytes and
// total_ios: the random sizes and directions are fio's draws) and the
// files each leaves behind.
func TestFilesLikeFio(t *testing.T) {
	fio := lookFio(t)
	for _, tc := range []struct {
		name string
		job  string
	}{
		{name: "nrfiles in a directory", job: "[a]\nnrfiles=3\nsize=1m\nrw=read\n[b]\nfilesize=64k\nnrfiles=2\nrw=randwrite\n"},
		{name: "filename_format and clones", job: "[a]\nnrfiles=2\nnumjobs=2\nsize=128k\nfilename_format=x.$jobnum.$filenum.$jobname\nrw=write\n"},
		{name: "filename list", job: "[a]\nfilename=f1:f2\\:x\nsize=256k\nrw=write\nbs=8k\n"},
		{name: "size not a multiple of bs", job: "[a]\nfilename=f\nsize=10k\nrw=read\n[b]\nstonewall\nfilename=f\nsize=10k\nrw=randread\n"},
		{name: "file_service_type", job: "[a]\nnrfiles=4\nfile_service_type=sequential\nsize=256k\nrw=randread\n[b]\nnrfiles=3\nfile_service_type=random:2\nfilesize=64k\nrw=read\n"},
		{name: "size percent", job: "[a]\nfilename=f\nfilesize=1m\nsize=50%\nrw=read\n"},
		{name: "offset_increment", job: "[a]\nfilename=f\nfilesize=1m\nsize=256k\noffset_increment=256k\nnumjobs=3\nrw=write\n"},
		{name: "strided zones", job: "[a]\nfilename=f\nsize=2m\nzonemode=strided\nzonesize=64k\nzonerange=256k\nzoneskip=256k\nrw=read\n"},
		{name: "rw modifiers", job: "[a]\nfilename=f\nsize=1m\nrw=randread:8\n[b]\nfilename=g\nsize=1m\nrw=write:4k\n[c]\nfilename=h\nsize=256k\nrw=randread:4\nrw_sequencer=identical\n"},
		{name: "number_ios and loops", job: "[a]\nfilename=f\nsize=1m\nnumber_ios=10\nloops=3\n[b]\nfilename=g\nsize=256k\nloops=3\nrw=randread\n"},
		{name: "blockalign", job: "[a]\nfilename=f\nsize=256k\nrw=randread\nba=1k\n"},
		{name: "unlink and create_on_open", job: "[a]\nsize=64k\nunlink=1\nrw=write\n[b]\ncreate_on_open=1\nsize=64k\nrw=write\n"},
		{name: "bs per direction", job: "[a]\nfilename=f\nsize=1m\nbs=4k,64k\nrw=read\n[b]\nfilename=g\nsize=1m\nbs=4k,64k\nrw=write\n" +
			"[c]\nfilename=h\nsize=1m\nbs=4k,64k\nrw=randrw\n"},
		{name: "bsrange", job: "[a]\nfilename=f\nsize=1m\nbsrange=4k-64k\nrw=read\n"},
		{name: "bssplit", job: "[a]\nfilename=f\nsize=1m\nbssplit=4k/10:64k/50:16k/40\nrw=randread\n"},
		{name: "file_service_type=random", job: "[a]\nnrfiles=3\nfilesize=256k\nfile_service_type=random\nrw=randrw\nbsrange=4k-32k\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// fio runs alongside the other cases; iolab's runs, in this
			// process, one at a time (a run owns GOMAXPROCS and the GC).
			t.Parallel()
			job := "[global]\nioengine=psync\ndirectory=@DIR@\n" + tc.job
			var counts [2][]fioCount
			var names [2][]string
			for i := range 2 {
				dir := t.TempDir()
				path := filepath.Join(dir, "job.fio")
				if err := os.WriteFile(path, []byte(strings.ReplaceAll(job, "@DIR@", dir)), 0o644); err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					counts[i] = fioCounts(t, fio, path)
				} else {
					inProcess.Lock()
					counts[i] = iolabCounts(t, path)
					inProcess.Unlock()
				}
				names[i] = filesLeft(t, dir)
			}
			if !slices.Equal(counts[0], counts[1]) {
				t.Errorf("jobs (group, read and write bytes, I/Os):\n  fio   %v\n  iolab %v", counts[0], counts[1])
			}
			if !slices.Equal(names[0], names[1]) {
				t.Errorf("files left:\n  fio   %v\n  iolab %v", names[0], names[1])
			}
		})
	}
}

// TestSizePercentOnDevice: size=100% (and 50%) of a device moves what fio
// moves.
func TestSizePercentOnDevice(t *testing.T) {
	fio := lookFio(t)
	dev := loopDevice(t, 4<<20)
	for _, pct := range []string{"100%", "50%"} {
		t.Run(pct, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "job.fio")
			job := fmt.Sprintf("[a]\nioengine=psync\nfilename=%s\nsize=%s\nbs=64k\nrw=read\ndirect=1\n", dev, pct)
			if err := os.WriteFile(path, []byte(job), 0o644); err != nil {
				t.Fatal(err)
			}
			want, got := fioCounts(t, fio, path), iolabCounts(t, path)
			if !slices.Equal(want, got) {
				t.Errorf("size=%s of a 4 MiB device: fio %v, iolab %v", pct, want, got)
			}
			if pct == "100%" && (len(got) != 1 || got[0].Bytes[bench.Read] != 4<<20) {
				t.Errorf("size=100%%: %v, want the whole 4 MiB", got)
			}
		})
	}
}

func loopDevice(t *testing.T, size int64) string {
	t.Helper()
	testdev.NeedLoopTools(t)
	return testdev.Loop(t, size)
}

// TestBSSplitRequestSizesLikeFio: bssplit's mix shows in the device's own
// counters. fio and iolab read the same loop device with direct I/O, one
// request at a time; the sectors per request in /proc/diskstats (iostat's
// rareq-sz) agree with each other and with the mix's mean, and the sizes
// of the reads, traced, have the mix's shares.
func TestBSSplitRequestSizesLikeFio(t *testing.T) {
	fio := lookFio(t)
	dev := loopDevice(t, 16<<20)
	disk := filepath.Base(dev)
	const split = "4k/10:64k/50:16k/40"
	// The mean request: 0.1×4k + 0.5×64k + 0.4×16k = 38.8 KiB.
	const mean = (0.1*4 + 0.5*64 + 0.4*16) * 1024 / 512
	args := []string{"--name=split", "--ioengine=psync", "--direct=1", "--rw=read", "--size=16m", "--bssplit=" + split, "--filename=" + dev}
	sectorsPerIO := func(t *testing.T, run func()) float64 {
		before, err := system.FS{}.DiskStats()
		if err != nil {
			t.Fatal(err)
		}
		run()
		after, _ := system.FS{}.DiskStats()
		ios := after[disk].ReadIOs - before[disk].ReadIOs
		if ios == 0 {
			t.Fatalf("no reads on %s", disk)
		}
		return float64(after[disk].ReadSectors-before[disk].ReadSectors) / float64(ios)
	}
	fioAvg := sectorsPerIO(t, func() {
		if out, err := exec.Command(fio, append([]string{"--output-format=json"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("fio: %v\n%s", err, out)
		}
	})
	iolabAvg := sectorsPerIO(t, func() { run(t, args...) })
	t.Logf("sectors per read: fio %.1f, iolab %.1f, the mix's mean %.1f", fioAvg, iolabAvg, mean)
	for name, avg := range map[string]float64{"fio": fioAvg, "iolab": iolabAvg} {
		if avg < mean*0.85 || avg > mean*1.15 {
			t.Errorf("%s: %.1f sectors per read, want about %.1f", name, avg, mean)
		}
	}
	if iolabAvg < fioAvg*0.85 || iolabAvg > fioAvg*1.15 {
		t.Errorf("sectors per read: iolab %.1f, fio %.1f", iolabAvg, fioAvg)
	}
	sizes := callSizes(ioCalls(traced(t, "pread64", args...)))
	total := sizes[4096] + sizes[16384] + sizes[65536]
	for bs, share := range map[int64]float64{4096: 0.10, 16384: 0.40, 65536: 0.50} {
		if got := float64(sizes[bs]) / float64(total); got < share-0.08 || got > share+0.08 {
			t.Errorf("reads of %d bytes: %.2f of them, want about %.2f (%v)", bs, got, share, sizes)
		}
	}
}
