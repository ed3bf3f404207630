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
	if got := SpreadOf(nil); got != (Spread{}) {
		t.Errorf("SpreadOf(nil) = %+v", got)
	}
	if got, want := SpreadOf([]float64{10, 30, 20, 40}), (Spread{Min: 10, Median: 25, Max: 40}); got != want {
		t.Errorf("SpreadOf = %+v, want %+v", got, want)
	}
}
