package chart

import (
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

// TestBuildChartIOPSTrims: a trimwrite run's IOPS chart adds its trims
// to its writes and says so under its title; dir=trim draws the trims
// alone, named in the title, the axis and the columns. A run without
// trims says nothing of them.
func TestBuildChartIOPSTrims(t *testing.T) {
	plan := testPlan(1, sweepOf(sweep.AxisIODepth, "1", "8"))
	plan.Base.Jobs = []bench.Job{{Name: "tw", IODepth: 1, IOEngine: "io_uring", NumJobs: 1, BS: 4096, RW: "trimwrite"}}
	trims := map[string]uint64{"1": 3000, "8": 5000}
	run := testRun(1, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		n := trims[s.Value(sweep.AxisIODepth)]
		r := testJob("tw", time.Second, testLoad{}, testLoad{ios: n, bs: 4096, lat: time.Millisecond})
		r.Dirs[bench.Trim].IOs, r.Dirs[bench.Trim].Bytes = n, n*4096
		r.Dirs[bench.Trim].Clat.Add(uint64(time.Millisecond))
		return sweeptest.Done(r)
	}))
	all := mustBuild(t, Query{Kind: IOPS}, run)
	if got := all.Rows[0][4:7]; !slices.Equal(got, []string{"6000", "6000", "6000"}) {
		t.Errorf("iodepth 1: IOPS %q, want writes and trims added up (6000)", got)
	}
	if doc := checkOption(t, all); !strings.Contains(doc.Title.Subtext, "reads, writes and trims added up") {
		t.Errorf("subtitle %q does not say the trims are in", doc.Title.Subtext)
	}
	tr := mustBuild(t, Query{Kind: IOPS, Dir: "trim"}, run)
	if !strings.HasPrefix(tr.Title, "Trim IOPS") || !slices.Contains(tr.Columns, "trim_iops_median") {
		t.Errorf("title %q, columns %q", tr.Title, tr.Columns)
	}
	if got := tr.Rows[1][4:7]; !slices.Equal(got, []string{"5000", "5000", "5000"}) {
		t.Errorf("iodepth 8: trim IOPS %q, want 5000", got)
	}
	if doc := checkOption(t, tr); strings.Contains(doc.Title.Subtext, "trims added up") {
		t.Errorf("dir=trim subtitle %q", doc.Title.Subtext)
	}

	writes := testRun(2, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult { return sweeptest.Done(testWrites(1000)) }))
	if doc := checkOption(t, mustBuild(t, Query{Kind: IOPS}, writes)); strings.Contains(doc.Title.Subtext, "trim") {
		t.Errorf("a run without trims: subtitle %q", doc.Title.Subtext)
	}
}

// TestTimelineTrims: the IOPS timeline of a step that trims draws the
// trims' rate per interval beside the writes', and dir=trim draws it
// alone.
func TestTimelineTrims(t *testing.T) {
	plan := testPlan(1, sweepOf(sweep.AxisIODepth, "1"))
	plan.Base.Jobs = []bench.Job{{Name: "tw", IODepth: 1, IOEngine: "io_uring", NumJobs: 1, BS: 4096, RW: "trimwrite"}}
	run := testRun(1, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		r := testJob("tw", 2*time.Second, testLoad{}, testLoad{ios: 4000, bs: 4096, lat: time.Millisecond})
		r.Dirs[bench.Trim].IOs, r.Dirs[bench.Trim].Bytes = 3000, 3000*4096
		r.Samples = []bench.Sample{
			{At: time.Second, IOs: bench.DirCounts{0, 2000, 1000}},
			{At: 2 * time.Second, IOs: bench.DirCounts{0, 4000, 3000}},
		}
		return sweeptest.Done(r)
	}))
	all := mustBuild(t, Query{Kind: Timeline, Step: 1}, run)
	checkTable(t, all, []string{"job", "time_s", "write_iops", "trim_iops"}, [][]string{{"tw", "1", "2000", "1000"}, {"tw", "2", "2000", "2000"}})
	tr := mustBuild(t, Query{Kind: Timeline, Step: 1, Dir: "trim"}, run)
	checkTable(t, tr, []string{"job", "time_s", "trim_iops"}, [][]string{{"tw", "1", "1000"}, {"tw", "2", "2000"}})
}
