package units

import "testing"

func TestSignificant(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		n    int
		want string
	}{
		{0, 3, "0"}, {1, 3, "1.00"}, {12.345, 3, "12.3"}, {0.012345, 3, "0.0123"}, {999.7, 3, "1000"},
		{123457, 3, "123000"}, {-4.5678, 3, "-4.57"}, {57213.91234567, 3, "57200"}, {3.14159, 1, "3"}, {0.5, 0, "0.5"},
	} {
		if got := Significant(tt.v, tt.n); got != tt.want {
			t.Errorf("Significant(%v, %d) = %q, want %q", tt.v, tt.n, got, tt.want)
		}
	}
}

func TestPercent(t *testing.T) {
	for _, tt := range []struct {
		v      float64
		signed bool
		want   string
	}{
		{12.345, false, "12.3%"}, {85, true, "+85.0%"}, {-3.2, true, "−3.20%"}, {0, true, "0%"}, {100, false, "100%"},
	} {
		if got := Percent(tt.v, tt.signed); got != tt.want {
			t.Errorf("Percent(%v, %v) = %q, want %q", tt.v, tt.signed, got, tt.want)
		}
	}
}

func TestNumberCharts(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {0.012345, "0.0123"}, {12.345, "12.3"}, {999, "999"}, {999.96, "1.00k"}, {57213.9, "57.2k"},
		{1500000, "1.50M"}, {-2500, "-2.50k"}, {3e15, "3000T"},
	} {
		if got := Number(tt.v); got != tt.want {
			t.Errorf("Number(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}
