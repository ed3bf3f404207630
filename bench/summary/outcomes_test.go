package summary

import (
	"slices"
	"testing"
	"time"

	"iolab/bench"
)

// TestOutcomes: what a job's verify, steady-state and latency_target
// options concluded is said of its results, its clones' added up: the
// verify reads apart from the measured I/O with their cost, the steady
// state's verdict and how long the job ran, the depth the latency
// search ended at.
func TestOutcomes(t *testing.T) {
	verified := func(ios uint64, took time.Duration) *bench.JobResult {
		r := synthJob("w", time.Second, synthLoad{}, synthLoad{ios: ios, bs: 4096})
		r.Verify = &bench.VerifyResult{Method: "crc32c", Reads: bench.DirResult{IOs: ios, Bytes: ios * 4096}, Runtime: took}
		return &r
	}
	steady := func(attained bool, crit float64, ran time.Duration) *bench.JobResult {
		r := synthJob("s", ran, synthLoad{}, synthLoad{ios: 100, bs: 4096})
		r.Steady = &bench.SteadyResult{Metric: "iops", Pct: true, Limit: 10, Dur: 5, Full: true, Attained: attained, Criterion: crit,
			IOPS: make([]uint64, 5), BW: make([]uint64, 5)}
		return &r
	}
	searched := func(depth int) *bench.JobResult {
		r := synthJob("l", time.Second, synthLoad{ios: 100, bs: 4096}, synthLoad{})
		r.LatencyDepth = depth
		return &r
	}
	target := &bench.Job{IODepth: 64, SteadyOptions: bench.SteadyOptions{LatencyTarget: 2 * time.Millisecond, LatencyPercentile: 99}}
	readJob := synthJob("r", time.Second, synthLoad{ios: 50, bs: 4096}, synthLoad{})
	readJob.Verify = &bench.VerifyResult{Method: "meta"}
	async := verified(256, 40*time.Millisecond)
	async.Verify.Threads = []bench.VerifyThread{{TID: 7, Blocks: 200, CPU: 8 * time.Millisecond}, {TID: 8, Blocks: 56, CPU: 4 * time.Millisecond}}
	trimmedRead, trimmedOut := verified(256, 40*time.Millisecond), verified(200, 40*time.Millisecond)
	trimmedRead.Verify.Trimmed, trimmedRead.Verify.TrimmedRead = 56, true
	trimmedOut.Verify.Trimmed = 56
	notFull := steady(false, 0, 3*time.Second)
	notFull.Steady.Full = false
	for _, tc := range []struct {
		name    string
		job     *bench.Job
		results []*bench.JobResult
		want    []string
	}{
		{"plain", nil, []*bench.JobResult{searched(0)}, nil},
		{"verify, two clones", nil, []*bench.JobResult{verified(256, 40*time.Millisecond), verified(256, 50*time.Millisecond)},
			[]string{"verify crc32c: 512 blocks (2.00MiB) read back intact in 50.0ms (40.0MiB/s)"}},
		{"verify_async", nil, []*bench.JobResult{async},
			[]string{"verify crc32c: 256 blocks (1.00MiB) read back intact in 40.0ms (25.0MiB/s); checked on 2 verify_async threads (12.0ms of CPU)"}},
		{"verify trims read back", nil, []*bench.JobResult{trimmedRead},
			[]string{"verify crc32c: 256 blocks (1.00MiB) read back intact in 40.0ms (25.0MiB/s), 56 of them trimmed after their write and read as zeros"}},
		{"verify trims left out", nil, []*bench.JobResult{trimmedOut},
			[]string{"verify crc32c: 200 blocks (800KiB) read back intact in 40.0ms (19.5MiB/s); 56 blocks trimmed after their write, not read back"}},
		{"a read job verifies its reads", nil, []*bench.JobResult{&readJob}, []string{"verify meta: every read checked, intact"}},
		{"steady", nil, []*bench.JobResult{steady(true, 3.66, 7*time.Second)},
			[]string{"steady state attained: iops mean deviation 3.66%, within ±10%, over 5 s; it ended the job after 7.00s"}},
		{"not steady", nil, []*bench.JobResult{steady(false, 14.8, 30*time.Second)},
			[]string{"steady state not attained: iops mean deviation 14.8%, outside ±10%, over 5 s; the job ran 30.0s without it"}},
		{"window never full", nil, []*bench.JobResult{notFull},
			[]string{"steady state not attained: the 5 s window never filled; the job ran 3.00s without it"}},
		{"latency target", target, []*bench.JobResult{searched(8)}, []string{"latency_target 2.00ms at p99: depth 8 of iodepth 64"}},
		{"clones apart", target, []*bench.JobResult{searched(8), searched(4)}, []string{"latency_target 2.00ms at p99: depth 4–8 of iodepth 64"}},
		{"no target: the depth is not a search's", nil, []*bench.JobResult{searched(8)}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jobs := make([]*JobView, len(tc.results))
			for i, r := range tc.results {
				j := JobViewOf(r)
				jobs[i] = &j
			}
			if got := outcomes(tc.job, jobs); !slices.Equal(got, tc.want) {
				t.Errorf("outcomes:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
