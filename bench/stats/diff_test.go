package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The exact U distribution, checked against counting every way of
// choosing which of m+n ranks belong to a.
func TestUDistributionByEnumeration(t *testing.T) {
	for _, mn := range [][2]int{{1, 1}, {2, 3}, {3, 3}, {4, 5}, {5, 5}, {6, 4}} {
		m, n := mn[0], mn[1]
		counts := make([]float64, m*n+1)
		var total float64
		for mask := 0; mask < 1<<(m+n); mask++ {
			if popcount(mask) != m {
				continue
			}
			total++
			// U for a = pairs with a b value below an a value.
			u, bs := 0, 0
			for r := 0; r < m+n; r++ {
				if mask&(1<<r) != 0 {
					u += bs
				} else {
					bs++
				}
			}
			counts[u]++
		}
		got := uDistribution(m, n)
		for k := range counts {
			if math.Abs(got[k]-counts[k]/total) > 1e-12 {
				t.Fatalf("m=%d n=%d: P(U=%d) = %g, enumeration %g", m, n, k, got[k], counts[k]/total)
			}
		}
	}
}

func popcount(x int) int {
	c := 0
	for ; x != 0; x &= x - 1 {
		c++
	}
	return c
}

func TestCompareKnownValues(t *testing.T) {
	// Complete separation of 5 against 5: p = 2/C(10,5) = 2/252.
	c := Compare([]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 0.95)
	if math.Abs(c.P-2.0/252) > 1e-12 || c.Verdict != Significant {
		t.Fatalf("separated 5 vs 5: %+v", c)
	}
	if !(c.Lo > 0 && c.Hi > c.Lo && c.Rel > c.Lo && c.Rel < c.Hi) {
		t.Fatalf("interval [%g, %g] around %g should exclude 0", c.Lo, c.Hi, c.Rel)
	}
	// Interleaved: U = 10 of 25, p = 2*P(U<=10) = 0.6905 (scipy's exact value).
	c = Compare([]float64{1, 3, 5, 7, 9}, []float64{2, 4, 6, 8, 10}, 0.95)
	if math.Abs(c.P-0.690476) > 1e-5 || c.Verdict != NotSignificant {
		t.Fatalf("interleaved: %+v", c)
	}
	if !(c.Lo < 0 && c.Hi > 0) {
		t.Fatalf("interleaved: interval [%g, %g] should hold 0", c.Lo, c.Hi)
	}
	// 3 against 3 cannot reach 95 % whatever the values.
	c = Compare([]float64{100, 101, 102}, []float64{200, 201, 202}, 0.95)
	if c.Verdict != TooFew || !math.IsInf(c.Lo, -1) {
		t.Fatalf("3 vs 3: %+v", c)
	}
	if math.Abs(c.Rel-(201.0/101-1)) > 0.01 {
		t.Fatalf("3 vs 3 change %g, want about %g", c.Rel, 201.0/101-1)
	}
	// Change is relative: doubling is +100 %.
	c = Compare([]float64{10, 11, 12, 13, 14, 15}, []float64{20, 22, 24, 26, 28, 30}, 0.95)
	if math.Abs(c.Rel-1) > 1e-9 {
		t.Fatalf("doubling: change %g", c.Rel)
	}
}

// Over many pairs of samples from one distribution, "significant" at 95 %
// comes up about 5 % of the time and never much more; a 15 % shift with
// 8 repeats each is found nearly always.
func TestCompareErrorRates(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	draw := func(n int, scale float64) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = scale * (1000 + 50*r.NormFloat64())
		}
		return v
	}
	const trials = 2000
	falsePos, covered := 0, 0
	for range trials {
		c := Compare(draw(8, 1), draw(8, 1), 0.95)
		if c.Verdict == Significant {
			falsePos++
		}
		if c.Lo <= 0 && 0 <= c.Hi {
			covered++
		}
	}
	if rate := float64(falsePos) / trials; rate > 0.07 {
		t.Errorf("false positives %.3f, want <= 0.05 (+ sampling slack)", rate)
	}
	if cov := float64(covered) / trials; cov < 0.93 {
		t.Errorf("interval covered no-change %.3f of the time, want >= 0.95", cov)
	}
	found := 0
	for range 500 {
		if Compare(draw(8, 1), draw(8, 1.15), 0.95).Verdict == Significant {
			found++
		}
	}
	if found < 490 {
		t.Errorf("15 %% shift found %d of 500 times", found)
	}
}

// Ties and large samples use the normal approximation, which must agree
// with the exact test where both apply.
func TestCompareNormalApproximation(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	a, b := make([]float64, 40), make([]float64, 40)
	for i := range a {
		a[i], b[i] = 100+r.NormFloat64()*5, 103+r.NormFloat64()*5
	}
	u := uStatistic(a, b)
	exact := twoSidedExact(uDistribution(40, 40), u)
	approx := twoSidedNormal(a, b, u)
	if math.Abs(exact-approx) > 0.01 {
		t.Fatalf("exact p %g, normal p %g", exact, approx)
	}
	// All equal: nothing to tell apart.
	c := Compare([]float64{5, 5, 5, 5, 5, 5}, []float64{5, 5, 5, 5, 5, 5}, 0.95)
	if c.Verdict != NotSignificant || c.Rel != 0 {
		t.Fatalf("identical: %+v", c)
	}
	if c := Compare(nil, []float64{1}, 0.95); c.Verdict != TooFew || !math.IsNaN(c.Rel) {
		t.Fatalf("empty: %+v", c)
	}
}

// With ties the exact p counts every way of choosing a's positions among
// the pooled midranks: checked against enumerating them.
func TestCompareTiesExact(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 200 {
		m, n := 2+r.IntN(5), 2+r.IntN(5)
		a, b := make([]float64, m), make([]float64, n)
		for i := range a {
			a[i] = float64(r.IntN(4)) // few distinct values: many ties
		}
		for i := range b {
			b[i] = float64(1 + r.IntN(4))
		}
		pooled := append(append([]float64{}, a...), b...)
		N := len(pooled)
		mid := func(x float64) float64 { // midrank of x among pooled
			below, same := 0, 0
			for _, y := range pooled {
				if y < x {
					below++
				} else if y == x {
					same++
				}
			}
			return float64(below) + float64(same+1)/2
		}
		var obs float64
		for _, x := range a {
			obs += mid(x)
		}
		mean := float64(m*(N+1)) / 2
		var hits, total float64
		for mask := 0; mask < 1<<N; mask++ {
			if popcount(mask) != m {
				continue
			}
			total++
			var s float64
			for i := range N {
				if mask&(1<<i) != 0 {
					s += mid(pooled[i])
				}
			}
			if math.Abs(s-mean) >= math.Abs(obs-mean)-1e-9 {
				hits++
			}
		}
		if got, want := twoSidedTies(a, b), hits/total; math.Abs(got-want) > 1e-9 {
			t.Fatalf("trial %d: a=%v b=%v: p %g, enumeration %g", trial, a, b, got, want)
		}
	}
}

// Ties do not let small samples claim what they cannot: 3 tied values
// against 3 are too few, as 3 distinct ones are (the normal
// approximation would call this p = 0.047).
func TestCompareTiesTooFew(t *testing.T) {
	c := Compare([]float64{1, 1, 1}, []float64{2, 2, 2}, 0.95)
	if c.Verdict != TooFew {
		t.Fatalf("3 tied vs 3 tied: %+v", c)
	}
	// Enough repeats with ties: a clean separation is found.
	c = Compare([]float64{10, 10, 11, 11, 12}, []float64{20, 20, 21, 22, 22}, 0.95)
	if c.Verdict != Significant || c.P > 0.01 {
		t.Fatalf("5 vs 5 separated with ties: %+v", c)
	}
	// Heavily tied and overlapping: nothing to tell.
	c = Compare([]float64{5, 5, 6, 6, 5, 6}, []float64{6, 5, 6, 5, 5, 6}, 0.95)
	if c.Verdict != NotSignificant {
		t.Fatalf("overlapping ties: %+v", c)
	}
}

func TestRepeatsNeeded(t *testing.T) {
	for _, c := range []struct {
		m    int
		conf float64
		want int
	}{{1, 0.95, 39}, {2, 0.95, 8}, {3, 0.95, 5}, {4, 0.95, 4}, {5, 0.95, 3}, {3, 0.99, 9}, {0, 0.95, 0}} {
		if got := RepeatsNeeded(c.m, c.conf); got != c.want {
			t.Errorf("RepeatsNeeded(%d, %g) = %d, want %d", c.m, c.conf, got, c.want)
		}
		// The answer is the boundary: one fewer cannot reach the level.
		if n := RepeatsNeeded(c.m, c.conf); n > 1 {
			if Compare(seq(c.m, 0), seq(n-1, 1000), c.conf).Verdict != TooFew || Compare(seq(c.m, 0), seq(n, 1000), c.conf).Verdict != Significant {
				t.Errorf("m=%d: %d on the other side is not where 'too few' ends", c.m, n)
			}
		}
	}
	if got := RepeatsEach(0.95); got != 4 {
		t.Errorf("RepeatsEach(0.95) = %d, want 4", got)
	}
	if got := RepeatsEach(0.99); got != 5 {
		t.Errorf("RepeatsEach(0.99) = %d, want 5", got)
	}
}

// seq is n distinct values from base up.
func seq(n int, base float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = base + float64(i)
	}
	return v
}

func TestHolm(t *testing.T) {
	// Sorted 0.01, 0.02, 0.03, 0.5 against 0.05/4, 0.05/3, 0.05/2, 0.05:
	// 0.01 ≤ 0.0125 holds, 0.02 > 0.0167 stops there.
	got := Holm([]float64{0.03, 0.01, 0.5, 0.02}, 0.05)
	if want := []bool{false, true, false, false}; !slices.Equal(got, want) {
		t.Fatalf("Holm = %v, want %v", got, want)
	}
	got = Holm([]float64{0.001, 0.004, 0.04}, 0.05)
	if want := []bool{true, true, true}; !slices.Equal(got, want) {
		t.Fatalf("Holm = %v, want %v", got, want)
	}
	if len(Holm(nil, 0.05)) != 0 {
		t.Fatal("Holm of nothing")
	}
	// Over many tables of true nulls, Holm keeps a false difference in
	// at most 5 % of the tables; per point, 5 % of the points.
	r := rand.New(rand.NewPCG(7, 8))
	tables, anyPoint, anyHolm := 1000, 0, 0
	for range tables {
		ps := make([]float64, 16)
		for i := range ps {
			ps[i] = r.Float64()
		}
		if slices.ContainsFunc(ps, func(p float64) bool { return p < 0.05 }) {
			anyPoint++
		}
		if slices.Contains(Holm(ps, 0.05), true) {
			anyHolm++
		}
	}
	if float64(anyHolm)/float64(tables) > 0.07 || float64(anyPoint)/float64(tables) < 0.4 {
		t.Fatalf("of %d null tables of 16: %d had a point below 0.05, %d kept one after Holm", tables, anyPoint, anyHolm)
	}
}
