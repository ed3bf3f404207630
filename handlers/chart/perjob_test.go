package chart

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

// fairnessRun is a sched-fairness run: a 1 MiB writer at iodepth 16 and
// a 4 KiB reader at iodepth 1 in every step, none and bfq, 3 repeats.
func fairnessRun(id int64) LoadedRun {
	plan := testPlan(3, sweepOf(sweep.AxisScheduler, "none", "bfq"))
	plan.Preset = "sched-fairness"
	plan.Base.Jobs = []bench.Job{
		{Name: "bg-writer", RW: "write", BS: 1 << 20, IODepth: 16, IOEngine: "libaio"},
		{Name: "fg-reader", RW: "randread", BS: 4096, IODepth: 1, IOEngine: "libaio"},
	}
	return testRun(id, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		w := testJob("bg-writer", time.Second, testLoad{}, testLoad{ios: 400, bs: 1 << 20, lat: 40 * time.Millisecond})
		r := testJob("fg-reader", time.Second, testLoad{ios: 250 + 10*uint64(s.Repeat), bs: 4096, lat: 4 * time.Millisecond}, testLoad{})
		return sweeptest.Done(w, r)
	}))
}

// The charts of one job draw that job alone: the one the preset measures
// unless job= names another, at that job's own iodepth.
func TestChartsDrawOneJob(t *testing.T) {
	run := fairnessRun(2)
	if got := run.DefaultJob(); got != "fg-reader" {
		t.Fatalf("DefaultJob = %q, want the reader sched-fairness measures", got)
	}
	if got := run.Jobs(); !slices.Equal(got, []string{"bg-writer", "fg-reader"}) {
		t.Errorf("Jobs = %q", got)
	}

	// Default: the reader, at its iodepth 1, never the writer added.
	c := mustBuild(t, Query{Kind: IOPS}, run)
	checkTable(t, c, []string{"job", "iodepth", "scheduler", "repeats", "failed", "iops_min", "iops_median", "iops_max", "iops_cv", "noisy"}, [][]string{
		{"fg-reader", "1", "none", "3", "0", "250", "260", "270", csvNum(cv(250, 260, 270)), "false"},
		{"fg-reader", "1", "bfq", "3", "0", "250", "260", "270", csvNum(cv(250, 260, 270)), "false"},
	})
	doc := checkOption(t, c)
	if !slices.Equal(plottedNames(doc), []string{"iodepth 1"}) || !slices.Equal(doc.XAxis[0].Data, []string{"none", "bfq"}) {
		t.Errorf("series %q, x categories = %q, want the schedulers at the reader's iodepth 1", plottedNames(doc), doc.XAxis[0].Data)
	}
	if !strings.Contains(string(c.Option), "job fg-reader") {
		t.Errorf("the chart does not say which job it draws: %s", c.Option)
	}

	// job= picks the writer, at its iodepth 16.
	c = mustBuild(t, Query{Kind: IOPS, Job: "bg-writer"}, run)
	if len(c.Rows) != 2 || c.Rows[0][0] != "bg-writer" || c.Rows[0][1] != "16" || c.Rows[0][6] != "400" {
		t.Errorf("writer rows = %q", c.Rows)
	}

	// Latency: the reader's 4 ms, not a mix of both jobs.
	c = mustBuild(t, Query{Kind: Latency, Percentiles: []float64{50, 99}}, run)
	for _, r := range c.Rows {
		if r[0] != "fg-reader" || r[6] != csvNum(usBucket(4*time.Millisecond)) || r[8] != csvNum(usBucket(4*time.Millisecond)) {
			t.Errorf("latency row = %q, want the reader's 4 ms alone", r)
		}
	}

	// Distribution: one peak, the reader's.
	c = mustBuild(t, Query{Kind: Distribution}, run)
	peaks := 0
	for _, r := range c.Rows {
		if r[len(r)-1] != "0" {
			peaks++
		}
	}
	if peaks != 2 { // one per scheduler
		t.Errorf("distribution has %d non-empty bins over 2 schedulers, want one each:\n%s", peaks, fmtRows(c.Rows))
	}

	// The fairness chart still draws both, a column of axes each.
	c = mustBuild(t, Query{Kind: Fairness, Job: "bg-writer"}, run)
	if doc := checkOption(t, c); len(doc.YAxis) != 4 || !strings.HasPrefix(doc.YAxis[0].Name, "bg-writer ") || !strings.HasPrefix(doc.YAxis[2].Name, "fg-reader ") {
		t.Errorf("fairness y axes = %+v", doc.YAxis)
	}

	// A job the run does not have.
	_, err := Build(Query{Kind: IOPS, Job: "nope"}, []LoadedRun{run})
	var qe *QueryError
	if !errors.As(err, &qe) || qe.Field != "job" || !strings.Contains(qe.Msg, "bg-writer, fg-reader") {
		t.Errorf("job=nope: %v, want a job error listing the run's jobs", err)
	}

	// Without a preset, the first job.
	plain := fairnessRun(3)
	plain.Run.Plan.Preset = ""
	if got := plain.DefaultJob(); got != "bg-writer" {
		t.Errorf("DefaultJob without a preset = %q, want the first job", got)
	}
}

// job= is part of the URL of the kinds that draw one job, and of no other.
func TestChartQueryJob(t *testing.T) {
	q := Query{Kind: Latency, Runs: []int64{2}, Job: "fg-reader"}
	v := q.Values()
	if v.Encode() != "job=fg-reader&kind=latency&run=2" {
		t.Errorf("Values = %q", v.Encode())
	}
	if got, err := ParseQuery(v); err != nil || !reflect.DeepEqual(got, q) {
		t.Errorf("ParseQuery(Values) = %+v, %v; want %+v", got, err, q)
	}
	if enc := (Query{Kind: Fairness, Runs: []int64{2}, Job: "fg-reader"}).Values().Encode(); enc != "kind=fairness&run=2" {
		t.Errorf("fairness Values = %q, want no job: it draws every job", enc)
	}
	if _, err := ParseQuery(map[string][]string{"job": {"a", "b"}}); err == nil {
		t.Error("job given twice is not an error")
	}
}

// A noisy point is marked on the chart and in its table; a percentile
// of too few I/Os is drawn hollow and said to be unreliable.
func TestChartsFlagNoiseAndUnreliablePercentiles(t *testing.T) {
	plan := testPlan(3, sweepOf(sweep.AxisScheduler, "none", "bfq"))
	iops := map[string][3]uint64{"none": {10000, 10100, 9900}, "bfq": {208, 42300, 30000}}
	run := testRun(1, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		return sweeptest.Done(testWrites(iops[s.Value(sweep.AxisScheduler)][s.Repeat]))
	}))
	c := mustBuild(t, Query{Kind: IOPS}, run)
	if c.Rows[0][len(c.Rows[0])-1] != "false" || c.Rows[1][len(c.Rows[1])-1] != "true" {
		t.Errorf("noisy column: %q", c.Rows)
	}
	var doc struct {
		Series []struct {
			Data json.RawMessage `json:"data"`
		} `json:"series"`
	}
	var bars []struct {
		Note      string `json:"note"`
		N         int    `json:"n"`
		ItemStyle *struct {
			BorderWidth float64 `json:"borderWidth"`
		} `json:"itemStyle"`
	}
	checkOption(t, c)
	if err := json.Unmarshal(c.Option, &doc); err != nil {
		t.Fatal(err)
	}
	// One x value: a bar per scheduler, side by side (oneX); their
	// whiskers follow.
	if err := json.Unmarshal(doc.Series[0].Data, &bars); err != nil || len(bars) != 2 {
		t.Fatalf("bars %s: %v", doc.Series[0].Data, err)
	}
	none, bfq := bars[0], bars[1]
	if none.ItemStyle == nil || none.ItemStyle.BorderWidth > 2 || none.Note != "" || none.N == 0 {
		t.Errorf("none's box is marked: %+v", none)
	}
	if bfq.ItemStyle == nil || bfq.ItemStyle.BorderWidth < 3 || !strings.Contains(bfq.Note, "noisy: CV") {
		t.Errorf("bfq's box is not marked noisy: %+v", bfq)
	}

	// 10k I/Os per point: p99 is worth reading, p99.99 is not.
	c = mustBuild(t, Query{Kind: Latency, Percentiles: []float64{99, 99.99}}, run)
	if got := c.Rows[0][6:]; got[1] != "true" || got[3] != "false" {
		t.Errorf("reliable columns = %q, want p99 true, p99.99 false", got)
	}
	var line struct {
		Series []struct {
			Name string `json:"name"`
			Data []struct {
				Note      string `json:"note"`
				Symbol    string `json:"symbol"`
				ItemStyle struct {
					BorderType string `json:"borderType"`
				} `json:"itemStyle"`
			} `json:"data"`
		} `json:"series"`
	}
	if err := json.Unmarshal(c.Option, &line); err != nil {
		t.Fatal(err)
	}
	p99, p9999 := line.Series[0].Data[0], line.Series[1].Data[0]
	// One x value: bars, a percentile's hollow and dashed when unreliable
	// (oneX), as a line's point is hollow.
	if p99.ItemStyle.BorderType != "" || strings.Contains(p99.Note, "unreliable") {
		t.Errorf("p99 of 30,000 I/Os is marked: %+v", p99)
	}
	if p9999.ItemStyle.BorderType != "dashed" || !strings.Contains(p9999.Note, "unreliable") || !strings.Contains(p9999.Note, "100000") {
		t.Errorf("p99.99 of 30,000 I/Os is not marked unreliable: %+v (series %q)", p9999, line.Series[1].Name)
	}
}

// A sweep of one value (numjobs=1 from a form's default) is no axis: no
// legend names it and there is no scaling chart.
func TestChartsOneValueSweep(t *testing.T) {
	plan := testPlan(1, sweepOf(sweep.AxisScheduler, "none", "bfq"), sweepOf(sweep.AxisNumJobs, "1"))
	run := testRun(1, plan, sweeptest.Steps(plan, func(sweep.Step) sweep.StepResult { return sweeptest.Done(testWrites(100)) }))
	// One x value: the series are the categories (oneX).
	if got := checkOption(t, mustBuild(t, Query{Kind: IOPS}, run)).XAxis[0].Data; !slices.Equal(got, []string{"none", "bfq"}) {
		t.Errorf("categories = %q, want no numjobs=1 in them", got)
	}
	if slices.Contains(kindsOf(Available([]LoadedRun{run}, RunPage)), Scaling) {
		t.Error("a one-value numjobs sweep offers the scaling chart")
	}
	c := mustBuild(t, Query{Kind: CPU}, run)
	if slices.Contains(c.Columns, "numjobs") {
		t.Errorf("CPU columns = %q, want no numjobs", c.Columns)
	}
}

// A group's entries are fio's: a job with group_reporting reports in the
// entry before it, whatever that one's; only entries are jobs to pick.
func TestRunJobsGroupReporting(t *testing.T) {
	plan := testPlan(1, sweepOf(sweep.AxisIODepth, "1", "4"))
	jobs := []bench.Job{{Name: "a", GroupReporting: true, NumJobs: 2}, {Name: "b"}, {Name: "c", GroupReporting: true},
		{Name: "d", NewGroup: true, GroupReporting: true}, {Name: "e", GroupReporting: true}}
	plan.Base.Jobs, plan.Base.Groups = jobs, bench.Expand(jobs)
	r := testRun(1, plan, nil)
	if got := r.Jobs(); !slices.Equal(got, []string{"a", "b", "d"}) {
		t.Errorf("Jobs = %q, want a (its clones), b (and c, which joins it) and d (and e)", got)
	}
}
