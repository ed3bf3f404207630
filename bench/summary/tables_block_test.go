package summary

import (
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

// TestSummaryTimeSplit: a traced fairness sweep ends with where each
// job's time went per scheduler — the timed I/Os at lat's p50 and p99
// split into parts that add up to that lat, medians over the repeats —
// and a job whose I/Os mostly merged is marked, with the mark explained;
// a step traced before the parts were kept by lat shows each part's own
// percentiles, marked; an untraced plan has no such table.
func TestSummaryTimeSplit(t *testing.T) {
	plan := synthPlan(3, sweep.Sweep{Axis: sweep.AxisScheduler, Values: []string{"mq-deadline", "kyber"}})
	plan.Base = bench.Config{Jobs: []bench.Job{
		{Name: "bg-writer", RW: "write", BS: 1 << 20, IODepth: 16},
		{Name: "fg-reader", RW: "randread", BS: 4096, IODepth: 1},
	}}
	traced := true
	results := synthSteps(plan, func(s sweep.Step) sweep.StepResult {
		readerLat := 4 * time.Millisecond
		if s.Value(sweep.AxisScheduler) == "kyber" {
			readerLat = time.Millisecond
		}
		w := synthJob("bg-writer", time.Second, synthLoad{}, synthLoad{ios: 400, bs: 1 << 20, lat: 40 * time.Millisecond})
		r := synthJob("fg-reader", time.Second, synthLoad{ios: 250, bs: 4096, lat: readerLat}, synthLoad{})
		if traced {
			// The reader's lat is mostly queueing behind the writer; the
			// writer's I/Os mostly merged.
			sweeptest.Traced(&r, bench.Read, [4]float64{0.05, 0.75, 0.15, 0.05}, 1)
			sweeptest.Traced(&w, bench.Write, [4]float64{0.01, 0.29, 0.6, 0.1}, 0.4)
		}
		return doneStep(w, r)
	})
	text := summaryText(t, plan, results)
	_, table, ok := strings.Cut(text, "Where the time went (--trace-block): the timed I/Os at lat's p50 / p99, split, medians of 3 repeats\n\n")
	if !ok {
		t.Fatalf("no time split table:\n%s", text)
	}
	lines := strings.Split(table, "\n")
	if h := strings.Fields(lines[0]); strings.Join(h, " ") != "scheduler job submit queue device completion lat timed" {
		t.Errorf("header %q", lines[0])
	}
	reader := strings.Fields(lines[2])
	// The reader under mq-deadline: 4 ms of lat, 3 ms of it queueing
	// (fio's histogram buckets hold values to within 1/64).
	if len(reader) < 17 || reader[0] != "fg-reader" || !strings.HasPrefix(reader[4], "3.0") || !strings.HasPrefix(reader[13], "4.0") || reader[16] != "100" {
		t.Errorf("the reader's row under mq-deadline: %q", lines[2])
	}
	writer := lines[1]
	if !strings.Contains(writer, "mq-deadline") || !strings.Contains(writer, "bg-writer") || !strings.HasSuffix(strings.TrimSpace(writer), "40 % ?") {
		t.Errorf("the writer's row: %q (want 40 %% timed, marked)", writer)
	}
	if !strings.Contains(lines[3], "kyber") || !strings.Contains(text, "?   few timed: under 90 % of the job's I/Os") {
		t.Errorf("kyber's rows or the mark's legend missing:\n%s", text)
	}
	// Each row's parts add up to its lat, at p50 and at p99.
	for _, line := range lines[1:5] {
		cells := strings.Fields(line)
		job := slices.IndexFunc(cells, func(c string) bool { return strings.HasSuffix(c, "-writer") || strings.HasSuffix(c, "-reader") })
		cells = cells[job+1 : job+16]
		for _, at := range []int{0, 2} {
			var sum time.Duration
			for k := range 4 {
				sum += parseNanos(t, cells[3*k+at])
			}
			if lat := parseNanos(t, cells[12+at]); sum < lat*98/100 || sum > lat*102/100 {
				t.Errorf("%q: the parts add up to %v, lat is %v", line, sum, lat)
			}
		}
	}
	if strings.Contains(text, "need not add up") {
		t.Errorf("a note for the parts' own percentiles where none were shown:\n%s", text)
	}

	// Traced before the parts were kept by lat: each part's own
	// percentiles, marked.
	for i := range results {
		for g := range results[i].Result.Groups {
			for j := range results[i].Result.Groups[g].Jobs {
				for d := range results[i].Result.Groups[g].Jobs[j].Dirs {
					if b := results[i].Result.Groups[g].Jobs[j].Dirs[d].Block; b != nil {
						b.ByLat = nil
					}
				}
			}
		}
	}
	if text := summaryText(t, plan, results); !strings.Contains(text, "fg-reader [1]") || !strings.Contains(text, "[1] each part's own p50 / p99 and lat's of all the job's I/Os") {
		t.Errorf("steps traced without the split by lat, unmarked:\n%s", text)
	}

	traced = false
	results = synthSteps(plan, func(s sweep.Step) sweep.StepResult {
		return doneStep(synthJob("fg-reader", time.Second, synthLoad{ios: 250, bs: 4096, lat: time.Millisecond}, synthLoad{}))
	})
	if text := summaryText(t, plan, results); strings.Contains(text, "Where the time went") {
		t.Errorf("an untraced plan's summary has a time split:\n%s", text)
	}
}

// parseNanos reads a latency as units.Nanos writes it.
func parseNanos(t *testing.T, s string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return d
}
