package units

import "testing"

func TestCount(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {999, "999"}, {1000, "1k"}, {57213.9, "57.2k"}, {340000, "340k"}, {355123, "355k"}, {1500000, "1.5M"}, {12345678, "12.3M"},
	} {
		if got := Count(tt.v); got != tt.want {
			t.Errorf("Count(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}
