package chart

import (
	"encoding/json"
	"math/bits"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

// eighthOctave is, in ns, the bin of 1/8 of a power of two holding v
// (v ≥ 1024).
func eighthOctave(v uint64) (lo, hi uint64) {
	top := uint64(1) << (bits.Len64(v) - 1)
	w := top / 8
	lo = top + (v-top)/w*w
	return lo, lo + w
}

func TestBuildChartDistribution(t *testing.T) {
	plan := testPlan(2, sweepOf(sweep.AxisIODepth, "1", "4", "16", "32"))
	// Each repeat: 3 of 4 I/Os take 10µs, 1 takes 100µs.
	run := testRun(1, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		j := testJob("r", time.Second, testLoad{ios: 30, bs: 4096, lat: 10 * time.Microsecond}, testLoad{})
		for range 10 {
			j.Dirs[bench.Read].Clat.Add(uint64(100 * time.Microsecond))
		}
		j.Dirs[bench.Read].IOs += 10
		return sweeptest.Done(j)
	}))
	c := mustBuild(t, Query{Kind: Distribution}, run)
	doc := checkOption(t, c)
	if got := seriesNames(doc); !slices.Equal(got, []string{"iodepth=1", "iodepth=4", "iodepth=16"}) {
		t.Errorf("series = %q (default iodepths 1, 4, 16)", got)
	}
	if doc.XAxis[0].Type != "log" || !strings.Contains(doc.XAxis[0].Name, "µs") || !strings.Contains(doc.YAxis[0].Name, "%") {
		t.Errorf("axes = %+v %+v", doc.XAxis, doc.YAxis)
	}
	if !slices.Equal(c.Columns, []string{"job", "iodepth", "repeats", "failed", "clat_us", "ios", "percent_ios"}) {
		t.Errorf("columns = %q", c.Columns)
	}

	// Every bin from 10µs's to 100µs's, 1/8 of an octave each: 75 % and
	// 25 % in those two, nothing in between.
	lo10, hi10 := eighthOctave(10000)
	lo100, hi100 := eighthOctave(100000)
	var want [][]string
	for lo := lo10; lo <= lo100; {
		_, hi := eighthOctave(lo)
		ios, pct := "0", "0"
		switch lo {
		case lo10:
			ios, pct = "60", "75"
		case lo100:
			ios, pct = "20", "25"
		}
		want = append(want, []string{"r", "1", "2", "0", csvNum(float64(lo+hi) / 2 / 1000), ios, pct})
		lo = hi
	}
	if hi10-lo10 != 1024 || hi100-lo100 != 8192 || len(want) != 7+8+8+5 {
		t.Fatalf("test's bins are off: [%d,%d) [%d,%d), %d bins", lo10, hi10, lo100, hi100, len(want))
	}
	if got := c.Rows[:len(want)]; !reflect.DeepEqual(got, want) {
		t.Errorf("iodepth 1 rows =\n%s\nwant\n%s", fmtRows(got), fmtRows(want))
	}
	if len(c.Rows) != 3*len(want) {
		t.Errorf("%d rows, want %d", len(c.Rows), 3*len(want))
	}
	pts := seriesValues(doc, 0)
	if len(pts) != len(want) || !reflect.DeepEqual(pts[0], []any{float64(lo10+hi10) / 2 / 1000, 75.0}) {
		t.Errorf("iodepth=1 points = %v", pts)
	}

	// Chosen iodepths, and those a run lacks give no series.
	c = mustBuild(t, Query{Kind: Distribution, IODepths: []int{32, 2}}, run)
	if got := seriesNames(checkOption(t, c)); !slices.Equal(got, []string{"iodepth=32"}) {
		t.Errorf("series = %q", got)
	}
	// Without 1, 4 or 16 in the runs: every iodepth.
	p8 := testPlan(1, sweepOf(sweep.AxisIODepth, "8", "64"))
	r8 := testRun(2, p8, sweeptest.Steps(p8, func(sweep.Step) sweep.StepResult { return sweeptest.Done(testWrites(10)) }))
	if got := seriesNames(checkOption(t, mustBuild(t, Query{Kind: Distribution}, r8))); !slices.Equal(got, []string{"iodepth=8", "iodepth=64"}) {
		t.Errorf("series = %q", got)
	}
}

// More lines of one colour than there are dashes (six rates of one
// engine): the dashes again, each bin marked, so that no two lines look
// alike where they are drawn.
func TestDistributionLinesApart(t *testing.T) {
	plan := testPlan(1, sweepOf(sweep.AxisEngine, "io_uring", "libaio"), sweepOf(sweep.AxisRateIOPS, "max", "20%", "40%", "60%", "80%", "90%"))
	run := testRun(1, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		return sweeptest.Done(testJob("r", time.Second, testLoad{ios: 40 + uint64(s.Seq), bs: 4096, lat: time.Duration(10+s.Seq) * time.Microsecond}, testLoad{}))
	}))
	c := mustBuild(t, Query{Kind: Distribution}, run)
	var doc struct {
		Series []struct {
			Name       string `json:"name"`
			Symbol     string `json:"symbol"`
			ShowSymbol *bool  `json:"showSymbol"`
			LineStyle  struct {
				Color string `json:"color"`
				Type  string `json:"type"`
			} `json:"lineStyle"`
		} `json:"series"`
	}
	if err := json.Unmarshal(c.Option, &doc); err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	uring := 0
	for _, s := range doc.Series {
		marker := "none"
		if s.ShowSymbol == nil || *s.ShowSymbol {
			marker = s.Symbol
		}
		look := s.LineStyle.Color + " " + s.LineStyle.Type + " " + marker
		if w, ok := seen[look]; ok {
			t.Errorf("%q and %q both %s", w, s.Name, look)
		}
		seen[look] = s.Name
		if strings.HasPrefix(s.Name, "io_uring ") {
			uring++
		}
	}
	if uring != 6 {
		t.Errorf("%d io_uring lines drawn, want its six rates: %d series", uring, len(doc.Series))
	}
}
