package chart

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

// iodepthEngineRun is a run sweeping iodepth 1, 16 × io_uring, libaio
// with 3 repeats, its write IOPS from iops; the failed step's repeat fails.
func iodepthEngineRun(id int64, iops map[[2]string][3]uint64, failed [3]string) LoadedRun {
	plan := testPlan(3, sweepOf(sweep.AxisIODepth, "1", "16"), sweepOf(sweep.AxisEngine, "io_uring", "libaio"))
	steps := sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		if s.Value(sweep.AxisIODepth) == failed[0] && s.Value(sweep.AxisEngine) == failed[1] && strconv.Itoa(s.Repeat) == failed[2] {
			return sweeptest.Failed("io_uring_setup: EOPNOTSUPP")
		}
		return sweeptest.Done(testWrites(iops[[2]string{s.Value(sweep.AxisIODepth), s.Value(sweep.AxisEngine)}][s.Repeat]))
	})
	// Steps come from the store in any order.
	steps[0], steps[len(steps)-1] = steps[len(steps)-1], steps[0]
	return testRun(id, plan, steps)
}

var engineIOPS = map[[2]string][3]uint64{
	{"1", "io_uring"}:  {12000, 10000, 11000},
	{"1", "libaio"}:    {9000, 9500, 9400},
	{"16", "io_uring"}: {150000, 160000, 155000},
	{"16", "libaio"}:   {120000, 100000, 130000},
}

func TestBuildChartIOPS(t *testing.T) {
	run := iodepthEngineRun(3, engineIOPS, [3]string{"16", "libaio", "1"})
	c := mustBuild(t, Query{Kind: IOPS, Runs: []int64{3}}, run)

	s := func(k [2]string, reps ...int) [4]float64 {
		var v []float64
		for _, r := range reps {
			v = append(v, float64(engineIOPS[k][r]))
		}
		s := spread3(v...)
		return [4]float64{s[0], s[1], s[2], cv(v...)}
	}
	want := map[[2]string][4]float64{
		{"1", "io_uring"}:  s([2]string{"1", "io_uring"}, 0, 1, 2),
		{"1", "libaio"}:    s([2]string{"1", "libaio"}, 0, 1, 2),
		{"16", "io_uring"}: s([2]string{"16", "io_uring"}, 0, 1, 2),
		{"16", "libaio"}:   s([2]string{"16", "libaio"}, 0, 2), // repeat 1 failed
	}
	row := func(qd, engine, repeats, failed string) []string {
		w := want[[2]string{qd, engine}]
		return []string{"randwrite", qd, engine, repeats, failed, csvNum(w[0]), csvNum(w[1]), csvNum(w[2]), csvNum(w[3]), "false"}
	}
	checkTable(t, c, []string{"job", "iodepth", "ioengine", "repeats", "failed", "iops_min", "iops_median", "iops_max", "iops_cv", "noisy"}, [][]string{
		row("1", "io_uring", "3", "0"),
		row("16", "io_uring", "3", "0"),
		row("1", "libaio", "3", "0"),
		row("16", "libaio", "2", "1"),
	})
	if want[[2]string{"16", "libaio"}][1] != 125000 {
		t.Fatalf("test's own median is off: %v", want[[2]string{"16", "libaio"}])
	}

	doc := checkOption(t, c)
	if got := seriesNames(doc); !slices.Equal(got, []string{"io_uring", "libaio"}) {
		t.Errorf("series = %q", got)
	}
	if len(doc.XAxis) != 1 || !slices.Equal(doc.XAxis[0].Data, []string{"1", "16"}) || doc.XAxis[0].Name != "iodepth" {
		t.Errorf("x axis = %+v", doc.XAxis)
	}
	if len(doc.YAxis) != 1 || doc.YAxis[0].Name != "IOPS" {
		t.Errorf("y axis = %+v", doc.YAxis)
	}
	for i, s := range doc.Series {
		if s.Type != "boxplot" || len(s.Data) != 2 {
			t.Fatalf("series %d = %+v, want a boxplot with 2 boxes", i, s)
		}
		for k, qd := range []string{"1", "16"} {
			w := want[[2]string{qd, s.Name}]
			wantBox := []any{w[0], w[1], w[1], w[1], w[2]}
			if got := seriesValues(doc, i)[k]; !reflect.DeepEqual(got, wantBox) {
				t.Errorf("%s iodepth %s box = %v, want %v", s.Name, qd, got, wantBox)
			}
		}
	}
}

func TestBuildChartIOPSCompare(t *testing.T) {
	a := iodepthEngineRun(3, engineIOPS, [3]string{})
	// Run 5 has only io_uring at iodepth 1 and 4, all failed at 4.
	plan := testPlan(2, sweepOf(sweep.AxisIODepth, "1", "4"), sweepOf(sweep.AxisEngine, "io_uring"))
	b := testRun(5, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		if s.Value(sweep.AxisIODepth) == "4" {
			return sweeptest.Failed("no space left on device")
		}
		return sweeptest.Done(testWrites(7000 + 1000*uint64(s.Repeat)))
	}))
	c := mustBuild(t, Query{Kind: IOPS, Runs: []int64{3, 5}}, a, b)
	doc := checkOption(t, c)
	if got := seriesNames(doc); !slices.Equal(got, []string{"run 3 io_uring", "run 3 libaio", "run 5 io_uring"}) {
		t.Errorf("series = %q", got)
	}
	if got := doc.XAxis[0].Data; !slices.Equal(got, []string{"1", "4", "16"}) {
		t.Errorf("categories = %q, want numeric order", got)
	}
	// Run 5 has no box at 16 and none at 4 (all failed); run 3 none at 4.
	none := []any{"-", "-", "-", "-", "-"}
	if got := seriesValues(doc, 2); !reflect.DeepEqual(got, []any{[]any{7000.0, 7500.0, 7500.0, 7500.0, 8000.0}, none, none}) {
		t.Errorf("run 5 boxes = %v", got)
	}
	if got := seriesValues(doc, 0)[1]; !reflect.DeepEqual(got, none) {
		t.Errorf("run 3 at iodepth 4 = %v", got)
	}
	if !slices.Equal(c.Columns[:4], []string{"run", "job", "iodepth", "ioengine"}) {
		t.Errorf("columns = %q", c.Columns)
	}
	last := c.Rows[len(c.Rows)-2:]
	if !reflect.DeepEqual(last, [][]string{
		{"5", "randwrite", "1", "io_uring", "2", "0", "7000", "7500", "8000", csvNum(cv(7000, 8000)), "false"},
		{"5", "randwrite", "4", "io_uring", "0", "2", "", "", "", "", ""},
	}) {
		t.Errorf("run 5 rows = %q", last)
	}
}

func TestBuildChartIOPSDirection(t *testing.T) {
	// A 70/30 mix: reads and writes counted apart.
	plan := testPlan(3, sweepOf(sweep.AxisScheduler, "none", "bfq"))
	plan.Base.Jobs = []bench.Job{{Name: "mixed", IODepth: 8, IOEngine: "io_uring", NumJobs: 1, BS: 4096, RW: "randrw"}}
	reads := map[string][3]uint64{"none": {7000, 7100, 6900}, "bfq": {5000, 5600, 5200}}
	run := testRun(1, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		r := reads[s.Value(sweep.AxisScheduler)][s.Repeat]
		return sweeptest.Done(testJob("mixed", 2*time.Second, testLoad{ios: 2 * r, bs: 4096, lat: time.Millisecond}, testLoad{ios: 2 * r * 3 / 7, bs: 4096, lat: time.Millisecond}))
	}))
	c := mustBuild(t, Query{Kind: IOPS, Dir: "read"}, run)
	n, b := spread3(7000, 7100, 6900), spread3(5000, 5600, 5200)
	// iodepth is not swept: the base job's 8 is the one category.
	checkTable(t, c, []string{"job", "iodepth", "scheduler", "repeats", "failed", "read_iops_min", "read_iops_median", "read_iops_max", "read_iops_cv", "noisy"}, [][]string{
		{"mixed", "8", "none", "3", "0", csvNum(n[0]), csvNum(n[1]), csvNum(n[2]), csvNum(cv(7000, 7100, 6900)), "false"},
		{"mixed", "8", "bfq", "3", "0", csvNum(b[0]), csvNum(b[1]), csvNum(b[2]), csvNum(cv(5000, 5600, 5200)), "false"},
	})
	doc := checkOption(t, c)
	// One x value: the schedulers side by side, at iodepth 8 (oneX).
	if !slices.Equal(plottedNames(doc), []string{"iodepth 8"}) || !slices.Equal(doc.XAxis[0].Data, []string{"none", "bfq"}) {
		t.Errorf("series %q, categories %q", plottedNames(doc), doc.XAxis[0].Data)
	}
	if !strings.HasPrefix(c.Title, "Read IOPS") {
		t.Errorf("title %q", c.Title)
	}
	// The whole: reads and writes.
	all := mustBuild(t, Query{Kind: IOPS}, run)
	total := func(r uint64) float64 { return float64(r) + float64(2*r*3/7)/2 }
	wantAll := spread3(total(7000), total(7100), total(6900))
	if got := all.Rows[0][5:8]; !slices.Equal(got, []string{csvNum(wantAll[0]), csvNum(wantAll[1]), csvNum(wantAll[2])}) {
		t.Errorf("total IOPS = %q, want %v", got, wantAll)
	}
}

// The table holds the numbers as the chart plots them, in full precision:
// IOPS over 3 s windows have fractions.
func TestBuildIOPSFullPrecision(t *testing.T) {
	plan := testPlan(3, sweepOf(sweep.AxisIODepth, "1", "16"), sweepOf(sweep.AxisEngine, "io_uring", "libaio"))
	run := testRun(3, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		if s.Value(sweep.AxisIODepth) == "16" && s.Value(sweep.AxisEngine) == "libaio" && s.Repeat == 1 {
			return sweeptest.Failed("boom")
		}
		return sweeptest.Done(testJob("w", 3*time.Second, testLoad{}, testLoad{ios: 1000*uint64(s.Seq) + 1, bs: 4096}))
	}))
	c := mustBuild(t, Query{Kind: IOPS}, run)
	for i := range c.Rows {
		c.Rows[i] = c.Rows[i][:len(c.Rows[i])-2] // the CV and noise, tested elsewhere
	}
	c.Columns = c.Columns[:len(c.Columns)-2]
	checkTable(t, c, []string{"job", "iodepth", "ioengine", "repeats", "failed", "iops_min", "iops_median", "iops_max"}, [][]string{
		{"w", "1", "io_uring", "3", "0", "0.3333333333333333", "333.6666666666667", "667"},
		{"w", "16", "io_uring", "3", "0", "2000.3333333333333", "2333.6666666666665", "2667"},
		{"w", "1", "libaio", "3", "0", "1000.3333333333334", "1333.6666666666667", "1667"},
		{"w", "16", "libaio", "2", "1", "3000.3333333333335", "3333.666666666667", "3667"},
	})
}
