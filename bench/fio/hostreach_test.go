package fio

import (
	"slices"
	"strings"
	"testing"

	"iolab/bench"
)

// reviewedHarmless are iolab's options whose help speaks of files, paths,
// logs or programs and that were read for the reach table and found to do
// nothing beyond the job's own files (or, for the log_* options, to
// matter only with a log, which the table refuses; name, only in the
// names fio makes up, which the table refuses too).
var reviewedHarmless = []string{
	"name", "iodepth", "size", "offset", "filesize", "file_service_type", "create_on_open", "allow_file_create",
	"fill_device", "create_serialize", "unlink", "fallocate", "invalidate", "fsync", "fdatasync", "end_fsync",
	"fsync_on_close", "sync", "log_avg_msec", "log_hist_msec", "log_hist_coarseness", "log_max_value",
	"log_offset", "log_prio", "log_unix_epoch", "registerfiles", "verify_only", "description",
	"verify", "do_verify", "verify_backlog", "lat_percentiles", "experimental_verify",
	// "logged writes": the job's own blocks on its own target, trimmed as
	// a trimwrite job's trims are (the write guard's).
	"trim_percentage", "trim_backlog", "trim_backlog_batch",
}

// TestReachTableReviewed: every row names an option iolab takes, or one
// it does not (fioOnly) and truly does not; every option of iolab's whose
// help or unit speaks of files, paths, logs or programs was decided,
// in the table or in reviewedHarmless, so a new one is not let through
// by default unread.
func TestReachTableReviewed(t *testing.T) {
	for _, row := range reachTable {
		o, ok := LookupOption(row.name)
		switch {
		case row.fioOnly && ok:
			t.Errorf("%s: marked fio-only, but iolab takes it", row.name)
		case !row.fioOnly && !ok:
			t.Errorf("%s: not an option iolab takes (mark it fioOnly?)", row.name)
		case ok && o.Name != row.name:
			t.Errorf("%s: an alias; the table holds fio's name %s", row.name, o.Name)
		}
	}
	speaks := []string{"file", "path", "log", "program", "command", "directory", "/sys", "scheduler", "engine"}
	for _, o := range AllOptions() {
		text := strings.ToLower(o.Help + " " + o.Unit)
		if !slices.ContainsFunc(speaks, func(w string) bool { return strings.Contains(text, w) }) {
			continue
		}
		inTable := slices.ContainsFunc(reachTable, func(r reachRow) bool { return r.name == o.Name })
		if !inTable && !slices.Contains(reviewedHarmless, o.Name) {
			t.Errorf("%s (%q): speaks of files or programs but is neither in reachTable nor in reviewedHarmless", o.Name, o.Help)
		}
	}
}

func TestOptionReach(t *testing.T) {
	for _, tt := range []struct {
		name, value string
		want        Reach
		known       bool
	}{
		{"filename", "/dev/sda", ReachNamesTarget, true},
		{"rw", "write", ReachNone, true},
		{"readwrite", "write", ReachNone, true},
		{"write_bw_log", "", ReachOpensFile, true},
		{"nrfiles", "1", ReachNone, true},
		{"nr_files", "3", ReachDerivesPath, true}, // an alias
		{"verify_state_save", "0", ReachNone, true},
		{"verify_state_save", "1", ReachOpensFile, true},
		{"buffer_pattern", `"abc"`, ReachNone, true},
		{"buffer_pattern", "'x.bin'", ReachOpensFile, true},
		{"ioengine", "libaio", ReachNone, true},
		{"ioengine", "exec", ReachRunsProgram, true},
		{"ioscheduler", "mq-deadline", ReachWritesSysfs, true},
		{"allow_mounted_write", "1", ReachLiftsGuard, true},
		{"allow_mounted_write", "0", ReachNone, true},
		{"exec_prerun", "sh", ReachRunsProgram, true},
		{"threads", "1", ReachNone, true}, // an inert profile option
		{"made_up", "1", ReachNone, false},
	} {
		r, why, known := OptionReach(tt.name, tt.value)
		if r != tt.want || known != tt.known || (r > ReachNone) != (why != "") {
			t.Errorf("OptionReach(%s, %q) = %v, %q, %v; want %v, known %v", tt.name, tt.value, r, why, known, tt.want, tt.known)
		}
	}
}

func TestReadJobFileSections(t *testing.T) {
	text := "; a comment\n[global]\nioengine=libaio\n  # another\n[globalish]\nbs=8k\n\n[a]\nfilename = /dev/sda \nrw=read\ntime_based\n[b]\nreadwrite=write\ninclude x.fio\n"
	got, err := ReadJobFileSections(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []JobFileSection{
		{Name: "global", Options: []bench.Option{{Name: "ioengine", Value: "libaio"}}},
		{Name: "global", Options: []bench.Option{{Name: "bs", Value: "8k"}}},
		{Name: "a", Options: []bench.Option{{Name: "filename", Value: "/dev/sda"}, {Name: "rw", Value: "read"}, {Name: "time_based"}}},
		{Name: "b", Options: []bench.Option{{Name: "readwrite", Value: "write"}, {Name: "include x.fio"}}},
	}
	if !slices.EqualFunc(got, want, func(a, b JobFileSection) bool { return a.Name == b.Name && slices.Equal(a.Options, b.Options) }) {
		t.Fatalf("sections %+v\nwant %+v", got, want)
	}
	eff := EffectiveOptions(got, 3)
	wantEff := []bench.Option{{Name: "ioengine", Value: "libaio"}, {Name: "bs", Value: "8k"}, {Name: "rw", Value: "write"}, {Name: "include x.fio"}}
	if !slices.Equal(eff, wantEff) {
		t.Errorf("job b's options %v, want %v", eff, wantEff)
	}
	for _, bad := range []string{"rw=read\n[a]\n", "[a\nrw=read\n"} {
		if _, err := ReadJobFileSections(bad); err == nil {
			t.Errorf("%q: read", bad)
		}
	}
}
