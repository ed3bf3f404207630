package chart

import (
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

// splitShares are each scheduler's split of the reader's lat into
// submit, queue, device and completion in timeSplitRun.
var splitShares = map[string][4]float64{
	"none":        {0.05, 0.05, 0.85, 0.05},
	"mq-deadline": {0.05, 0.30, 0.60, 0.05},
	"kyber":       {0.05, 0.50, 0.40, 0.05},
	"bfq":         {0.05, 0.50, 0.40, 0.05},
}

// timeSplitRun sweeps the scheduler over a background writer and a
// traced foreground reader, twice: the reader's I/Os take 200 µs
// (repeat 1: 10 % more), split by splitShares. Under mq-deadline the
// trace lost 4 events a step (8 in all), under kyber only 70 % of the reads mapped
// one-to-one, and bfq's steps were not traced.
func timeSplitRun(id int64) LoadedRun {
	plan := testPlan(2, sweepOf(sweep.AxisScheduler, "none", "mq-deadline", "kyber", "bfq"))
	plan.Base.Jobs = []bench.Job{{Name: "bg-writer"}, {Name: "fg-reader"}}
	return testRun(id, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		sched := s.Value(sweep.AxisScheduler)
		lat := time.Duration(200+20*s.Repeat) * time.Microsecond
		w := testJob("bg-writer", time.Second, testLoad{}, testLoad{ios: 200, bs: 1 << 20, lat: 5 * time.Millisecond})
		r := testJob("fg-reader", time.Second, testLoad{ios: 2000, bs: 4096, lat: lat}, testLoad{})
		st := sweeptest.Done(w, r)
		if sched == "bfq" {
			return st
		}
		share := 1.0
		if sched == "kyber" {
			share = 0.7
		}
		sweeptest.Traced(&st.Result.Groups[0].Jobs[1], bench.Read, splitShares[sched], share)
		sweeptest.Traced(&st.Result.Groups[0].Jobs[0], bench.Write, [4]float64{0.01, 0.2, 0.78, 0.01}, 1)
		st.Result.Groups[0].Trace = &bench.BlockTrace{Devices: []string{"7:0"}}
		if sched == "mq-deadline" {
			st.Result.Groups[0].Trace.Dropped = 4
		}
		return st
	}))
}

func TestBuildChartTimeSplit(t *testing.T) {
	run := timeSplitRun(4)
	c := mustBuild(t, Query{Kind: TimeSplit, Job: "fg-reader"}, run)
	cols := []string{"job", "scheduler", "repeats", "traced", "failed", "submit_p50_us", "queue_p50_us", "device_p50_us", "completion_p50_us",
		"lat_p50_us", "timed_pct", "merged", "split", "unmatched", "foreign", "dropped", "missed", "flags"}
	if !slices.Equal(c.Columns, cols) {
		t.Fatalf("columns = %q\nwant      %q", c.Columns, cols)
	}
	if len(c.Rows) != 4 {
		t.Fatalf("rows:\n%s", fmtRows(c.Rows))
	}
	for i, sched := range []string{"none", "mq-deadline", "kyber", "bfq"} {
		row := c.Rows[i]
		if row[1] != sched || row[0] != "fg-reader" || row[2] != "2" {
			t.Errorf("row %d: %q", i, row)
		}
		if sched == "bfq" {
			// Not traced: no numbers, never zeros.
			if row[3] != "0" || slices.ContainsFunc(row[5:], func(s string) bool { return s != "" }) {
				t.Errorf("untraced bfq's row: %q", row)
			}
			continue
		}
		// Each part's median over the two repeats (200 and 220 µs of lat),
		// within the 10 % a bucket spans; the four add up to lat.
		var sum float64
		for k, share := range splitShares[sched] {
			got, _ := strconv.ParseFloat(row[5+k], 64)
			want := share * 210
			if math.Abs(got-want) > 0.1*want {
				t.Errorf("%s: %s p50 %v µs, want %v", sched, splitParts[k].kind, got, want)
			}
			sum += got
		}
		lat, _ := strconv.ParseFloat(row[9], 64)
		if math.Abs(sum-lat) > 0.05*lat {
			t.Errorf("%s: the parts add up to %v µs, lat p50 %v", sched, sum, lat)
		}
		wantFlags := map[string]string{"none": "", "mq-deadline": "8 events lost", "kyber": "70 % timed"}[sched]
		if row[17] != wantFlags {
			t.Errorf("%s: flags %q, want %q", sched, row[17], wantFlags)
		}
	}
	if c.Rows[2][10] != "70" || c.Rows[2][11] != "1200" || c.Rows[1][15] != "8" {
		t.Errorf("kyber's one-to-one share %s%% of %s merged, mq-deadline's dropped %s", c.Rows[2][10], c.Rows[2][11], c.Rows[1][15])
	}

	doc := checkOption(t, c)
	if got, want := seriesNames(doc), []string{"submit", "queue", "device", "completion", "lat p50"}; !slices.Equal(got, want) {
		t.Fatalf("series = %q, want %q", got, want)
	}
	for i := range 4 {
		if doc.Series[i].Type != "bar" || doc.Series[i].Stack != "split" || len(doc.Series[i].Data) != 3 {
			t.Errorf("series %d: %s stack %q, %d bars; want 3 stacked bars", i, doc.Series[i].Type, doc.Series[i].Stack, len(doc.Series[i].Data))
		}
	}
	// bfq is absent, not a zero bar; the flagged schedulers say why
	// under their bars.
	x := doc.XAxis[0].Data
	if len(x) != 3 || x[0] != "none" || x[1] != "mq-deadline\n⚠ 8 events lost" || x[2] != "kyber\n⚠ 70 % timed" {
		t.Errorf("categories = %q", x)
	}
	if !strings.Contains(doc.Title.Subtext, "not traced: bfq") {
		t.Errorf("subtitle %q does not name the untraced scheduler", doc.Title.Subtext)
	}
	if !strings.Contains(string(c.Option), "read with care: 70 % timed") {
		t.Errorf("kyber's bars carry no note")
	}

	// stat=p99 draws the p99s, and the writer's split is its own.
	c = mustBuild(t, Query{Kind: TimeSplit, Job: "bg-writer", Stat: statP99}, run)
	if c.Columns[5] != "submit_p99_us" || c.Rows[0][0] != "bg-writer" {
		t.Errorf("p99 of the writer: columns %q, row %q", c.Columns, c.Rows[0])
	}
	if got, _ := strconv.ParseFloat(c.Rows[0][7], 64); math.Abs(got-0.78*usBucket(5*time.Millisecond)) > 0.1*0.78*5000 {
		t.Errorf("the writer's device p99 %v µs, want about %v", got, 0.78*5000)
	}
}

// TestTimeSplitQuery: stat= is checked at the edge, kept for the time
// split and dropped from other kinds' URLs.
func TestTimeSplitQuery(t *testing.T) {
	for _, tc := range []struct {
		query, want, err string
	}{
		{"kind=timesplit&stat=p99", "kind=timesplit&stat=p99", ""},
		{"kind=timesplit&stat=p50", "kind=timesplit", ""},
		{"kind=latency&stat=p99", "kind=latency", ""},
		{"kind=timesplit&stat=p90", "", "stat: \"p90\" is not a statistic; use p50 or p99"},
	} {
		v, _ := url.ParseQuery(tc.query)
		q, err := ParseQuery(v)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: error %v, want %s", tc.query, err, tc.err)
			}
			continue
		}
		if err != nil || q.Values().Encode() != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.query, q.Values().Encode(), err, tc.want)
		}
	}
}

// The time split is offered for runs with a traced step, on the run and
// compare pages, and for no other.
func TestTimeSplitAvailable(t *testing.T) {
	traced, plain := timeSplitRun(1), testRun(2, testPlan(1), []sweep.StepResult{sweeptest.Done(testWrites(100))})
	has := func(runs ...LoadedRun) bool {
		return slices.ContainsFunc(Available(runs, RunPage), func(k KindSpec) bool { return k.Name == TimeSplit })
	}
	if !has(traced) || has(plain) || !has(traced, plain) {
		t.Errorf("offered: traced %v, untraced %v, both %v", has(traced), has(plain), has(traced, plain))
	}
}

// TestBlockPartCharts: the latency, distribution and fairness charts
// draw a block-layer part (lat=queue…) of a traced run as they draw
// clat, offer the parts in their picker, and say which runs were not
// traced; the kinds that cannot draw a part refuse it.
func TestBlockPartCharts(t *testing.T) {
	run := timeSplitRun(4)
	c := mustBuild(t, Query{Kind: Distribution, Job: "fg-reader", Lat: "queue"}, run)
	if !slices.Contains(c.Columns, "queue_us") {
		t.Errorf("distribution columns %q", c.Columns)
	}
	// Each traced scheduler's queue time is one bin (every read alike
	// in a repeat: two bins over the two repeats), at its share of lat.
	for _, row := range c.Rows {
		sched, us := row[1], row[5]
		if sched == "bfq" {
			if us != "" {
				t.Errorf("untraced bfq has a queue distribution: %q", row)
			}
			continue
		}
		got, _ := strconv.ParseFloat(us, 64)
		if lo, hi := splitShares[sched][1]*200*0.9, splitShares[sched][1]*220*1.1; got < lo || got > hi {
			t.Errorf("%s: queue bin at %v µs, want %v–%v", sched, got, lo, hi)
		}
	}
	doc := checkOption(t, c)
	if !strings.Contains(doc.Title.Subtext, "not traced") && !strings.Contains(doc.Title.Subtext, "timed I/Os") {
		t.Errorf("subtitle %q does not say the part is of the timed I/Os", doc.Title.Subtext)
	}
	var offered []string
	for _, o := range c.Pickers[0].Options {
		offered = append(offered, o.Value)
	}
	if !slices.Equal(offered, []string{"total", "clat", "slat", "submit", "queue", "device", "completion"}) || !c.Pickers[0].Options[4].On {
		t.Errorf("latency picker %+v", c.Pickers[0])
	}

	c = mustBuild(t, Query{Kind: Latency, Job: "fg-reader", Lat: "device", Percentiles: []float64{50}}, run)
	if !slices.Contains(c.Columns, "device_p50_us") {
		t.Errorf("latency columns %q", c.Columns)
	}
	c = mustBuild(t, Query{Kind: Fairness, Lat: "queue"}, run)
	if !slices.Contains(c.Columns, "queue_p99_median_us") {
		t.Errorf("fairness columns %q", c.Columns)
	}
	// An untraced run's pickers offer no part.
	plain := testRun(2, testPlan(1), []sweep.StepResult{sweeptest.Done(testWrites(100))})
	c = mustBuild(t, Query{Kind: Distribution}, plain)
	if len(c.Pickers[0].Options) != 3 {
		t.Errorf("untraced run's latency picker %+v", c.Pickers[0])
	}

	for _, tc := range []struct{ query, err string }{
		{"kind=distribution&lat=queue", ""},
		{"kind=iops&lat=queue", ""}, // no latency drawn: lat= left out
		{"kind=lattime&lat=queue", "lat: queue is a part of the time in the block layer, which the lattime chart does not draw"},
		{"kind=qos&lat=device", "lat: device is a part of the time in the block layer, which the qos chart does not draw"},
		{"kind=latency&lat=wait", "lat: \"wait\" is not a latency"},
	} {
		v, _ := url.ParseQuery(tc.query)
		_, err := ParseQuery(v)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)) {
			t.Errorf("%s: %v, want %q", tc.query, err, tc.err)
		}
	}
}

// TestFairnessQueue: the fairness chart of a traced run draws each job's
// queue part (p50 and p99) beside its latency, its columns before the
// changes; an untraced scheduler's are empty, and an untraced run's
// chart is as it was.
func TestFairnessQueue(t *testing.T) {
	c := mustBuild(t, Query{Kind: Fairness}, timeSplitRun(4))
	at := slices.Index(c.Columns, "queue_p99_median_us")
	if at < 0 || c.Columns[len(c.Columns)-2] != "clat_p99_change_pct" || c.Columns[at-3] != "queue_p50_median_us" {
		t.Fatalf("columns %q", c.Columns)
	}
	for _, row := range c.Rows {
		if row[1] != "fg-reader" {
			continue
		}
		q99, _ := strconv.ParseFloat(row[at], 64)
		if row[0] == "bfq" {
			if row[at] != "" {
				t.Errorf("untraced bfq's queue p99 %q", row[at])
			}
			continue
		}
		// Every read alike: p99 is the slower repeat's (220 µs of lat).
		if want := splitShares[row[0]][1] * 220; math.Abs(q99-want) > 0.1*want {
			t.Errorf("%s: the reader's queue p99 %v µs, want %v", row[0], q99, want)
		}
	}
	doc := checkOption(t, c)
	if names := seriesNames(doc); !slices.Contains(names, "queue p50") || !slices.Contains(names, "queue p99") {
		t.Errorf("series %q", names)
	}
	if !strings.Contains(doc.Title.Subtext, "queue part") {
		t.Errorf("subtitle %q", doc.Title.Subtext)
	}
	run := timeSplitRun(5)
	run.Steps = untraced(run.Steps)
	plain := mustBuild(t, Query{Kind: Fairness}, run)
	if slices.ContainsFunc(plain.Columns, func(c string) bool { return strings.Contains(c, "queue") }) {
		t.Errorf("an untraced run's fairness columns %q", plain.Columns)
	}
}

// untraced is steps without their block-layer times and traces.
func untraced(steps []sweep.StepResult) []sweep.StepResult {
	for i := range steps {
		for g := range steps[i].Result.Groups {
			gr := &steps[i].Result.Groups[g]
			gr.Trace = nil
			for j := range gr.Jobs {
				for d := range gr.Jobs[j].Dirs {
					gr.Jobs[j].Dirs[d].Block = nil
				}
			}
		}
	}
	return steps
}

// An iodepth sweep's time split has a bar per iodepth, named by its
// value under the axis' name, as a scheduler sweep's are.
func TestTimeSplitNumericAxis(t *testing.T) {
	plan := testPlan(1, sweepOf(sweep.AxisIODepth, "1", "4", "16"))
	run := testRun(3, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		qd, _ := strconv.Atoi(s.Value(sweep.AxisIODepth))
		r := testJob("r", time.Second, testLoad{ios: 1000, bs: 4096, lat: time.Duration(qd) * 50 * time.Microsecond}, testLoad{})
		sweeptest.Traced(&r, bench.Read, [4]float64{0.1, 0.3, 0.5, 0.1}, 1)
		return sweeptest.Done(r)
	}))
	c := mustBuild(t, Query{Kind: TimeSplit}, run)
	doc := checkOption(t, c)
	if x := doc.XAxis[0]; !slices.Equal(x.Data, []string{"1", "4", "16"}) || x.Name != "iodepth" || !strings.HasSuffix(c.Title, "per iodepth") {
		t.Errorf("%q: x axis %q %q", c.Title, x.Name, x.Data)
	}
}
