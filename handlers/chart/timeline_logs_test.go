package chart

import (
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/joblog"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

// A step whose jobs kept IOPS logs is drawn from them: averaged windows as
// they are, per-I/O entries counted per 100 ms; a truncated log falls back
// to the samples.
func TestTimelineFromIOPSLogs(t *testing.T) {
	plan := testPlan(1, sweepOf(sweep.AxisIODepth, "1", "4"))
	withLog := func(data string, truncated bool) bench.JobResult {
		j := testJob("a", 300*time.Millisecond, testLoad{ios: 600, bs: 4096}, testLoad{})
		j.Samples = []bench.Sample{{At: 300 * time.Millisecond, IOs: bench.DirCounts{600, 0}}}
		n := int64(0)
		for _, c := range data {
			if c == '\n' {
				n++
			}
		}
		j.Logs = []joblog.Log{{Kind: joblog.IOPS, File: "a_iops.1.log", Data: []byte(data), Lines: n, Truncated: truncated}}
		return j
	}
	for _, c := range []struct {
		name string
		job  bench.JobResult
		want [][]string
	}{
		{"averaged", withLog("100, 2000, 0, 0, 0\n100, 10, 1, 0, 0\n200, 3000, 0, 0, 0\n300, 1000, 0, 0, 0\n", false),
			[][]string{{"a", "0.1", "2000"}, {"a", "0.2", "3000"}, {"a", "0.3", "1000"}}},
		// 3 I/Os in [0, 100 ms), 1 in [100, 200), none after: 30 and 10
		// per 100 ms, 0 for the last.
		{"per I/O", withLog("0, 1, 0, 4096, 0\n5, 1, 0, 4096, 0\n99, 1, 0, 4096, 0\n150, 1, 0, 4096, 0\n", false),
			[][]string{{"a", "0.1", "30"}, {"a", "0.2", "10"}}},
		{"Unix times, from the job's start", func() bench.JobResult {
			j := withLog("1700000000100, 2000, 0, 0, 0\n1700000000200, 3000, 0, 0, 0\n", false)
			j.Start = time.UnixMilli(1700000000000)
			return j
		}(), [][]string{{"a", "0.1", "2000"}, {"a", "0.2", "3000"}}},
		{"truncated: the samples", withLog("0, 1, 0, 4096, 0\n", true),
			[][]string{{"a", "0.3", "2000"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := testRun(4, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult { return sweeptest.Done(c.job) }))
			checkTable(t, mustBuild(t, Query{Kind: Timeline, Step: 1}, run), []string{"job", "time_s", "read_iops"}, c.want)
		})
	}
}
