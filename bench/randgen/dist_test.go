package randgen

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestParseDistribution(t *testing.T) {
	for _, tc := range []struct {
		in, want, wantErr string
	}{
		{in: "random", want: "random"},
		{in: "zipf", want: "zipf:1.1"},
		{in: "zipf:1.2", want: "zipf:1.2"},
		{in: " zipf: 1.2 ", want: "zipf:1.2"},
		{in: "zipf:0.8:0.25", want: "zipf:0.8:0.25"},
		{in: "pareto", want: "pareto:0.2"},
		{in: "pareto:0.3:1", want: "pareto:0.3:1"},
		{in: "normal", want: "normal:0"},
		{in: "normal:10:0", want: "normal:10:0"},
		{in: "zoned:60/10:30/20:8/30:2/40", want: "zoned:60/10:30/20:8/30:2/40"},
		{in: "zoned:60/10:40/200", wantErr: "more than 100"},         // fio: zone_split percentages add to more than 100%
		{in: "zoned:60/10:40", want: "zoned:60/10:40/90"},            // a size left out takes the rest
		{in: "zoned:60/0:40/10", want: "zoned:60/90:40/10"},          // as does 0
		{in: "zoned:50:30:20/40", want: "zoned:50/30:30/30:20/40"},   // shared, rounded down
		{in: "zoned:50/5:30/15:20/", want: "zoned:50/5:30/15:20/80"}, // fio's examples/rand-zones.fio: "20/" is a size left out
		{in: "zoned:100", want: "zoned:100/0"},                       // fio's quirk: one zone without a size is empty
		{in: "zoned:60/10:40/20::5/5", want: "zoned:60/10:40/20"},    // fio stops at an empty zone
		{in: "zoned_abs:60/20g:30/100g:10/500g", want: "zoned_abs:60/20g:30/100g:10/500g"},
		{in: "zoned_abs:50/1m:50", want: "zoned_abs:50/1m:50/0"},
		{in: "zoned:50/10:40/20", wantErr: "add up to 90, not 100"},                                // fio: access percentage don't add up to 100
		{in: "zoned:60/10:40/20,100", wantErr: "refuses a comma"},                                  // fio: failed parsing
		{in: "zipf:1.2,pareto:0.3", wantErr: "refuses a comma"},                                    // fio: failed parsing
		{in: "zipf:1", wantErr: "theta must differ from 1.0"},                                      // fio: zipf theta must different than 1.0
		{in: "zipf:1.2:2", wantErr: "center must be in [0, 1]"},                                    // fio: distribution center out of range
		{in: "pareto:1", wantErr: "above 0 and below 1"},                                           // fio: pareto input out of range
		{in: "normal:100", wantErr: "[0, 100)"},                                                    // fio: normal deviation out of range
		{in: "zipf:abc", wantErr: "not a number"},                                                  // fio: random postfix parsing failed
		{in: "foo", wantErr: `"foo" is not one of random, zipf, pareto, normal, zoned, zoned_abs`}, // fio: failed parsing
		{in: "zipff", wantErr: `did you mean "zipf"?`},
		{in: "zoned", wantErr: "needs its zones"},
		{in: "zoned:60k/10:40/90", wantErr: "not an access percentage"},
		{in: "random:5", wantErr: "takes no value"},
		{in: "zipf:-1", wantErr: "must not be negative"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			d, err := ParseDistribution(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := d.String(); got != tc.want {
				t.Errorf("%q reads as %q, want %q", tc.in, got, tc.want)
			}
			again, err := ParseDistribution(d.String())
			if err != nil || !slices.Equal(again.Zones, d.Zones) || again.Kind != d.Kind || again.Value != d.Value {
				t.Errorf("%q does not read back: %+v, %v", d, again, err)
			}
		})
	}
}

// TestNormalSpread checks the normal distribution's bell before fio's
// hash scatters it: the deviation widens it, and the mean sits mid-file.
func TestNormalSpread(t *testing.T) {
	const n = 100000
	spread := func(dev float64) (mean, sd float64) {
		s := NewSkewed(&Distribution{Kind: DistNormal, Value: dev}, n, 1)
		var sum, sq float64
		const draws = 50000
		for range draws {
			v := float64(s.normal())
			sum += v
			sq += v * v
		}
		mean = sum / draws
		return mean, math.Sqrt(sq/draws - mean*mean)
	}
	m0, sd0 := spread(0)
	m20, sd20 := spread(20)
	if math.Abs(m0-n/2) > n/100 || math.Abs(m20-n/2) > n/100 {
		t.Errorf("means %v and %v, want about %v", m0, m20, n/2)
	}
	// Twelve uniform draws over n average to a bell of n/12 around n/2;
	// normal:20 adds a uniform spread of 20% of n (sd 0.2n/sqrt(12)).
	if want := n / 12.0; math.Abs(sd0-want) > want*0.05 {
		t.Errorf("normal:0 spreads %v, want about %v", sd0, want)
	}
	if want := math.Hypot(n/12.0, 0.2*n/math.Sqrt(12)); math.Abs(sd20-want) > want*0.05 {
		t.Errorf("normal:20 spreads %v, want about %v", sd20, want)
	}
}

func TestFastMod(t *testing.T) {
	r := NewTaus88(5)
	for _, d := range []uint64{1, 2, 3, 7, 1000, 1<<31 + 11, 1<<32 - 1, 1 << 32, 1<<32 + 1, 1 << 40} {
		f := newFastMod(d)
		for _, x := range []uint32{0, 1, 2, math.MaxUint32, math.MaxUint32 - 1} {
			if got := f.rem(x); got != uint64(x)%d {
				t.Fatalf("%d mod %d = %d, want %d", x, d, got, uint64(x)%d)
			}
		}
		for range 10000 {
			x := r.Next()
			if got := f.rem(x); got != uint64(x)%d {
				t.Fatalf("%d mod %d = %d, want %d", x, d, got, uint64(x)%d)
			}
		}
	}
}
