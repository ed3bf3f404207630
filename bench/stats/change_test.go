package stats

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestChangeIsTheRatioOfMedians: the change is B's median over A's, not
// the Hodges–Lehmann shift, which Compare keeps apart under its own name
// — the two differ whenever the sides are skewed, as the diff
// printed "287 → 286 IOPS, −5.24 %".
func TestChangeIsTheRatioOfMedians(t *testing.T) {
	a := []float64{280, 285, 287, 300, 330}
	b := []float64{250, 260, 286, 288, 289}
	c := Compare(a, b, 0.95)
	want := 286.0/287 - 1
	if math.Abs(c.Rel-want) > 1e-12 || c.A != 287 || c.B != 286 {
		t.Fatalf("change %+v, want the ratio of the medians %g", c.Change, want)
	}
	if math.Abs(c.Shift-c.Rel) < 0.01 {
		t.Fatalf("HL shift %g should differ from the median ratio %g on these sides", c.Shift, c.Rel)
	}
	if c.Stat != MedianRatio || c.Label() != "median ratio, n=5 vs 5" {
		t.Fatalf("label %q", c.Label())
	}
	if got := c.Text(); got != "−0.348 %" {
		t.Fatalf("text %q", got)
	}
	if !(c.Lo <= c.Rel && c.Rel <= c.Hi) || !c.HasInterval() {
		t.Fatalf("interval [%g, %g] should hold %g", c.Lo, c.Hi, c.Rel)
	}
	if ChangeOf(a, b, 0.95) != c.Change {
		t.Fatalf("ChangeOf %+v, Compare's %+v", ChangeOf(a, b, 0.95), c.Change)
	}
}

// TestChangeInterval: the interval is Moses's, turned into a ratio: for
// 5 against 5 at 95 % (k = 3) the 3rd smallest and largest of the 25
// pairwise ratios; none for 3 against 3, which cannot reach 95 %.
func TestChangeInterval(t *testing.T) {
	a := []float64{1, 2, 4, 8, 16}
	b := []float64{2, 4, 8, 16, 32} // every value doubled
	c := ChangeOf(a, b, 0.95)
	if c.Rel != 1 {
		t.Fatalf("doubled: %g", c.Rel)
	}
	// Ratios b_j/a_i are 2^(j-i+1), j-i in -4..4: sorted, the 3rd is
	// 2^(-3+1)... count: 1 of 2^-3, 2 of 2^-2, so the 3rd is 2^-2.
	if math.Abs(c.Lo-(0.25-1)) > 1e-12 || math.Abs(c.Hi-(16-1)) > 1e-12 {
		t.Fatalf("interval [%g, %g], want [−0.75, 15]", c.Lo, c.Hi)
	}
	few := ChangeOf([]float64{1, 2, 3}, []float64{4, 5, 6}, 0.95)
	if few.HasInterval() || few.Rel != 1.5 {
		t.Fatalf("3 vs 3: %+v", few)
	}
	p := PooledChange(7.90, 7.44, 3, 3)
	if p.Label() != "merged-histogram ratio, n=3 vs 3" || p.Text() != "−5.82 %" || p.HasInterval() {
		t.Fatalf("pooled: %q %q", p.Label(), p.Text())
	}
}

func TestPercentText(t *testing.T) {
	for v, want := range map[float64]string{0.0548: "+5.48 %", -0.0524: "−5.24 %", 2.41: "+241 %", 0: "0 %", math.NaN(): "–"} {
		if got := PercentText(v); got != want {
			t.Errorf("PercentText(%g) = %q, want %q", v, got, want)
		}
	}
}

// TestChangeAgreesWithTheTest: without ties, the change's interval leaves
// out 0 exactly when Compare calls the difference significant, and it
// always holds the ratio of the medians — at small sizes (the exact U
// distribution) and beyond MaxExact (its normal approximation).
func TestChangeAgreesWithTheTest(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 1))
	verdicts := map[Verdict]int{}
	for trial := range 400 {
		m, n := 4+r.IntN(10), 4+r.IntN(10)
		if trial%20 == 0 {
			m, n = MaxExact+1+r.IntN(20), MaxExact+1+r.IntN(20)
		}
		shift := 1 + 0.3*r.Float64()
		a, b := make([]float64, m), make([]float64, n)
		for i := range a {
			a[i] = 100 * math.Exp(0.2*r.NormFloat64())
		}
		for i := range b {
			b[i] = 100 * shift * math.Exp(0.2*r.NormFloat64())
		}
		c := Compare(a, b, 0.95)
		verdicts[c.Verdict]++
		if !(c.Lo <= c.Rel && c.Rel <= c.Hi) {
			t.Fatalf("%d vs %d: interval [%g, %g] leaves out the ratio of the medians %g", m, n, c.Lo, c.Hi, c.Rel)
		}
		excludes := c.Lo > 0 || c.Hi < 0
		if exact := m <= MaxExact && n <= MaxExact; exact && excludes != (c.Verdict == Significant) {
			t.Fatalf("%d vs %d: interval [%g, %g] but %s (p=%g)", m, n, c.Lo, c.Hi, c.Verdict, c.P)
		}
	}
	if verdicts[Significant] < 20 || verdicts[NotSignificant] < 20 {
		t.Fatalf("verdicts %v: the trials should reach both", verdicts)
	}
}
