package chart

import (
	"reflect"
	"slices"
	"testing"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

// engineRun is a run on kernel sweeping iodepth 1, 16 × io_uring, libaio
// with 3 repeats, IOPS from engineIOPS scaled by factor.
func engineRun(id int64, kernel string, factor float64) LoadedRun {
	scaled := map[[2]string][3]uint64{}
	for k, v := range engineIOPS {
		for i := range v {
			v[i] = uint64(float64(v[i]) * factor)
		}
		scaled[k] = v
	}
	r := iodepthEngineRun(id, scaled, [3]string{"16", "io_uring", "0"})
	r.Run.Kernel = kernel
	return r
}

func TestBuildMaxIOPS(t *testing.T) {
	a, b := engineRun(1, "6.12.0", 1), engineRun(2, "6.1.0", 0.5)
	// Run 3 ran libaio alone, on the same kernel as run 2.
	plan := testPlan(2, sweepOf(sweep.AxisIODepth, "1", "4"))
	plan.Base.Jobs = []bench.Job{{Name: "w", IOEngine: "libaio"}}
	c := testRun(3, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		w := testWrites(3000 + 1000*uint64(s.Repeat))
		if s.Value(sweep.AxisIODepth) == "1" {
			w = testWrites(1000)
		}
		w.Name = "w"
		return sweeptest.Done(w)
	}))
	c.Run.Kernel = "6.1.0"

	ch := mustBuild(t, Query{Kind: MaxIOPS}, a, b, c)
	// io_uring at 16 lost its first repeat: the median of the other two.
	uring := spread3(160000, 155000)[1]
	libaio := spread3(120000, 100000, 130000)[1]
	checkTable(t, ch, []string{"kernel", "ioengine", "job", "max_iops", "at"}, [][]string{
		{"6.12.0", "io_uring", "randwrite", csvNum(uring), "iodepth=16 ioengine=io_uring"},
		{"6.1.0 (run 2)", "io_uring", "randwrite", csvNum(uring / 2), "iodepth=16 ioengine=io_uring"},
		{"6.12.0", "libaio", "randwrite", csvNum(libaio), "iodepth=16 ioengine=libaio"},
		{"6.1.0 (run 2)", "libaio", "randwrite", csvNum(libaio / 2), "iodepth=16 ioengine=libaio"},
		{"6.1.0 (run 3)", "libaio", "w", "3500", "iodepth=4"},
	})
	doc := checkOption(t, ch)
	if got := seriesNames(doc); !slices.Equal(got, []string{"io_uring", "libaio"}) {
		t.Errorf("series = %q", got)
	}
	if len(doc.XAxis) != 1 || doc.XAxis[0].Name != "kernel" || !slices.Equal(doc.XAxis[0].Data, []string{"6.12.0", "6.1.0 (run 2)", "6.1.0 (run 3)"}) {
		t.Errorf("x axis = %+v", doc.XAxis)
	}
	if len(doc.YAxis) != 1 || doc.YAxis[0].Name != "IOPS" {
		t.Errorf("y axis = %+v", doc.YAxis)
	}
	for i, s := range doc.Series {
		if s.Type != "bar" {
			t.Errorf("series %d is a %s", i, s.Type)
		}
	}
	if got := seriesValues(doc, 0); !reflect.DeepEqual(got, []any{uring, uring / 2, "-"}) {
		t.Errorf("io_uring bars = %v", got)
	}
}
