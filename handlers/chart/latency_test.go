package chart

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench/hist"
	"iolab/bench/stats"
	"iolab/bench/sweep"
	"iolab/bench/sweep/sweeptest"
)

// usBucket is, in µs, the value bench's histogram reports for a latency.
func usBucket(d time.Duration) float64 {
	return float64(hist.BucketValue(hist.BucketIndex(uint64(d)))) / 1000
}

func TestBuildChartLatency(t *testing.T) {
	plan := testPlan(2, sweepOf(sweep.AxisIODepth, "1", "4"), sweepOf(sweep.AxisEngine, "libaio", "io_uring"))
	// Repeat 0 completes every I/O in 50µs, repeat 1 in 1ms (iodepth 4: 4×
	// as long); io_uring is twice as fast. Merged, p50 is the fast repeat's
	// and p90 and above the slow one's.
	lat := func(s sweep.Step) time.Duration {
		d := 50 * time.Microsecond
		if s.Repeat == 1 {
			d = time.Millisecond
		}
		if s.Value(sweep.AxisIODepth) == "4" {
			d *= 4
		}
		if s.Value(sweep.AxisEngine) == "io_uring" {
			d /= 2
		}
		return d
	}
	run := testRun(9, plan, sweeptest.Steps(plan, func(s sweep.Step) sweep.StepResult {
		if s.Value(sweep.AxisIODepth) == "4" && s.Value(sweep.AxisEngine) == "io_uring" && s.Repeat == 1 {
			return sweeptest.Failed("boom")
		}
		return sweeptest.Done(testJob("r", time.Second, testLoad{ios: 100, bs: 4096, lat: lat(s)}, testLoad{}))
	}))

	c := mustBuild(t, Query{Kind: Latency, Percentiles: []float64{50, 90, 99.9}}, run)
	us := func(d time.Duration) string { return csvNum(usBucket(d)) }
	// 200 I/Os vouch for p50 and p90 (20 and 100 needed), not p99.9. The
	// series are engines: lat by default (here slat is 0, lat = clat).
	checkTable(t, c, []string{"job", "iodepth", "ioengine", "repeats", "failed", "ios",
		"lat_p50_us", "lat_p50_reliable", "lat_p90_us", "lat_p90_reliable", "lat_p99.9_us", "lat_p99.9_reliable"}, [][]string{
		{"r", "1", "libaio", "2", "0", "200", us(50 * time.Microsecond), "true", us(time.Millisecond), "true", us(time.Millisecond), "false"},
		{"r", "4", "libaio", "2", "0", "200", us(200 * time.Microsecond), "true", us(4 * time.Millisecond), "true", us(4 * time.Millisecond), "false"},
		{"r", "1", "io_uring", "2", "0", "200", us(25 * time.Microsecond), "true", us(500 * time.Microsecond), "true", us(500 * time.Microsecond), "false"},
		// The failed repeat is left out: only the fast one remains.
		{"r", "4", "io_uring", "1", "1", "100", us(100 * time.Microsecond), "true", us(100 * time.Microsecond), "true", us(100 * time.Microsecond), "false"},
	})
	if v := usBucket(50 * time.Microsecond); math.Abs(v-50)/50 > 0.01 {
		t.Fatalf("bucket of 50µs is %vµs", v)
	}
	doc := checkOption(t, c)
	if got := seriesNames(doc); !slices.Equal(got, []string{"libaio p50", "libaio p90", "libaio p99.9", "io_uring p50", "io_uring p90", "io_uring p99.9"}) {
		t.Errorf("series = %q", got)
	}
	if doc.YAxis[0].Type != "log" || !strings.Contains(doc.YAxis[0].Name, "µs") {
		t.Errorf("y axis = %+v, want log in µs", doc.YAxis[0])
	}
	if got := seriesValues(doc, 4); !reflect.DeepEqual(got, []any{usBucket(500 * time.Microsecond), usBucket(100 * time.Microsecond)}) {
		t.Errorf("io_uring p90 = %v", got)
	}
	// Its tooltip at iodepth 4 gives its change from libaio's: merged
	// figures, so their ratio, named, over 2 repeats against the 1 left.
	want := stats.PercentText(usBucket(100*time.Microsecond)/usBucket(4*time.Millisecond) - 1)
	if tip := `["p90 vs libaio (merged-histogram ratio, n=2 vs 1)","` + want + `",""]`; !strings.Contains(string(c.Option), tip) {
		t.Errorf("no tooltip %s", tip)
	}
	if strings.Contains(string(c.Option), "median ratio") {
		t.Error("a chart of merged histograms names its change the median ratio")
	}

	// Default percentiles for two engines: p50 and p99, so that no more
	// than maxSeries lines are drawn; the write direction has no I/O:
	// nothing plotted.
	w := mustBuild(t, Query{Kind: Latency, Dir: "write"}, run)
	if len(w.Columns) != 6+2*2 || w.Columns[6] != "write_lat_p50_us" || w.Columns[8] != "write_lat_p99_us" {
		t.Errorf("columns = %q", w.Columns)
	}
	if got := w.Rows[0]; !slices.Equal(got, []string{"r", "1", "libaio", "2", "0", "0", "", "", "", ""}) {
		t.Errorf("write row = %q", got)
	}
	if got := seriesValues(checkOption(t, w), 0); !reflect.DeepEqual(got, []any{"-", "-"}) {
		t.Errorf("write p50 = %v", got)
	}
}
