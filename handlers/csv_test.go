package handlers

import (
	"encoding/csv"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"iolab/bench/sweep"
)

func TestWriteCSV(t *testing.T) {
	for _, tc := range []struct {
		name  string
		chart Chart
		want  string
	}{
		{"rows", Chart{Kind: ChartIOPS, Columns: []string{"iodepth", "ioengine", "iops_median"},
			Rows: [][]string{{"1", "io_uring", "11000"}, {"16", "io_uring+sqpoll", "155000.5"}}},
			"iodepth,ioengine,iops_median\n1,io_uring,11000\n16,io_uring+sqpoll,155000.5\n"},
		{"header only", Chart{Kind: ChartIOPS, Columns: []string{"iodepth", "iops_median"}, Rows: [][]string{}},
			"iodepth,iops_median\n"},
		{"quoting", Chart{Kind: ChartFairness, Columns: []string{"scheduler", "job"},
			Rows: [][]string{{"mq-deadline", `reader, "fg"`}}},
			"scheduler,job\nmq-deadline,\"reader, \"\"fg\"\"\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := WriteCSV(&b, &tc.chart); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("WriteCSV =\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}

	bad := Chart{Kind: ChartIOPS, Columns: []string{"a", "b"}, Rows: [][]string{{"1", "2"}, {"3"}}}
	if err := WriteCSV(&strings.Builder{}, &bad); err == nil || !strings.Contains(err.Error(), "row 2 has 1 fields for 2 columns") {
		t.Errorf("WriteCSV of a short row: %v", err)
	}
	if err := WriteCSV(failingWriter{}, &Chart{Columns: []string{"a"}}); err == nil {
		t.Error("WriteCSV to a failing writer: no error")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestChartCSV reads back a built chart's CSV: the header and the rows,
// numbers as the chart plots them.
func TestChartCSV(t *testing.T) {
	plan := chartTestPlan(3, chartSweep(sweep.AxisIODepth, "1", "16"), chartSweep(sweep.AxisEngine, "io_uring", "libaio"))
	run := chartTestRun(3, plan, chartTestSteps(plan, func(s sweep.Step) sweep.StepResult {
		if s.Value(sweep.AxisIODepth) == "16" && s.Value(sweep.AxisEngine) == "libaio" && s.Repeat == 1 {
			return chartFailed("boom")
		}
		// 3 s windows: IOPS with a fraction.
		return chartDone(chartTestJob("w", 3*time.Second, chartLoad{}, chartLoad{ios: 1000*uint64(s.Seq) + 1, bs: 4096}))
	}))
	c := mustBuildChart(t, ChartQuery{Kind: ChartIOPS}, run)
	var b strings.Builder
	if err := WriteCSV(&b, c); err != nil {
		t.Fatal(err)
	}
	want := `iodepth,ioengine,repeats,failed,iops_min,iops_median,iops_max
1,io_uring,3,0,0.3333333333333333,333.6666666666667,667
16,io_uring,3,0,2000.3333333333333,2333.6666666666665,2667
1,libaio,3,0,1000.3333333333334,1333.6666666666667,1667
16,libaio,2,1,3000.3333333333335,3333.666666666667,3667
`
	if b.String() != want {
		t.Errorf("CSV =\n%s\nwant\n%s", b.String(), want)
	}
	got, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got[0], c.Columns) || !reflect.DeepEqual(got[1:], c.Rows) {
		t.Errorf("CSV reads back as %q", got)
	}
}
