package chart

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

// numjobsRun sweeps numjobs 1, 2, 4 with 2 repeats, IOPS from iops.
func numjobsRun(id int64, iops map[string][2]uint64) LoadedRun {
	plan := testPlan(2, sweepOf(sweep.AxisNumJobs, "1", "2", "4"))
	return testRun(id, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		return sweeptest.Done(testWrites(iops[s.Value(sweep.AxisNumJobs)][s.Repeat]))
	}))
}

func TestBuildChartScaling(t *testing.T) {
	run := numjobsRun(6, map[string][2]uint64{"1": {100, 120}, "2": {200, 220}, "4": {300, 340}})
	c := mustBuild(t, Query{Kind: Scaling}, run)
	g2 := 100 * (210.0 - 110) / 110
	g4 := 100 * (320.0 - 210) / 210
	// Efficiency: the median against numjobs × numjobs=1's median.
	e2, e4 := 100*210.0/220, 100*320.0/440
	checkTable(t, c, []string{"job", "numjobs", "repeats", "failed", "iops_min", "iops_median", "iops_max", "iops_cv", "noisy", "growth_pct", "efficiency_pct"}, [][]string{
		{"randwrite", "1", "2", "0", "100", "110", "120", csvNum(cv(100, 120)), "true", "", "100"},
		{"randwrite", "2", "2", "0", "200", "210", "220", csvNum(cv(200, 220)), "false", csvNum(g2), csvNum(e2)},
		{"randwrite", "4", "2", "0", "300", "320", "340", csvNum(cv(300, 340)), "false", csvNum(g4), csvNum(e4)},
	})
	doc := checkOption(t, c)
	// The bars, their whiskers (min–max) and the linear-scaling line.
	if !slices.Equal(seriesNames(doc), []string{"randwrite", "randwrite", "linear scaling"}) ||
		!reflect.DeepEqual(seriesValues(doc, 1)[2], []any{2.0, 300.0, 340.0, 0.0, 1.0}) ||
		!reflect.DeepEqual(seriesValues(doc, 2), []any{110.0, 220.0, 440.0}) || !slices.Equal(doc.XAxis[0].Data, []string{"1", "2", "4"}) || doc.XAxis[0].Name != "numjobs" {
		t.Errorf("series %q, x %+v", seriesNames(doc), doc.XAxis)
	}
	var labels []string
	for _, d := range doc.Series[0].Data {
		if d.Label != nil {
			labels = append(labels, d.Label.Formatter)
		}
	}
	if !slices.Equal(labels, []string{"+91%\n95.5% eff.", "+52%\n72.7% eff."}) {
		t.Errorf("growth labels = %q", labels)
	}

	// Not sweeping numjobs does not fit.
	_, err := Build(Query{Kind: Scaling}, []LoadedRun{run, iodepthEngineRun(3, engineIOPS, [3]string{})})
	var ve *QueryError
	if !errors.As(err, &ve) || !strings.Contains(ve.Msg, "run 3 does not sweep numjobs") {
		t.Errorf("scaling of a run without numjobs: %v", err)
	}
}
