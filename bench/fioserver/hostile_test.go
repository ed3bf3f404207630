package fioserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"iolab/bench/fio"
	"iolab/bench/testdev"
)

// TestCheckHostileTargets replays testdev.HostileTargets through the fio
// server check: each target is refused, naming the path, whether the job
// file is written by iolab (Runner.Check, when iolab's parser takes the
// job) or comes as text (checkJobFile); the host's allowed entries, as
// listed, are accepted. Nothing is opened: the check compares names, and
// a fio host's files are on another machine. The Swap cases (an allowed
// entry replaced by a way to the victim while the run is queued) happen
// on that machine, out of iolab's reach: preventing them is the host's
// (see the package doc): their filenames that are allowed entries are
// accepted; a data-directory file is a relative path, refused.
func TestCheckHostileTargets(t *testing.T) {
	dir := t.TempDir()
	env := testdev.HostileEnv{
		DataDir:     filepath.Join(dir, "data"),
		Allowed:     "/dev/iolab-allowed",
		AllowedFile: filepath.Join(dir, "allowed.img"),
		AllowedLink: "/dev/disk/by-id/iolab-allowed",
		Victim:      "/dev/iolab-victim",
		VictimFile:  filepath.Join(dir, "victim.img"),
	}
	if err := os.Mkdir(env.DataDir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{env.AllowedFile, env.VictimFile} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	h := Host{Name: "fioh", Addr: "10.213.1.2", AllowTargets: []string{env.Allowed, env.AllowedFile, env.AllowedLink}}
	allow, _ := ParseAllowList("10.213.0.0/16")
	r := &Runner{Allow: allow}
	for _, tt := range testdev.HostileTargets {
		t.Run(tt.Name, func(t *testing.T) {
			filename := tt.Filename(env)
			text := fmt.Sprintf("[hostile]\nfilename=%s\nrw=write\nbs=4k\nsize=1m\nallow_file_create=0\n", filename)
			args := []string{"--name=hostile", "--filename=" + filename, "--rw=write", "--size=1m"}
			named := filename
			if tt.Directory != nil {
				d := tt.Directory(env)
				text += "directory=" + d + "\n"
				args = append(args, "--directory="+d)
				named = "directory=" + d
			}
			err := checkJobFile(h, text)
			if tt.Swap != nil && slices.Contains(h.AllowTargets, filename) {
				if err != nil {
					t.Fatalf("an allowed entry, as listed, refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrTarget) || !strings.Contains(err.Error(), named) || !strings.Contains(err.Error(), "job hostile") {
				t.Fatalf("job file: err = %v; want %v naming job hostile and %s", err, ErrTarget, named)
			}
			cfg, perr := fio.ParseArgs(args)
			if perr != nil {
				t.Logf("iolab's parser refuses it already: %v", perr)
				return
			}
			if err := r.Check(context.Background(), []Host{h}, cfg); !errors.Is(err, ErrTarget) || !strings.Contains(err.Error(), named) {
				t.Fatalf("Runner.Check: err = %v; want %v naming %s", err, ErrTarget, named)
			}
		})
	}
	for _, e := range h.AllowTargets {
		cfg, err := fio.ParseArgs([]string{"--name=ok", "--filename=" + e, "--rw=write", "--size=1m"})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Check(context.Background(), []Host{h}, cfg); err != nil {
			t.Errorf("allowed entry %s: %v", e, err)
		}
	}
	// A ':' list even of allowed entries: one file per job.
	if err := checkJobFile(h, "[both]\nfilename="+env.Allowed+":"+env.AllowedFile+"\n"); !errors.Is(err, ErrTarget) || !strings.Contains(err.Error(), "a ':' list of files") {
		t.Errorf("a list of allowed entries: %v", err)
	}
	// A victim in [global] is refused though the job names its own file.
	if err := checkJobFile(h, "[global]\nfilename="+env.Victim+"\n[j]\nfilename="+env.Allowed+"\n"); !errors.Is(err, ErrTarget) || !strings.Contains(err.Error(), "[global] of job j: filename="+env.Victim) {
		t.Errorf("a victim in [global]: %v", err)
	}
}

// TestCheckAllowedTarget: what a fio host's allowed entry may be, and a
// stored entry that is not one of them is never matched.
func TestCheckAllowedTarget(t *testing.T) {
	for _, ok := range []string{"/dev/nvme0n1", "/dev/disk/by-id/nvme-X_1", "/srv/fio/test.dat", "/dev/shm/x"} {
		if err := CheckAllowedTarget(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, tt := range []struct{ entry, want string }{
		{"", "empty"},
		{"dev/sda", "not an absolute path"},
		{"/dev/sda:/dev/sdb", "':'"},
		{`/dev/a\:b`, "':'"},
		{"/dev/loop$ncpus", "'$'"},
		{"/dev/sda;x", "';'"},
		{"/dev/sda#x", "'#'"},
		{"/dev//sda", "write /dev/sda"},
		{"/dev/sda/", "write /dev/sda"},
		{"/dev/x/../sda", "write /dev/sda"},
		{"/proc/self/root/dev/sda", "under /proc"},
		{"/sys/block/sda/queue/scheduler", "under /sys"},
		{"/dev/fd/3", "under /dev/fd"},
		{"/dev", "a directory"},
		{"/", "a directory"},
		{"/dev/sd a", "blanks"},
	} {
		if err := CheckAllowedTarget(tt.entry); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: %v; want an error containing %q", tt.entry, err, tt.want)
		}
	}
	// Stored before entries were checked: listed, never matched.
	h := Host{Name: "old", AllowTargets: []string{"/dev//sda"}}
	if err := checkJobFile(h, "[j]\nfilename=/dev//sda\n"); !errors.Is(err, ErrTarget) || !strings.Contains(err.Error(), "allows no file or device") ||
		!strings.Contains(err.Error(), `allowed target "/dev//sda": not written plainly (no //, /./, .. or trailing /): write /dev/sda: not taken`) {
		t.Errorf("a stored entry written otherwise: %v", err)
	}
}

// TestCheckOptionsReach: options that make fio open other files, make up
// file names, run programs or write kernel settings on the host are
// refused, each named with its value; their harmless values are not.
func TestCheckOptionsReach(t *testing.T) {
	h := Host{Name: "fioh", Addr: "10.213.1.2", AllowTargets: []string{"/dev/sdz"}}
	for _, tt := range []struct {
		opts string // lines of the job's section, after filename
		want string // in the error; "" for allowed
	}{
		{"rw=randwrite\nbs=4k\nsize=1m\nnumjobs=4\ndirect=1", ""},
		{"write_bw_log=/etc/cron.d/x", "write_bw_log=/etc/cron.d/x: opens another file on the host"},
		{"write_lat_log", "job j: write_lat_log: opens another file on the host"},
		{"write_iops_log=iops", "write_iops_log=iops: opens another file"},
		{"write_hist_log=h", "write_hist_log=h: opens another file"},
		{"per_job_logs=0", "per_job_logs=0: opens another file"},
		{"ioscheduler=none", "ioscheduler=none: writes kernel settings on the host"},
		{"verify_dump=1", "verify_dump=1: opens another file"},
		{"verify_dump=0", ""},
		{"rw=write\nverify=crc32c", "verify_state_save=1: fio's default with verify"},
		{"rw=write\nverify=crc32c\nverify_state_save=0", ""},
		{"verify_state_load=1", "verify_state_load=1: opens another file"},
		{"buffer_pattern='/etc/shadow'", "buffer_pattern='/etc/shadow': opens another file"},
		{"buffer_pattern=0xdeadbeef", ""},
		{"nrfiles=2", "nrfiles=2: makes up a file name"},
		{"nrfiles=1", ""},
		{"filename_format=$jobname.$filenum", "filename_format=$jobname.$filenum: makes up a file name"},
		{"directory=/srv", "directory=/srv: makes up a file name"},
		{"exec_prerun=rm -rf /", "exec_prerun=rm -rf /: runs a program on the host"},
		{"exec_postrun=sh", "exec_postrun=sh: runs a program"},
		{"ioengine=exec", "ioengine=exec: runs a program"},
		{"ioengine=external:/tmp/x.so", "ioengine=external:/tmp/x.so: runs a program"},
		{"ioengine=io_uring", ""},
		{"read_iolog=/tmp/log", "read_iolog=/tmp/log: opens another file"},
		{"write_iolog=/tmp/log", "write_iolog=/tmp/log: opens another file"},
		{"replay_redirect=/dev/sda", "replay_redirect=/dev/sda: opens another file"},
		{"trigger=reboot", "trigger=reboot: runs a program"},
		{"cgroup=x", "cgroup=x: writes kernel settings"},
		{"allow_mounted_write=1", "allow_mounted_write=1: turns off fio's own check on the host"},
		{"allow_mounted_write=0", ""},
		{"opendir=/srv", "opendir=/srv: makes up a file name"},
		{"include /etc/other.fio", "include /etc/other.fio: an option iolab does not know"},
		{"not_an_option=1", "not_an_option=1: an option iolab does not know"},
	} {
		t.Run(tt.opts, func(t *testing.T) {
			err := checkJobFile(h, "[j]\nfilename=/dev/sdz\nallow_file_create=0\n"+tt.opts+"\n")
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrTarget) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "the host allows /dev/sdz") {
				t.Fatalf("err = %v; want %v containing %q and the host's entries", err, ErrTarget, tt.want)
			}
		})
	}
	// A device missing on the host must not become a file in its /dev:
	// Runner.Check's job file says allow_file_create=0, a job file
	// without it is refused.
	if err := checkJobFile(h, "[j]\nfilename=/dev/sdz\nrw=write\n"); !errors.Is(err, ErrTarget) || !strings.Contains(err.Error(), "job j: filename=/dev/sdz without allow_file_create=0") {
		t.Errorf("a device without allow_file_create=0: %v", err)
	}
	allow, _ := ParseAllowList("10.213.0.0/16")
	cfg, err := fio.ParseArgs([]string{"--name=w", "--filename=/dev/sdz", "--rw=write", "--allow_file_create=1"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := (&Runner{Allow: allow}).prepare(context.Background(), []Host{h}, cfg)
	if err != nil || p.errs[0] != nil || !strings.HasSuffix(p.jobText, "allow_file_create=0\n") || cfg.Jobs[0].NoFileCreate {
		t.Errorf("the job file sent for a device: %v %v\n%s", err, p.errs, p.jobText)
	}
	// A job without filename: fio makes one up, unless its engine opens none.
	if err := checkJobFile(h, "[j]\nrw=read\nsize=1m\n"); !errors.Is(err, ErrTarget) || !strings.Contains(err.Error(), "job j: names no filename") {
		t.Errorf("no filename: %v", err)
	}
	if err := checkJobFile(h, "[global]\nioengine=null\n[j]\nsize=1m\n"); err != nil {
		t.Errorf("diskless: %v", err)
	}
}
