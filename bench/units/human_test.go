package units

import (
	"testing"
	"time"
)

func TestNanosRoundsIntoTheNextUnit(t *testing.T) {
	for _, tc := range []struct {
		ns   float64
		want string
	}{
		{999.4, "999ns"}, {999.6, "1.00µs"}, {9996, "10.0µs"}, {99960, "100µs"},
		{999_600, "1.00ms"}, {3_784_704, "3.78ms"}, {142_336, "142µs"}, {1234e9, "1234s"},
	} {
		if got := Nanos(tc.ns); got != tc.want {
			t.Errorf("Nanos(%v) = %q, want %q", tc.ns, got, tc.want)
		}
	}
}

func TestDuration(t *testing.T) {
	if got := Duration(3784704 * time.Nanosecond); got != "3.78ms" {
		t.Errorf("Duration(3.784704ms) = %q", got)
	}
}

func TestNumber(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {0.0123, "0.0123"}, {0.67, "0.670"}, {0.9996, "1.00"}, {8.04, "8.04"}, {12.34, "12.3"},
		{123.4, "123"}, {999.4, "999"}, {999.6, "1.00k"}, {1234, "1.23k"}, {45.6e6, "45.6M"}, {-2.5, "-2.50"},
	} {
		if got := Number(tc.v); got != tc.want {
			t.Errorf("Number(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}
