package sweep

import (
	"slices"
	"strings"
	"testing"
	"time"

	"iolab/bench"
)

func TestParseRateSweep(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{"rate_iops=10%..100%", []string{"max", "10%", "20%", "30%", "40%", "50%", "60%", "70%", "80%", "90%", "100%"}, ""},
		{"rate_iops=10%,50%,90%", []string{"max", "10%", "50%", "90%"}, ""},
		{"rate_iops=max,25%..100%", []string{"max", "25%", "50%", "75%", "100%"}, ""},
		{"rate_iops=1000,2000", []string{"1000", "2000"}, ""},
		{"rate_iops=2.5%..10%", []string{"max", "2.5%", "5%", "7.5%", "10%"}, ""},
		{"rate_iops=0%", nil, "above 0%"},
		{"rate_iops=2000%", nil, "at most 1000%"},
		{"rate_iops=50%..10%", nil, "want A%..B%"},
		{"rate_iops=x%", nil, "percentage"},
		{"rate_iops=0.001%..1000%", nil, "at most 1000"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			sw, err := ParseSweep(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(sw.Values, tc.want) {
				t.Errorf("values %v, want %v", sw.Values, tc.want)
			}
		})
	}
}

func TestParseSLO(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want SLO
		err  string
	}{
		{"p99<1ms", SLO{99, time.Millisecond}, ""},
		{"p99.9<500us", SLO{99.9, 500 * time.Microsecond}, ""},
		{" p50 < 2.5ms ", SLO{50, 2500 * time.Microsecond}, ""},
		{"p99<1s", SLO{99, time.Second}, ""},
		{"p99<1µs", SLO{99, time.Microsecond}, ""},
		{"p100<1ms", SLO{}, "below 100"},
		{"p0<1ms", SLO{}, "above 0"},
		{"p99<0ms", SLO{}, "1µs to 60s"},
		{"p99<2m", SLO{}, "not an objective"},
		{"p99>1ms", SLO{}, "not an objective"},
		{"99<1ms", SLO{}, "not an objective"},
		{"p99<1ms;rm", SLO{}, "not an objective"},
		{"p99<100s", SLO{}, "1µs to 60s"},
		{"", SLO{}, "not an objective"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseSLO(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "p99<1ms") {
					t.Fatalf("err %v, want one saying %q and showing how to write it", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v %v, want %+v", got, err, tc.want)
			}
			if back, err := ParseSLO(got.String()); err != nil || back != got {
				t.Errorf("%s reads back as %+v %v", got, back, err)
			}
		})
	}
}

// TestResolveRate: a relative step takes its percentage of what each job
// achieved in the probe with the same other axes.
func TestResolveRate(t *testing.T) {
	j := bench.NewJob()
	j.Name, j.IOEngine, j.RW, j.Size = "q", "null", "randread", 1<<20
	plan := &Plan{Name: "q", Base: bench.Config{Jobs: []bench.Job{j}, Groups: []bench.Group{{Jobs: []bench.Job{j}}}},
		Sweeps: []Sweep{{Axis: AxisEngine, Values: []string{"null", "psync"}}, {Axis: AxisRateIOPS, Values: []string{"max", "50%"}}}}
	steps, err := plan.Steps()
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 4 || steps[0].Value(AxisRateIOPS) != "max" || steps[1].Value(AxisRateIOPS) != "50%" {
		t.Fatalf("steps %+v", steps)
	}
	probe := func(st Step, iops float64) StepResult {
		jr := bench.JobResult{Name: "q", Runtime: time.Second, Jobs: 1}
		jr.Dirs[bench.Read].IOs = uint64(iops)
		return StepResult{Step: st, Status: StepDone, Result: &bench.Result{Groups: []bench.GroupResult{{Jobs: []bench.JobResult{jr}}}}}
	}
	results := []StepResult{probe(steps[0], 10001)}
	if err := ResolveRate(&steps[1], results); err != nil {
		t.Fatal(err)
	}
	if got := steps[1].Config.Groups[0].Jobs[0].RateIOPS; got != [2]int64{5001, 0} {
		t.Errorf("rate_iops %v, want 5001,0", got)
	}
	// The psync probe failed: its 50% step cannot run.
	results = append(results, StepResult{Step: steps[2], Status: StepFailed})
	if err := ResolveRate(&steps[3], results); err == nil || !strings.Contains(err.Error(), "probe step") {
		t.Errorf("err %v, want the failed probe named", err)
	}
}
