package fio

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/system"
	"iolab/bench/testdev"
)

// The errors family's probes run jobs that meet real I/O errors — on a
// disk with bad sectors (testdev.ModelDisk's Bad extents: a loop device
// over a FUSE file that fails the reads and writes touching them with
// EIO) — with fio and with iolab, and compare what each counted.

// badDisk is a 4 MiB disk whose 64 KiB at 1 MiB are bad: a job over its
// first 2 MiB in 4 KiB I/Os meets 16 errors.
func badDisk(t *testing.T) string {
	t.Helper()
	return testdev.ModelDisk(t, 4<<20, testdev.DiskModel{Bad: []testdev.Extent{{Off: 1 << 20, Len: 64 << 10}}})
}

// bothRun is one job (or job file) run by fio and by iolab: each one's
// report of its jobs and what each said as it went (fio's stderr lines,
// iolab's notices), and whether each failed.
type bothRun struct {
	fio, iolab             []JobReport
	fioSaid, iolabSaid     []string
	fioFailed, iolabFailed bool
}

// runBoth runs args with fio, then with iolab; before, when set, runs
// before each (to empty a filesystem the job fills).
func runBoth(t *testing.T, before func(), args ...string) bothRun {
	t.Helper()
	if before == nil {
		before = func() {}
	}
	var b bothRun
	// Each in a directory of its own: verify state files land there.
	dir := t.TempDir()
	t.Chdir(t.TempDir())
	out := filepath.Join(dir, "fio.json")
	cmd := exec.Command(lookFio(t), append([]string{"--output-format=json", "--output=" + out}, args...)...)
	cmd.Dir = dir
	before()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b.fioFailed = cmd.Run() != nil // fio, like iolab, exits 1 when a job fails
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("fio %v: %v\n%s", args, err, stderr.Bytes())
	}
	reps, err := ParseReports(bytes.NewReader(data))
	if err != nil || len(reps) == 0 {
		t.Fatalf("fio %v: %v\n%s", args, err, data)
	}
	b.fio = reps[len(reps)-1].Jobs
	b.fioSaid = lines(stderr.String())

	cfg, err := ParseArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	rn := &bench.Runner{Sys: system.FS{}, Interval: 100 * time.Millisecond, Notice: func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		b.iolabSaid = append(b.iolabSaid, msg)
	}}
	before()
	res, err := rn.Run(context.Background(), cfg)
	if res == nil {
		t.Fatalf("iolab %v: %v", args, err)
	}
	b.iolabFailed = err != nil
	b.iolab = NewReport(res, cfg, false).Jobs
	return b
}

func lines(s string) []string {
	var out []string
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// errorFigures are what a job's report says of its errors and I/O.
func errorFigures(r *JobReport) string {
	opt := func(p any) string {
		switch v := p.(type) {
		case *uint64:
			if v != nil {
				return fmt.Sprint(*v)
			}
		case *int:
			if v != nil {
				return fmt.Sprint(*v)
			}
		}
		return "-"
	}
	return fmt.Sprintf("error=%d total_err=%s first_error=%s read=%d/%d write=%d/%d",
		r.Error, opt(r.TotalErr), opt(r.FirstError), r.Read.IOBytes, r.Read.TotalIOs, r.Write.IOBytes, r.Write.TotalIOs)
}

// sameErrors runs the job with fio and iolab and checks that both count
// the same errors, move the same bytes, issue the same I/Os and fail or
// not alike; it returns iolab's figures of the first job.
func sameErrors(t *testing.T, before func(), args ...string) string {
	t.Helper()
	b := runBoth(t, before, args...)
	if len(b.fio) != len(b.iolab) {
		t.Fatalf("%v: fio reports %d jobs, iolab %d", args, len(b.fio), len(b.iolab))
	}
	for i := range b.fio {
		if f, g := errorFigures(&b.fio[i]), errorFigures(&b.iolab[i]); f != g {
			t.Errorf("%v:\nfio   %s\niolab %s", args, f, g)
		}
	}
	if b.fioFailed != b.iolabFailed {
		t.Errorf("%v: fio failed %v, iolab %v", args, b.fioFailed, b.iolabFailed)
	}
	return errorFigures(&b.iolab[0])
}

func init() {
	effects["continue_on_error"] = func(t *testing.T) {
		dev := badDisk(t)
		job := func(engine, rw, coe string) []string {
			return []string{"--name=e", "--filename=" + dev, "--ioengine=" + engine, "--rw=" + rw, "--bs=4k", "--size=2m",
				"--direct=1", "--continue_on_error=" + coe}
		}
		// Each value against fio, on a sync engine and an async one (a
		// sync engine counts an error of a class it goes on after even
		// when the error ends the job; an async one does not).
		for _, tc := range []struct {
			engine, rw, coe string
			want            string // iolab's figures, to show the value changed what the job did
		}{
			{"psync", "read", "none", "error=5 total_err=- first_error=- read=1048576/257 write=0/0"},
			{"io_uring", "read", "0", "error=5 total_err=- first_error=- read=1048576/257 write=0/0"},
			{"psync", "read", "read", "error=5 total_err=16 first_error=5 read=2031616/512 write=0/0"},
			{"libaio", "read", "io", "error=5 total_err=16 first_error=5 read=2031616/512 write=0/0"},
			{"io_uring", "write", "write", "error=5 total_err=16 first_error=5 read=0/0 write=2031616/512"},
			{"psync", "write", "all", "error=5 total_err=16 first_error=5 read=0/0 write=2031616/512"},
			{"io_uring", "read", "1", "error=5 total_err=16 first_error=5 read=2031616/512 write=0/0"},
			{"psync", "read", "write", "error=5 total_err=0 first_error=0 read=1048576/257 write=0/0"},
			{"io_uring", "read", "verify", "error=5 total_err=0 first_error=0 read=1048576/257 write=0/0"},
		} {
			t.Run(tc.engine+"-"+tc.rw+"-"+tc.coe, func(t *testing.T) {
				if got := sameErrors(t, nil, job(tc.engine, tc.rw, tc.coe)...); got != tc.want {
					t.Errorf("iolab %s, want %s", got, tc.want)
				}
			})
		}
		// A group's: the errors add up, and its error is the first job's
		// that has one.
		t.Run("group", func(t *testing.T) {
			got := sameErrors(t, nil, append(job("psync", "read", "read"), "--numjobs=2", "--group_reporting")...)
			if want := "error=5 total_err=32 first_error=5 read=4063232/1024 write=0/0"; got != want {
				t.Errorf("iolab %s, want %s", got, want)
			}
			got = sameErrors(t, nil, "--group_reporting", "--filename="+dev, "--bs=4k", "--direct=1", "--continue_on_error=read",
				"--name=clean", "--offset=2m", "--size=1m", "--name=bad", "--size=2m")
			if want := "error=5 total_err=16 first_error=5 read=3080192/768 write=0/0"; got != want {
				t.Errorf("iolab %s, want %s", got, want)
			}
		})
		// The failed writes are not read back: verify checks the others.
		t.Run("write-verify", func(t *testing.T) {
			got := sameErrors(t, nil, append(job("libaio", "write", "write"), "--iodepth=4", "--verify=crc32c")...)
			if want := "error=5 total_err=16 first_error=5 read=2031616/496 write=2031616/512"; got != want {
				t.Errorf("iolab %s, want %s", got, want)
			}
		})
		// A block that does not verify (EILSEQ) is of its own class. With
		// verify_fatal a bad checksum ends the job all the same, a bad
		// header does not (fio's verify_io_u returns before it looks).
		t.Run("verify", func(t *testing.T) {
			t.Chdir(t.TempDir())     // the writer's verify state
			zeros := file(t, 64<<10) // no block has a header
			bad := file(t, 64<<10)
			run(t, "--name=w", "--filename="+bad, "--rw=write", "--verify=crc32c", "--do_verify=0")
			f, err := os.OpenFile(bad, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, blk := range []int64{1, 5, 9} { // past each header: the checksums fail
				if _, err := f.WriteAt([]byte("XXXX"), blk*4096+1000); err != nil {
					t.Fatal(err)
				}
			}
			f.Close()
			for _, tc := range []struct{ file, fatal, want string }{
				{zeros, "0", "error=84 total_err=16 first_error=84 read=65536/16 write=0/0"},
				{zeros, "1", "error=84 total_err=16 first_error=84 read=65536/16 write=0/0"},
				{bad, "0", "error=84 total_err=3 first_error=84 read=65536/16 write=0/0"},
				{bad, "1", "error=84 total_err=1 first_error=84 read=8192/2 write=0/0"},
			} {
				got := sameErrors(t, nil, "--name=e", "--filename="+tc.file, "--rw=read", "--verify=crc32c", "--continue_on_error=verify", "--verify_fatal="+tc.fatal)
				if got != tc.want {
					t.Errorf("verify_fatal=%s: iolab %s, want %s", tc.fatal, got, tc.want)
				}
			}
		})
		refused(t, runErr(t, "--name=e", "--filename="+file(t, 4096), "--continue_on_error=yes"), "not one of none, read, write, io, verify, all")
	}
	effects["ignore_error"] = func(t *testing.T) {
		dev := badDisk(t)
		job := func(engine string, extra ...string) []string {
			return append([]string{"--name=e", "--filename=" + dev, "--ioengine=" + engine, "--rw=read", "--bs=4k", "--size=2m", "--direct=1"}, extra...)
		}
		for _, tc := range []struct {
			name string
			args []string
			want string
		}{
			// A list turns continue_on_error on for its class.
			{"alone", job("io_uring", "--ignore_error=EIO"), "error=5 total_err=16 first_error=5 read=2031616/512 write=0/0"},
			{"number", job("psync", "--ignore_error=5:28"), "error=5 total_err=16 first_error=5 read=2031616/512 write=0/0"},
			// A list replaces EIO and EILSEQ: EIO now ends the job, and a
			// sync engine counts it first.
			{"other-async", job("io_uring", "--continue_on_error=read", "--ignore_error=ENOSPC"), "error=5 total_err=0 first_error=0 read=1048576/257 write=0/0"},
			{"other-sync", job("psync", "--continue_on_error=read", "--ignore_error=ENOSPC"), "error=5 total_err=1 first_error=5 read=1048576/257 write=0/0"},
			// Only the write list: reads stay as they were.
			{"writes-only", job("psync", "--ignore_error=,EIO"), "error=5 total_err=0 first_error=0 read=1048576/257 write=0/0"},
			// continue_on_error after it sets the classes anew.
			{"then-none", job("psync", "--ignore_error=EIO", "--continue_on_error=none"), "error=5 total_err=- first_error=- read=1048576/257 write=0/0"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if got := sameErrors(t, nil, tc.args...); got != tc.want {
					t.Errorf("iolab %s, want %s", got, tc.want)
				}
			})
		}
		// A filesystem that fills up: ENOSPC, which ignore_error lets the
		// writes go on after; not by default (only EIO and EILSEQ).
		fs := scratchExt4(t, 32<<20)
		empty := func() { emptyDir(t, fs) }
		fill := func(extra ...string) []string {
			return append([]string{"--name=e", "--directory=" + fs, "--filename=fill", "--filesize=64m", "--bs=64k", "--direct=1",
				"--fallocate=none", "--continue_on_error=write"}, extra...)
		}
		// What fits depends on the filesystem (mkfs's defaults): equal to
		// fio's, and of this form.
		for _, tc := range []struct {
			name string
			args []string
			want string
		}{
			// All 1024 writes issued, those past the full disk counted.
			{"enospc", fill("--rw=write", "--ioengine=psync", "--ignore_error=,ENOSPC"), `^error=28 total_err=[1-9]\d* first_error=28 read=0/0 write=\d+/1024$`},
			{"enospc-random", fill("--rw=randwrite", "--ioengine=libaio", "--iodepth=8", "--ignore_error=,28"), `^error=28 total_err=[1-9]\d* first_error=28 read=0/0 write=\d+/1024$`},
			// The first ENOSPC ends the job, uncounted (an async engine).
			{"enospc-fatal", fill("--rw=write", "--ioengine=libaio", "--iodepth=1"), `^error=28 total_err=0 first_error=0 read=0/0 write=\d+/\d+$`},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if got := sameErrors(t, empty, tc.args...); !regexp.MustCompile(tc.want).MatchString(got) {
					t.Errorf("iolab %s, want %s", got, tc.want)
				}
			})
		}
		f := file(t, 4096)
		refused(t, runErr(t, "--name=e", "--filename="+f, "--ignore_error=EDQUOT"), "give its number")
		refused(t, runErr(t, "--name=e", "--filename="+f, "--ignore_error=EIO,EIO,EIO,EIO"), "one each for read, write and verify")
		refused(t, runErr(t, "--name=e", "--filename="+f, "--ignore_error=eio"), "not an errno")
	}
	effects["error_dump"] = func(t *testing.T) {
		dev := badDisk(t)
		job := []string{"--name=e", "--filename=" + dev, "--ioengine=libaio", "--iodepth=4", "--rw=read", "--bs=4k", "--size=2m",
			"--direct=1", "--continue_on_error=read"}
		dumped := regexp.MustCompile(`io_u error on file \S+: Input/output error: read offset=\d+, buflen=4096$`)
		count := func(said []string) (n int) {
			for _, l := range said {
				if dumped.MatchString(l) {
					n++
				}
			}
			return n
		}
		for _, dump := range []string{"0", "1"} {
			b := runBoth(t, nil, append(job, "--error_dump="+dump)...)
			want := 0
			if dump == "1" {
				want = 16 // one line per error
			}
			if f, g := count(b.fioSaid), count(b.iolabSaid); f != want || g != want {
				t.Errorf("error_dump=%s: fio reported %d errors, iolab %d; want %d\niolab said %q", dump, f, g, want, b.iolabSaid)
			}
		}
		// Whether the error's words show in the normal output's job line
		// (fio's verror): for an async job that went on, only with
		// error_dump.
		for _, tc := range []struct{ dump, want string }{{"0", "err= 5 (): pid="}, {"1", "err= 5 (job e: read of 4096 bytes at offset 1048576 on " + dev + ": input/output error): pid="}} {
			r := run(t, append(job, "--error_dump="+tc.dump)...)
			var b bytes.Buffer
			if err := WriteNormal(&b, r, nil); err != nil || !strings.Contains(b.String(), tc.want) {
				t.Errorf("error_dump=%s: the job line does not read %q:\n%s", tc.dump, tc.want, b.String())
			}
		}
	}
}
