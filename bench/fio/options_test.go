package fio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"iolab/bench"
)

func TestOptionBools(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		want        bool
		wantErr     string
	}{
		{name: "time_based", value: "", want: true}, // a flag: no value means 1
		{name: "time_based", value: "1", want: true},
		{name: "time_based", value: "0", want: false},
		{name: "direct", value: "1", want: true},
		{name: "direct", value: "0", want: false},
		{name: "direct", value: "", wantErr: "option direct: needs a value (e.g. direct=1)"}, // fio: "requires an argument"
		{name: "direct", value: "true", wantErr: `option direct: "true" is not 0 or 1`},
		{name: "direct", value: "yes", wantErr: "is not 0 or 1"},
		{name: "direct", value: "2", wantErr: "is not 0 or 1"},
		{name: "time_based", value: "on", wantErr: "is not 0 or 1"},
	} {
		t.Run(tc.name+"="+tc.value, func(t *testing.T) {
			j := bench.NewJob()
			j.TimeBased, j.Direct = !tc.want, !tc.want
			err := ApplyOption(&j, tc.name, tc.value)
			checkErr(t, err, tc.wantErr)
			if tc.wantErr != "" {
				return
			}
			got := j.Direct
			if tc.name == "time_based" {
				got = j.TimeBased
			}
			if got != tc.want {
				t.Errorf("%s=%q set %v, want %v", tc.name, tc.value, got, tc.want)
			}
		})
	}
}

func TestOptionCPUsAllowed(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    []int
		wantErr string
	}{
		{in: "0", want: []int{0}},
		{in: "0,5", want: []int{0, 5}},
		{in: "0,2-3", want: []int{0, 2, 3}},
		{in: "0,5,8-11", want: []int{0, 5, 8, 9, 10, 11}},
		{in: "3,1-2,2", want: []int{1, 2, 3}},
		{in: "0, 2-3", want: []int{0, 2, 3}},
		{in: "3-1", wantErr: "range 3-1 runs backwards (write 1-3)"},
		{in: "a", wantErr: `"a" is not a CPU number`},
		{in: "1,", wantErr: `"" is not a CPU number`},
		{in: "-1", wantErr: "is not a CPU number"},
		{in: "0-", wantErr: "is not a CPU number"},
		{in: "9000", wantErr: "CPU 9000 is beyond"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			j := bench.NewJob()
			err := ApplyOption(&j, "cpus_allowed", tc.in)
			checkErr(t, err, tc.wantErr)
			if tc.wantErr == "" && !reflect.DeepEqual(j.CPUsAllowed, tc.want) {
				t.Errorf("cpus_allowed=%s gave %v, want %v", tc.in, j.CPUsAllowed, tc.want)
			}
		})
	}
}

func TestOptionPercentileList(t *testing.T) {
	twenty := strings.Repeat("1:", 19) + "1"
	for _, tc := range []struct {
		in      string
		want    []float64
		wantErr string
	}{
		{in: "99", want: []float64{99}},
		{in: "1:50:99.9", want: []float64{1, 50, 99.9}},
		{in: "99.9:50:1", want: []float64{1, 50, 99.9}}, // sorted, as fio reports them
		{in: "100", want: []float64{100}},
		{in: "0.001", want: []float64{0.001}},
		{in: twenty, want: []float64{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
		{in: twenty + ":1", wantErr: "has 21 percentiles; fio takes at most 20"},
		{in: "0", wantErr: "0 is not a percentile"},
		{in: "100.5", wantErr: "100.5 is not a percentile"},
		{in: "-1", wantErr: "is not a percentile"},
		{in: "50,99", wantErr: `"50,99" is not a number`},
		{in: "50::99", wantErr: `"" is not a number`},
		{in: "NaN", wantErr: "is not a number"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			j := bench.NewJob()
			err := ApplyOption(&j, "percentile_list", tc.in)
			checkErr(t, err, tc.wantErr)
			if tc.wantErr == "" && !reflect.DeepEqual(j.PercentileList, tc.want) {
				t.Errorf("percentile_list=%s gave %v, want %v", tc.in, j.PercentileList, tc.want)
			}
		})
	}
}

// TestApplyOption sets each supported option (and alias) on fio's defaults
// and checks the field it sets and what Options records.
func TestApplyOption(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		field       func(j *bench.Job) any
		want        any
		recorded    string // name in Options; "" means name
	}{
		{"name", "qd8", func(j *bench.Job) any { return j.Name }, "qd8", ""},
		{"description", "what it does", func(j *bench.Job) any { return j.Name }, "", ""},
		{"filename", "/dev/loop0", func(j *bench.Job) any { return j.Filename }, "/dev/loop0", ""},
		{"filename", `/dev/dsk/foo@3,0\:c`, func(j *bench.Job) any { return j.FilePaths() }, []string{"/dev/dsk/foo@3,0:c"}, ""},
		{"rw", "randwrite", func(j *bench.Job) any { return j.RW }, "randwrite", ""},
		{"rw", "readwrite", func(j *bench.Job) any { return j.RW }, "rw", ""},
		{"rw", "randrw", func(j *bench.Job) any { return j.RW }, "randrw", ""},
		{"rw", "trim", func(j *bench.Job) any { return j.RW }, "trim", ""},
		{"rw", "randtrimwrite", func(j *bench.Job) any { return j.Trims() && j.Writes() && j.Random() && !j.Reads() }, true, ""},
		{"readwrite", "randread", func(j *bench.Job) any { return j.RW }, "randread", "rw"},
		{"rwmixread", "70", func(j *bench.Job) any { return j.RWMixRead }, 70, ""},
		{"rwmixwrite", "30", func(j *bench.Job) any { return j.RWMixRead }, 70, ""},
		{"rwmixwrite", "100", func(j *bench.Job) any { return j.RWMixRead }, 0, ""},
		{"bs", "64k", func(j *bench.Job) any { return j.BS }, int64(65536), ""},
		{"bs", "4k,8k,16k", func(j *bench.Job) any { return [3]int64{j.BS, j.WriteBS, j.TrimBS} }, [3]int64{4096, 8192, 16384}, ""},
		{"bs", "4k,8k", func(j *bench.Job) any { lo, _ := j.BlockSizes(bench.Trim); return lo }, int64(8192), ""},
		{"blocksize", "1m", func(j *bench.Job) any { return j.BS }, int64(1 << 20), "bs"},
		{"size", "10g", func(j *bench.Job) any { return j.Size }, int64(10 << 30), ""},
		{"offset", "1m", func(j *bench.Job) any { return j.Offset }, int64(1 << 20), ""},
		{"fileoffset", "1m", func(j *bench.Job) any { return j.Offset }, int64(1 << 20), "offset"},
		{"iodepth", "32", func(j *bench.Job) any { return j.IODepth }, 32, ""},
		{"iodepth", "65536", func(j *bench.Job) any { return j.IODepth }, 65536, ""},
		{"iodepth", "0x10", func(j *bench.Job) any { return j.IODepth }, 16, ""},
		{"ioengine", "io_uring", func(j *bench.Job) any { return j.IOEngine }, "io_uring", ""},
		{"ioengine", "libaio", func(j *bench.Job) any { return j.IOEngine }, "libaio", ""},
		{"ioengine", "null", func(j *bench.Job) any { return j.IOEngine }, "null", ""},
		{"io_submit_mode", "offload", func(j *bench.Job) any { return j.Offloaded() }, true, ""},
		{"io_submit_mode", "inline", func(j *bench.Job) any { return j.IOSubmitMode }, "inline", ""},
		{"direct", "1", func(j *bench.Job) any { return j.Direct }, true, ""},
		{"runtime", "10", func(j *bench.Job) any { return j.Runtime }, 10 * time.Second, ""},
		{"timeout", "10", func(j *bench.Job) any { return j.Runtime }, 10 * time.Second, "runtime"},
		{"steadystate", "bw_slope:1%", func(j *bench.Job) any { return j.SteadyName() + " " + getSteadyState(j) }, "bw_slope bw_slope:1%", ""},
		{"ss", "iops:20", func(j *bench.Job) any { return [2]any{j.SSPct, j.SSLimit} }, [2]any{false, 20.0}, "steadystate"},
		{"steadystate_duration", "30s", func(j *bench.Job) any { return j.SSDur }, 30 * time.Second, ""},
		{"ss_dur", "1m", func(j *bench.Job) any { return j.SSDur }, time.Minute, "steadystate_duration"},
		{"steadystate_ramp_time", "10", func(j *bench.Job) any { return j.SSRamp }, 10 * time.Second, ""},
		{"ss_ramp", "500ms", func(j *bench.Job) any { return j.SSRamp }, 500 * time.Millisecond, "steadystate_ramp_time"},
		{"latency_target", "500000", func(j *bench.Job) any { return j.LatencyTarget }, 500 * time.Millisecond, ""},
		{"latency_window", "5s", func(j *bench.Job) any { return j.LatencyWindow }, 5 * time.Second, ""},
		{"latency_percentile", "99.9", func(j *bench.Job) any { return j.LatencyPercentile }, 99.9, ""},
		{"latency_run", "1", func(j *bench.Job) any { return j.LatencyRun }, true, ""},
		{"runtime", "500ms", func(j *bench.Job) any { return j.Runtime }, 500 * time.Millisecond, ""},
		{"time_based", "", func(j *bench.Job) any { return j.TimeBased }, true, ""},
		{"ramp_time", "2s", func(j *bench.Job) any { return j.RampTime }, 2 * time.Second, ""},
		{"numjobs", "4", func(j *bench.Job) any { return j.NumJobs }, 4, ""},
		{"group_reporting", "", func(j *bench.Job) any { return j.GroupReporting }, true, ""},
		{"stonewall", "", func(j *bench.Job) any { return j.Stonewall }, true, ""},
		{"wait_for_previous", "", func(j *bench.Job) any { return j.Stonewall }, true, "stonewall"},
		{"new_group", "", func(j *bench.Job) any { return j.NewGroup }, true, ""},
		{"hipri", "", func(j *bench.Job) any { return j.Hipri }, true, ""},
		{"sqthread_poll", "1", func(j *bench.Job) any { return j.SQThreadPoll }, true, ""},
		{"sqthread_poll_cpu", "3", func(j *bench.Job) any { return j.SQThreadPollCPU }, 3, ""},
		{"fixedbufs", "", func(j *bench.Job) any { return j.FixedBufs }, true, ""},
		{"registerfiles", "", func(j *bench.Job) any { return j.RegisterFiles }, true, ""},
		{"randrepeat", "0", func(j *bench.Job) any { return j.RandRepeat }, false, ""},
		{"randseed", "1234", func(j *bench.Job) any { return j.RandSeed }, uint64(1234), ""},
		{"randseed", "137", func(j *bench.Job) any { return j.RandSeedSet }, true, ""},
		{"randseed", "18446744073709551615", func(j *bench.Job) any { return j.RandSeed }, uint64(1<<64 - 1), ""},
		{"randseed", "1k", func(j *bench.Job) any { return j.RandSeed }, uint64(1024), ""},
		{"norandommap", "", func(j *bench.Job) any { return j.NoRandomMap }, true, ""},
		{"cpus_allowed", "1-2", func(j *bench.Job) any { return j.CPUsAllowed }, []int{1, 2}, ""},
		{"iodepth_batch", "8", func(j *bench.Job) any { return j.IODepthBatchSubmit }, 8, ""},
		{"iodepth_batch_submit", "8", func(j *bench.Job) any { return j.IODepthBatchSubmit }, 8, "iodepth_batch"},
		{"iodepth_batch_complete_min", "0", func(j *bench.Job) any { return j.IODepthBatchCompleteMin }, 0, ""},
		{"iodepth_batch_complete", "4", func(j *bench.Job) any { return j.IODepthBatchCompleteMin }, 4, "iodepth_batch_complete_min"},
		{"iodepth_batch_complete_max", "16", func(j *bench.Job) any { return j.IODepthBatchCompleteMax }, 16, ""},
		{"io_size", "1m", func(j *bench.Job) any { return j.IOSize }, int64(1 << 20), ""},
		{"io_limit", "2m", func(j *bench.Job) any { return j.IOSize }, int64(2 << 20), "io_size"},
		{"iodepth_low", "4", func(j *bench.Job) any { return j.IODepthLow }, 4, ""},
		{"userspace_reap", "", func(j *bench.Job) any { return j.UserspaceReap }, true, ""},
		{"percentile_list", "50:99", func(j *bench.Job) any { return j.PercentileList }, []float64{50, 99}, ""},
		{"allow_mounted_write", "1", func(j *bench.Job) any { return j.AllowMountedWrite }, true, ""},
		{"thread", "", func(j *bench.Job) any { return j.NumJobs }, 1, ""},
		{"kb_base", "1024", func(j *bench.Job) any { return j.BS }, int64(4096), ""},
		{"verify", "0", func(j *bench.Job) any { return j.Verifies() }, false, ""},
		{"verify", "sha256", func(j *bench.Job) any { return j.Verify }, "sha256", ""},
		{"do_verify", "0", func(j *bench.Job) any { return j.DoVerify }, false, ""},
		{"verify_only", "", func(j *bench.Job) any { return j.VerifyOnly }, true, ""},
		{"verify_pattern", "0xff", func(j *bench.Job) any { return [2]any{j.VerifyPattern, j.Verify} }, [2]any{[]byte{0xff}, "pattern_hdr"}, ""},
		{"verify_interval", "512", func(j *bench.Job) any { return j.VerifyInterval }, int64(512), ""},
		{"verify_offset", "64", func(j *bench.Job) any { return j.VerifyOffset }, int64(64), ""},
		{"verify_fatal", "1", func(j *bench.Job) any { return j.VerifyFatal }, true, ""},
		{"verify_backlog", "1k", func(j *bench.Job) any { return j.VerifyBacklog }, int64(1024), ""},
		{"verify_dump", "1", func(j *bench.Job) any { return j.VerifyDump }, true, ""},
		{"trim_percentage", "30", func(j *bench.Job) any { return j.TrimPercentage }, 30, ""},
		{"trim_backlog", "1k", func(j *bench.Job) any { return j.TrimBacklog }, int64(1024), ""},
		{"trim_backlog_batch", "4", func(j *bench.Job) any { return j.TrimBacklogBatch }, 4, ""},
		{"trim_verify_zero", "0", func(j *bench.Job) any { return j.TrimSkipZero }, true, ""},
		{"verify_state_save", "0", func(j *bench.Job) any { return j.VerifyStateSave }, false, ""},
		{"verify_state_load", "1", func(j *bench.Job) any { return j.VerifyStateLoad }, true, ""},
		{"verify_async", "2", func(j *bench.Job) any { return j.VerifyAsync }, 2, ""},
		{"verify_async_cpus", "0-1", func(j *bench.Job) any { return j.VerifyAsyncCPUs }, []int{0, 1}, ""},
		{"experimental_verify", "1", func(j *bench.Job) any { return j.ExperimentalVerify }, true, ""},
		{"buffered", "0", func(j *bench.Job) any { return j.Direct }, true, ""},
		{"zero_buffers", "", func(j *bench.Job) any { return j.WriteBuffers().Zero }, true, ""},
		{"refill_buffers", "", func(j *bench.Job) any { return j.WriteBuffers().Refill }, true, ""},
		{"scramble_buffers", "0", func(j *bench.Job) any { return j.WriteBuffers().Scramble }, false, ""},
		{"buffer_pattern", `"ab"0x0102`, func(j *bench.Job) any { return j.BufferPattern }, []byte{'a', 'b', 1, 2}, ""},
		{"buffer_compress_percentage", "40", func(j *bench.Job) any { return j.WriteBuffers().Compress }, 40, ""},
		{"buffer_compress_chunk", "4k", func(j *bench.Job) any { return j.CompressChunk }, 4096, ""},
		{"dedupe_percentage", "30", func(j *bench.Job) any { return j.WriteBuffers().Dedupe }, 30, ""},
		{"dedupe_mode", "working_set", func(j *bench.Job) any { return j.DedupeMode }, "working_set", ""},
		{"dedupe_working_set_percentage", "20", func(j *bench.Job) any { return j.DedupeWorkingSet }, 20, ""},
		{"dedupe_global", "1", func(j *bench.Job) any { return j.DedupeGlobal }, true, ""},
		{"fsync", "32", func(j *bench.Job) any { return j.FsyncBlocks }, 32, ""},
		{"fdatasync", "8", func(j *bench.Job) any { return j.FdatasyncBlocks }, 8, ""},
		{"end_fsync", "1", func(j *bench.Job) any { return j.EndFsync }, true, ""},
		{"fsync_on_close", "1", func(j *bench.Job) any { return j.FsyncOnClose }, true, ""},
		{"sync", "dsync", func(j *bench.Job) any { return j.SyncIO }, "dsync", ""},
		{"hipri_percentage", "50", func(j *bench.Job) any { return j.HipriPercentage }, 50, ""},
		{"nowait", "1", func(j *bench.Job) any { return j.NoWait }, true, ""},
		// Files, sizes and offsets (options_files.go).
		{"bs", "4k,64k", func(j *bench.Job) any { return [2]int64{j.BS, j.WriteBS} }, [2]int64{4096, 65536}, ""},
		{"bs", ",8k", func(j *bench.Job) any { return [2]int64{j.BS, j.WriteBS} }, [2]int64{4096, 8192}, ""},
		{"rw", "randread:8", func(j *bench.Job) any { return [2]any{j.RW, j.RWSeqNr} }, [2]any{"randread", 8}, ""},
		{"rw", "write:4k", func(j *bench.Job) any { return [2]any{j.RW, j.RWSeqAdd} }, [2]any{"write", int64(4096)}, ""},
		{"size", "50%", func(j *bench.Job) any { return [2]any{j.Size, j.SizePercent} }, [2]any{int64(0), 50}, ""},
		{"offset", "25%", func(j *bench.Job) any { return j.OffsetPercent }, 25, ""},
		{"filename", "/dev/sda:/dev/sdb", func(j *bench.Job) any { return bench.SplitFileList(j.Filename) }, []string{"/dev/sda", "/dev/sdb"}, ""},
		{"filename", `a\:b`, func(j *bench.Job) any { return bench.SplitFileList(j.Filename) }, []string{"a:b"}, ""},
		{"directory", "/tmp:/var/tmp", func(j *bench.Job) any { return j.Directory }, "/tmp:/var/tmp", ""},
		{"nrfiles", "4", func(j *bench.Job) any { return j.NrFiles }, 4, ""},
		{"nr_files", "2", func(j *bench.Job) any { return j.NrFiles }, 2, "nrfiles"},
		{"filename_format", "f.$filenum", func(j *bench.Job) any { return j.FilenameFormat }, "f.$filenum", ""},
		{"filesize", "1m", func(j *bench.Job) any { return j.FileSize }, [2]int64{1 << 20, 1 << 20}, ""},
		{"filesize", "1m-4m", func(j *bench.Job) any { return j.FileSize }, [2]int64{1 << 20, 4 << 20}, ""},
		{"file_service_type", "random:4", func(j *bench.Job) any { return [2]any{j.FileService, j.FileServiceNr} }, [2]any{"random", 4}, ""},
		{"create_on_open", "1", func(j *bench.Job) any { return j.CreateOnOpen }, true, ""},
		{"unlink", "1", func(j *bench.Job) any { return j.Unlink }, true, ""},
		{"fill_device", "1", func(j *bench.Job) any { return j.FillDevice }, true, ""},
		{"fill_fs", "1", func(j *bench.Job) any { return j.FillDevice }, true, "fill_device"},
		{"create_serialize", "0", func(j *bench.Job) any { return j.CreateParallel }, true, ""},
		{"fallocate", "1", func(j *bench.Job) any { return j.Fallocate }, "posix", ""},
		{"invalidate", "0", func(j *bench.Job) any { return j.Invalidate }, false, ""},
		{"bsrange", "1k-4k,8k-16k", func(j *bench.Job) any { return j.BSRange }, [2][2]int64{{1024, 4096}, {8192, 16384}}, ""},
		{"blocksize_range", "8k-4k", func(j *bench.Job) any { return j.BSRange }, [2][2]int64{{4096, 8192}, {4096, 8192}}, "bsrange"},
		{"bssplit", "4k/10:64k/90", func(j *bench.Job) any { return j.BSSplit[1] }, []bench.BSSplit{{BS: 4096, Percent: 10}, {BS: 65536, Percent: 90}}, ""},
		{"bssplit", "4k:8k/50,16k", func(j *bench.Job) any { return j.BSSplit }, [2][]bench.BSSplit{{{BS: 4096, Percent: 50}, {BS: 8192, Percent: 50}}, {{BS: 16384, Percent: 0}}}, ""},
		// A comma after the last value keeps it to its own direction, as
		// fio's handle_option does: "64k," is 64k reads, 4k writes.
		{"bs", "64k,", func(j *bench.Job) any { return [2]int64{j.BS, j.WriteBS} }, [2]int64{65536, 4096}, ""},
		{"bs", ",64k", func(j *bench.Job) any { return [2]int64{j.BS, j.WriteBS} }, [2]int64{4096, 65536}, ""},
		{"bsrange", "4k-8k,", func(j *bench.Job) any { return j.BSRange }, [2][2]int64{{4096, 8192}, {0, 0}}, ""},
		{"bssplit", "4k/50:8k/50,", func(j *bench.Job) any { return len(j.BSSplit[1]) }, 0, ""},
		{"ba", "4k,8k,", func(j *bench.Job) any { return j.BlockAlign }, [2]int64{4096, 8192}, ""},
		{"ba", "512", func(j *bench.Job) any { return j.BlockAlign }, [2]int64{512, 512}, ""},
		{"blockalign", "1k,2k", func(j *bench.Job) any { return j.BlockAlign }, [2]int64{1024, 2048}, "ba"},
		{"number_ios", "1k", func(j *bench.Job) any { return j.NumberIOs }, uint64(1024), ""},
		{"loops", "3", func(j *bench.Job) any { return j.Loops }, 3, ""},
		{"offset_increment", "1m", func(j *bench.Job) any { return j.OffsetIncrement }, int64(1 << 20), ""},
		{"rw_sequencer", "identical", func(j *bench.Job) any { return j.RWSequencer }, "identical", ""},
		{"zonemode", "strided", func(j *bench.Job) any { return j.ZoneMode }, "strided", ""},
		{"zonesize", "1m", func(j *bench.Job) any { return j.ZoneSize }, int64(1 << 20), ""},
		{"zonerange", "4m", func(j *bench.Job) any { return j.ZoneRange }, int64(4 << 20), ""},
		{"zoneskip", "2m", func(j *bench.Job) any { return j.ZoneSkip }, int64(2 << 20), ""},
		// Access pattern (options_pattern.go).
		{"random_distribution", "zipf:1.2", func(j *bench.Job) any { return j.RandomDistribution.String() }, "zipf:1.2", ""},
		{"random_generator", "lfsr", func(j *bench.Job) any { return j.RandomGenerator }, "lfsr", ""},
		{"percentage_random", "80,20", func(j *bench.Job) any { return j.PercentageRandom }, []int{80, 20}, ""},
		{"allrandrepeat", "1", func(j *bench.Job) any { return j.AllRandRepeat }, true, ""},
		// Pacing and run control (options_pacing.go).
		{"rate", "1m,512k", func(j *bench.Job) any { return j.Rate }, [2]int64{1 << 20, 512 << 10}, ""},
		{"rate_min", "1m", func(j *bench.Job) any { return j.RateMin }, [2]int64{1 << 20, 1 << 20}, ""},
		{"ratemin", ",1m", func(j *bench.Job) any { return j.RateMin }, [2]int64{0, 1 << 20}, "rate_min"},
		{"rate_iops", "500", func(j *bench.Job) any { return j.RateIOPS }, [2]int64{500, 500}, ""},
		{"rate_iops_min", "100,", func(j *bench.Job) any { return j.RateIOPSMin }, [2]int64{100, 100}, ""},
		{"rate_process", "poisson", func(j *bench.Job) any { return j.RateProcess }, "poisson", ""},
		{"rate_cycle", "500", func(j *bench.Job) any { return j.RateCycle }, 500 * time.Millisecond, ""},
		{"write_bw_log", "run1", func(j *bench.Job) any { return [2]any{j.WriteBWLog, j.BWLogFile} }, [2]any{true, "run1"}, ""},
		{"write_bw_log", "", func(j *bench.Job) any { return [2]any{j.WriteBWLog, j.BWLogFile} }, [2]any{true, ""}, ""},
		{"write_iops_log", "0", func(j *bench.Job) any { return [2]any{j.WriteIOPSLog, j.IOPSLogFile} }, [2]any{true, "0"}, ""},
		{"write_lat_log", "/tmp/l", func(j *bench.Job) any { return [2]any{j.WriteLatLog, j.LatLogFile} }, [2]any{true, "/tmp/l"}, ""},
		{"write_hist_log", "h", func(j *bench.Job) any { return [2]any{j.WriteHistLog, j.HistLogFile} }, [2]any{true, "h"}, ""},
		{"log_avg_msec", "1000", func(j *bench.Job) any { return j.LogAvgMsec }, 1000, ""},
		{"log_hist_msec", "500", func(j *bench.Job) any { return j.LogHistMsec }, 500, ""},
		{"log_hist_coarseness", "6", func(j *bench.Job) any { return j.LogHistCoarseness }, 6, ""},
		{"log_max_value", "1", func(j *bench.Job) any { return j.LogMax }, true, ""},
		{"log_offset", "1", func(j *bench.Job) any { return j.LogOffset }, true, ""},
		{"log_prio", "1", func(j *bench.Job) any { return j.LogPrio }, true, ""},
		{"per_job_logs", "0", func(j *bench.Job) any { return j.PerJobLogs }, false, ""},
		{"log_unix_epoch", "1", func(j *bench.Job) any { return j.LogUnixEpoch }, true, ""},
		{"log_alternate_epoch", "1", func(j *bench.Job) any { return j.LogUnixEpoch }, true, "log_unix_epoch"},
		{"ratecycle", "2000", func(j *bench.Job) any { return j.RateCycle }, 2 * time.Second, "rate_cycle"},
		{"thinktime", "100", func(j *bench.Job) any { return j.Thinktime }, 100 * time.Microsecond, ""},
		{"thinktime_spin", "2ms", func(j *bench.Job) any { return j.ThinktimeSpin }, 2 * time.Millisecond, ""},
		{"thinktime_blocks", "8", func(j *bench.Job) any { return j.ThinktimeBlocks }, 8, ""},
		{"thinktime_blocks_type", "issue", func(j *bench.Job) any { return j.ThinktimeBlocksType }, "issue", ""},
		{"startdelay", "1-5", func(j *bench.Job) any { return [2]time.Duration{j.StartDelay, j.StartDelayHigh} }, [2]time.Duration{time.Second, 5 * time.Second}, ""},
		{"cpus_allowed_policy", "split", func(j *bench.Job) any { return j.CPUsAllowedPolicy }, "split", ""},
		{"clocksource", "gettimeofday", func(j *bench.Job) any { return j.ClockSource }, "gettimeofday", ""},
		{"gtod_reduce", "1", func(j *bench.Job) any { return [2]bool{j.DisableLat, j.ClatPercentiles} }, [2]bool{true, false}, ""},
		{"disable_lat", "1", func(j *bench.Job) any { return j.DisableLat }, true, ""},
		{"disable_clat", "1", func(j *bench.Job) any { return j.DisableClat }, true, ""},
		{"disable_slat", "1", func(j *bench.Job) any { return j.DisableSlat }, true, ""},
		{"disable_bw_measurement", "1", func(j *bench.Job) any { return j.DisableBW }, true, ""},
		{"disable_bw", "1", func(j *bench.Job) any { return j.DisableBW }, true, "disable_bw_measurement"},
		{"clat_percentiles", "0", func(j *bench.Job) any { return j.ClatPercentiles }, false, ""},
		{"lat_percentiles", "1", func(j *bench.Job) any { return j.LatPercentiles }, true, ""},
		{"slat_percentiles", "1", func(j *bench.Job) any { return j.SlatPercentiles }, true, ""},
		{"significant_figures", "6", func(j *bench.Job) any { return j.SigFigs }, 6, ""},
		{"exitall", "", func(j *bench.Job) any { return j.ExitAll }, true, ""},
		{"exit_what", "stonewall", func(j *bench.Job) any { return j.ExitWhat }, "stonewall", ""},
		{"exitall_on_error", "", func(j *bench.Job) any { return j.ExitAllOnError }, true, ""},
		{"continue_on_error", "io", func(j *bench.Job) any { return j.ContinueOnError }, bench.ErrorRead | bench.ErrorWrite, ""},
		{"ignore_error", ",ENOSPC:5", func(j *bench.Job) any { return [2]any{j.IgnoreError, j.ContinueOnError} },
			[2]any{[bench.ErrorClasses][]int{nil, {28, 5}, nil}, bench.ErrorWrite}, ""},
		{"error_dump", "1", func(j *bench.Job) any { return j.ErrorDump }, true, ""},
		{"allow_file_create", "0", func(j *bench.Job) any { return j.NoFileCreate }, true, ""},
		{"wait_for", "writer", func(j *bench.Job) any { return j.WaitFor }, "writer", ""},
		{"ioscheduler", "mq-deadline", func(j *bench.Job) any { return j.IOScheduler }, "mq-deadline", ""},
		{"flow_id", "-3", func(j *bench.Job) any { return j.FlowID }, -3, ""},
		{"flow", "8", func(j *bench.Job) any { return j.Flow }, 8, ""},
		{"flow_sleep", "1000", func(j *bench.Job) any { return j.FlowSleep }, time.Millisecond, ""},
		{"numa_cpu_nodes", "0-1,3", func(j *bench.Job) any { return j.NUMACPUNodes }, "0-1,3", ""},
		{"numa_mem_policy", "interleave:0-1", func(j *bench.Job) any { return j.NUMAMemPolicy }, "interleave:0-1", ""},
		{"prio", "5", func(j *bench.Job) any { return [3]any{j.IOPrioSet, j.IOPrio, j.JobIOPrio()} }, [3]any{true, 5, uint16(2<<13 | 5)}, ""},
		{"prioclass", "3", func(j *bench.Job) any { return [3]any{j.IOPrioSet, j.IOPrioClass, j.JobIOPrio()} }, [3]any{true, 3, uint16(3 << 13)}, ""},
		{"prioclass", "0", func(j *bench.Job) any { return j.JobIOPrio() }, uint16(2 << 13), ""}, // fio's ioprio_value: class 0 is best-effort
		{"cmdprio_percentage", "20", func(j *bench.Job) any { return j.CmdprioPercentage }, [2]int{20, 20}, ""},
		{"cmdprio_percentage", "20,40", func(j *bench.Job) any { return j.CmdprioPercentage }, [2]int{20, 40}, ""},
		{"cmdprio_class", "3", func(j *bench.Job) any { return j.CmdprioClass }, [2]int{3, 3}, ""},
		{"cmdprio_class", "2:3", func(j *bench.Job) any { return j.CmdprioClass }, [2]int{2, 3}, ""},
		{"cmdprio", "7", func(j *bench.Job) any { return j.CmdprioLevel }, [2]int{7, 7}, ""},
		{"cmdprio_bssplit", "64k/100:1m/0,1m/0", func(j *bench.Job) any { return j.CmdprioBSSplit },
			[2][]bench.PrioSplit{{{BS: 64 << 10, Percent: 100, Prio: -1}}, nil}, ""},
	} {
		t.Run(tc.name+"="+tc.value, func(t *testing.T) {
			j := bench.NewJob()
			if err := ApplyOption(&j, tc.name, tc.value); err != nil {
				t.Fatal(err)
			}
			if got := tc.field(&j); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s=%s set %#v, want %#v", tc.name, tc.value, got, tc.want)
			}
			rec := tc.recorded
			if rec == "" {
				rec = tc.name
			}
			if want := []bench.Option{{Name: rec, Value: tc.value}}; !reflect.DeepEqual(j.Options, want) {
				t.Errorf("Options = %v, want %v", j.Options, want)
			}
		})
	}
}

// TestApplyOptionEveryOptionTested keeps TestApplyOption in step with the
// option table.
func TestApplyOptionEveryOptionTested(t *testing.T) {
	src, err := os.ReadFile("options_test.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range AllOptions() {
		for _, name := range append([]string{o.Name}, o.Aliases...) {
			if !strings.Contains(string(src), "{\""+name+"\", ") {
				t.Errorf("TestApplyOption does not set %s", name)
			}
		}
	}
}

func TestApplyOptionErrors(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		want        string // the whole message
	}{
		{"iodeph", "8", `unknown option "iodeph" (did you mean "iodepth"?)`},
		{"blocksise", "4k", `unknown option "blocksise" (did you mean "blocksize"?)`},
		{"runtmie", "4", `unknown option "runtmie" (did you mean "runtime"?)`},
		{"xyzzy", "1", `unknown option "xyzzy"`},
		{"BS", "4k", `unknown option "BS" (did you mean "bs"?)`},
		{"verify", "crc64", `option verify: "crc64": iolab does not do fio's verify=crc64 (use one of md5, crc32c, crc32c-intel, sha256, sha512, xxhash, sha1, meta, pattern)`},
		{"verify", "md6", `option verify: "md6" is not one of 0, md5, crc32c, crc32c-intel, sha256, sha512, xxhash, sha1, meta, pattern`},
		{"verify_pattern", "0x%o", `option verify_pattern: "0x%o": iolab does not paste formats (%o) into verify_pattern; give the bytes`},
		{"verify_interval", "40", `option verify_interval: 40: fio takes 80 bytes (twice the header) to 1g`},
		{"verify_backlog_batch", "4", `option "verify_backlog_batch" is not supported by iolab (remove it, or run this job with fio)`},
		{"verify_async", "-1", `option verify_async: "-1": a number of threads, 0 to 1024`},
		{"verify_async_cpus", "x", `option verify_async_cpus: "x": "x" is not a CPU number (use e.g. 0,2-3)`},
		{"io_submit_mode", "threads", `option io_submit_mode: "threads" is not one of inline, offload`},
		{"trim_percentage", "101", `option trim_percentage: "101": fio takes 0 to 100`},
		{"trim_verify_zero", "maybe", `option trim_verify_zero: "maybe" is not 0 or 1 (fio's booleans are 0 and 1)`},
		{"ignore_error", "EDQUOT", `option ignore_error: "EDQUOT" is not an errno name fio knows (EPERM … ERANGE); give its number`},
		{"continue_on_error", "yes", `option continue_on_error: "yes" is not one of none, read, write, io, verify, all, 0, 1`},
		{"exit_what", "phase", `option exit_what: "phase" is not one of group, stonewall, all`},
		{"bs", "4q", `option bs: "4q" is not a size (use e.g. 4k, 1m)`},
		{"bs", "0", `option bs: 0 is not a block size (use e.g. 4k)`},
		{"bs", "4k,8k,0", `option bs: 0 is not a block size (use e.g. 4k)`},
		{"bsrange", "4k-8k,4k-8k,4k-8k", `option bsrange: "4k-8k,4k-8k,4k-8k": a third value is for trims, which iolab takes in bs only (here, use reads,writes: trims take the writes')`},
		{"bsrange", "4k", `option bsrange: "4k": a range is lo-hi (e.g. 4k-64k)`},
		{"bs", "8k,32k,", `option bs: "8k,32k,": the comma after the writes' value leaves trims at their own size, which fio counts in the job's smallest block size (its random map's unit) and iolab, which does not trim, cannot: drop the last comma`},
		{"bssplit", "8k/50:16k/50,32k/100,", `option bssplit: "8k/50:16k/50,32k/100,": the comma after the writes' value leaves trims at their own size, which fio counts in the job's smallest block size (its random map's unit) and iolab, which does not trim, cannot: drop the last comma`},
		{"bssplit", "4k/60:8k:16k/60", `option bssplit: "4k/60:8k:16k/60": the percentages add up to more than 100`},
		{"file_service_type", "zipf", `option file_service_type: "zipf": iolab picks files roundrobin, random or sequential only`},
		{"fallocate", "2", `option fallocate: "2" is not one of none, native, posix, keep, truncate, 0, 1`},
		{"zonemode", "zbd", `option zonemode: "zbd": iolab does not drive zoned block devices (use none or strided)`},
		{"size", "150%", `option size: "150%": a percentage is a whole number from 1 to 100 (e.g. 50%)`},
		{"bs", "", `option bs: needs a value (e.g. bs=4k)`},
		{"blocksize", "", `option blocksize: needs a value (e.g. blocksize=4k)`},
		{"rw", "randomread", `option rw: "randomread" is not one of read, write, randread, randwrite, rw, randrw, trim, randtrim, trimwrite, randtrimwrite (did you mean "randread"?)`},
		{"rw", "randread:x", `option rw: rw=randread:x: for a random mode :N is a number of I/Os per random offset, at least 1`},
		{"rw", "banana", `option rw: "banana" is not one of read, write, randread, randwrite, rw, randrw, trim, randtrim, trimwrite, randtrimwrite`},
		{"ioengine", "mmap", `option ioengine: "mmap" is not supported by iolab (use one of io_uring, libaio, psync, sync, vsync, pvsync, pvsync2, null)`},
		{"ioengine", "splice", `option ioengine: "splice" is not supported by iolab (use one of io_uring, libaio, psync, sync, vsync, pvsync, pvsync2, null)`},
		{"numa_cpu_nodes", "+1", `option numa_cpu_nodes: "+1": iolab does not take libnuma's +N (nodes counted within the cpuset); name the nodes`},
		{"numa_cpu_nodes", "1-0", `option numa_cpu_nodes: "1-0" is not a list of NUMA nodes (e.g. 0, 0-1,3, all, or !0 for all but node 0)`},
		{"numa_cpu_nodes", "1024", `option numa_cpu_nodes: "1024": node 1024 is beyond Linux's 1024 nodes`},
		{"numa_mem_policy", "preferred:0", `option numa_mem_policy: "preferred:0": the memory policy is one of default, prefer, bind, interleave, local (with :nodes for prefer, bind and interleave)`},
		{"numa_mem_policy", "prefer:0-1", `option numa_mem_policy: "prefer:0-1": prefer takes one node, a number (e.g. prefer:1)`},
		{"numa_mem_policy", "default:0", `option numa_mem_policy: "default:0": default takes no nodes`},
		{"numa_mem_policy", "bind", `option numa_mem_policy: "bind": bind needs nodes (e.g. bind:0)`},
		{"flow", "1001", `option flow: 1001 is out of range (0 to 1000)`},
		{"dedupe_mode", "random", `option dedupe_mode: "random" is not one of repeat, working_set`},
		{"iodepth", "0", `option iodepth: 0 is out of range (1 to 65536)`},
		{"iodepth", "65537", `option iodepth: 65537 is out of range (1 to 65536)`},
		{"iodepth", "99999999999999999999", `option iodepth: 99999999999999999999 is out of range (1 to 65536)`},
		{"iodepth", "8k", `option iodepth: "8k" is not a whole number`},
		{"iodepth", "$ncpus", `option iodepth: "$ncpus": iolab does not expand fio's $keywords or (expressions); write the number`},
		{"numjobs", "0", `option numjobs: 0 is out of range (1 to 4096)`},
		{"rwmixread", "101", `option rwmixread: 101 is out of range (0 to 100)`},
		{"rwmixwrite", "-1", `option rwmixwrite: -1 is out of range (0 to 100)`},
		{"sqthread_poll_cpu", "-1", `option sqthread_poll_cpu: -1 is out of range (0 to 8191)`},
		{"runtime", "10x", `option runtime: "10x" is not a duration (use e.g. 10, 10s, 500ms, 2m)`},
		{"ramp_time", "", `option ramp_time: needs a value (e.g. ramp_time=2s)`},
		{"offset", "1.5g", `option offset: "1.5g" is not a size (use e.g. 4k, 1m)`},
		{"filename", ":", `option filename: names no file`},
		{"randseed", "x", `option randseed: "x" is not a whole number (e.g. randseed=1234)`},
		{"kb_base", "1000", `option kb_base: "1000": iolab reads k, m, g as powers of 1024 only (kb_base=1024, fio's default)`},
		{"thread", "2", `option thread: "2" is not 0 or 1 (fio's booleans are 0 and 1)`},
		{"iodepth_batch_complete_max", "-1", `option iodepth_batch_complete_max: -1 is out of range (0 to 65536)`},
	} {
		t.Run(tc.name+"="+tc.value, func(t *testing.T) {
			j := bench.NewJob()
			before := j.Clone()
			err := ApplyOption(&j, tc.name, tc.value)
			var oe *bench.OptionError
			if !errors.As(err, &oe) {
				t.Fatalf("ApplyOption(%s=%s) = %v, want an *OptionError", tc.name, tc.value, err)
			}
			if oe.Error() != tc.want {
				t.Errorf("error:\n got %s\nwant %s", oe.Error(), tc.want)
			}
			if oe.Option != tc.name || oe.Value != tc.value {
				t.Errorf("Option, Value = %q, %q; want %q, %q", oe.Option, oe.Value, tc.name, tc.value)
			}
			if !reflect.DeepEqual(j, before) {
				t.Errorf("a failed option changed the job:\n got %+v\nwant %+v", j, before)
			}
		})
	}
}

func TestOptionErrorFormat(t *testing.T) {
	for _, tc := range []struct {
		err  bench.OptionError
		want string
	}{
		{bench.OptionError{Msg: "m"}, "m"},
		{bench.OptionError{Msg: "m", File: "a.fio"}, "a.fio: m"},
		{bench.OptionError{Msg: "m", File: "a.fio", Line: 7}, "a.fio:7: m"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
	inner := os.ErrNotExist
	if err := error(&bench.OptionError{Msg: "m", Err: inner}); !errors.Is(err, inner) {
		t.Errorf("OptionError does not unwrap to its Err")
	}
}

func TestOptionFinishJob(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    [][2]string
		wantErr string
		check   func(j *bench.Job) string // "" when fine
	}{
		{name: "complete", opts: [][2]string{{"filename", "/dev/loop0"}}},
		{name: "no filename: fio's names", check: func(j *bench.Job) string {
			if p := j.FilePaths(); len(p) != 1 || p[0] != "j.0.0" {
				return fmt.Sprintf("files %v, want j.0.0", p)
			}
			return ""
		}},
		{name: "strided without zonesize", opts: [][2]string{{"zonemode", "strided"}}, wantErr: `job "j": zonemode=strided needs zonesize`},
		{name: "zonesize alone is strided", opts: [][2]string{{"zonesize", "1m"}}, check: func(j *bench.Job) string {
			if j.ZoneMode != "strided" || j.ZoneRange != 1<<20 {
				return fmt.Sprintf("zonemode %q, zonerange %d", j.ZoneMode, j.ZoneRange)
			}
			return ""
		}},
		{name: "null needs no filename", opts: [][2]string{{"ioengine", "null"}, {"size", "1m"}}},
		{name: "null needs a size", opts: [][2]string{{"ioengine", "null"}}, wantErr: `job "j": ioengine=null needs a size (e.g. size=1g)`},
		{name: "time_based without runtime", opts: [][2]string{{"filename", "f"}, {"time_based", ""}}, wantErr: `job "j": time_based needs a runtime (e.g. runtime=30s)`},
		{name: "hipri with libaio", opts: [][2]string{{"filename", "f"}, {"ioengine", "libaio"}, {"hipri", ""}},
			wantErr: `job "j": hipri is an io_uring and pvsync2 option but the job uses ioengine=libaio (set ioengine=io_uring or remove hipri)`},
		{name: "fixedbufs with psync", opts: [][2]string{{"filename", "f"}, {"fixedbufs", ""}}, wantErr: "fixedbufs is an io_uring option"},
		{name: "io_uring options set before the engine", opts: [][2]string{{"filename", "f"}, {"hipri", ""}, {"sqthread_poll", ""}, {"registerfiles", ""}, {"ioengine", "io_uring"}}},
		{name: "hipri=0 with psync", opts: [][2]string{{"filename", "f"}, {"hipri", "0"}}},
		{name: "sqthread_poll_cpu alone", opts: [][2]string{{"filename", "f"}, {"ioengine", "io_uring"}, {"sqthread_poll_cpu", "1"}},
			wantErr: "sqthread_poll_cpu has no effect without sqthread_poll (add sqthread_poll)"},
		{name: "batch 0 is iodepth", opts: [][2]string{{"filename", "f"}, {"iodepth", "16"}, {"iodepth_batch", "0"}},
			check: func(j *bench.Job) string { return mismatch(j.IODepthBatchSubmit, 16) }},
		{name: "batch above iodepth is iodepth", opts: [][2]string{{"filename", "f"}, {"iodepth", "4"}, {"iodepth_batch", "64"}},
			check: func(j *bench.Job) string { return mismatch(j.IODepthBatchSubmit, 4) }},
		{name: "complete_max below min is min", opts: [][2]string{{"filename", "f"}, {"iodepth", "16"}, {"iodepth_batch_complete_min", "8"}, {"iodepth_batch_complete_max", "2"}},
			check: func(j *bench.Job) string { return mismatch(j.IODepthBatchCompleteMax, 8) }},
		{name: "complete_max 0 stays 0", opts: [][2]string{{"filename", "f"}, {"iodepth", "16"}},
			check: func(j *bench.Job) string { return mismatch(j.IODepthBatchCompleteMax, 0) }},
		{name: "vsync deeper than 1", opts: [][2]string{{"filename", "f"}, {"ioengine", "vsync"}, {"iodepth", "8"}},
			wantErr: "iodepth=8: ioengine=vsync takes at most 1 I/Os in flight"},
		{name: "hipri with pvsync2", opts: [][2]string{{"filename", "f"}, {"ioengine", "pvsync2"}, {"hipri", ""}, {"hipri_percentage", "10"}}},
		{name: "hipri_percentage alone", opts: [][2]string{{"filename", "f"}, {"ioengine", "pvsync2"}, {"hipri_percentage", "10"}},
			wantErr: "hipri_percentage has no effect without hipri"},
		{name: "nowait with io_uring", opts: [][2]string{{"filename", "f"}, {"ioengine", "io_uring"}, {"nowait", "1"}},
			wantErr: "nowait is an pvsync2 option but the job uses ioengine=io_uring"},
		{name: "cmdprio with psync", opts: [][2]string{{"filename", "f"}, {"cmdprio_percentage", "20"}},
			wantErr: "cmdprio_percentage is an io_uring and libaio option but the job uses ioengine=psync (set ioengine=io_uring or remove cmdprio_percentage)"},
		{name: "cmdprio_class alone", opts: [][2]string{{"filename", "f"}, {"ioengine", "libaio"}, {"cmdprio_class", "1"}},
			wantErr: "cmdprio_class has no effect without cmdprio_percentage or cmdprio_bssplit"},
		{name: "cmdprio alone", opts: [][2]string{{"filename", "f"}, {"ioengine", "io_uring"}, {"cmdprio", "3"}},
			wantErr: "cmdprio has no effect without cmdprio_percentage or cmdprio_bssplit"},
		{name: "cmdprio percentage and bssplit", opts: [][2]string{{"filename", "f"}, {"ioengine", "libaio"}, {"cmdprio_percentage", "20"}, {"cmdprio_bssplit", "4k/10"}},
			wantErr: "cmdprio_percentage and cmdprio_bssplit options are mutually exclusive"},
		{name: "cmdprio_bssplit past 100%", opts: [][2]string{{"filename", "f"}, {"ioengine", "io_uring"}, {"cmdprio_bssplit", "4k/60/1/0:4k/50/3/0"}},
			wantErr: "cmdprio_bssplit total percentage for bs: 4096 exceeds 100"},
		// fio checks only the directions the job does.
		{name: "cmdprio_bssplit past 100% on writes a reader does not do", opts: [][2]string{{"filename", "f"}, {"ioengine", "io_uring"}, {"cmdprio_bssplit", "4k/10,4k/60:4k/50"}}},
		{name: "buffer_compress_chunk alone", opts: [][2]string{{"filename", "f"}, {"buffer_compress_chunk", "4k"}},
			wantErr: "buffer_compress_chunk has no effect without buffer_compress_percentage between 1 and 99"},
		// fio decides when buffer_pattern is parsed whether the job reads.
		{name: "buffer_pattern before rw=write refills", opts: [][2]string{{"filename", "f"}, {"buffer_pattern", "1"}, {"rw", "write"}},
			check: func(j *bench.Job) string { return mismatch(j.WriteBuffers().Refill, true) }},
		{name: "buffer_pattern after rw=write does not", opts: [][2]string{{"filename", "f"}, {"rw", "write"}, {"buffer_pattern", "1"}},
			check: func(j *bench.Job) string { return mismatch(j.WriteBuffers().Refill, false) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := bench.NewJob()
			j.Name = "j"
			for _, o := range tc.opts {
				if err := ApplyOption(&j, o[0], o[1]); err != nil {
					t.Fatal(err)
				}
			}
			err := FinishJob(&j)
			checkErr(t, err, tc.wantErr)
			if err != nil {
				if _, ok := errors.AsType[*bench.OptionError](err); !ok {
					t.Errorf("FinishJob error %T is not an *OptionError", err)
				}
			}
			if tc.check != nil {
				if msg := tc.check(&j); msg != "" {
					t.Error(msg)
				}
			}
		})
	}
}

// mismatch describes got != want, or returns "".
func mismatch[T comparable](got, want T) string {
	if got != want {
		return fmt.Sprintf("got %v, want %v", got, want)
	}
	return ""
}

func TestParseArgs(t *testing.T) {
	cfg, err := ParseArgs([]string{
		"--ioengine=io_uring", "--filename", "/dev/loop0", "--direct=1", "--time_based", "--runtime=2",
		"--name=qd1", "--rw=randread", "--bs=4k",
		"-name=qd8", "--rw=randrw", "--rwmixread=70", "--iodepth", "8", "--group_reporting",
		"--output-format=json+", "--output", "out.json",
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.OutputFormat != "json+" || cfg.Output != "out.json" {
		t.Errorf("OutputFormat, Output = %q, %q; want json+, out.json", cfg.OutputFormat, cfg.Output)
	}
	wantGlobals := []bench.Option{{Name: "ioengine", Value: "io_uring"}, {Name: "filename", Value: "/dev/loop0"}, {Name: "direct", Value: "1"}, {Name: "time_based", Value: ""}, {Name: "runtime", Value: "2"}}
	if !reflect.DeepEqual(cfg.GlobalOptions, wantGlobals) {
		t.Errorf("GlobalOptions = %v, want %v", cfg.GlobalOptions, wantGlobals)
	}
	if len(cfg.Groups) != 1 || len(cfg.Groups[0].Jobs) != 2 {
		t.Fatalf("groups = %+v, want one group of two jobs", cfg.Groups)
	}
	g := cfg.Groups[0]
	if g.ID != 0 || g.Wait || !g.Reporting {
		t.Errorf("group ID, Wait, Reporting = %d, %v, %v; want 0, false, true", g.ID, g.Wait, g.Reporting)
	}
	qd1, qd8 := g.Jobs[0], g.Jobs[1]
	base := bench.NewJob()
	base.IOEngine, base.Filename, base.Direct, base.TimeBased, base.Runtime = "io_uring", "/dev/loop0", true, true, 2*time.Second

	want1 := base.Clone()
	want1.Name, want1.RW = "qd1", "randread"
	want1.Options = []bench.Option{{Name: "name", Value: "qd1"}, {Name: "rw", Value: "randread"}, {Name: "bs", Value: "4k"}}
	if !reflect.DeepEqual(qd1, want1) {
		t.Errorf("qd1:\n got %+v\nwant %+v", qd1, want1)
	}
	want8 := base.Clone()
	want8.Name, want8.RW, want8.RWMixRead, want8.IODepth, want8.IODepthBatchSubmit, want8.GroupReporting = "qd8", "randrw", 70, 8, 1, true
	want8.Options = []bench.Option{{Name: "name", Value: "qd8"}, {Name: "rw", Value: "randrw"}, {Name: "rwmixread", Value: "70"}, {Name: "iodepth", Value: "8"}, {Name: "group_reporting", Value: ""}}
	if !reflect.DeepEqual(qd8, want8) {
		t.Errorf("qd8:\n got %+v\nwant %+v", qd8, want8)
	}
}

func TestParseArgsDefaults(t *testing.T) {
	cfg, err := ParseArgs([]string{"--name=a", "--filename=/dev/loop0"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.OutputFormat != "normal" || cfg.Output != "" || cfg.GlobalOptions != nil {
		t.Errorf("OutputFormat, Output, GlobalOptions = %q, %q, %v; want normal, \"\", nil", cfg.OutputFormat, cfg.Output, cfg.GlobalOptions)
	}
	want := bench.NewJob()
	want.Name, want.Filename = "a", "/dev/loop0"
	want.Options = []bench.Option{{Name: "name", Value: "a"}, {Name: "filename", Value: "/dev/loop0"}}
	if got := cfg.Groups[0].Jobs[0]; !reflect.DeepEqual(got, want) {
		t.Errorf("job:\n got %+v\nwant %+v", got, want)
	}
}

// TestParseArgsGlobalName checks fio's --name=global: the options after it
// are defaults for the jobs that follow, not for those before.
func TestParseArgsGlobalName(t *testing.T) {
	cfg, err := ParseArgs([]string{"--filename=f", "--name=a", "--name=global", "--bs=8k", "--name=b"})
	if err != nil {
		t.Fatal(err)
	}
	jobs := cfg.Groups[0].Jobs
	if jobs[0].BS != 4096 || jobs[1].BS != 8192 {
		t.Errorf("bs = %d, %d; want 4096, 8192", jobs[0].BS, jobs[1].BS)
	}
}

func TestParseArgsJobFiles(t *testing.T) {
	// As in fio: command-line jobs first; the command-line defaults apply
	// to the first file only; later files wait for the jobs before them.
	cfg, err := ParseArgs([]string{
		"--rw=randwrite", "--ioengine=null", "--size=1m",
		filepath.Join("testdata", "jobs", "groups.fio"),
		"--name=x", filepath.Join("testdata", "jobs", "second.fio"),
	})
	if err != nil {
		t.Fatal(err)
	}
	got := groupNames(cfg.Groups)
	want := "0:[x] 1:wait[a] 2:wait[b b] 3:[c d] 4:wait[e f] 5:wait[g h]"
	if got != want {
		t.Errorf("groups = %s, want %s", got, want)
	}
	all := allJobs(cfg.Groups)
	if all[1].RW != "randwrite" || all[len(all)-1].RW != "read" {
		t.Errorf("rw of a, h = %s, %s; want randwrite (the command line's), read (fio's default)", all[1].RW, all[len(all)-1].RW)
	}
}

func TestParseArgsErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--iodeph=8", "--name=a"}, `unknown option "iodeph" (did you mean "iodepth"?)`},
		{[]string{"--name=a", "--filename=f", "--verify=sha256", "--bs=64"}, `job "a": verify=sha256 needs intervals longer than its 104-byte header; verify_interval (or the block size) is 64`},
		{[]string{"--name=a", "--filename=f", "--rw=randread:0"}, `option rw: rw=randread:0: for a random mode :N is a number of I/Os per random offset, at least 1`},
		{[]string{"--filename=f"}, "no jobs: start one with --name=NAME, or give a job file"},
		{[]string{}, "no jobs"},
		{[]string{"--name="}, "a job needs a name"},
		{[]string{"--name"}, "option --name needs a value (--name=...)"},
		{[]string{"--name=a", "--bs"}, "option --bs needs a value (--bs=...)"},
		{[]string{"--name=a", "--filename=f", "--direct"}, "option --direct needs a value (--direct=...)"},
		{[]string{"--output-format=xml", "--name=a"}, `option --output-format: "xml" is not one of normal, json, json+, terse (several may be joined with commas, as in fio: normal,terse)`},
		{[]string{"--output-format=terse,", "--name=a"}, `option --output-format: "" is not one of normal, json, json+, terse`},
		{[]string{"--terse-version=6", "--name=a"}, `option --terse-version: "6" is not one of fio's terse versions 2, 3, 4, 5`},
		{[]string{"--terse-version=x", "--name=a"}, `option --terse-version: "x" is not one of fio's terse versions 2, 3, 4, 5`},
		{[]string{"--minimal=1", "--name=a"}, "--minimal takes no value, as in fio"},
		{[]string{"--output=", "--name=a"}, "option --output needs a file name (--output=FILE)"},
		{[]string{"--showcmd", "x.fio"}, "fio's --showcmd is not supported by iolab"},
		{[]string{"--status-interval=0", "--name=a"}, `option --status-interval: "0" is too short: iolab prints a report at most every 100ms (e.g. --status-interval=1 for every second, 500ms)`},
		{[]string{"--status-interval=-1", "--name=a"}, `option --status-interval: "-1" is not a duration`},
		{[]string{"--status-interval=99ms", "--name=a"}, `option --status-interval: "99ms" is too short`},
		{[]string{"--status-interval=2d", "--name=a"}, `option --status-interval: "2d" is too long: at most a day, 24h (e.g. --status-interval=10m)`},
		{[]string{"--status-interval=1.5", "--name=a"}, `option --status-interval: "1.5": fio ignores fractions of a unit; use a smaller unit (e.g. 1500ms)`},
		{[]string{"--name=a", "--status-interval"}, "option --status-interval needs a value (--status-interval=...)"},
		{[]string{"-"}, "iolab cannot read a job file from standard input; give its path"},
		{[]string{"nonexistent.fio"}, "nonexistent.fio: no such job file (options start with --, e.g. --name=job)"},
		{[]string{"--name=a", "--filename=f", "--runtime=1", "--time_based", "2"}, "2: no such job file"}, // flags never take the next argument
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := ParseArgs(tc.args)
			if _, ok := errors.AsType[*bench.OptionError](err); !ok {
				t.Fatalf("ParseArgs = %v, want an *OptionError", err)
			}
			checkErr(t, err, tc.want)
		})
	}
}

// checkErr checks that err contains wantErr, or is nil when wantErr is "".
func checkErr(t *testing.T, err error, wantErr string) {
	t.Helper()
	switch {
	case wantErr == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case wantErr != "" && err == nil:
		t.Fatalf("no error, want one containing %q", wantErr)
	case wantErr != "" && !strings.Contains(err.Error(), wantErr):
		t.Fatalf("error:\n got %s\nwant it to contain %s", err, wantErr)
	}
}
