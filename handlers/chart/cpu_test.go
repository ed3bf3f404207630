package chart

import (
	"encoding/json"
	"math"
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
	checkTable(t, c, []string{"ioengine", "repeats", "failed", "busy_pct", "irq_pct", "iowait_pct", "idle_pct", "other_pct"}, [][]string{
		{"io_uring", "2", "0", "15.5", "3.5", "30", "51", "0"},
		{"libaio", "1", "1", "18", "6", "30", "46", "0"},
	})
	doc := checkOption(t, c)
	if got := seriesNames(doc); !slices.Equal(got, []string{"busy (us+sy)", "irq (hi+si)", "iowait", "idle", "other"}) {
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

// stackSums are the sums of each category's stacked parts.
func stackSums(t *testing.T, doc *optionDoc) []float64 {
	t.Helper()
	sums := make([]float64, len(doc.XAxis[0].Data))
	for i := range doc.Series {
		for x, v := range seriesValues(doc, i) {
			f, ok := v.(float64)
			if !ok {
				t.Fatalf("series %s at %d: %v", doc.Series[i].Name, x, v)
			}
			sums[x] += f
		}
	}
	return sums
}

// Three repeats whose parts each add up to 100 %, but not their
// medians: busy's median comes from one repeat, idle's from another.
// The stack is topped up with other to 100 %; medians that add up to
// more are scaled down to it.
func TestCPUStacksAddUpTo100(t *testing.T) {
	repeats := map[string][]system.CPUBreakdown{
		"io_uring": { // medians 25 + 0 + 10 + 50 = 85: other 15
			{User: 5, System: 5, IOWait: 40, Idle: 50},
			{User: 30, System: 10, IOWait: 10, Idle: 50},
			{User: 20, System: 5, IOWait: 5, Idle: 70},
		},
		"libaio": { // medians 30 + 0 + 20 + 60 = 110: scaled by 100/110
			{User: 30, IOWait: 10, Idle: 60},
			{User: 30, IOWait: 20, Idle: 50},
			{User: 20, IOWait: 20, Idle: 60},
		},
	}
	plan := testPlan(3, sweepOf(sweep.AxisEngine, "io_uring", "libaio"))
	run := testRun(4, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		r := sweeptest.Done(testWrites(1000))
		r.CPU = repeats[s.Value(sweep.AxisEngine)][s.Repeat]
		return r
	}))
	c := mustBuild(t, Query{Kind: CPU}, run)
	doc := checkOption(t, c)
	for x, sum := range stackSums(t, doc) {
		if math.Abs(sum-100) > 0.5 {
			t.Errorf("%s: the stack adds up to %v %%", doc.XAxis[0].Data[x], sum)
		}
	}
	if got := seriesValues(doc, 4); !reflect.DeepEqual(got, []any{15.0, 0.0}) {
		t.Errorf("other = %v, want 15 and 0", got)
	}
	if got := seriesValues(doc, 0); math.Abs(got[1].(float64)-100*30.0/110) > 1e-9 {
		t.Errorf("libaio's busy %v, want its median scaled to 100 %%", got[1])
	}
	if !strings.Contains(doc.Title.Subtext, "other: what the parts' medians leave of 100 %") {
		t.Errorf("subtitle %q does not say what other is", doc.Title.Subtext)
	}
}

// Long values are wrapped, not run into their neighbours' labels:
// io_uring+sqpoll beside libaio.
func TestCPULabelsWrap(t *testing.T) {
	plan := testPlan(1, sweepOf(sweep.AxisEngine, "io_uring+sqpoll", "libaio", "io_uring+sqpoll+hipri"), sweepOf(sweep.AxisIODepth, "1", "32"))
	run := testRun(5, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		r := sweeptest.Done(testWrites(1000))
		r.CPU = system.CPUBreakdown{User: 20, Idle: 80}
		return r
	}))
	c := mustBuild(t, Query{Kind: CPU}, run)
	doc := checkOption(t, c)
	want := []string{"io_uring\n+sqpoll\n1", "io_uring\n+sqpoll\n32", "libaio\n1", "libaio\n32", "io_uring\n+sqpoll\n+hipri\n1", "io_uring\n+sqpoll\n+hipri\n32"}
	if got := doc.XAxis[0].Data; !slices.Equal(got, want) {
		t.Errorf("categories %q, want %q", got, want)
	}
	for _, cat := range doc.XAxis[0].Data {
		for _, line := range strings.Split(cat, "\n") {
			if len(line) > 8 {
				t.Errorf("label line %q of %q: longer than a bar is wide", line, cat)
			}
		}
	}
	// Every label shown, its lines spaced, the axis' name below the
	// tallest (four lines).
	var opt struct {
		XAxis []struct {
			NameGap   float64 `json:"nameGap"`
			AxisLabel struct {
				Interval   string  `json:"interval"`
				LineHeight float64 `json:"lineHeight"`
			} `json:"axisLabel"`
		} `json:"xAxis"`
	}
	if err := json.Unmarshal(c.Option, &opt); err != nil {
		t.Fatal(err)
	}
	if x := opt.XAxis[0]; x.AxisLabel.Interval != "0" || x.AxisLabel.LineHeight < 12 || x.NameGap < 4*14 {
		t.Errorf("x axis %+v", x)
	}
	// The CSV keeps the values whole.
	if c.Rows[0][0] != "io_uring+sqpoll" {
		t.Errorf("CSV row %q", c.Rows[0])
	}
}

// The parts' colours are none of the palette's, which colours the
// values of the page's other charts (engines, schedulers, numjobs), and
// no two parts share one.
func TestCPUColoursAreNoValues(t *testing.T) {
	seen := map[string]string{}
	for _, p := range append(cpuParts, cpuOther) {
		if slices.Contains(palette, p.color) {
			t.Errorf("%s in %s, a colour of the palette", p.name, p.color)
		}
		if w, ok := seen[p.color]; ok {
			t.Errorf("%s and %s both in %s", w, p.name, p.color)
		}
		seen[p.color] = p.name
	}
}
