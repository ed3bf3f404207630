package chart

import (
	"slices"
	"testing"

	"iolab/bench/sweep"
)

// A chart whose x axis has one value draws its series side by side as
// bars, never a lone dot or box per series in a wide empty plot: a
// scheduler sweep at one iodepth reads IOPS by scheduler (boxes with
// whiskers) and its latency as bars per percentile. A numjobs sweep
// draws IOPS along numjobs, not one point per numjobs value at its one
// iodepth.
func TestOneX(t *testing.T) {
	fair := fairnessRun(1) // schedulers none and bfq; the reader at iodepth 1
	for _, tc := range []struct {
		name       string
		q          Query
		run        LoadedRun
		title      string
		xName      string
		categories []string
		series     []string
		typ        string
	}{
		{"fairness IOPS", Query{Kind: IOPS}, fair, "IOPS at iodepth 1", "scheduler", []string{"none", "bfq"}, []string{"iodepth 1"}, "bar"},
		{"fairness latency", Query{Kind: Latency}, fair, "Latency percentiles at iodepth 1", "scheduler", []string{"none", "bfq"}, []string{"p50", "p99"}, "bar"},
		{"one series", Query{Kind: Latency, Show: []string{"bfq"}}, fair, "Latency percentiles at iodepth 1", "", []string{"bfq"}, []string{"p50", "p90", "p99", "p99.9", "p99.99"}, "bar"},
		{"numjobs IOPS", Query{Kind: IOPS}, numjobsRun(2, nil), "IOPS vs numjobs", "numjobs", []string{"1", "2", "4"}, []string{"run 2"}, "boxplot"},
		{"numjobs latency", Query{Kind: Latency}, numjobsRun(2, nil), "Latency percentiles vs numjobs", "numjobs", []string{"1", "2", "4"}, []string{"p50", "p90", "p99", "p99.9", "p99.99"}, "line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustBuild(t, tc.q, tc.run)
			doc := checkOption(t, c)
			if c.Title != tc.title {
				t.Errorf("title %q, want %q", c.Title, tc.title)
			}
			if doc.XAxis[0].Name != tc.xName || !slices.Equal(doc.XAxis[0].Data, tc.categories) {
				t.Errorf("x axis %q %q, want %q %q", doc.XAxis[0].Name, doc.XAxis[0].Data, tc.xName, tc.categories)
			}
			if got := plottedNames(doc); !slices.Equal(got, tc.series) {
				t.Errorf("series %q, want %q", got, tc.series)
			}
			whiskers := 0
			for _, s := range doc.Series {
				if s.Type == "custom" {
					whiskers++
					continue
				}
				if s.Type != tc.typ {
					t.Errorf("series %q is a %s, want a %s", s.Name, s.Type, tc.typ)
				}
				if len(s.Data) != len(tc.categories) {
					t.Errorf("series %q has %d points, want one per category (%d)", s.Name, len(s.Data), len(tc.categories))
				}
			}
			// IOPS bars have whiskers min–max; latency bars are merged
			// percentiles, with none.
			if want := tc.typ == "bar" && tc.q.Kind == IOPS; want != (whiskers == 1) {
				t.Errorf("%d series of whiskers", whiskers)
			}
			// The table keeps its x column: the CSV is what was measured.
			if !slices.Contains(c.Columns, "iodepth") && tc.xName != "numjobs" {
				t.Errorf("columns %q lost the iodepth", c.Columns)
			}
		})
	}
}

// The chart of what a run sweeps comes first: scaling for numjobs,
// fairness for the scheduler (when it has two jobs to be fair between),
// QoS for rate_iops, IOPS for iodepth; with two swept axes, the plan's
// first.
func TestSweptFirst(t *testing.T) {
	nj := numjobsRun(1, nil)
	njDepth := testRun(2, testPlan(1, sweepOf(sweep.AxisIODepth, "1", "4"), sweepOf(sweep.AxisNumJobs, "1", "2")), nil)
	depthNJ := testRun(3, testPlan(1, sweepOf(sweep.AxisNumJobs, "1", "2"), sweepOf(sweep.AxisIODepth, "1", "4")), nil)
	for _, r := range []*LoadedRun{&njDepth, &depthNJ} {
		r.Steps = numjobsRun(0, nil).Steps[:1] // a done step: Available draws
	}
	for _, tc := range []struct {
		name  string
		runs  []LoadedRun
		first Kind
	}{
		{"numjobs", []LoadedRun{nj}, Scaling},
		{"scheduler, two jobs", []LoadedRun{fairnessRun(4)}, Fairness},
		{"rate_iops", []LoadedRun{qosRun(5)}, QoS},
		{"iodepth × engine", []LoadedRun{engineSweep([]string{"libaio", "io_uring"})}, IOPS},
		{"iodepth, then numjobs", []LoadedRun{njDepth}, IOPS},
		{"numjobs, then iodepth", []LoadedRun{depthNJ}, Scaling},
		{"compared numjobs sweeps", []LoadedRun{nj, numjobsRun(6, nil)}, Scaling},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kinds := kindsOf(Available(tc.runs, RunPage|ComparePage))
			if len(kinds) == 0 || kinds[0] != tc.first {
				t.Errorf("kinds %q, want %s first", kinds, tc.first)
			}
		})
	}
}

// plottedNames are the names of a chart's plotted series: not those of
// the error bars drawn over them, which share their bars' names.
func plottedNames(doc *optionDoc) []string {
	var names []string
	for _, s := range doc.Series {
		if s.Type != "custom" {
			names = append(names, s.Name)
		}
	}
	return names
}
