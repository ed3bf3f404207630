package stats

import "testing"

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
		{[]float64{3, 1, 2}, Spread{Min: 1, Median: 2, Max: 3}},
		{[]float64{4, 1, 3, 2}, Spread{Min: 1, Median: 2.5, Max: 4}},
	} {
		if got := SpreadOf(tc.in); got != tc.want {
			t.Errorf("SpreadOf(%v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}
