package pts

import (
	"math"
	"strings"
	"testing"
)

// Each case's figures are worked by hand in its comment: x is the round
// within the window (0…4, mean 2, Σ(x−2)² = 10), the slope Σ(x−2)(y−ȳ)/10,
// the fit's excursion |slope| × 4.
func TestJudge(t *testing.T) {
	cases := []struct {
		name                 string
		y                    []float64
		avg, rng, slope, exc float64
		rangeOK, slopeOK     bool
	}{
		// ȳ 100; range 102−98 = 4 (4 %); Σ(x−2)(y−ȳ) = −2·0 −1·2 +0 +1·1 +2·(−1) = −3: slope −0.3, excursion 1.2 (1.2 %).
		{"steady", []float64{100, 102, 98, 101, 99}, 100, 4, -0.3, 1.2, true, true},
		// ȳ 110; range 25 (22.7 % > 20 %); Σ = −2·(−10) −1·15 +0 +1·15 +2·(−10) = 0: slope 0.
		{"range too wide", []float64{100, 125, 100, 125, 100}, 110, 25, 0, 0, false, true},
		// ȳ 100; range 16 (16 %); Σ = −2·(−8) −1·(−4) +0 +1·4 +2·8 = 40: slope 4, excursion 16 (16 % > 10 %).
		{"slope too steep", []float64{92, 96, 100, 104, 108}, 100, 16, 4, 16, true, false},
		// A device that did nothing is never steady.
		{"zero", []float64{0, 0, 0, 0, 0}, 0, 0, 0, 0, false, false},
	}
	for _, c := range cases {
		w := Judge(3, c.y)
		near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
		if !near(w.Average, c.avg) || !near(w.Range, c.rng) || !near(w.Slope, c.slope) || !near(w.Excursion, c.exc) {
			t.Errorf("%s: average %g range %g slope %g excursion %g, want %g %g %g %g", c.name, w.Average, w.Range, w.Slope, w.Excursion, c.avg, c.rng, c.slope, c.exc)
		}
		if w.RangeOK != c.rangeOK || w.SlopeOK != c.slopeOK || w.Steady() != (c.rangeOK && c.slopeOK) {
			t.Errorf("%s: range ok %v slope ok %v, want %v %v", c.name, w.RangeOK, w.SlopeOK, c.rangeOK, c.slopeOK)
		}
		if w.First != 3 || !near(w.Fit(3), w.Intercept) || !near(w.Fit(7)-w.Fit(3), 4*w.Slope) {
			t.Errorf("%s: the fit is not anchored at the window's first round: first %d fit(3) %g intercept %g", c.name, w.First, w.Fit(3), w.Intercept)
		}
	}
}

func TestAssess(t *testing.T) {
	// A transient that settles: windows ending at rounds 4…8 fail (round
	// 8's: ȳ 104, range 21 = 20.2 %), round 9's is [101 99 100 100 101]:
	// ȳ 100.2, range 2, Σ(x−2)y = −202 −99 +0 +100 +202 = 1, slope 0.1.
	settle := []float64{300, 250, 200, 150, 120, 101, 99, 100, 100, 101}
	o := Assess([][]float64{settle})
	if !o.Reached || o.Round != 9 || o.Windows[0].First != 5 || math.Abs(o.Windows[0].Slope-0.1) > 1e-9 {
		t.Errorf("settling series: %+v, want reached at round 9 (window 5…9, slope 0.1)", o)
	}
	// Round 8's window alone: range 21 over 104, just outside.
	if w := Judge(4, settle[4:9]); w.RangeOK || math.Abs(w.RangePct()-21.0/104) > 1e-12 {
		t.Errorf("window 4…8: range %g (%g) ok %v, want 21/104 and not ok", w.Range, w.RangePct(), w.RangeOK)
	}

	// Never steady within 25 rounds: the window is the last five, not
	// reached.
	var swing []float64
	for r := range MaxRounds {
		swing = append(swing, 100+30*float64(r%2))
	}
	o = Assess([][]float64{swing})
	if o.Reached || o.Round != 24 || o.Rounds != 25 || o.Windows[0].First != 20 || len(o.Windows[0].Values) != 5 {
		t.Errorf("swinging series: %+v, want not reached, window 20…24", o)
	}

	// Two tracking variables: steady only when both are in one window.
	a := []float64{100, 100, 100, 100, 100, 100, 100}
	b := []float64{50, 80, 100, 100, 100, 100, 100}
	o = Assess([][]float64{a, b})
	if !o.Reached || o.Round != 6 {
		t.Errorf("two variables: %+v, want reached at round 6 (b steady from round 2)", o)
	}

	// Fewer than five rounds: not judged.
	if o := Assess([][]float64{{1, 1, 1}}); o.Reached || o.Windows[0].Steady() {
		t.Errorf("three rounds: %+v, want not steady", o)
	}
}

func TestSpecCheck(t *testing.T) {
	good := []Spec{
		{Test: "iops"},
		{Test: "iops", MaxRounds: 6, RoundTime: 2e9, WIPCLoops: -1, Size: 64 << 20, Purge: "discard"},
		{Test: "dirth", Axes: []Axis{{"numjobs", []string{"2", "1"}}, {"iodepth", []string{"4", "1"}}}},
		{Test: "wsat", MaxRounds: 3, WSAT: 1},
	}
	for _, s := range good {
		if err := s.Check(); err != nil {
			t.Errorf("%+v: %v", s, err)
		}
	}
	bad := map[string]Spec{
		"unknown PTS test":         {Test: "nope"},
		"purge":                    {Test: "iops", Purge: "shred"},
		"at least 5":               {Test: "iops", MaxRounds: 3},
		"runtime":                  {Test: "iops", RoundTime: 1e6},
		"leave out numjobs":        {Test: "latency", IODepth: 4},
		"has no numjobs axis":      {Test: "iops", Axes: []Axis{{"numjobs", []string{"1"}}}},
		"must include 4k":          {Test: "iops", Axes: []Axis{{"bs", []string{"8k"}}}},
		"wsat":                     {Test: "wsat", WSAT: 1000},
		"size":                     {Test: "iops", Size: -1},
		"1 to 64 values":           {Test: "iops", Axes: []Axis{{"bs", nil}}},
		"0 to 16 times the active": {Test: "iops", WIPCLoops: 17},
	}
	for want, s := range bad {
		err := s.Check()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%+v: %v, want an error saying %q", s, err, want)
		}
	}
}

func TestScaled(t *testing.T) {
	iops, _ := Lookup("iops")
	full := Spec{Test: "iops"}
	if s := full.Scaled(iops, 1<<40); len(s) != 0 {
		t.Errorf("the specification's own parameters: scaled %q", s)
	}
	small := Spec{Test: "iops", MaxRounds: 8, RoundTime: 3e9, WIPCLoops: -1, Size: 64 << 20, Purge: PurgeNone}
	if s := small.Scaled(iops, 1<<30); len(s) != 5 {
		t.Errorf("scaled down: %q, want 5 (round time, rounds, purge, WIPC, active range)", s)
	}
}
