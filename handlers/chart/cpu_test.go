package chart

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
	"iolab/bench/system"
)

func TestBuildChartCPU(t *testing.T) {
	plan := testPlan(2, sweepOf(sweep.AxisEngine, "io_uring", "libaio"))
	run := testRun(2, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		if s.Seq == 2 {
			r := sweeptest.Failed("boom")
			r.CPU = system.CPUBreakdown{User: 99}
			return r
		}
		r := sweeptest.Done(testWrites(1000))
		k := float64(s.Seq)
		r.CPU = system.CPUBreakdown{User: 10 + k, System: 5, IRQ: 1, SoftIRQ: 2 + k, IOWait: 30, Idle: 52 - 2*k}
		return r
	}))
	c := mustBuild(t, Query{Kind: CPU}, run)
	// By the swept value, the median of the done repeats.
	checkTable(t, c, []string{"ioengine", "repeats", "failed", "busy_pct", "irq_pct", "iowait_pct", "idle_pct"}, [][]string{
		{"io_uring", "2", "0", "15.5", "3.5", "30", "51"},
		{"libaio", "1", "1", "18", "6", "30", "46"},
	})
	doc := checkOption(t, c)
	if got := seriesNames(doc); !slices.Equal(got, []string{"busy (us+sy)", "irq (hi+si)", "iowait", "idle"}) {
		t.Errorf("series = %q", got)
	}
	for i, s := range doc.Series {
		if s.Type != "bar" || s.Stack != "run 2" {
			t.Errorf("series %d is %s stacked %q", i, s.Type, s.Stack)
		}
	}
	if got := seriesValues(doc, 0); !reflect.DeepEqual(got, []any{15.5, 18.0}) {
		t.Errorf("busy = %v", got)
	}
	if !slices.Equal(doc.XAxis[0].Data, []string{"io_uring", "libaio"}) || doc.XAxis[0].Name != "ioengine" || !strings.Contains(doc.YAxis[0].Name, "%") {
		t.Errorf("axes %+v %+v", doc.XAxis, doc.YAxis)
	}
}
