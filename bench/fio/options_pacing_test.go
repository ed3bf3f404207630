package fio

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"iolab/bench"
)

// TestPacingOptionValues checks the values fio's parser reads in its own
// way: per-direction lists, think times in µs, start-delay ranges.
func TestPacingOptionValues(t *testing.T) {
	for _, tc := range []struct {
		opts    []string // name=value, applied in order
		field   func(j *bench.Job) any
		want    any
		wantErr string
	}{
		{opts: []string{"rate=1m"}, field: func(j *bench.Job) any { return j.Rate }, want: [2]int64{1 << 20, 1 << 20}},
		{opts: []string{"rate=1m,"}, field: func(j *bench.Job) any { return j.Rate }, want: [2]int64{1 << 20, 1 << 20}},
		{opts: []string{"rate=,2m"}, field: func(j *bench.Job) any { return j.Rate }, want: [2]int64{0, 2 << 20}},
		{opts: []string{"rate=1m,2m,3m"}, field: func(j *bench.Job) any { return j.Rate }, want: [2]int64{1 << 20, 2 << 20}},
		// An empty value keeps what the direction had (fio's val_store is
		// not called for it).
		{opts: []string{"rate_iops=100", "rate_iops=,50"}, field: func(j *bench.Job) any { return j.RateIOPS }, want: [2]int64{100, 50}},
		{opts: []string{"rate_iops=1k"}, field: func(j *bench.Job) any { return j.RateIOPS }, want: [2]int64{1024, 1024}},
		{opts: []string{"rate=1m,2m,3m,4m"}, wantErr: "fio takes read,write,trim"},
		{opts: []string{"rate_iops=8589934592"}, wantErr: "out of range"},
		{opts: []string{"rate=fast"}, wantErr: "is not a size"},
		{opts: []string{"thinktime=250"}, field: func(j *bench.Job) any { return j.Thinktime }, want: 250 * time.Microsecond},
		{opts: []string{"thinktime=1s"}, field: func(j *bench.Job) any { return j.Thinktime }, want: time.Second},
		{opts: []string{"thinktime=x"}, wantErr: "µs unless a unit follows"},
		{opts: []string{"startdelay=2"}, field: func(j *bench.Job) any { return [2]time.Duration{j.StartDelay, j.StartDelayHigh} }, want: [2]time.Duration{2 * time.Second, 2 * time.Second}},
		{opts: []string{"startdelay=500ms:2s"}, field: func(j *bench.Job) any { return [2]time.Duration{j.StartDelay, j.StartDelayHigh} }, want: [2]time.Duration{500 * time.Millisecond, 2 * time.Second}},
		{opts: []string{"startdelay=5-1"}, wantErr: "the range runs backwards"},
		{opts: []string{"rate_process=bursty"}, wantErr: `"bursty" is not one of linear, poisson`},
		{opts: []string{"cpus_allowed_policy=none"}, wantErr: "is not one of shared, split"},
		{opts: []string{"significant_figures=11"}, wantErr: "out of range (1 to 10)"},
		{opts: []string{"exitall=0"}, wantErr: "even 0"},
		{opts: []string{"ioscheduler=../x"}, wantErr: "is not an I/O scheduler name"},
		// gtod_reduce sets the others; they can be set back after it.
		{opts: []string{"gtod_reduce=1", "disable_lat=0"}, field: func(j *bench.Job) any { return [3]bool{j.DisableLat, j.DisableClat, j.DisableBW} }, want: [3]bool{false, true, true}},
		{opts: []string{"disable_clat=1", "gtod_reduce=0"}, field: func(j *bench.Job) any { return j.DisableClat }, want: true},
	} {
		t.Run(strings.Join(tc.opts, " "), func(t *testing.T) {
			j := bench.NewJob()
			var err error
			for _, o := range tc.opts {
				name, value, _ := strings.Cut(o, "=")
				if err = ApplyOption(&j, name, value); err != nil {
					break
				}
			}
			checkErr(t, err, tc.wantErr)
			if tc.wantErr == "" {
				if got := tc.field(&j); !reflect.DeepEqual(got, tc.want) {
					t.Errorf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

// TestPacingFixups checks fio's fixup_options for these options, through
// the parser, as a job file gives them.
func TestPacingFixups(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		check      func(j *bench.Job) bool
		wantErr    string
	}{
		{name: "rate and rate_iops", file: "[a]\nrate=1m\nrate_iops=100\n", wantErr: "rate and rate_iops are mutually exclusive"},
		{name: "rate_min and rate_iops_min", file: "[a]\nrate_min=1m\nrate_iops_min=100\n", wantErr: "mutually exclusive"},
		{name: "rate and rate_iops_min", file: "[a]\nrate=1m\nrate_iops_min=100\n", check: func(j *bench.Job) bool { return true }},
		{name: "minimum above the rate", file: "[a]\nrate_iops=100,200\nrate_iops_min=,300\n", wantErr: "the minimum write rate exceeds the write rate"},
		{name: "poisson below a block", file: "[a]\nbs=4k\nrate=1k\nrate_process=poisson\n", wantErr: "at least one block"},
		{name: "spin capped", file: "[a]\nthinktime=10\nthinktime_spin=50\n", check: func(j *bench.Job) bool { return j.ThinktimeSpin == 10*time.Microsecond }},
		{name: "disable_lat drops lat percentiles", file: "[a]\nlat_percentiles=1\ndisable_lat=1\n", check: func(j *bench.Job) bool { return !j.LatPercentiles }},
		{name: "disable_clat drops clat percentiles", file: "[a]\ndisable_clat=1\n", check: func(j *bench.Job) bool { return !j.ClatPercentiles }},
		{name: "wait_for an earlier job", file: "[a]\n[b]\nwait_for=a\n", check: func(j *bench.Job) bool { return j.WaitFor == "a" }},
		{name: "wait_for itself", file: "[a]\nwait_for=a\n", wantErr: "a job cannot wait for itself"},
		{name: "wait_for a later job", file: "[a]\nwait_for=b\n[b]\n", wantErr: "wait_for=b: no job of that name before this one"},
		{name: "wait_for a name twice", file: "[a]\n[a]\n[b]\nwait_for=a\n", wantErr: "2 jobs have that name"},
		{name: "lat_percentiles differ in a group", file: "[a]\nlat_percentiles=1\n[b]\n", wantErr: "lat_percentiles differs from job \"a\" of its group"},
		{name: "lat_percentiles differ across groups", file: "[a]\nlat_percentiles=1\n[b]\nstonewall\n", check: func(j *bench.Job) bool { return !j.LatPercentiles }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseJobFile(strings.NewReader("[global]\nfilename=/dev/null\n"+tc.file), "t.fio")
			checkErr(t, err, tc.wantErr)
			if tc.wantErr == "" && !tc.check(&cfg.Jobs[len(cfg.Jobs)-1]) {
				t.Errorf("fix-up not applied: %+v", cfg.Jobs[len(cfg.Jobs)-1].PacingOptions)
			}
		})
	}
}
