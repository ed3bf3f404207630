package stats

import (
	"math"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if got := Median([]uint64{5, 1, 9}); got != 5 {
		t.Errorf("Median of uint64s = %d, want 5", got)
	}
	in := []float64{3, 1, 2}
	Median(in)
	if in[0] != 3 {
		t.Errorf("Median sorted its input: %v", in)
	}
}

func TestSpreadOf(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want Spread
	}{
		{nil, Spread{}},
		{[]float64{5}, Spread{Min: 5, Median: 5, Max: 5}},
		{[]float64{3, 1, 2}, Spread{Min: 1, Median: 2, Max: 3, CV: 0.5}},
		{[]float64{4, 1, 3, 2}, Spread{Min: 1, Median: 2.5, Max: 4, CV: CV([]float64{1, 2, 3, 4})}},
	} {
		if got := SpreadOf(tc.in); got != tc.want {
			t.Errorf("SpreadOf(%v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
	// sched-mixed's bfq: 208 to 42.3k IOPS over three repeats.
	if s := SpreadOf([]float64{208, 42300, 30100}); !s.Noisy() {
		t.Errorf("%+v is not noisy", s)
	}
	if s := SpreadOf([]float64{100, 104, 97}); s.Noisy() {
		t.Errorf("%+v is noisy", s)
	}
	if s := SpreadOf([]float64{1, 2, 3}).Scale(1000); s != (Spread{Min: 1000, Median: 2000, Max: 3000, CV: 0.5}) {
		t.Errorf("Scale(1000) = %+v, want the CV kept", s)
	}
}

func TestCV(t *testing.T) {
	if got := CV([]float64{5}); got != 0 {
		t.Errorf("CV of one value = %v", got)
	}
	// mean 10, sample sd sqrt(((−2)²+0+2²)/2) = 2: CV 0.2.
	if got := CV([]float64{8, 10, 12}); math.Abs(got-0.2) > 1e-12 {
		t.Errorf("CV = %v, want 0.2", got)
	}
}

func TestMedianCI(t *testing.T) {
	// Five values cannot give a 95 % interval: the range, not exact.
	if lo, hi, exact := MedianCI([]float64{5, 1, 4, 2, 3}, 0.95); lo != 1 || hi != 5 || exact {
		t.Errorf("n=5: %v %v %v", lo, hi, exact)
	}
	// n=6: P(1 <= B <= 5) = 1 - 2/64 = 0.969: [x1, x6].
	if lo, hi, exact := MedianCI([]float64{6, 1, 5, 2, 4, 3}, 0.95); lo != 1 || hi != 6 || !exact {
		t.Errorf("n=6: %v %v %v", lo, hi, exact)
	}
	// n=20: the 95 % interval is [x6, x15] (P(6 <= B <= 14) = 0.959).
	v := make([]float64, 20)
	for i := range v {
		v[i] = float64(20 - i)
	}
	if lo, hi, exact := MedianCI(v, 0.95); lo != 6 || hi != 15 || !exact {
		t.Errorf("n=20: %v %v %v, want 6 15", lo, hi, exact)
	}
	if p, ok := MedianPrecision([]float64{100, 101, 99, 100, 102, 98, 100}); !ok || p > 0.021 {
		t.Errorf("precision %v %v", p, ok)
	}
}

func TestBootstrapMedianCI(t *testing.T) {
	vals := []float64{1.02, 0.98, 1.05, 1.01, 0.99}
	lo, hi := BootstrapMedianCI(vals, 0.95, 2000, 1)
	if lo > 1.01 || hi < 1.01 || lo < 0.98 || hi > 1.05 {
		t.Errorf("CI [%v, %v] does not hold the median 1.01 within the data's range", lo, hi)
	}
	if lo2, hi2 := BootstrapMedianCI(vals, 0.95, 2000, 1); lo2 != lo || hi2 != hi {
		t.Error("the same seed gave another interval")
	}
	if lo, hi := BootstrapMedianCI([]float64{3}, 0.95, 100, 1); lo != 3 || hi != 3 {
		t.Errorf("one value: [%v, %v]", lo, hi)
	}
}
